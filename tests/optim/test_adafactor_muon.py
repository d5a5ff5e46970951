"""Side by side with torch: ``Adafactor`` and ``Muon`` trajectories compared after every step
(parameters and every state entry, float32 and float64) with ``None``, exactly-zero and
accumulated gradients and several param groups; Muon's Newton-Schulz iteration; state-dict
layout and a save/load round trip that resumes identically; defaults and argument errors."""

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
from diff_helpers import both_or_error  # noqa: E402
from optim_helpers import (  # noqa: E402
    assert_close_untyped,
    default_dtype,
    save_load,
    snapshot_keeping_lists,
    structure,
)

# -- trajectories ----------------------------------------------------------------------------

ADAFACTOR_SHAPES = [(3, 4), (3,), (), (2, 3, 4)]


MUON_SHAPES = [(3, 4), (5, 2), (2, 6), (4, 4)]


# (name, options, options of a second param group (the last two parameters) or None).
# "LR" stands for a one-element tensor learning rate.
CONFIGS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("Adafactor", {}, None),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}, {"lr": 0.3, "d": 2.0}),
    ("Adafactor", {"beta2_decay": -0.5, "eps": (1e-4, 1e-2), "foreach": True},
     {"eps": (None, 0.5), "weight_decay": 0.2}),
    ("Adafactor", {"lr": "LR", "weight_decay": 0.05}, None),
    ("Muon", {}, None),
    ("Muon", {"lr": 0.02, "nesterov": False, "adjust_lr_fn": "match_rms_adamw"},
     {"momentum": 0.5, "weight_decay": 0.0, "adjust_lr_fn": "original"}),
    ("Muon", {"lr": 0.05, "ns_steps": 3, "momentum": 0.0, "eps": 1e-3},
     {"ns_coefficients": (2.0, -1.5, 0.5), "lr": 0.01}),
    ("Muon", {"lr": "LR", "weight_decay": 0.5}, None),
]


IDS = [f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)]


def make_model(lib: Any, name: str, dtype: str) -> tuple[list[Any], Callable[[int], Any]]:
    """Four parameters (of the shapes the optimizer takes) and ``loss(part)`` on fixed data
    (part 0, 1: two halves, 2: all of it)."""
    rng = np.random.default_rng(7)
    dt = getattr(lib, dtype)
    shapes = ADAFACTOR_SHAPES if name == "Adafactor" else MUON_SHAPES
    params = [lib.nn.Parameter(lib.tensor(rng.standard_normal(s), dtype=dt)) for s in shapes]
    data = [lib.tensor(rng.standard_normal((6, *s)), dtype=dt) for s in shapes]

    def loss(part: int) -> Any:
        rows = slice(0, 3) if part == 0 else slice(3, 6) if part == 1 else slice(0, 6)
        total = 0
        for i, (p, x) in enumerate(zip(params, data)):
            total = total + ((p * x[rows]).sum() ** 2) * 0.1 + (p ** (2 + i % 2)).sum() * 0.3
        return total

    return params, loss


def fill_grads(params: list[Any], loss: Callable[[int], Any], t: int) -> None:
    """Step ``t``'s gradients: a None, an exactly-zero gradient or two accumulated backward
    calls on some steps."""
    for p in params:
        p.grad = None
    if t % 5 == 4:
        loss(0).backward()
        loss(1).backward()
    else:
        loss(2).backward()
    if t < 2 or t % 5 == 2:  # no gradient: skipped (no state at the first steps)
        params[3 if t < 2 else 0].grad = None
    if t % 5 == 3:  # an exactly-zero gradient is a real gradient
        params[1].grad.zero_()
    if t == 7:
        params[2].grad.zero_()


def tolerances(name: str, dtype: str) -> tuple[float, float]:
    # (Muon: torch orthogonalises in bfloat16 and gradsum rounds like it; on these data the
    # runs agree to the last bit in float32. A float32 sum landing on a bfloat16 tie could
    # move one update element by a bfloat16 step, lr * 2**-8: see the Newton-Schulz test.)
    return (1e-10, 1e-12) if dtype == "float64" else (2e-5, 1e-6)


def build(lib: Any, name: str, kw: dict[str, Any], group2: dict[str, Any] | None,
          params: list[Any]) -> Any:
    kw = {k: lib.tensor([0.02]) if v == "LR" else v for k, v in kw.items()}
    cls = getattr(lib.optim, name)
    if group2 is None:
        return cls(params, **kw)
    return cls([{"params": params[:2]}, {"params": params[2:], **group2}], **kw)


def trajectory(lib: Any, name: str, kw: dict[str, Any], group2: dict[str, Any] | None,
               dtype: str, steps: int = 20) -> list[Any]:
    with default_dtype(lib, dtype):
        params, loss = make_model(lib, name, dtype)
        opt = build(lib, name, kw, group2, params)
        out = []
        for t in range(steps):
            fill_grads(params, loss, t)
            opt.step()
            out.append(snapshot_keeping_lists(opt, params))
        return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw,group2", CONFIGS, ids=IDS)
