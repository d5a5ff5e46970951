"""Side by side with torch: Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD (and LBFGS where the
checks are common): float64 trajectories compared after every step (parameters and every state
entry) with ``None``, exactly-zero and accumulated gradients, state-dict structure and a
save/load round trip that resumes identically, defaults, exports and argument errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from optim_helpers import assert_close, default_float64, save_load, snapshot, structure  # noqa: E402


def tensor_lr(lib: Any) -> Any:
    return lib.tensor([0.01])  # a one-element (1-d) tensor, float64 under the test's default


# (name, options, options of a second param group or None). "LR" stands for tensor_lr(lib).
CONFIGS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("NAdam", {}, None),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}, {"momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}, None),
    ("NAdam", {"lr": "LR", "betas": (0.3, 0.8), "momentum_decay": 0.0}, None),
    ("RAdam", {"lr": 0.05}, None),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "betas": (0.3, 0.5)}, {"lr": 0.2}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.2, "decoupled_weight_decay": True,
               "maximize": True}, None),
    ("RAdam", {"lr": "LR", "betas": (0.8, 0.6), "eps": 1e-3}, None),
    ("Adamax", {}, None),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1, "betas": (0.3, 0.5)}, {"eps": 0.1}),
    ("Adamax", {"lr": "LR", "maximize": True}, None),
    ("Adadelta", {}, None),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1, "maximize": True},
     {"eps": 1e-3}),
    ("Adadelta", {"lr": "LR", "rho": 1.0}, None),
    ("Rprop", {}, None),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.1), "maximize": True},
     {"lr": 0.2}),
    ("Rprop", {"lr": "LR"}, None),
    ("ASGD", {}, None),
    ("ASGD", {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 3, "weight_decay": 0.1},
     {"t0": 0}),
    ("ASGD", {"lr": "LR", "t0": 5, "maximize": True}, None),
]


IDS = [f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)]


def make_model(lib: Any) -> tuple[list[Any], Callable[[int], Any]]:
    """Parameters (w: 3x4, b: 3, s: scalar) and ``loss(part)`` on fixed data (part 0, 1: the
    two halves, 2: all of it)."""
    rng = np.random.default_rng(1)
    w = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 4))))
    b = lib.nn.Parameter(lib.tensor(rng.standard_normal(3)))
    s = lib.nn.Parameter(lib.tensor(0.7))
    x = lib.tensor(rng.standard_normal((6, 4)))
    y = lib.tensor(rng.standard_normal((6, 3)))

    def loss(part: int) -> Any:
        rows = slice(0, 3) if part == 0 else slice(3, 6) if part == 1 else slice(0, 6)
        out = (x[rows] @ w.t() + b) * s
        return ((out - y[rows]) ** 2).mean() + 0.1 * s**4 + (b**3).sum() * 0.01

    return [w, b, s], loss


def fill_grads(params: list[Any], loss: Callable[[int], Any], t: int) -> None:
    """Step ``t``'s gradients: a None, an exactly-zero gradient or two accumulated
    backward calls on some steps."""
    for p in params:
        p.grad = None
    if t % 5 == 4:  # accumulated over two backward calls
        loss(0).backward()
        loss(1).backward()
    else:
        loss(2).backward()
    if t < 2 or t % 5 == 2:  # no gradient: skipped (no state at the first steps)
        params[2 if t < 2 else 0].grad = None
    if t % 5 == 3:  # an exactly-zero gradient is a real gradient
        params[1].grad.zero_()
    if t == 7:
        params[2].grad.zero_()


def build(lib: Any, name: str, kw: dict[str, Any], group2: dict[str, Any] | None,
          params: list[Any]) -> Any:
    kw = {k: tensor_lr(lib) if v == "LR" else v for k, v in kw.items()}
    cls = getattr(lib.optim, name)
    if group2 is None:
        return cls(params, **kw)
    return cls([{"params": params[:2]}, {"params": params[2:], **group2}], **kw)


def trajectory(lib: Any, name: str, kw: dict[str, Any], group2: dict[str, Any] | None,
               steps: int = 20) -> list[Any]:
    with default_float64(lib):
        params, loss = make_model(lib)
        opt = build(lib, name, kw, group2, params)
        out = []
        for t in range(steps):
            fill_grads(params, loss, t)
            opt.step()
            out.append(snapshot(opt, params))
        return out


@pytest.mark.parametrize("name,kw,group2", CONFIGS, ids=IDS)
def test_trajectory_matches_torch_after_every_step(name: str, kw: dict[str, Any],
                                                   group2: dict[str, Any] | None) -> None:
    g, t = trajectory(gradsum, name, kw, group2), trajectory(torch, name, kw, group2)
    for step, ((gp, gs), (tp, ts)) in enumerate(zip(g, t)):
        assert_close(gp, tp, f"step {step} params")
        assert_close(gs, ts, f"step {step} state")


@pytest.mark.parametrize("name,kw,group2", CONFIGS[::2], ids=IDS[::2])
def test_state_dict_structure_and_resume(name: str, kw: dict[str, Any],
                                         group2: dict[str, Any] | None,
                                         tmp_path: Path) -> None:
    def run(lib: Any) -> tuple[Any, list[Any], list[Any]]:
        with default_float64(lib):
            params, loss = make_model(lib)
            opt = build(lib, name, kw, group2, params)
            for t in range(8):
                fill_grads(params, loss, t)
                opt.step()
            sd = opt.state_dict()
            layout = structure(sd)
            loaded = save_load(lib, sd, tmp_path / f"{lib.__name__}.ckpt")
            assert structure(loaded) == layout
            # a second model and optimizer, resumed from the file
            params2, loss2 = make_model(lib)
            with lib.no_grad():
                for p, q in zip(params2, params):
                    p.copy_(q)
            opt2 = build(lib, name, kw, group2, params2)
            opt2.load_state_dict(loaded)
            straight, resumed = [], []
            for t in range(8, 14):
                fill_grads(params, loss, t)
                opt.step()
                straight.append(snapshot(opt, params))
                fill_grads(params2, loss2, t)
                opt2.step()
                resumed.append(snapshot(opt2, params2))
            return layout, straight, resumed

    (g_layout, g_straight, g_resumed), (t_layout, t_straight, t_resumed) = (
        run(gradsum), run(torch))
    assert g_layout == t_layout
    for i, (a, b, c) in enumerate(zip(g_resumed, g_straight, t_resumed)):
        for j in range(2):  # (parameters, state)
            assert_close(a[j], b[j], f"gradsum resumed vs straight, step {i}")
            assert_close(a[j], c[j], f"gradsum vs torch resumed, step {i}")
    for i, (a, b) in enumerate(zip(t_resumed, t_straight)):  # (the oracle resumes exactly)
        for j in range(2):
            assert_close(a[j], b[j], f"torch resumed vs straight, step {i}")


def test_exported() -> None:
    names = ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD", "LBFGS"]
    for n in names:
        assert n in gradsum.optim.__all__
        assert issubclass(getattr(gradsum.optim, n), gradsum.optim.Optimizer)


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD",
                                  "LBFGS"])
def test_defaults_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        opt = getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))])
        return opt.defaults, structure(opt.state_dict())

    assert run(gradsum) == run(torch)


BAD_ARGS = [
    ("NAdam", {"lr": -1.0}), ("NAdam", {"eps": -1e-3}), ("NAdam", {"betas": (1.0, 0.9)}),
    ("NAdam", {"betas": (0.9, -0.1)}), ("NAdam", {"weight_decay": -0.1}),
    ("NAdam", {"momentum_decay": -0.1}), ("NAdam", {"lr": "2LR"}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"eps": -1.0}), ("RAdam", {"betas": (0.9, 1.0)}),
    ("RAdam", {"weight_decay": -1.0}),
    ("Adamax", {"lr": -0.1}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (-0.1, 0.9)}),
    ("Adamax", {"weight_decay": -1.0}), ("Adamax", {"lr": "2LR"}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"rho": -0.5}),
    ("Adadelta", {"eps": -1.0}), ("Adadelta", {"weight_decay": -1.0}),
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (1.0, 1.2)}), ("Rprop", {"etas": (0.5, 1.0)}),
    ("Rprop", {"etas": (0.0, 2.0)}),
    ("ASGD", {"lr": -1.0}), ("ASGD", {"weight_decay": -1.0}), ("ASGD", {"lr": "2LR"}),
    ("LBFGS", {"lr": -1.0}), ("LBFGS", {"lr": "2LR"}),
    ("NAdam", {"differentiable": False, "lr": float("nan")}),
]


@pytest.mark.parametrize("name,kw", BAD_ARGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                   enumerate(BAD_ARGS)])
def test_argument_errors_like_torch(name: str, kw: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[str, str]:
        args = {k: lib.tensor([0.1, 0.2]) if v == "2LR" else v for k, v in kw.items()}
        try:
            getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], **args)
        except Exception as e:  # (any type: the type and message are compared)
            return type(e).__name__, str(e)
        return "ok", ""

    g, t = run(gradsum), run(torch)
    # torch's type, and its text first (gradsum's then gives the values and the fix)
    assert g[0] == t[0] and g[1].startswith(t[1]), (g, t)
    assert t[0] == "ValueError"


def test_none_gradient_is_skipped_and_zero_gradient_is_not() -> None:
    def run(lib: Any) -> list[Any]:
        out = []
        for name in ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"]:
            p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
            opt = getattr(lib.optim, name)([p, q], weight_decay=0.1) if name != "Rprop" \
                else lib.optim.Rprop([p, q])
            p.grad = lib.zeros(2)
            opt.step()
            out.append((name, q in opt.state, float(opt.state[p]["step"]), p.tolist()))
        return out

    g, t = run(gradsum), run(torch)
    for a, b in zip(g, t):
        assert a[:3] == b[:3]
        np.testing.assert_allclose(a[3], b[3], rtol=1e-6)


def test_scalar_state_dtype_under_float32_default() -> None:
    # torch keeps step, mu_product, eta and mu in the default dtype (float32 here) and does
    # the mu_product / eta arithmetic in it
    def run(lib: Any) -> list[Any]:
        out = []
        for name, kw in [("NAdam", {}), ("ASGD", {"t0": 2, "lambd": 0.1}), ("RAdam", {})]:
            p = lib.nn.Parameter(lib.tensor([1.0, -2.0], dtype=lib.float64))
            opt = getattr(lib.optim, name)([p], lr=0.1, **kw)
            for i in range(6):
                p.grad = lib.tensor([0.3, -0.2 * i], dtype=lib.float64)
                opt.step()
            out.append((name, {k: (str(v.dtype).split(".")[1], v.tolist())
                               for k, v in opt.state[p].items()}, p.tolist()))
        return out

    g, t = run(gradsum), run(torch)
    for (gn, gs, gp), (tn, ts, tp) in zip(g, t):
        assert gn == tn and list(gs) == list(ts)
        for k in ts:
            assert gs[k][0] == ts[k][0], (gn, k)
            np.testing.assert_allclose(gs[k][1], ts[k][1], rtol=1e-12)
        np.testing.assert_allclose(gp, tp, rtol=1e-12)
