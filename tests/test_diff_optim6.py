"""Side-by-side tests of torch.optim's newer members: ``Adafactor`` and ``Muon`` trajectories
compared after every step (parameters and every state entry, float32 and float64) with
``None``, exactly-zero and accumulated gradients and several param groups; state-dict layout
and a save/load round trip that resumes identically; defaults and argument errors; the
``swa_utils`` module (``AveragedModel``, the averaging functions, ``update_bn``, ``SWALR``) and
``swap_in_optimizer_params_and_state``."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import both_or_error  # noqa: E402


@contextmanager
def default_dtype(lib: Any, dtype: str) -> Iterator[None]:
    lib.set_default_dtype(getattr(lib, dtype))
    try:
        yield
    finally:
        lib.set_default_dtype(lib.float32)


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


def snapshot(opt: Any, params: list[Any]) -> tuple[list[np.ndarray], dict[Any, Any]]:
    def conv(v: Any) -> Any:
        if isinstance(v, (torch.Tensor, gradsum.Tensor)):
            return ("tensor", str(v.dtype).split(".")[1], tuple(v.shape),
                    np.array(v.detach().tolist(), dtype=np.float64))
        return v

    state = {i: {k: conv(v) for k, v in opt.state[p].items()}
             for i, p in enumerate(params) if p in opt.state}
    return [np.array(p.detach().tolist()) for p in params], state


def assert_close(g: Any, t: Any, where: str, rtol: float, atol: float) -> None:
    if isinstance(t, tuple) and t and t[0] == "tensor":
        assert isinstance(g, tuple) and g[:3] == t[:3], (where, g[:3], t[:3])
        np.testing.assert_allclose(g[3], t[3], rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(t, np.ndarray):
        np.testing.assert_allclose(g, t, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(t, list):
        assert isinstance(g, list) and len(g) == len(t), where
        for i, (a, b) in enumerate(zip(g, t)):
            assert_close(a, b, f"{where}[{i}]", rtol, atol)
    elif isinstance(t, dict):
        assert list(g) == list(t), (where, list(g), list(t))
        for k in t:
            assert_close(g[k], t[k], f"{where}.{k}", rtol, atol)
    else:
        assert g == t, (where, g, t)


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
            out.append(snapshot(opt, params))
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
        assert_close(gp, tp, f"step {step} params", rtol, atol)
        assert_close(gs, ts, f"step {step} state", rtol, atol)


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


def save_load(lib: Any, obj: Any, path: Path) -> Any:
    lib.save(obj, str(path))
    return lib.load(str(path)) if lib is gradsum else lib.load(str(path), weights_only=True)


def structure(sd: dict[str, Any]) -> Any:
    def kind(v: Any) -> Any:
        if isinstance(v, (torch.Tensor, gradsum.Tensor)):
            return ("tensor", str(v.dtype).split(".")[1], tuple(v.shape))
        return type(v).__name__

    def option(v: Any) -> Any:
        if isinstance(v, (torch.Tensor, gradsum.Tensor)):
            return ("tensor", tuple(v.shape), v.tolist())
        return v

    state = {i: {k: kind(v) for k, v in s.items()} for i, s in sd["state"].items()}
    groups = [{k: option(v) for k, v in g.items()} for g in sd["param_groups"]]
    return list(sd), state, groups


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
                straight.append(snapshot(opt, params))
                fill_grads(params2, loss2, t)
                opt2.step()
                resumed.append(snapshot(opt2, params2))
            return layout, straight, resumed

    rtol, atol = tolerances(name, "float64")
    (g_layout, g_straight, g_resumed), (t_layout, t_straight, t_resumed) = (
        run(gradsum), run(torch))
    assert g_layout == t_layout
    for i, (a, b, c) in enumerate(zip(g_resumed, g_straight, t_resumed)):
        for j in range(2):
            assert_close(a[j], b[j], f"gradsum resumed vs straight, step {i}", 0.0, 0.0)
            assert_close(a[j], c[j], f"gradsum vs torch resumed, step {i}", rtol, atol)
    for i, (a, b) in enumerate(zip(t_resumed, t_straight)):  # (the oracle resumes exactly)
        for j in range(2):
            assert_close(a[j], b[j], f"torch resumed vs straight, step {i}", 0.0, 0.0)


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


# -- swa_utils ---------------------------------------------------------------------------------


def make_net(lib: Any, seed: int = 0) -> Any:
    """Linear -> BatchNorm1d -> Linear with fixed weights."""
    rng = np.random.default_rng(seed)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return net


def perturb(lib: Any, net: Any, t: int) -> None:
    """Move the weights (and the BatchNorm statistics: a training-mode forward)."""
    rng = np.random.default_rng(100 + t)
    with lib.no_grad():
        for p in net.parameters():
            p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    net.train()
    net(lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float32))


def averaging_kwargs(lib: Any, kind: str) -> dict[str, Any]:
    s = lib.optim.swa_utils
    return {
        "default": {},
        "ema": {"avg_fn": s.get_ema_avg_fn(0.8)},
        "ema_multi": {"multi_avg_fn": s.get_ema_multi_avg_fn(0.7)},
        "swa": {"avg_fn": s.get_swa_avg_fn()},
        "swa_multi": {"multi_avg_fn": s.get_swa_multi_avg_fn()},
        "custom": {"avg_fn": lambda a, c, n: a * 0.5 + c * 0.5 + n},
    }[kind]


def sd_values(sd: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v.dtype).split(".")[1], np.array(v.tolist())) for k, v in sd.items()}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", ["default", "ema", "ema_multi", "swa", "swa_multi",
                                  "custom"])
def test_averaged_model_matches_torch(kind: str, use_buffers: bool) -> None:
    def run(lib: Any) -> Any:
        net = make_net(lib)
        avg = lib.optim.swa_utils.AveragedModel(net, use_buffers=use_buffers,
                                                **averaging_kwargs(lib, kind))
        assert avg.module is not net
        out = []
        for t in range(5):
            perturb(lib, net, t)
            avg.update_parameters(net)
            out.append(sd_values(avg.state_dict()))
        avg.eval()
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32)
        return out, np.array(avg(x).tolist())

    g, t = both_or_error(run)
    if isinstance(t, type):  # (integer buffers averaged by a list function: torch refuses)
        assert g is t
        return
    (g_sds, g_out), (t_sds, t_out) = g, t
    for i, (a, b) in enumerate(zip(g_sds, t_sds)):
        assert list(a) == list(b)
        for k in b:
            assert a[k][0] == b[k][0], (i, k)
            np.testing.assert_allclose(a[k][1], b[k][1], rtol=1e-6, atol=1e-6,
                                       err_msg=f"{i} {k}")
    np.testing.assert_allclose(g_out, t_out, rtol=1e-5, atol=1e-6)


def test_averaged_model_refuses_both_functions_and_decay_out_of_range() -> None:
    def both(lib: Any) -> Any:
        s = lib.optim.swa_utils
        return s.AveragedModel(lib.nn.Linear(1, 1), avg_fn=s.get_swa_avg_fn(),
                               multi_avg_fn=s.get_swa_multi_avg_fn())

    g, t = both_or_error(both)
    assert g is t is AssertionError
    for fn in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        for decay in (-0.1, 1.5):
            def bad(lib: Any, fn: str = fn, decay: float = decay) -> Any:
                return getattr(lib.optim.swa_utils, fn)(decay)

            g, t = both_or_error(bad)
            assert g is t is ValueError
    with pytest.raises(ValueError, match=r"Invalid decay value 2 provided"):
        gradsum.optim.swa_utils.get_ema_avg_fn(2)


def test_averaged_model_keeps_its_copy_and_module_api() -> None:
    net = gradsum.nn.Linear(2, 1)
    avg = gradsum.optim.swa_utils.AveragedModel(net)
    assert list(avg.state_dict()) == ["n_averaged", "module.weight", "module.bias"]
    assert avg.n_averaged.dtype == gradsum.int64 and avg.n_averaged.item() == 0
    with gradsum.no_grad():
        net.weight.fill_(3.0)
    assert avg.module.weight.tolist() != net.weight.tolist()  # (a deep copy)
    avg.update_parameters(net)
    assert avg.module.weight.tolist() == net.weight.tolist()
    assert avg.module.weight is not net.weight


@pytest.mark.parametrize("training", [True, False])
def test_update_bn_matches_torch(training: bool) -> None:
    def run(lib: Any) -> Any:
        net = make_net(lib)
        net[1].momentum = 0.3
        perturb(lib, net, 0)
        net.train(training)
        rng = np.random.default_rng(5)
        loader = [lib.tensor(rng.standard_normal((4, 3)), dtype=lib.float32),
                  (lib.tensor(rng.standard_normal((6, 3)), dtype=lib.float32), "label"),
                  [lib.tensor(rng.standard_normal((3, 3)), dtype=lib.float32)]]
        lib.optim.swa_utils.update_bn(loader, net)
        bn = net[1]
        return (bn.running_mean.tolist(), bn.running_var.tolist(),
                bn.num_batches_tracked.item(), bn.momentum, net.training, bn.training)

    g, t = run(gradsum), run(torch)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g[1], t[1], rtol=1e-5, atol=1e-6)
    assert g[2:] == t[2:]


def test_update_bn_without_batchnorm_leaves_the_model_alone() -> None:
    def run(lib: Any) -> Any:
        net = lib.nn.Linear(2, 2)
        net.eval()
        calls = []
        lib.optim.swa_utils.update_bn([lib.ones(1, 2)], net)
        net.register_forward_hook(lambda *a: calls.append(1))
        return net.training, calls

    assert run(gradsum) == run(torch)


SWALR_CONFIGS = [
    {"swa_lr": 0.05},
    {"swa_lr": 0.5, "anneal_epochs": 3, "anneal_strategy": "linear"},
    {"swa_lr": [0.05, 0.2], "anneal_epochs": 0},
    {"swa_lr": 0.01, "anneal_epochs": 1, "anneal_strategy": "cos"},
    {"swa_lr": [0.3, 0.0], "anneal_epochs": 4, "anneal_strategy": "linear", "lr": "LR"},
]


@pytest.mark.parametrize("kw", SWALR_CONFIGS, ids=[str(i) for i in range(len(SWALR_CONFIGS))])
def test_swalr_matches_torch(kw: dict[str, Any]) -> None:
    def run(lib: Any) -> Any:
        kw2 = dict(kw)
        lr = lib.tensor(0.4) if kw2.pop("lr", None) == "LR" else 0.4
        a, b = lib.nn.Parameter(lib.ones(1)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=lr)
        sched = lib.optim.swa_utils.SWALR(opt, **kw2)
        lrs = [[float(v) for v in sched.get_last_lr()]]
        for _ in range(7):
            opt.step()
            sched.step()
            lrs.append([float(v) for v in sched.get_last_lr()])
        sd = sched.state_dict()
        keys = sorted(sd)
        # resume: a fresh scheduler loaded from the state dict continues the same way
        opt2 = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=0.4)
        opt2.load_state_dict(opt.state_dict())
        sched2 = lib.optim.swa_utils.SWALR(opt2, swa_lr=1.0, anneal_strategy="linear")
        sched2.load_state_dict(sd)
        more = []
        for s, o in ((sched, opt), (sched2, opt2)):
            o.step()
            s.step()
            more.append([float(v) for v in s.get_last_lr()])
        return lrs, keys, more, [g["swa_lr"] for g in opt.param_groups], sched2.anneal_func(0.5)

    g, t = run(gradsum), run(torch)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-12, atol=1e-15)
    assert g[1] == t[1]
    np.testing.assert_allclose(g[2], t[2], rtol=1e-12, atol=1e-15)
    assert g[3] == t[3] and g[4] == t[4]


SWALR_BAD = [
    {"swa_lr": [0.1, 0.2, 0.3]}, {"swa_lr": 0.1, "anneal_strategy": "step"},
    {"swa_lr": 0.1, "anneal_epochs": -1}, {"swa_lr": 0.1, "anneal_epochs": 2.0},
]


@pytest.mark.parametrize("kw", SWALR_BAD, ids=[str(i) for i in range(len(SWALR_BAD))])
def test_swalr_argument_errors_like_torch(kw: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[str, str]:
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        try:
            lib.optim.swa_utils.SWALR(opt, **kw)
        except Exception as e:
            return type(e).__name__, str(e).split(".")[0]
        return "ok", ""

    g, t = run(gradsum), run(torch)
    assert g == t and t[0] == "ValueError"


def test_swalr_get_lr_outside_step_warns() -> None:
    opt = gradsum.optim.SGD([gradsum.nn.Parameter(gradsum.ones(1))], lr=0.1)
    sched = gradsum.optim.swa_utils.SWALR(opt, swa_lr=0.01)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()


# -- swap_in_optimizer_params_and_state --------------------------------------------------------


def test_swap_in_optimizer_params_and_state_matches_torch() -> None:
    def run(lib: Any) -> Any:
        w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        v = lib.nn.Parameter(lib.tensor([[0.5, -0.5]]))
        opt = lib.optim.Adam([{"params": [w]}, {"params": [v], "lr": 0.1}], lr=0.01)
        w.grad, v.grad = lib.ones(2), lib.ones(1, 2)
        opt.step()
        sd = opt.state_dict()
        swap_sd = {"state": {i: {k: t.clone() for k, t in s.items()}
                             for i, s in sd["state"].items()},
                   "param_groups": [dict(g) for g in sd["param_groups"]]}
        swap_sd["param_groups"][0]["lr"] = 1.0
        w2 = lib.nn.Parameter(lib.tensor([3.0, 3.0]))
        v2 = lib.nn.Parameter(lib.tensor([[0.0, 0.0]]))
        w2.grad, v2.grad = lib.tensor([1.0, -1.0]), lib.ones(1, 2)
        params_before = opt.param_groups[0]["params"]
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w2, "v": v2}, swap_sd):
            opt.step()
            inside = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is w2)
        after = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"] is params_before,
                 float(opt.state[w]["step"]))
        return (inside, after, w.tolist(), w2.tolist(), v2.tolist(),
                swap_sd["state"][0]["exp_avg"].tolist(), float(swap_sd["state"][0]["step"]))

    g, t = run(gradsum), run(torch)
    assert g[:2] == t[:2]
    for a, b in zip(g[2:], t[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_swap_in_errors_like_torch() -> None:
    def run(lib: Any) -> list[str]:
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        out = []
        cases = [{"state": {}, "param_groups": []}]
        try:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w}, cases[0]):
                pass
        except RuntimeError as e:
            out.append(str(e))
        w.grad = lib.ones(2)
        opt.step()
        sd = opt.state_dict()
        bad = [
            [],
            {"state": [], "param_groups": sd["param_groups"]},
            {"state": {0: 1}, "param_groups": sd["param_groups"]},
            {"state": sd["state"], "param_groups": []},
            {"state": sd["state"], "param_groups": [{**sd["param_groups"][0], "x": 1}]},
            {"state": {5: {}}, "param_groups": sd["param_groups"]},
        ]
        for b in bad:
            try:
                with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w}, b):
                    pass
            except RuntimeError as e:
                out.append(str(e).split(".")[0])
        try:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {}, sd):
                pass
        except RuntimeError as e:
            out.append(str(e).split(".")[0])
        return out

    g, t = run(gradsum), run(torch)
    assert len(g) == len(t) == 8
    assert [s[:60] for s in g] == [s[:60] for s in t]
