"""Side by side with torch: DataParallel on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum
from gradsum import nn
from nn_helpers import close, copy_state, same_error_text

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


# -- DataParallel, SyncBatchNorm, deprecated aliases, TripletMarginWithDistanceLoss ----------------
def test_data_parallel_cpu() -> None:
    g = nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)), device_ids=[0])
    t = tnn.DataParallel(tnn.Sequential(tnn.Linear(3, 2), tnn.BatchNorm1d(2)), device_ids=[0])
    assert repr(g) == repr(t)
    assert list(g.state_dict()) == list(t.state_dict())
    assert g.device_ids == t.device_ids == []
    assert hasattr(g, "dim") == hasattr(t, "dim")
    copy_state(g, t)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    yg, yt = g(gradsum.tensor(x)), t(torch.tensor(x))
    close(yg, yt, 1e-6)
    # (a weighted sum: through the batch norm a plain sum, or a sum of squares, has zero
    # gradient up to rounding noise; the Linear bias's stays zero in exact arithmetic, so it is
    # compared at the noise's scale)
    c = np.random.default_rng(1).standard_normal((5, 2)).astype(np.float32)
    (yg * gradsum.tensor(c)).sum().backward()
    (yt * torch.tensor(c)).sum().backward()
    for (n, p), (_, q) in zip(g.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5,
                                   atol=1e-5 if n == "module.0.bias" else 1e-6)
    assert g.module[0] is next(iter(g.children()))[0]
    # a state_dict of the wrapper loads into the wrapper, not into the bare module
    same_error_text(lambda: nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).load_state_dict(
        g.state_dict()), lambda: tnn.Sequential(tnn.Linear(3, 2), tnn.BatchNorm1d(2))
        .load_state_dict(t.state_dict()), exact=False)
