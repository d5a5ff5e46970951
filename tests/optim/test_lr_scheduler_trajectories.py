"""The schedulers added to gradsum.optim.lr_scheduler (ConstantLR, MultiplicativeLR,
PolynomialLR, ChainedScheduler, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR,
ReduceLROnPlateau) against torch's: the rates and momentums every step (two param groups,
SGD with momentum and Adam), get_last_lr, last_epoch, state_dict keys and a resumed run,
argument validation, and nesting in ChainedScheduler/SequentialLR. The torch-free tests at
the end check a few of the same behaviours with hand-computed values."""

from __future__ import annotations

import copy
import math
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import gradsum
from gradsum import optim

try:
    import torch
except ImportError:  # the differential tests skip; the torch-free ones still run
    torch = None

needs_torch = pytest.mark.skipif(
    torch is None,
    reason="torch (the reference oracle) is not installed: pip install -e .[test]",
)

S_G = optim.lr_scheduler
LRS = (0.1, 0.02)
STEPS = 30


def make_opt(lib: Any, kind: str = "sgd", lrs: tuple[float, ...] = LRS) -> Any:
    params = [lib.nn.Parameter(lib.ones(1)) for _ in lrs]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, lrs)]
    if kind == "sgd":
        return lib.optim.SGD(groups, lr=1.0, momentum=0.9)
    if kind == "adam":
        return lib.optim.Adam(groups, lr=1.0, betas=(0.9, 0.99))
    return lib.optim.Adagrad(groups, lr=1.0)


def snapshot(opt: Any) -> list[list[float]]:
    """Each group's lr and momentum (SGD's ``momentum`` or Adam's ``beta1``)."""
    out = []
    for g in opt.param_groups:
        mom = g["betas"][0] if "betas" in g else g.get("momentum", 0.0)
        out.append([float(g["lr"]), float(mom)])
    return out


def _flat(v: Any) -> list[float]:
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat(item)]
    return [float(v)]


def close(a: Any, b: Any) -> bool:
    """Equal to float precision (nested lists flattened)."""
    return _flat(a) == pytest.approx(_flat(b), rel=1e-12, abs=1e-15)