def test_trajectory_matches_torch_after_every_step(name: str, kw: dict[str, Any],
                                                   group2: dict[str, Any] | None,
                                                   dtype: str) -> None:
    rtol, atol = tolerances(name, dtype)
    g = trajectory(gradsum, name, kw, group2, dtype)
    t = trajectory(torch, name, kw, group2, dtype)
    for step, ((gp, gs), (tp, ts)) in enumerate(zip(g, t)):
        assert_close_untyped(gp, tp, f"step {step} params", rtol, atol)
        assert_close_untyped(gs, ts, f"step {step} state", rtol, atol)


def test_newton_schulz_matches_torch_bit_for_bit_almost_everywhere() -> None:
    """The bfloat16 emulation: torch's own ``_zeropower_via_newtonschulz`` on random matrices
    (wide and tall, float32 and float64 input) against gradsum's, element by element."""
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from gradsum.optim.muon import _zeropower_via_newtonschulz as ns

    rng = np.random.default_rng(0)
    differ = []
    for i in range(40):
        shape = tuple(rng.integers(1, 24, 2))
        g = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 3)
        if i % 2:
            g = g.astype(np.float32)
        for steps in (0, 1, 5):
            mine = ns(g, (3.4445, -4.7750, 2.0315), steps, 1e-7)
            theirs = torch_ns(torch.tensor(g), (3.4445, -4.7750, 2.0315), steps,
                              1e-7).float().numpy()
            assert mine.shape == theirs.shape and mine.dtype == np.float32
            np.testing.assert_allclose(mine, theirs, atol=2e-2)
            if (mine != theirs).any():
                differ.append((i, steps))
    # (a tie flipped in one iteration spreads through the later ones: count matrices)
    assert len(differ) <= 3, differ


@pytest.mark.parametrize("name,kw,group2", CONFIGS, ids=IDS)
def test_state_dict_structure_and_resume(name: str, kw: dict[str, Any],
                                         group2: dict[str, Any] | None,
                                         tmp_path: Path) -> None:
    def run(lib: Any) -> tuple[Any, list[Any], list[Any]]:
        with default_dtype(lib, "float64"):
            params, loss = make_model(lib, name, "float64")
            opt = build(lib, name, kw, group2, params)
            for t in range(8):
                fill_grads(params, loss, t)
                opt.step()
            sd = opt.state_dict()
            layout = structure(sd)
            loaded = save_load(lib, sd, tmp_path / f"{lib.__name__}.ckpt")
            assert structure(loaded) == layout
            params2, loss2 = make_model(lib, name, "float64")
            with lib.no_grad():
                for p, q in zip(params2, params):
                    p.copy_(q)
            opt2 = build(lib, name, kw, group2, params2)
            opt2.load_state_dict(loaded)
            straight, resumed = [], []
            for t in range(8, 14):
                fill_grads(params, loss, t)
                opt.step()
                straight.append(snapshot_keeping_lists(opt, params))
                fill_grads(params2, loss2, t)
                opt2.step()
                resumed.append(snapshot_keeping_lists(opt2, params2))
            return layout, straight, resumed

    rtol, atol = tolerances(name, "float64")
    (g_layout, g_straight, g_resumed), (t_layout, t_straight, t_resumed) = (
        run(gradsum), run(torch))
    assert g_layout == t_layout
    for i, (a, b, c) in enumerate(zip(g_resumed, g_straight, t_resumed)):
        for j in range(2):
            assert_close_untyped(a[j], b[j], f"gradsum resumed vs straight, step {i}", 0.0, 0.0)
            assert_close_untyped(a[j], c[j], f"gradsum vs torch resumed, step {i}", rtol, atol)
    for i, (a, b) in enumerate(zip(t_resumed, t_straight)):  # (the oracle resumes exactly)
        for j in range(2):
            assert_close_untyped(a[j], b[j], f"torch resumed vs straight, step {i}", 0.0, 0.0)


def test_none_gradient_is_skipped_and_zero_gradient_is_not() -> None:
    def run(lib: Any) -> list[Any]:
        out = []
        for name, shape in [("Adafactor", (2,)), ("Adafactor", (2, 2)), ("Muon", (2, 2))]:
            p = lib.nn.Parameter(lib.ones(*shape))
            q = lib.nn.Parameter(lib.ones(*shape))
            opt = getattr(lib.optim, name)([p, q], weight_decay=0.1)
            p.grad = lib.zeros(*shape)
            opt.step()
            out.append((name, q in opt.state, list(opt.state[p]), p.tolist(), q.tolist()))
        return out

    g, t = run(gradsum), run(torch)
    for a, b in zip(g, t):
        assert a[:3] == b[:3]
        np.testing.assert_allclose(a[3], b[3], rtol=1e-6)
        assert a[4] == b[4]


# -- defaults and errors -----------------------------------------------------------------------


