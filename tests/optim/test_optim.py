"""gradsum.optim against torch.optim: 20-step trajectories for each optimizer over a grid of
options, with steps where a parameter's grad is None, exactly zero, or accumulated over two
backward calls; parameters AND optimizer state compared after every step. Then the base
class: zero_grad, param groups, state_dict round trip, load errors, hooks, argument errors."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum import nn, optim  # noqa: E402
from nn_helpers import g_of, t_of, to_np  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6
SHAPES = {"w1": (4, 3), "b1": (4,), "w2": (2, 4), "b2": (2,)}


def make_pair(seed: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same small two-layer model's parameters in torch and in gradsum (from torch)."""
    gen = torch.Generator().manual_seed(seed)
    tp = {k: torch.nn.Parameter(torch.randn(*s, generator=gen) * 0.5) for k, s in SHAPES.items()}
    gp = {k: nn.Parameter(gradsum.tensor(v.detach().numpy().copy())) for k, v in tp.items()}
    return tp, gp


def forward(p: dict[str, Any], x: Any, y: Any, lib: Any) -> Any:
    h = lib.tanh(x @ p["w1"].T + p["b1"])
    out = h @ p["w2"].T + p["b2"]
    return ((out - y) ** 2).mean()


def backward_both(tp: dict[str, Any], gp: dict[str, Any], rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal((5, 2)).astype(np.float32)
    forward(tp, t_of(torch, x), t_of(torch, y), torch).backward()
    forward(gp, g_of(x), g_of(y), gradsum).backward()


def assert_close(actual: np.ndarray, desired: np.ndarray, msg: str, atol: float = ATOL) -> None:
    """float32 tolerance, with the absolute part scaled by the tensor's magnitude (long
    trajectories amplify last-bit differences of the forward/backward kernels)."""
    scale = max(1.0, float(np.abs(desired).max())) if desired.size else 1.0
    np.testing.assert_allclose(actual, desired, rtol=RTOL, atol=atol * scale, err_msg=msg)


def compare_state(topt: Any, gopt: Any, tp: dict[str, Any], gp: dict[str, Any],
                  step: int, atol: float = ATOL) -> None:
    for k in SHAPES:
        assert_close(to_np(gp[k]), tp[k].detach().numpy(), f"param {k} after step {step}", atol)
        ts, gs = topt.state.get(tp[k], {}), gopt.state.get(gp[k], {})
        assert list(gs) == list(ts), f"state keys of {k} after step {step}"
        for key, tv in ts.items():
            gv = gs[key]
            if isinstance(tv, torch.Tensor):
                assert isinstance(gv, gradsum.Tensor)
                assert gv.dtype.name == str(tv.dtype).replace("torch.", ""), key
                assert tuple(gv.shape) == tuple(tv.shape), key
                assert_close(to_np(gv), tv.numpy(), f"state[{k}][{key}] after step {step}",
                             atol)
            else:
                assert gv == tv
    tsd, gsd = topt.state_dict(), gopt.state_dict()
    assert gsd["param_groups"] == tsd["param_groups"]
    assert sorted(gsd["state"]) == sorted(tsd["state"])


def run_trajectory(name: str, kwargs: dict[str, Any], steps: int = 20) -> None:
    tp, gp = make_pair()
    topt = getattr(torch.optim, name)(list(tp.values()), **kwargs)
    gopt = getattr(optim, name)(list(gp.values()), **kwargs)
    buffers = {k: v._array for k, v in gp.items()}
    # RMSprop divides by sqrt of a running average: last-bit differences of the two float32
    # kernels (measured ~2e-6 even with identical gradients) are amplified, and a momentum
    # buffer sums such terms; everything else stays within 1e-6.
    atol = 1e-5 if name == "RMSprop" else ATOL
    rng = np.random.default_rng(42)
    compare_state(topt, gopt, tp, gp, -1)
    for t in range(steps):
        set_to_none = t % 4 != 2
        topt.zero_grad(set_to_none=set_to_none)
        gopt.zero_grad(set_to_none=set_to_none)
        backward_both(tp, gp, rng)
        if t % 5 == 1:  # gradients accumulated over two backward calls
            backward_both(tp, gp, rng)
        if t < 3 or t % 7 == 3:  # b1 has no gradient: skipped entirely
            tp["b1"].grad = None
            gp["b1"].grad = None
        if t % 6 == 4:  # an exactly-zero gradient is a real gradient
            tp["w2"].grad.zero_()
            gp["w2"].grad.zero_()
        topt.step()
        gopt.step()
        compare_state(topt, gopt, tp, gp, t, atol)
    for k, p in gp.items():
        assert p._array is buffers[k], "updates must be written into the parameter's buffer"


GRID = {
    "SGD": [
        dict(lr=0.1),
        dict(lr=0.1, momentum=0.9),
        dict(lr=0.05, momentum=0.9, dampening=0.5),
        dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
        dict(lr=0.1, momentum=0.5, weight_decay=0.1),
        dict(lr=0.01, momentum=0.9, weight_decay=0.05, maximize=True),
    ],
    "Adam": [
        dict(),
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, amsgrad=True),
        dict(lr=0.02, amsgrad=True, weight_decay=0.05, maximize=True),
        dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6),
    ],
    "AdamW": [
        dict(lr=0.01),
        dict(lr=0.01, amsgrad=True, weight_decay=0.1),
        dict(lr=0.01, maximize=True, betas=(0.5, 0.99)),
    ],
    "RMSprop": [
        dict(),
        dict(lr=0.01, centered=True),
        dict(lr=0.01, momentum=0.9),
        dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1),
        dict(lr=0.005, alpha=0.9, eps=1e-6, maximize=True),
    ],
    "Adagrad": [
        dict(),
        dict(lr=0.1, lr_decay=0.1),
        dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5),
        dict(lr=0.05, maximize=True, eps=1e-5),
    ],
}
CASES = [pytest.param(n, kw, id=f"{n}-{i}") for n, kws in GRID.items()
         for i, kw in enumerate(kws)]


