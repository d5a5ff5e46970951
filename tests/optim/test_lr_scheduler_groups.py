"""Side by side with torch: schedulers on an optimizer whose groups changed
(add_param_group), chained schedulers over many steps, SequentialLR's resume and warnings."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from optim_helpers import outcome, param  # noqa: E402

# -- schedulers on an optimizer whose groups changed ----------------------------------------


@pytest.mark.parametrize("make", [
    lambda S, o: S.LambdaLR(o, lambda e: 0.5 ** e),
    lambda S, o: S.CosineAnnealingLR(o, T_max=3),
    lambda S, o: S.StepLR(o, step_size=1),
], ids=["LambdaLR", "CosineAnnealingLR", "StepLR"])
def test_scheduler_after_add_param_group(make: Callable[[Any, Any], Any]) -> None:
    # torch zips base_lrs with the groups strictly: ValueError once a group was added after
    # the scheduler; gradsum silently left the new group's rate alone (or used a wrong one)
    def run(lib: Any) -> list[Any]:
        opt = lib.optim.SGD([param(lib)], lr=0.1)
        sched = make(lib.optim.lr_scheduler, opt)
        opt.add_param_group({"params": [param(lib)], "lr": 0.5})
        out = []
        for _ in range(4):
            opt.step()
            out.append(outcome(lambda _: sched.step(), lib))
            out.append([round(g["lr"], 12) for g in opt.param_groups])
        return out

    assert run(gradsum) == run(torch)


def test_chained_schedulers_on_one_optimizer_over_many_steps() -> None:
    def run(lib: Any) -> list[list[float]]:
        S = lib.optim.lr_scheduler
        opt = lib.optim.SGD([{"params": [param(lib)], "lr": lr} for lr in (0.1, 0.02)], lr=1.0)
        scheds = [S.StepLR(opt, 3, 0.5), S.ExponentialLR(opt, 0.97),
                  S.CosineAnnealingLR(opt, 7, eta_min=0.001)]
        out = []
        for _ in range(60):
            opt.step()
            for s in scheds:
                s.step()
            out.append([g["lr"] for g in opt.param_groups] + scheds[2].get_last_lr())
        return out

    g, t = run(gradsum), run(torch)
    np.testing.assert_allclose(g, t, rtol=1e-13, atol=1e-16)


def test_sequential_resume_and_warnings() -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        S = lib.optim.lr_scheduler
        opt = lib.optim.SGD([param(lib)], lr=0.1)
        lin = S.LinearLR(opt, start_factor=0.1, end_factor=0.9, total_iters=4)
        cos = S.CosineAnnealingLR(opt, T_max=5, eta_min=0.01)
        seq = S.SequentialLR(opt, [lin, cos], milestones=[3])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seq.step()  # before optimizer.step(): warns in the sub-scheduler
        lrs = [seq.get_last_lr()[0]]
        for _ in range(8):
            opt.step()
            seq.step()
            lrs.append(seq.get_last_lr()[0])
        counts = (seq.last_epoch, lin.last_epoch, cos.last_epoch, lin._step_count,
                  cos._step_count)
        return lrs, counts, [str(w.message)[:40] for w in caught]

    (g_lrs, g_counts, g_warn), (t_lrs, t_counts, t_warn) = run(gradsum), run(torch)
    np.testing.assert_allclose(g_lrs, t_lrs, rtol=1e-13)
    assert g_counts == t_counts and g_warn == t_warn
    assert math.isfinite(g_lrs[-1])