def test_exported_like_torch() -> None:
    missing = set(torch.optim.__all__) - set(gradsum.optim.__all__) - {"SparseAdam"}
    assert not missing
    for n in ("Adafactor", "Muon"):
        assert issubclass(getattr(gradsum.optim, n), gradsum.optim.Optimizer)
    assert set(gradsum.optim.swa_utils.__all__) == set(torch.optim.swa_utils.__all__)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_defaults_match_torch(name: str) -> None:
    def run(lib: Any) -> Any:
        opt = getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2, 2))])
        return opt.defaults, structure(opt.state_dict())

    assert run(gradsum) == run(torch)


BAD_ARGS = [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"lr": float("nan")}),
    ("Adafactor", {"lr": "2LR"}), ("Adafactor", {"beta2_decay": 0.1}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
    ("Muon", {"lr": -1.0}), ("Muon", {"lr": "2LR"}), ("Muon", {"momentum": -0.5}),
    ("Muon", {"weight_decay": -1.0}), ("Muon", {"adjust_lr_fn": "other"}),
]


@pytest.mark.parametrize("name,kw", BAD_ARGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                   enumerate(BAD_ARGS)])
def test_argument_errors_like_torch(name: str, kw: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[str, str]:
        args = {k: lib.tensor([0.1, 0.2]) if v == "2LR" else v for k, v in kw.items()}
        try:
            getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2, 2))], **args)
        except Exception as e:
            return type(e).__name__, str(e)
        return "ok", ""

    g, t = run(gradsum), run(torch)
    assert g == t
    assert t[0] == "ValueError"


def test_muon_refuses_parameters_that_are_not_2d() -> None:
    for shape in [(3,), (2, 2, 2), ()]:
        def fn(lib: Any, shape: tuple[int, ...] = shape) -> Any:
            return lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2)),
                                   lib.nn.Parameter(lib.ones(shape))])

        g, t = both_or_error(fn)
        assert g is t is ValueError
    with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found"):
        gradsum.optim.Muon([gradsum.nn.Parameter(gradsum.ones(3))])


def test_muon_step_errors_like_torch() -> None:
    """A 1-D parameter added later fails at step (after the 2-D one before it was updated and
    its own state created); bad ``ns_steps``/``ns_coefficients`` fail at step too."""
    def added_later(lib: Any) -> Any:
        w = lib.nn.Parameter(lib.ones(2, 3))
        b = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.Muon([w], lr=0.1)
        opt.add_param_group({"params": [b]})
        w.grad, b.grad = lib.ones(2, 3), lib.ones(3)
        try:
            opt.step()
        except ValueError as e:
            return str(e), [round(v, 5) for v in w.flatten().tolist()], b in opt.state
        return "ok"

    assert added_later(gradsum) == added_later(torch)

    for kw in [{"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}]:
        def fn(lib: Any, kw: dict[str, Any] = kw) -> Any:
            w = lib.nn.Parameter(lib.ones(2, 3))
            opt = lib.optim.Muon([w], **kw)
            w.grad = lib.ones(2, 3)
            try:
                opt.step()
            except ValueError as e:
                return str(e), opt.state[w]["momentum_buffer"].tolist()
            return "ok"

        assert fn(gradsum) == fn(torch)


INTEGRAL_CASES = [
    ("Adafactor", {}), ("Adafactor", {"weight_decay": 0.1}),
    ("Adafactor", {"eps": (1e-30, 1e-3)}), ("Adafactor", {"maximize": True}),
    ("Muon", {}), ("Muon", {"weight_decay": 0.0}),
]


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("name,extra", INTEGRAL_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(INTEGRAL_CASES)])
def test_integer_parameters_fail_at_step_like_torch(name: str, dtype: str,
                                                    extra: dict[str, Any]) -> None:
    def fn(lib: Any) -> Any:
        p = lib.ones(2, 2, dtype=getattr(lib, dtype))
        opt = getattr(lib.optim, name)([p], lr=0.1, **extra)
        p.grad = lib.ones(2, 2, dtype=getattr(lib, dtype))
        opt.step()
        return p.tolist()

    g, t = both_or_error(fn, quiet=True)
    assert g == t


def test_adafactor_eps1_follows_the_first_parameters_dtype() -> None:
    """``eps=(None, ...)``: torch takes the machine epsilon of the first updated parameter's
    dtype for the whole group (a float32 one first: float32's epsilon for a float64 one)."""
    def run(lib: Any) -> Any:
        a = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float32))
        b = lib.nn.Parameter(lib.tensor([1e-9, 0.0, 3.0], dtype=lib.float64))
        opt = lib.optim.Adafactor([a, b], lr=0.1)
        a.grad = lib.tensor([0.5, 0.5], dtype=lib.float32)
        b.grad = lib.tensor([1e-9, 0.0, 1.0], dtype=lib.float64)
        opt.step()
        return b.tolist()

    np.testing.assert_allclose(run(gradsum), run(torch), rtol=1e-12)


def test_adafactor_3_element_eps_or_betas_like_torch() -> None:
    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        opt = lib.optim.Adafactor([p])
        opt.param_groups[0]["eps"] = (None, 1e-3, 5.0)
        opt.step()

    g, t = both_or_error(fn)
    assert g is t is ValueError