@pytest.mark.parametrize("name,kwargs", CASES)
def test_trajectory_matches_torch(name: str, kwargs: dict[str, Any]) -> None:
    run_trajectory(name, kwargs)


@pytest.mark.parametrize("name", list(GRID))
def test_defaults_match_torch(name: str) -> None:
    tp, gp = make_pair()
    assert getattr(optim, name)([gp["w1"]]).defaults == getattr(torch.optim, name)(
        [tp["w1"]]).defaults


def test_none_grad_skips_and_zero_grad_counts() -> None:
    a, b = nn.Parameter(gradsum.ones(2)), nn.Parameter(gradsum.ones(2))
    opt = optim.Adam([a, b], lr=0.1, weight_decay=0.5)
    a.grad = gradsum.zeros(2)
    opt.step()
    assert b not in opt.state and b.tolist() == [1.0, 1.0]  # None: no state, no decay
    assert opt.state[a]["step"].item() == 1.0 and a.tolist() != [1.0, 1.0]  # zero is real
    assert opt.state[a]["step"].dtype == gradsum.float32 and opt.state[a]["step"].ndim == 0
    b.grad = gradsum.ones(2)
    opt.step()
    assert opt.state[a]["step"].item() == 2.0 and opt.state[b]["step"].item() == 1.0
    sgd = optim.SGD([a, b], lr=0.1, momentum=0.9, dampening=0.5)
    a.grad, b.grad = gradsum.tensor([2.0, 4.0]), None
    sgd.step()
    assert sgd.state[a]["momentum_buffer"].tolist() == [2.0, 4.0]  # plain copy, no dampening
    assert sgd.state[a]["momentum_buffer"] is not a.grad
    assert b not in sgd.state
    assert optim.SGD([a], lr=0.1).step() is None and len(optim.SGD([a]).state) == 0


def test_adagrad_state_at_construction() -> None:
    a, b = nn.Parameter(gradsum.ones(2)), nn.Parameter(gradsum.ones(3, dtype=gradsum.float64))
    opt = optim.Adagrad([a, b], initial_accumulator_value=0.25)
    for p in (a, b):
        assert list(opt.state[p]) == ["step", "sum"]
        assert opt.state[p]["step"].item() == 0.0
        assert opt.state[p]["step"].dtype == gradsum.float32
        assert opt.state[p]["sum"].dtype == p.dtype and opt.state[p]["sum"].tolist() == [
            0.25] * p.numel()
    c = nn.Parameter(gradsum.ones(1))
    opt.add_param_group({"params": [c]})
    c.grad = gradsum.ones(1)
    opt.step()  # a parameter added later gets its state at its first gradient
    assert opt.state[c]["step"].item() == 1.0


