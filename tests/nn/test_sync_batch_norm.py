"""Side by side with torch: SyncBatchNorm on the CPU and convert_sync_batchnorm."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum import nn
from nn_helpers import close, copy_state, same_error_text

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"momentum": None},
                                {"track_running_stats": False}, {"bias": False}])
def test_sync_batch_norm_cpu(kw: dict[str, Any]) -> None:
    g = nn.SyncBatchNorm(3, **kw, dtype=gradsum.float64)
    t = tnn.SyncBatchNorm(3, **kw, dtype=torch.float64)
    assert repr(g) == repr(t)
    assert list(g.state_dict()) == list(t.state_dict())
    assert g.process_group is t.process_group is None
    copy_state(g, t)
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    for train in (True, True, False):
        g.train(train)
        t.train(train)
        xg = gradsum.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        yg, yt = g(xg), t(xt)
        close(yg, yt, 1e-10)
        (yg ** 2).sum().backward()
        (yt ** 2).sum().backward()
        close(xg.grad, xt.grad, 1e-9)
        for (_n, b), (_, c) in zip(g.named_buffers(), t.named_buffers()):
            close(b, c, 1e-10)
    same_error_text(lambda: g(gradsum.ones(4)), lambda: t(torch.ones(4)))
    same_error_text(lambda: g(gradsum.ones(4, 0)), lambda: t(torch.ones(4, 0)))


def test_convert_sync_batchnorm() -> None:
    def nets(lib: Any) -> Any:
        return lib.Sequential(lib.Linear(2, 3), lib.BatchNorm1d(3, momentum=0.2),
                              lib.Sequential(lib.BatchNorm2d(3, affine=False)),
                              lib.InstanceNorm1d(3))

    gn, tn = nets(nn).eval(), nets(tnn).eval()
    gw, gbuf = gn[1].weight, gn[1].running_mean
    gs = nn.SyncBatchNorm.convert_sync_batchnorm(gn)
    ts = tnn.SyncBatchNorm.convert_sync_batchnorm(tn)
    assert repr(gs) == repr(ts)
    assert gs is gn and gs[1].weight is gw and gs[1].running_mean is gbuf
    assert gs[1].training is ts[1].training is False
    assert list(gs.state_dict()) == list(ts.state_dict())
    gb = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm3d(2, eps=1e-3), "pg")
    tb = tnn.SyncBatchNorm.convert_sync_batchnorm(tnn.BatchNorm3d(2, eps=1e-3), "pg")
    assert repr(gb) == repr(tb) and gb.process_group == tb.process_group == "pg"
