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


def _large_run(lib: Any, name: str, kw: dict[str, Any], transposed_grad: bool) -> list[Any]:
    """Eight steps of optimizer ``name`` on a parameter larger than one block of the blocked
    update (and a small one), from the same numbers in either library; the parameters and
    the tensor state after them."""
    rng = np.random.default_rng(1)
    shapes = [(300, 250), (7,)]  # (75,000 elements: three blocks, the last one partial)
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s).astype(np.float32)))
              for s in shapes]
    opt = getattr(lib.optim, name)(params, **kw)
    for _ in range(8):
        for p in params:
            flip = transposed_grad and len(p.shape) == 2
            g = lib.tensor(rng.standard_normal(tuple(p.shape)[::-1] if flip else p.shape)
                           .astype(np.float32))
            p.grad = g.T if flip else g
        opt.step()
    return [to_np(p.detach()).copy() for p in params] + [
        to_np(t).copy() for s in opt.state.values() for t in s.values()
        if isinstance(t, lib.Tensor) and t.ndim]


_LARGE_CASES = [
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.9)}),  # (lerp's other branch: weight >= 0.5)
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),  # (eight steps: the rectified branch too)
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.01, "t0": 2, "weight_decay": 0.1}),  # (t0=2: the averaging branch)
    ("Rprop", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True}),
]


@pytest.mark.parametrize(("name", "kw"), _LARGE_CASES)
@pytest.mark.parametrize("transposed_grad", [False, True])
def test_update_of_a_large_parameter_matches_torch_and_the_unblocked_update(
        name: str, kw: dict[str, Any], transposed_grad: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # gradsum runs a large parameter's update block by block (optimizer._blocks); every
    # element sees the same operations in the same order, so the result is bitwise the
    # whole-tensor update's, and torch's up to its own rounding. (SGD runs without MKL, whose
    # one-pass routines take the whole tensor.)
    from gradsum.optim import optimizer

    with gradsum.backends.mkl.flags(enabled=False):
        blocked = _large_run(gradsum, name, kw, transposed_grad)
        monkeypatch.setattr(optimizer, "BLOCK", 1 << 30)  # one block: the whole tensor
        whole = _large_run(gradsum, name, kw, transposed_grad)
    ref = _large_run(torch, name, kw, transposed_grad)
    assert len(blocked) == len(ref)
    for g, t in zip(blocked, ref, strict=True):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-6)
    for b, w in zip(blocked, whole, strict=True):
        assert np.array_equal(b, w, equal_nan=True)