class Scale:
    """A callable object: its ``__dict__`` is saved by the schedulers' state_dict."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __call__(self, x: float) -> float:
        return self.factor ** x


def _mult(e: int) -> float:
    return 0.9 if e % 2 else 0.97


def _cyclic_scale(x: float) -> float:
    return 1.0 / (1.0 + 0.1 * x)


# (id, optimizer kind, factory(lr_scheduler module, optimizer))
CASES: list[tuple[str, str, Callable[[Any, Any], Any]]] = [
    ("ConstantLR", "sgd", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4)),
    ("ConstantLR-default", "sgd", lambda S, o: S.ConstantLR(o)),
    ("MultiplicativeLR", "sgd", lambda S, o: S.MultiplicativeLR(o, _mult)),
    ("MultiplicativeLR-list", "sgd",
     lambda S, o: S.MultiplicativeLR(o, [lambda e: 0.95, Scale(0.99)])),
    ("PolynomialLR", "sgd", lambda S, o: S.PolynomialLR(o, total_iters=7, power=1.5)),
    ("PolynomialLR-default", "sgd", lambda S, o: S.PolynomialLR(o)),
    ("CAWR", "sgd", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4, eta_min=0.001)),
    ("CAWR-mult", "sgd", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3)),
    ("CyclicLR-triangular", "sgd", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4)),
    ("CyclicLR-triangular2", "sgd", lambda S, o: S.CyclicLR(
        o, [0.01, 0.001], [0.1, 0.05], step_size_up=3, step_size_down=5, mode="triangular2",
        base_momentum=[0.8, 0.7], max_momentum=[0.9, 0.95])),
    ("CyclicLR-exp_range", "adam", lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97)),
    ("CyclicLR-scale_fn-iter", "sgd", lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=2, step_size_down=3, scale_fn=_cyclic_scale,
        scale_mode="iterations")),
    ("CyclicLR-scale_obj", "adam", lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=2, scale_fn=Scale(0.8))),
    ("CyclicLR-no-momentum", "adagrad", lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, cycle_momentum=False)),
    ("OneCycleLR-cos", "sgd", lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=STEPS)),
    ("OneCycleLR-linear", "adam", lambda S, o: S.OneCycleLR(
        o, max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=6, anneal_strategy="linear",
        div_factor=10.0, final_div_factor=100.0, pct_start=0.4)),
    ("OneCycleLR-three_phase", "sgd", lambda S, o: S.OneCycleLR(
        o, max_lr=0.3, total_steps=STEPS + 3, three_phase=True, base_momentum=[0.8, 0.85],
        max_momentum=0.9)),
    ("OneCycleLR-no-momentum", "adagrad", lambda S, o: S.OneCycleLR(
        o, max_lr=0.3, total_steps=STEPS, cycle_momentum=False)),
    ("Chained", "sgd", lambda S, o: S.ChainedScheduler([
        S.ConstantLR(o, factor=0.5, total_iters=3), S.ExponentialLR(o, gamma=0.95),
        S.PolynomialLR(o, total_iters=20, power=0.5)])),
    ("Chained-mult-cawr", "sgd", lambda S, o: S.ChainedScheduler([
        S.MultiplicativeLR(o, lambda e: 0.98), S.CosineAnnealingWarmRestarts(o, T_0=5)], o)),
    ("Sequential-const-poly", "sgd", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.2, total_iters=3), S.PolynomialLR(o, total_iters=10)],
        milestones=[5])),
    ("Sequential-linear-cawr", "sgd", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=4),
            S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)], milestones=[4])),
    ("Sequential-chained", "sgd", lambda S, o: S.SequentialLR(
        o, [S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=2),
                                S.ExponentialLR(o, gamma=0.9)]),
            S.MultiplicativeLR(o, lambda e: 0.95)], milestones=[6])),
    ("Chained-sequential", "sgd", lambda S, o: S.ChainedScheduler([
        S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=2),
                           S.PolynomialLR(o, total_iters=8)], milestones=[3]),
        S.ExponentialLR(o, gamma=0.99)])),
]
IDS = [c[0] for c in CASES]


def keys(sd: Any) -> Any:
    """The key structure of a state dict (nested for Chained/SequentialLR)."""
    if isinstance(sd, dict):
        return {k: keys(v) if k == "_schedulers" else None for k, v in sd.items()}
    if isinstance(sd, list):
        return [keys(x) for x in sd]
    return None


def run(lib: Any, kind: str, make: Callable[[Any, Any], Any], steps: int = STEPS,
        resume_at: int | None = None) -> list[Any]:
    """The values after construction and after each step; with ``resume_at``, the run
    continues from there in a fresh optimizer+scheduler loaded from state dicts."""
    opt = make_opt(lib, kind)
    sched = make(lib.optim.lr_scheduler, opt)
    out = [(snapshot(opt), list(sched.get_last_lr()), getattr(sched, "last_epoch", None))]
    for i in range(1, steps + 1):
        opt.step()
        sched.step()
        out.append((snapshot(opt), list(sched.get_last_lr()),
                    getattr(sched, "last_epoch", None)))
        if i == resume_at:
            ssd = pickle.loads(pickle.dumps(sched.state_dict()))
            osd = copy.deepcopy(opt.state_dict())
            opt = make_opt(lib, kind)
            sched = make(lib.optim.lr_scheduler, opt)
            opt.load_state_dict(osd)
            sched.load_state_dict(ssd)
    return out


def assert_same_runs(g: list[Any], t: list[Any]) -> None:
    assert len(g) == len(t)
    for i, ((gv, gl, ge), (tv, tl, te)) in enumerate(zip(g, t)):
        assert close(gv, tv), (i, gv, tv)
        assert close([float(x) for x in gl], [float(x) for x in tl]), (i, gl, tl)
        assert ge == te, (i, ge, te)


@needs_torch
@pytest.mark.parametrize("name,kind,make", CASES, ids=IDS)
def test_schedule_matches_torch(name: str, kind: str, make: Any) -> None:
    with warnings.catch_warnings(record=True) as gw:
        warnings.simplefilter("always")
        g = run(gradsum, kind, make)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        t = run(torch, kind, make)
    assert_same_runs(g, t)
    # the same warnings (none, but for a ChainedScheduler inside a SequentialLR, where the
    # chained schedulers' first steps come from the SequentialLR's construction)
    assert [type(w.message) for w in gw] == [type(w.message) for w in tw]
    go, to = make_opt(gradsum, kind), make_opt(torch, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs, ts = make(S_G, go), make(torch.optim.lr_scheduler, to)
    for key in ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"):
        assert [g.get(key) for g in go.param_groups] == pytest.approx(
            [g.get(key) for g in to.param_groups]), key
    assert keys(gs.state_dict()) == keys(ts.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(7):
            go.step()
            to.step()
            gs.step()
            ts.step()
    assert_same_values(gs.state_dict(), ts.state_dict())


def assert_same_values(gsd: dict[str, Any], tsd: dict[str, Any]) -> None:
    """The state dicts hold the same values (a nested scheduler's dicts too; functions,
    which torch saves as None or a callable object's ``__dict__``, as in torch)."""
    assert gsd.keys() == tsd.keys()
    for key, tv in tsd.items():
        gv = gsd[key]
        if key == "_schedulers":
            for a, b in zip(gv, tv, strict=True):
                assert_same_values(a, b)
        elif isinstance(tv, (int, float, list, tuple)) and not isinstance(tv, bool) and all(
                isinstance(x, (int, float)) for x in _flat_or_none(tv)):
            assert close(gv, tv), (key, gv, tv)
        else:
            assert gv == tv, (key, gv, tv)


def _flat_or_none(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _flat_or_none(item)]
    return [v]


@needs_torch
@pytest.mark.parametrize("name,kind,make", CASES, ids=IDS)
def test_state_dict_round_trip_resumes_like_torch(name: str, kind: str, make: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (Sequential-chained warns in both, as above)
        g = run(gradsum, kind, make, resume_at=11)
        t = run(torch, kind, make)
    assert_same_runs(g, t)


def plateau_cases() -> list[tuple[str, dict[str, Any], list[float]]]:
    down = [5.0, 4.0, 4.0, 3.99999, 4.1, 4.2, 3.0, 3.0, 3.0, 3.0, 2.9, 2.95, 3.0, 3.0, 3.0,
            3.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    up = [-x for x in down]
    return [
        ("min-rel", {"patience": 1, "factor": 0.5}, down),
        ("min-abs", {"patience": 0, "threshold": 0.05, "threshold_mode": "abs"}, down),
        ("max-rel", {"mode": "max", "patience": 2, "cooldown": 2, "factor": 0.3}, up[::-1]),
        ("max-abs", {"mode": "max", "threshold_mode": "abs", "threshold": 0.5,
                     "patience": 1}, [-x for x in up]),
        ("min_lr-list", {"patience": 0, "min_lr": [0.05, 0.001], "factor": 0.5}, down),
        ("min_lr-scalar-eps", {"patience": 0, "min_lr": 0.004, "eps": 1e-3, "factor": 0.7},
         down),
        ("cooldown", {"patience": 0, "cooldown": 3}, down),
    ]


def plateau_run(lib: Any, kwargs: dict[str, Any], metrics: list[float],
                resume_at: int | None = None) -> list[Any]:
    opt = make_opt(lib)
    s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    out = []
    for i, m in enumerate(metrics):
        opt.step()
        s.step(lib.tensor(m) if i % 3 == 0 else m)  # a metric may be a 0-d tensor
        out.append((snapshot(opt), list(s.get_last_lr()), s.last_epoch, s.num_bad_epochs,
                    s.cooldown_counter, s.best, s.in_cooldown))
        if i == resume_at:
            ssd = pickle.loads(pickle.dumps(s.state_dict()))
            osd = copy.deepcopy(opt.state_dict())
            opt = make_opt(lib)
            s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt)  # (defaults: all restored)
            opt.load_state_dict(osd)
            s.load_state_dict(ssd)
    return out


@needs_torch
@pytest.mark.parametrize("name,kwargs,metrics", plateau_cases(),
                         ids=[c[0] for c in plateau_cases()])
def test_reduce_on_plateau_matches_torch(name: str, kwargs: dict[str, Any],
                                         metrics: list[float]) -> None:
    t = plateau_run(torch, kwargs, metrics)
    for resume in (None, 7):
        g = plateau_run(gradsum, kwargs, metrics, resume_at=resume)
        for i, (gv, tv) in enumerate(zip(g, t)):
            assert close(gv[0], tv[0]), (i, gv, tv)
            assert close(gv[1], tv[1]), (i, gv, tv)
            assert gv[2:5] == tv[2:5] and gv[6] == tv[6], (i, gv, tv)
            assert close(gv[5], tv[5]), (i, gv, tv)
    go, to = make_opt(gradsum), make_opt(torch)
    gs = S_G.ReduceLROnPlateau(go, **kwargs)
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(to, **kwargs)
    assert sorted(gs.state_dict()) == sorted(ts.state_dict())
    assert "initial_lr" not in go.param_groups[0]


@needs_torch
@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_and_interleaved_epochs(T_mult: int) -> None:
    def prog(lib: Any) -> list[Any]:
        opt = make_opt(lib)
        s = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=T_mult,
                                                                eta_min=0.002)
        out = []
        iters = 4
        for epoch in range(12):
            for i in range(iters):
                opt.step()
                s.step(epoch + i / iters)
                out.append((snapshot(opt), s.last_epoch, s.T_i, float(s.T_cur)))
        for e in (None, 26, None, None, 0.5, None, 9, 2.75, None):
            s.step(e)
            out.append((snapshot(opt), s.last_epoch, s.T_i, float(s.T_cur)))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (step(epoch) does not warn here, in either)
        g, t = prog(gradsum), prog(torch)
    for i, (a, b) in enumerate(zip(g, t)):
        assert close(a[0], b[0]) and a[1:3] == b[1:3] and close(a[3], b[3]), (i, a, b)


@needs_torch
@pytest.mark.parametrize("name,make", [
    ("ConstantLR", lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=3)),
    ("PolynomialLR", lambda S, o: S.PolynomialLR(o, total_iters=6, power=2.0)),
    ("MultiplicativeLR", lambda S, o: S.MultiplicativeLR(o, _mult)),
])
def test_explicit_epoch_like_torch(name: str, make: Any) -> None:
    def prog(lib: Any) -> list[Any]:
        opt = make_opt(lib)
        s = make(lib.optim.lr_scheduler, opt)
        out = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for e in (2, 5, 1, 9, None, 3):
                opt.step()
                s.step(e)
                out.append((snapshot(opt), s.last_epoch))
        return [out, len(w)]

    g, t = prog(gradsum), prog(torch)
    assert g[1] == t[1]
    for a, b in zip(g[0], t[0]):
        assert close(a[0], b[0]) and a[1] == b[1], (a, b)