def test_optimizer_zero_grad_both_ways() -> None:
    p = nn.Parameter(gradsum.ones(3))
    opt = optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    held = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is held and held.tolist() == [0.0, 0.0, 0.0]
    (p * 3).sum().backward()
    assert p.grad is held and held.tolist() == [3.0, 3.0, 3.0]
    (p * p).sum().backward(create_graph=True)
    assert p.grad.grad_fn is not None
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and g.grad_fn is None and g.tolist() == [0.0] * 3
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_and_errors_like_torch() -> None:
    tp, gp = make_pair()
    go = optim.SGD([{"params": [gp["w1"]], "lr": 0.5}, {"params": gp["b1"]}], lr=0.1,
                   momentum=0.9)
    to = torch.optim.SGD([{"params": [tp["w1"]], "lr": 0.5}, {"params": tp["b1"]}], lr=0.1,
                         momentum=0.9)
    assert go.state_dict()["param_groups"] == to.state_dict()["param_groups"]
    assert repr(go) == repr(to)

    def both(fn_g: Any, fn_t: Any) -> None:
        with pytest.raises(Exception) as eg:
            fn_g()
        with pytest.raises(Exception) as et:
            fn_t()
        assert type(eg.value) is type(et.value)
        assert str(eg.value).startswith(str(et.value)[:40])  # (torch's phrase first)

    both(lambda: go.add_param_group({"params": [gp["w1"]]}),
         lambda: to.add_param_group({"params": [tp["w1"]]}))
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter"):
        go.add_param_group({"params": [gp["w2"], gp["b1"]]})
    assert len(go.param_groups) == 2  # refused groups are not added
    both(lambda: optim.SGD(gp["w1"]), lambda: torch.optim.SGD(tp["w1"]))
    both(lambda: optim.SGD([]), lambda: torch.optim.SGD([]))
    both(lambda: optim.SGD([gp["w1"] * 2]), lambda: torch.optim.SGD([tp["w1"] * 2]))
    both(lambda: optim.SGD([1.0]), lambda: torch.optim.SGD([1.0]))
    for name, kw in [("SGD", dict(lr=-1)), ("SGD", dict(momentum=-0.1)),
                     ("SGD", dict(weight_decay=-1)), ("SGD", dict(nesterov=True)),
                     ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1)),
                     ("Adam", dict(betas=(1.0, 0.9))), ("Adam", dict(betas=(0.9, -0.1))),
                     ("AdamW", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-1)),
                     ("RMSprop", dict(momentum=-1)), ("Adagrad", dict(lr_decay=-1)),
                     ("Adagrad", dict(initial_accumulator_value=-1)),
                     ("Adagrad", dict(eps=-1))]:
        with pytest.raises(ValueError) as eg:
            getattr(optim, name)([gp["w1"]], **kw)
        with pytest.raises(ValueError) as et:
            getattr(torch.optim, name)([tp["w1"]], **kw)
        assert str(eg.value).startswith(str(et.value))  # (torch's text, then values and fix)


def test_named_parameters_groups() -> None:
    lin = nn.Linear(2, 2)
    opt = optim.Adam(lin.named_parameters())
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


def _train(opt: Any, params: list[Any], steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        opt.zero_grad()
        x = g_of(rng.standard_normal((3, 2)).astype(np.float32))
        (params[0] @ x.T).pow(2).mean().backward()
        opt.step()


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(centered=True, momentum=0.1)),
                                         ("Adagrad", dict(lr=0.1))])
def test_state_dict_round_trip_resumes_exactly(name: str, kwargs: dict[str, Any]) -> None:
    w = nn.Parameter(gradsum.randn(4, 2))
    opt = getattr(optim, name)([w], **kwargs)
    _train(opt, [w], 3, 0)
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"] and sd["param_groups"][0]["params"] == [0]
    w2 = nn.Parameter(w.detach().clone())
    opt2 = getattr(optim, name)([w2], **kwargs)
    opt2.load_state_dict(sd)
    for key, v in opt.state[w].items():
        assert gradsum.equal(opt2.state[w2][key], v)
        assert opt2.state[w2][key] is not v  # deep copy: the two optimizers share nothing
    _train(opt, [w], 4, 1)
    _train(opt2, [w2], 4, 1)
    assert gradsum.equal(w, w2)
    for key, v in opt.state[w].items():
        assert gradsum.equal(opt2.state[w2][key], v)


