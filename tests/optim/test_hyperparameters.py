"""Side by side with torch: optimizer hyper-parameters given as tensors, the dtype of
``state['step']`` under the default dtype, capturable steps on CPU tensors, and long float64
trajectories with per-group options."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from optim_helpers import default_float64, outcome, param, rounded, same_outcome  # noqa: E402

# -- hyper-parameters given as one-element tensors ------------------------------------------


TENSOR_OPTIONS = [
    ("SGD", "weight_decay"), ("SGD", "momentum"), ("SGD", "dampening"),
    ("Adam", "weight_decay"), ("Adam", "eps"), ("AdamW", "weight_decay"), ("AdamW", "eps"),
    ("RMSprop", "weight_decay"), ("RMSprop", "eps"), ("RMSprop", "alpha"),
    ("RMSprop", "momentum"), ("Adagrad", "weight_decay"), ("Adagrad", "eps"),
    ("Adagrad", "lr_decay"), ("Adagrad", "initial_accumulator_value"),
]


@pytest.mark.parametrize("name,key", TENSOR_OPTIONS, ids=[f"{n}-{k}" for n, k in TENSOR_OPTIONS])
def test_hyper_parameters_given_as_tensors(name: str, key: str) -> None:
    # torch uses a 0-d tensor option as its value; gradsum raised TypeError (SGD weight_decay
    # and momentum, AdamW weight_decay, RMSprop/Adagrad options) or, for RMSprop's alpha,
    # silently computed different updates
    def run(lib: Any) -> list[float]:
        p = param(lib)
        opt = getattr(lib.optim, name)([p], lr=0.1, **{key: lib.tensor(0.3)})
        for _ in range(3):
            p.grad = lib.tensor([1.0, 0.5])
            opt.step()
        return rounded(p)

    g, t = run(gradsum), run(torch)
    np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


# -- state['step'] dtype ------------------------------------------------------------------------


STEP_OPTIMIZERS = [("Adam", {}), ("AdamW", {}), ("RMSprop", {}), ("Adagrad", {}),
                   ("Adam", {"fused": True}), ("AdamW", {"fused": True}),
                   ("Adagrad", {"fused": True})]


@pytest.mark.parametrize("name,kw", STEP_OPTIMIZERS,
                         ids=[f"{n}-{'fused' if kw else 'plain'}" for n, kw in STEP_OPTIMIZERS])
def test_step_dtype_follows_the_default_dtype(name: str, kw: dict[str, Any]) -> None:
    # torch's _get_scalar_dtype: float64 steps under a float64 default dtype (float32 when
    # fused); gradsum's steps were always float32
    def run(lib: Any) -> tuple[str, float, list[float]]:
        with default_float64(lib):
            p = param(lib)
            opt = getattr(lib.optim, name)([p], lr=0.1, **kw)
            p.grad = lib.tensor([1.0, 0.5])
            opt.step()
            step = opt.state[p]["step"]
            return str(step.dtype).split(".")[1], float(step), rounded(p, 9)

    assert run(gradsum) == run(torch)


# -- capturable=True on CPU tensors ---------------------------------------------------------


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop"])
def test_capturable_step_on_cpu_tensors_fails_like_torch(name: str) -> None:
    # torch's capturable step refuses CPU tensors with AssertionError, after creating the
    # state; gradsum ignored the flag and updated the parameters. gradsum raises the same
    # error with nothing changed: the state the failed step made is dropped again (note "A
    # failed step changes nothing" in optim/optimizer.py), where torch keeps it.
    def run(lib: Any) -> tuple[Any, ...]:
        p, q = param(lib), param(lib, 3.0)
        opt = getattr(lib.optim, name)([p, q], lr=0.1, capturable=True)
        p.grad = lib.ones(2)
        result = outcome(lambda _: opt.step(), lib)
        return (result, rounded(p), q in opt.state), opt.state.get(p)

    ours, our_state = run(gradsum)
    theirs, their_state = run(torch)
    assert ours == theirs
    assert not our_state and their_state and float(their_state["step"]) == 0.0
    # a capturable group with no gradients steps (nothing to do) without error
    same_outcome(lambda lib: getattr(lib.optim, name)([param(lib)], capturable=True).step())


# -- coverage: long float64 trajectories and schedules, compared tightly --------------------


TRAJECTORIES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1},
     {"momentum": 0.0, "lr": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}, {}),
    ("Adam", {"lr": 0.01, "betas": (0.3, 0.5), "amsgrad": True, "weight_decay": 0.1},
     {"amsgrad": False, "lr": 0.1}),
    ("AdamW", {"lr": 0.03, "weight_decay": 0.5, "maximize": True}, {"betas": (0.5, 0.6)}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.3, "centered": True, "momentum": 0.9,
                 "weight_decay": 0.2}, {"centered": False, "momentum": 0.0}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "maximize": True}, {}),
]


@pytest.mark.parametrize("name,kw,group2", TRAJECTORIES,
                         ids=[f"{t[0]}-{i}" for i, t in enumerate(TRAJECTORIES)])
def test_float64_trajectories_with_per_group_options(name: str, kw: dict[str, Any],
                                                     group2: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[list[np.ndarray], dict[Any, Any]]:
        rng = np.random.default_rng(0)
        ps = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s))) for s in [(5,), (3, 4), ()]]
        opt = getattr(lib.optim, name)([{"params": ps[:2]}, {"params": ps[2:], **group2}],
                                       **kw)
        for t in range(30):
            for i, p in enumerate(ps):
                grad = lib.tensor(rng.standard_normal(tuple(p.shape)))
                p.grad = None if (t + i) % 7 == 3 else grad
            opt.step()
        state = {k: {n: (str(v.dtype).split(".")[1], np.array(v.tolist())) for n, v in s.items()}
                 for k, s in opt.state_dict()["state"].items()}
        return [np.array(p.tolist()) for p in ps], state

    (gp, gs), (tp, ts) = run(gradsum), run(torch)
    for g, t in zip(gp, tp):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    assert list(gs) == list(ts)
    for k in ts:
        assert list(gs[k]) == list(ts[k])
        for n in ts[k]:
            assert gs[k][n][0] == ts[k][n][0], (k, n)
            np.testing.assert_allclose(gs[k][n][1], ts[k][n][1], rtol=1e-12, atol=1e-14)
