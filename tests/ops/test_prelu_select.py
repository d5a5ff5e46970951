"""prelu's forward and backward select on the bits (``ops.arithmetic.select`` /
``select_grad``, not NumPy's ``where``): torch's bits for the output and the input's
gradient at nan, inf, signed zeros and subnormals, with a single and a per-channel weight,
and the weight's gradient against torch's."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum
import gradsum.nn.functional as F

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("channels", [1, 40])
def test_prelu_selects_match_torch(dtype: str, channels: int) -> None:
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((30, 40, 7)) * 3).astype(dtype)
    x.flat[:8] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, -1e-300]
    g = rng.standard_normal(x.shape).astype(dtype)
    g.flat[8:16] = [np.inf, -np.inf, np.nan, -np.nan] * 2
    w = rng.standard_normal(channels).astype(dtype)
    a, b = gradsum.tensor(x, requires_grad=True), gradsum.tensor(w, requires_grad=True)
    out = F.prelu(a, b)
    out.backward(gradsum.tensor(g))
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tout = torch.nn.functional.prelu(ta, tb)
    tout.backward(torch.tensor(g))
    bits = np.int32 if dtype == "float32" else np.int64
    fin = ~np.isnan(tout.detach().numpy())
    np.testing.assert_array_equal(out.detach().numpy().view(bits)[fin],
                                  tout.detach().numpy().view(bits)[fin])
    assert np.array_equal(np.isnan(out.detach().numpy()), ~fin)
    gx, tgx = a.grad.numpy(), ta.grad.numpy()
    ok = ~np.isnan(tgx)
    np.testing.assert_array_equal(gx.view(bits)[ok], tgx.view(bits)[ok])
    assert np.array_equal(np.isnan(gx), ~ok)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, equal_nan=True)
