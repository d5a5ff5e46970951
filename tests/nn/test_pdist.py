"""Side by side with torch: ``F.pdist`` (values and gradients for each ``p``, zero distances,
degenerate shapes, errors) and the deprecated ``F.upsample_nearest`` /
``F.upsample_bilinear`` (values and their warnings)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

ROWS = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [3.0, -1.0, 0.5], [2.0, 2.0, -2.0],
                 [-1.0, 0.0, 4.0]])


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 0.5, 3.0, float("inf")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients(p, dtype):
    out = []
    for m in (torch, gradsum):
        x = m.tensor(ROWS, dtype=getattr(m, dtype), requires_grad=True)
        y = m.nn.functional.pdist(x, p)
        w = m.arange(1.0, y.shape[0] + 1, dtype=getattr(m, dtype))
        (g,) = m.autograd.grad((y * w).sum(), x)
        out.append((tuple(y.shape), str(y.dtype).split(".")[-1], y.requires_grad,
                    y.detach().numpy(), g.numpy()))
    (ts, td, tr, tv, tg), (gs, gd, gr, gv, gg) = out
    assert (gs, gd, gr) == (ts, td, tr)
    tol = 2e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(gv, tv, rtol=tol, atol=tol)
    np.testing.assert_allclose(gg, tg, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("call", [
    "F.pdist(m.zeros(3))", "F.pdist(m.zeros(2, 3, 4))", "F.pdist(m.zeros(3, 2), -1.0)",
    "F.pdist(m.zeros(3, 2, dtype=m.int64))", "F.pdist(m.zeros(1, 2))", "F.pdist(m.zeros(0, 2))",
    "F.pdist(m.zeros(3, 0))", "F.pdist(m.ones(4, 2))",
])
def test_shapes_and_errors(call):
    def run(m):
        try:
            y = eval(call, {"m": m, "F": m.nn.functional})
        except Exception as e:
            return type(e).__name__, str(e)[:30]
        return tuple(y.shape), y.tolist()

    assert run(gradsum) == run(torch)


@pytest.mark.parametrize("name", ["upsample_nearest", "upsample_bilinear"])
@pytest.mark.parametrize("kwargs", [{"scale_factor": 2}, {"size": (4, 5)}, {"size": 6}])
def test_deprecated_upsample(name, kwargs):
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 3))
    out = []
    for m in (torch, gradsum):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(m.nn.functional, name)(m.tensor(x), **kwargs)
        out.append((y.numpy(), [(w.category.__name__, str(w.message)) for w in caught]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12, atol=1e-12)
    assert out[1][1] == out[0][1]
