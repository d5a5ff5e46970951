"""gradsum.optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates step by
step (two param groups), get_last_lr, initial_lr, state_dict contents and resuming."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from gradsum import nn, optim  # noqa: E402

S_G = optim.lr_scheduler
S_T = torch.optim.lr_scheduler


def make_opts(lrs: tuple[float, float] = (0.1, 0.02)) -> tuple[Any, Any]:
    gp = [nn.Parameter(gradsum.ones(1)) for _ in lrs]
    tp = [torch.nn.Parameter(torch.ones(1)) for _ in lrs]
    go = optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(gp, lrs)], lr=1.0)
    to = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(tp, lrs)], lr=1.0)
    return go, to


class Halve:
    """A callable object (its state is saved by LambdaLR.state_dict, unlike a function)."""

    def __init__(self) -> None:
        self.factor = 0.5

    def __call__(self, epoch: int) -> float:
        return self.factor ** (epoch // 3)


SCHEDULERS: list[tuple[str, Any]] = [
    ("StepLR", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", lambda S, o: S.ExponentialLR(o, gamma=0.9)),
    ("CosineAnnealingLR", lambda S, o: S.CosineAnnealingLR(o, T_max=6, eta_min=0.001)),
    ("LambdaLR", lambda S, o: S.LambdaLR(o, lambda e: 1.0 / (1 + e))),
    ("LambdaLR-list", lambda S, o: S.LambdaLR(o, [lambda e: 0.9**e, Halve()])),
    ("LinearLR", lambda S, o: S.LinearLR(o, start_factor=0.25, end_factor=0.9,
                                         total_iters=4)),
    ("SequentialLR", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=5)],
        milestones=[4])),
    ("SequentialLR-3", lambda S, o: S.SequentialLR(
        o, [S.ExponentialLR(o, gamma=0.5), S.StepLR(o, 2), S.LambdaLR(o, lambda e: 0.1)],
        milestones=[3, 7])),
]
IDS = [s[0] for s in SCHEDULERS]


def lrs(opt: Any) -> list[float]:
    return [g["lr"] for g in opt.param_groups]


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=IDS)
def test_schedule_matches_torch(name: str, make: Any) -> None:
    go, to = make_opts()
    gs, ts = make(S_G, go), make(S_T, to)
    assert [g["initial_lr"] for g in go.param_groups] == [g["initial_lr"]
                                                          for g in to.param_groups]
    assert lrs(go) == pytest.approx(lrs(to), rel=1e-12)
    assert gs.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
    for _ in range(25):
        go.step()
        to.step()
        gs.step()
        ts.step()
        assert lrs(go) == pytest.approx(lrs(to), rel=1e-12, abs=1e-15)
        assert gs.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12, abs=1e-15)
        assert gs.last_epoch == ts.last_epoch
    gsd, tsd = gs.state_dict(), ts.state_dict()
    assert sorted(gsd) == sorted(tsd)
    for key in tsd:
        if key not in ("lr_lambdas", "_schedulers"):
            assert _plain(gsd[key]) == pytest.approx(_plain(tsd[key])) if isinstance(
                tsd[key], (list, float)) else _plain(gsd[key]) == _plain(tsd[key]), key


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=IDS)
def test_state_dict_resume(name: str, make: Any) -> None:
    go, _ = make_opts()
    gs = make(S_G, go)
    for _ in range(5):
        go.step()
        gs.step()
    saved_sched, saved_opt = gs.state_dict(), go.state_dict()
    go2, _ = make_opts()
    gs2 = make(S_G, go2)
    go2.load_state_dict(saved_opt)
    gs2.load_state_dict(saved_sched)
    for _ in range(6):
        go.step()
        go2.step()
        gs.step()
        gs2.step()
        assert lrs(go2) == pytest.approx(lrs(go), rel=1e-12)
        assert gs2.get_last_lr() == pytest.approx(gs.get_last_lr(), rel=1e-12)


def test_lambda_state_dict_saves_callable_objects_only() -> None:
    go, _ = make_opts()
    halve = Halve()
    s = S_G.LambdaLR(go, [lambda e: 1.0, halve])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [None, {"factor": 0.5}]
    halve.factor = 0.1
    s.load_state_dict(sd)
    assert halve.factor == 0.5


@pytest.mark.parametrize("name,make", [SCHEDULERS[0], SCHEDULERS[1], SCHEDULERS[2],
                                       SCHEDULERS[3], SCHEDULERS[6]],
                         ids=[IDS[i] for i in (0, 1, 2, 3, 6)])
def test_explicit_epoch_uses_closed_form_like_torch(name: str, make: Any) -> None:
    go, to = make_opts()
    gs, ts = make(S_G, go), make(S_T, to)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (3, 7, 2, 10):
            go.step()
            to.step()
            gs.step(epoch)
            ts.step(epoch)
            assert lrs(go) == pytest.approx(lrs(to), rel=1e-12)


def test_resume_with_last_epoch_and_errors() -> None:
    go, to = make_opts()
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        S_G.StepLR(go, 2, last_epoch=3)
    for g in go.param_groups:
        g["initial_lr"] = g["lr"]
    for g in to.param_groups:
        g["initial_lr"] = g["lr"]
    gs = S_G.CosineAnnealingLR(go, T_max=10, last_epoch=4)
    ts = S_T.CosineAnnealingLR(to, T_max=10, last_epoch=4)
    for _ in range(4):
        go.step()
        to.step()
        gs.step()
        ts.step()
        assert lrs(go) == pytest.approx(lrs(to), rel=1e-12)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S_G.StepLR(object(), 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S_G.LinearLR(go, start_factor=0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S_G.LambdaLR(go, [lambda e: 1.0])
    with pytest.raises(ValueError, match="number of milestones"):
        S_G.SequentialLR(go, [S_G.StepLR(go, 2)], milestones=[1])


def test_warns_when_scheduler_steps_before_optimizer() -> None:
    go, _ = make_opts()
    s = S_G.StepLR(go, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    go2, _ = make_opts()
    s2 = S_G.StepLR(go2, 2)
    go2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()