def test_onecycle_stepped_too_many_times_both() -> None:
    outs = []
    for lib in ([gradsum, torch] if torch is not None else [gradsum]):
        opt = make_opt(lib)
        s = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4)
        for _ in range(4):
            opt.step()
            s.step()
        with pytest.raises(ValueError, match="Tried to step 5 times"):
            s.step()
        outs.append((s.last_epoch, snapshot(opt)))
    assert outs[0][0] == 5
    if len(outs) == 2:
        assert outs[0][0] == outs[1][0] and close(outs[0][1], outs[1][1])


BAD_ARGS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("ConstantLR-factor>1", lambda S, o: S.ConstantLR(o, factor=1.5)),
    ("ConstantLR-factor<0", lambda S, o: S.ConstantLR(o, factor=-0.1)),
    ("Multiplicative-len", lambda S, o: S.MultiplicativeLR(o, [lambda e: 1.0])),
    ("Multiplicative-not-callable", lambda S, o: S.MultiplicativeLR(o, [1.0, 2.0])),
    ("CAWR-T_0=0", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0)),
    ("CAWR-T_0-float", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2.0)),
    ("CAWR-T_mult=0", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0)),
    ("CAWR-T_mult-float", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5)),
    ("CAWR-eta_min-str", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0")),
    ("CAWR-negative-epoch", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2).step(-1)),
    ("CyclicLR-mode", lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="sine")),
    ("CyclicLR-max_lr-len", lambda S, o: S.CyclicLR(o, 0.1, [1.0, 2.0, 3.0])),
    ("CyclicLR-momentum-len", lambda S, o: S.CyclicLR(o, 0.1, 1.0, base_momentum=[0.8])),
    ("CyclicLR-not-optimizer", lambda S, o: S.CyclicLR(None, 0.1, 1.0)),
    ("OneCycle-no-steps", lambda S, o: S.OneCycleLR(o, max_lr=1.0)),
    ("OneCycle-epochs-only", lambda S, o: S.OneCycleLR(o, max_lr=1.0, epochs=3)),
    ("OneCycle-total_steps=0", lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=0)),
    ("OneCycle-total_steps-float", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=5.0)),
    ("OneCycle-epochs=0", lambda S, o: S.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=2)),
    ("OneCycle-spe=-1", lambda S, o: S.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=-1)),
    ("OneCycle-pct>1", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=5, pct_start=1.5)),
    ("OneCycle-pct-int", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=5, pct_start=0)),
    ("OneCycle-anneal", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=5,
                                                  anneal_strategy="step")),
    ("OneCycle-max_lr-len", lambda S, o: S.OneCycleLR(o, [1.0], total_steps=5)),
    ("Plateau-factor", lambda S, o: S.ReduceLROnPlateau(o, factor=1.0)),
    ("Plateau-mode", lambda S, o: S.ReduceLROnPlateau(o, mode="avg")),
    ("Plateau-threshold_mode", lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="pct")),
    ("Plateau-min_lr-len", lambda S, o: S.ReduceLROnPlateau(o, min_lr=[0.1])),
    ("Plateau-not-optimizer", lambda S, o: S.ReduceLROnPlateau(object())),
    ("Chained-empty", lambda S, o: S.ChainedScheduler([])),
    ("Chained-plateau", lambda S, o: S.ChainedScheduler(
        [S.ExponentialLR(o, 0.9), S.ReduceLROnPlateau(o)])),
    ("Chained-no-optimizer", lambda S, o: S.ChainedScheduler([S.ExponentialLR(o, 0.9),
                                                              object()])),
]


