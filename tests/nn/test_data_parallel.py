"""Side by side with torch: DataParallel on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum import nn

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")


tnn = torch.nn


def _np(t: Any) -> np.ndarray:
    return np.array(t.detach().numpy())


def close(g: Any, t: Any, tol: float) -> None:
    np.testing.assert_allclose(_np(g), _np(t), rtol=tol, atol=tol)


def outcome(fn: Any) -> tuple[type | None, str]:
    try:
        fn()
    except Exception as e:  # (the outcome is what is compared)
        return type(e), str(e)
    return None, ""


def same_error(fg: Any, ft: Any, exact: bool = True) -> None:
    g, t = outcome(fg), outcome(ft)
    assert g[0] is not None and t[0] is not None, (g, t)
    assert issubclass(g[0], t[0]) or g[0] is t[0], (g, t)
    if exact:
        # (torch's C++ errors may end with a line naming the tensor type)
        expected = t[1].split("\n[ torch.")[0].replace("torch.", "gradsum.")
        # (legacy type names are torch's in both: Tensor.type() says 'torch.FloatTensor')
        got = g[1].replace("gradsum._tensor.Tensor", "gradsum.Tensor").replace("torch.",
                                                                              "gradsum.")
        assert got == expected, (g, t)


def copy_state(gm: Any, tm: Any) -> None:
    """torch's values into gradsum's module (same keys)."""
    sd = {k: gradsum.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    gm.load_state_dict(sd)


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
    same_error(lambda: nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).load_state_dict(
        g.state_dict()), lambda: tnn.Sequential(tnn.Linear(3, 2), tnn.BatchNorm1d(2))
        .load_state_dict(t.state_dict()), exact=False)