def test_state_dict_layout_matches_torch() -> None:
    tp, gp = make_pair()
    to = torch.optim.Adam([{"params": [tp["w1"], tp["b1"]]}, {"params": [tp["w2"]], "lr": 0.1}])
    go = optim.Adam([{"params": [gp["w1"], gp["b1"]]}, {"params": [gp["w2"]], "lr": 0.1}])
    for o, p, lib in [(to, tp, torch), (go, gp, gradsum)]:
        p["w2"].grad = lib.ones(*SHAPES["w2"])
        p["w1"].grad = lib.ones(*SHAPES["w1"])
        o.step()
    ts, gs = to.state_dict(), go.state_dict()
    assert gs["param_groups"] == ts["param_groups"]
    assert sorted(gs["state"]) == sorted(ts["state"]) == [0, 2]
    assert gs["state"][2] is go.state[gp["w2"]]  # live, like torch


def test_load_state_dict_errors_and_casts() -> None:
    a, b = nn.Parameter(gradsum.ones(2)), nn.Parameter(gradsum.ones(3))
    opt = optim.Adam([a, b])
    a.grad, b.grad = gradsum.ones(2), gradsum.ones(3)
    opt.step()
    sd = opt.state_dict()
    other = optim.Adam([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict(sd)
    assert len(other.state) == 0
    short = optim.Adam([a])
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        short.load_state_dict(sd)
    assert len(short.state) == 0
    a64 = nn.Parameter(gradsum.ones(2, dtype=gradsum.float64))
    b64 = nn.Parameter(gradsum.ones(3, dtype=gradsum.float64))
    opt64 = optim.Adam([a64, b64], lr=0.5)
    opt64.load_state_dict(sd)
    assert opt64.state[a64]["exp_avg"].dtype == gradsum.float64  # cast to the param's dtype
    assert opt64.state[a64]["step"].dtype == gradsum.float32  # step kept as saved
    assert opt64.param_groups[0]["lr"] == sd["param_groups"][0]["lr"]
    assert opt64.param_groups[0]["params"][0] is a64


def test_step_hooks_and_closure() -> None:
    p = nn.Parameter(gradsum.ones(1))
    opt = optim.SGD([p], lr=0.5)
    order: list[str] = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: order.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: order.append("post"))

    def closure() -> Any:
        order.append("closure")
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert order == ["pre", "closure", "post"] and loss.item() == 1.0
    assert p.tolist() == [0.0]
    h1.remove()
    h2.remove()
    order.clear()
    opt.step()
    assert order == []
    with gradsum.no_grad():  # the closure runs with grad enabled even under no_grad
        assert opt.step(closure).requires_grad
    for cls in (optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad):
        o = cls([p])
        seen: list[int] = []
        o.register_step_post_hook(lambda o_, a, k, seen=seen: seen.append(1))
        o.step()
        assert seen == [1]


def test_update_runs_without_recording_and_keeps_identity() -> None:
    p = nn.Parameter(gradsum.ones(3))
    opt = optim.Adam([p])
    v0 = p._version
    (p * 2).sum().backward()
    opt.step()
    assert p.grad_fn is None and p.is_leaf and p.requires_grad
    assert p._version > v0  # the in-place update is visible to saved-tensor checks


def test_deepcopy_optimizer_state_values() -> None:
    p = nn.Parameter(gradsum.ones(2))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = gradsum.ones(2)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    assert sd["state"][0]["momentum_buffer"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
])
def test_zero_dim_parameters_match_torch(name, kwargs):
    """0-d parameters: NumPy turns 0-d arithmetic into scalars; state must stay 0-d tensors."""
    torch = pytest.importorskip("torch", reason="torch (the reference oracle) is not installed")
    out = {}
    for lib in (gradsum, torch):
        p = lib.tensor(1.0, requires_grad=True)
        opt = getattr(lib.optim, name)([p], **kwargs)
        traj = []
        for k in range(5):
            p.grad = None if k == 2 else lib.tensor([0.5, 0.0, 0.0, -0.25, 0.0][k])
            opt.step()
            traj.append(float(p.detach()))
        state = {key: (tuple(v.shape), float(v)) for key, v in opt.state[p].items()}
        out[lib.__name__] = (traj, state)
    g, t = out["gradsum"], out["torch"]
    np.testing.assert_allclose(g[0], t[0], rtol=1e-5, atol=1e-6)
    assert g[1].keys() == t[1].keys()
    for key in g[1]:
        assert g[1][key][0] == t[1][key][0] == ()
        np.testing.assert_allclose(g[1][key][1], t[1][key][1], rtol=1e-5, atol=1e-6)