def outcome(lib: Any, make: Callable[[Any, Any], Any], kind: str) -> tuple[str, Any]:
    try:
        make(lib.optim.lr_scheduler, make_opt(lib, kind))
    except Exception as e:  # (any type: the type is what is compared)
        return "err", type(e).__name__
    return "ok", None


@needs_torch
@pytest.mark.parametrize("name,make", BAD_ARGS, ids=[b[0] for b in BAD_ARGS])
def test_argument_validation_like_torch(name: str, make: Any) -> None:
    g, t = outcome(gradsum, make, "sgd"), outcome(torch, make, "sgd")
    assert g == t
    assert g[0] == "err"


@needs_torch
@pytest.mark.parametrize("kind,cycle", [("adagrad", True), ("adagrad", False), ("adam", True)])
def test_cycle_momentum_needs_momentum_like_torch(kind: str, cycle: bool) -> None:
    for make in (lambda S, o: S.CyclicLR(o, 0.1, 1.0, cycle_momentum=cycle),
                 lambda S, o: S.OneCycleLR(o, 1.0, total_steps=5, cycle_momentum=cycle)):
        g, t = outcome(gradsum, make, kind), outcome(torch, make, kind)
        assert g == t == (("err", "ValueError") if kind == "adagrad" and cycle else ("ok", None))


