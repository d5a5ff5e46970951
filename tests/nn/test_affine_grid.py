"""Side by side with torch: ``F.affine_grid`` (values, gradients to ``theta``, warnings and
errors) for 2-D and 3-D grids, both ``align_corners`` and unit-size spatial dimensions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

CASES = [([2, 3, 4, 5], (2, 2, 3)), ([1, 1, 3, 2, 4], (1, 3, 4)), ([2, 1, 1, 3], (2, 2, 3)),
         ([1, 2, 1, 1, 1], (1, 3, 4)), ([3, 1, 6, 1], (3, 2, 3))]


@pytest.mark.parametrize("size,theta_shape", CASES)
@pytest.mark.parametrize("align_corners", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradient(size, theta_shape, align_corners, dtype):
    rng = np.random.default_rng(len(size) * 7 + theta_shape[0])
    theta = rng.standard_normal(theta_shape)
    weight = rng.standard_normal((size[0], *size[2:], len(size) - 2))
    out = []
    for m in (torch, gradsum):
        th = m.tensor(theta, dtype=getattr(m, dtype), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grid = m.nn.functional.affine_grid(th, size, align_corners=align_corners)
        (g,) = m.autograd.grad((grid * m.tensor(weight, dtype=getattr(m, dtype))).sum(), th)
        out.append((tuple(grid.shape), str(grid.dtype).split(".")[-1], grid.requires_grad,
                    grid.detach().numpy(), g.numpy()))
    (ts, td, tr, tv, tg), (gs, gd, gr, gv, gg) = out
    assert (gs, gd, gr) == (ts, td, tr)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(gv, tv, rtol=tol, atol=tol)
    np.testing.assert_allclose(gg, tg, rtol=tol * 10, atol=tol * 10)


def _warnings_and_outcome(m, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            m.nn.functional.affine_grid(*args, **kwargs)
            outcome = "ok"
        except Exception as e:
            # (up to the shape: torch prints a torch.Size, gradsum a tuple)
            outcome = (type(e).__name__,
                       str(e).replace("torch.", "").replace("gradsum.", "").split(" Got (")[0]
                       .split(" Got Size(")[0])
    return [(w.category.__name__, str(w.message)) for w in caught], outcome


@pytest.mark.parametrize("call", [
    "m.zeros(1, 2, 3), [1, 1, 2, 2]",  # no align_corners: warns, then False
    "m.zeros(1, 2, 3), [1, 1, 1, 2], align_corners=True",  # unit-size grid warning
    "m.zeros(1, 2, 3, dtype=m.int64), [1, 1, 2, 2], align_corners=False",
    "m.zeros(1, 3, 3), [1, 1, 2, 2], align_corners=False",
    "m.zeros(2, 3), [1, 1, 2, 2], align_corners=False",
    "m.zeros(1, 2, 3), [1, 1, 2, 2, 2], align_corners=False",
    "m.zeros(1, 2, 3), [1, 2, 2], align_corners=False",
    "m.zeros(1, 2, 3), [1, 0, 2, 2], align_corners=False",
    "m.zeros(1, 2, 3), [1, 1, 0, 2], align_corners=True",
])
def test_warnings_and_errors(call):
    got = [eval(f"_warnings_and_outcome(m, {call})", {"_warnings_and_outcome":
                                                       _warnings_and_outcome, "m": m})
           for m in (torch, gradsum)]
    assert got[1] == got[0]
