"""Side-by-side regression tests for gradsum.optim behaviours that differed from torch's: the
same construction and steps on both libraries, then parameters, state and errors compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from nn_helpers import to_np  # noqa: E402


def same_error(fn: Callable[[Any], Any]) -> None:
    """``fn(lib)`` raises with torch; with gradsum it raises exactly torch's type (not a
    subclass: NotImplementedError is a RuntimeError)."""
    try:
        fn(torch)
    except Exception as e:  # (any type: the type is what is compared)
        err = type(e)
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(err) as info:
        fn(gradsum)
    assert info.type is err, (info.type, err)


def _run(lib: Any, make: Callable[[Any, list[Any]], Any], steps: int = 3) -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(np.float32)))
              for s in [(3,), (2, 2)]]
    opt = make(lib, params)
    for _ in range(steps):
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        opt.step()
    return params, opt


def _assert_same_run(make: Callable[[Any, list[Any]], Any]) -> None:
    (gp, gopt), (tp, topt) = _run(gradsum, make), _run(torch, make)
    for g, t in zip(gp, tp):
        np.testing.assert_allclose(to_np(g.detach()), to_np(t.detach()), rtol=1e-5, atol=1e-6)
    gs, ts = gopt.state_dict()["state"], topt.state_dict()["state"]
    assert list(gs) == list(ts)
    for k in ts:
        assert list(gs[k]) == list(ts[k])
        for name in ts[k]:
            np.testing.assert_allclose(to_np(gs[k][name]), to_np(ts[k][name]), rtol=1e-5)


def test_adagrad_state_starts_from_the_constructor_accumulator_value() -> None:
    # torch fills 'sum' from the constructor's initial_accumulator_value, not the group's
    _assert_same_run(lambda lib, ps: lib.optim.Adagrad(
        [{"params": ps[:1], "initial_accumulator_value": 0.5},
         {"params": ps[1:]}], lr=0.1, initial_accumulator_value=0.25))


def test_sgd_accepts_a_nan_learning_rate_like_torch() -> None:
    # torch's SGD checks lr < 0 (nan passes); Adam's `not 0 <= lr` refuses it
    for lib in (torch, gradsum):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=float("nan"))
        assert np.isnan(opt.param_groups[0]["lr"])
    same_error(lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], lr=float("nan")))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("kw", [{"fused": True, "foreach": True},
                                {"fused": True, "differentiable": True}])
def test_fused_argument_errors(name: str, kw: dict[str, Any]) -> None:
    same_error(lambda lib: getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(1))], **kw))


@pytest.mark.parametrize("betas", [(0.9, 0), (0, 0), (0.9,)])
def test_adam_beta_types(betas: tuple[Any, ...]) -> None:
    same_error(lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], betas=betas))


@pytest.mark.parametrize("kw", [{"lr": 0.1}, {"betas": (0.5, 0.6)}])
def test_adam_tensor_hyper_parameters_with_foreach(kw: dict[str, Any]) -> None:
    def make(lib: Any) -> Any:
        args = {k: (tuple(lib.tensor(b) for b in v) if isinstance(v, tuple) else lib.tensor(v))
                for k, v in kw.items()}
        return lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], foreach=True, **args)

    same_error(make)


def test_adam_tensor_betas_stay_tensors() -> None:
    def make(lib: Any, ps: list[Any]) -> Any:
        return lib.optim.Adam(ps, lr=0.1, betas=(lib.tensor([0.5]), lib.tensor(0.8)))

    _assert_same_run(make)
    g_betas = _run(gradsum, make)[1].param_groups[0]["betas"]
    t_betas = _run(torch, make)[1].param_groups[0]["betas"]
    assert [(type(b).__name__, tuple(b.shape)) for b in g_betas] == \
        [(type(b).__name__, tuple(b.shape)) for b in t_betas]