@needs_torch
def test_scheduler_on_tensor_lr_like_torch() -> None:
    def prog(lib: Any) -> list[Any]:
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=lib.tensor(0.1), momentum=0.9)
        s = lib.optim.lr_scheduler.ChainedScheduler(
            [lib.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
             lib.optim.lr_scheduler.PolynomialLR(opt, total_iters=4)])
        out = []
        for _ in range(6):
            opt.step()
            s.step()
            out.append((float(opt.param_groups[0]["lr"]), float(s.get_last_lr()[0]),
                        type(s.get_last_lr()[0]).__name__))
        return out

    g, t = prog(gradsum), prog(torch)
    assert _flat([x[:2] for x in g]) == pytest.approx(_flat([x[:2] for x in t]), rel=1e-6)
    assert [x[2] for x in g] == [x[2] for x in t]


# -- torch-free checks --------------------------------------------------------------------


def test_constant_and_polynomial_values() -> None:
    opt = make_opt(gradsum, lrs=(1.0,))
    s = S_G.ChainedScheduler([S_G.ConstantLR(opt, factor=0.5, total_iters=2),
                              S_G.PolynomialLR(opt, total_iters=4, power=1.0)])
    got = [s.get_last_lr()[0]]
    for _ in range(5):
        opt.step()
        s.step()
        got.append(s.get_last_lr()[0])
    assert got == pytest.approx([0.5, 0.375, 0.5, 0.25, 0.0, 0.0])


def test_warm_restarts_values_and_fractional_epoch() -> None:
    opt = make_opt(gradsum, lrs=(1.0,))
    s = S_G.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.0)
    got = []
    for _ in range(7):
        opt.step()
        s.step()
        got.append(s.get_last_lr()[0])
    cos = [(1 + math.cos(math.pi * t / n)) / 2 for t, n in
           [(1, 2), (0, 4), (1, 4), (2, 4), (3, 4), (0, 8), (1, 8)]]
    assert got == pytest.approx(cos)
    s.step(7.5)  # 7.5 = 2 + 4 + 1.5: in the third cycle (T_i = 8), T_cur = 1.5
    assert (s.T_i, s.T_cur, s.last_epoch) == (8, pytest.approx(1.5), 7)
    assert s.get_last_lr()[0] == pytest.approx((1 + math.cos(math.pi * 1.5 / 8)) / 2)


def test_onecycle_phases_and_momentum() -> None:
    opt = make_opt(gradsum, kind="adam", lrs=(1.0,))
    s = S_G.OneCycleLR(opt, max_lr=2.0, total_steps=11, pct_start=0.5, div_factor=4.0,
                       final_div_factor=10.0, anneal_strategy="linear", three_phase=True)
    lrs, moms = [s.get_last_lr()[0]], [opt.param_groups[0]["betas"][0]]
    for _ in range(10):
        opt.step()
        s.step()
        lrs.append(s.get_last_lr()[0])
        moms.append(opt.param_groups[0]["betas"][0])
    # phases end at steps 4.5, 9 and 10: 0.5 -> 2.0 -> 0.5 -> 0.05
    assert lrs[0] == 0.5 and lrs[9] == pytest.approx(0.5) and lrs[10] == pytest.approx(0.05)
    assert max(lrs) == pytest.approx(0.5 + 1.5 * 4 / 4.5)
    assert moms[0] == 0.95 and moms[10] == pytest.approx(0.95) and min(moms) < 0.87
    assert opt.param_groups[0]["betas"][1] == 0.99


def test_cyclic_triangular2_and_state_dict_custom_fn() -> None:
    opt = make_opt(gradsum, lrs=(1.0,))
    s = S_G.CyclicLR(opt, 0.0, 1.0, step_size_up=2, mode="triangular2")
    got = []
    for _ in range(8):
        opt.step()
        s.step()
        got.append(s.get_last_lr()[0])
    assert got == pytest.approx([0.5, 1.0, 0.5, 0.0, 0.25, 0.5, 0.25, 0.0])
    assert "_scale_fn_ref" not in s.state_dict()
    scale = Scale(0.5)
    s2 = S_G.CyclicLR(make_opt(gradsum), 0.0, 1.0, scale_fn=scale)
    sd = pickle.loads(pickle.dumps(s2.state_dict()))
    assert sd["_scale_fn_custom"] == {"factor": 0.5}
    scale.factor = 0.9
    s2.load_state_dict(sd)
    assert scale.factor == 0.5
    assert S_G.CyclicLR(make_opt(gradsum), 0.0, 1.0,
                        scale_fn=_cyclic_scale).state_dict()["_scale_fn_custom"] is None


def test_reduce_on_plateau_torch_free() -> None:
    opt = make_opt(gradsum, lrs=(1.0, 0.1))
    s = S_G.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1, cooldown=1,
                              min_lr=[0.3, 0.09])
    seen = []
    for m in [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]:
        s.step(m)
        seen.append((s.get_last_lr(), s.num_bad_epochs, s.cooldown_counter))
    assert seen[2] == ([0.5, 0.09], 0, 1)
    assert seen[3] == ([0.5, 0.09], 0, 0)
    assert seen[5] == ([0.3, 0.09], 0, 1)
    assert s.last_epoch == 7 and s.best == 1.0
    sd = pickle.loads(pickle.dumps(s.state_dict()))
    s2 = S_G.ReduceLROnPlateau(make_opt(gradsum, lrs=(1.0, 0.1)))
    s2.load_state_dict(sd)
    assert (s2.mode, s2.mode_worse, s2.min_lrs, s2.cooldown) == ("max", -math.inf,
                                                                 [0.3, 0.09], 1)


@pytest.mark.parametrize("make", [
    lambda o: S_G.ConstantLR(o, factor=2.0),
    lambda o: S_G.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda o: S_G.CosineAnnealingWarmRestarts(o, T_0=1, T_mult=0),
    lambda o: S_G.OneCycleLR(o, 1.0),
    lambda o: S_G.OneCycleLR(o, 1.0, total_steps=3, anneal_strategy="exp"),
    lambda o: S_G.CyclicLR(o, 0.1, 1.0, mode="bad"),
    lambda o: S_G.ReduceLROnPlateau(o, mode="mean"),
    lambda o: S_G.ReduceLROnPlateau(o, factor=1.5),
])
def test_validation_raises_value_error(make: Any) -> None:
    with pytest.raises(ValueError):
        make(make_opt(gradsum))


def test_cycle_momentum_without_momentum_raises() -> None:
    with pytest.raises(ValueError, match="momentum or beta1"):
        S_G.CyclicLR(make_opt(gradsum, "adagrad"), 0.1, 1.0)
    S_G.CyclicLR(make_opt(gradsum, "adagrad"), 0.1, 1.0, cycle_momentum=False)


def test_exported() -> None:
    for name in ("ConstantLR", "MultiplicativeLR", "PolynomialLR", "ChainedScheduler",
                 "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "ReduceLROnPlateau"):
        assert name in S_G.__all__ and issubclass(getattr(S_G, name), S_G.LRScheduler)
