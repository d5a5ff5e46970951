"""float32 ``hypot`` through its vectorised float64 formulation (``ops.special._hypot32``)
against NumPy's per-element ``hypotf`` (the previous kernel) and torch: the same bits on
random bit patterns (every scale, subnormals, nan signs) and on every pair of special values,
broadcast too."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")

_SPECIAL = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e-45, -1e-45, 1.2e-38,
                     3.4e38, -3.4e38, 1.0, -3.0], np.float32)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.int32)


def test_hypot_float32_matches_numpy_hypotf_bit_for_bit() -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2**32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    y = rng.integers(0, 2**32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
    a, b = np.meshgrid(_SPECIAL, _SPECIAL)
    x[:a.size], y[:a.size] = a.ravel(), b.ravel()
    with np.errstate(all="ignore"):
        ref = np.hypot(x, y)
    got = gradsum.hypot(gradsum.tensor(x), gradsum.tensor(y)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(ref))
    t = torch.hypot(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    assert np.array_equal(np.isnan(got), np.isnan(t))
    inf = np.isinf(t)
    np.testing.assert_array_equal(got[inf], t[inf])


def test_hypot_float32_broadcast_and_gradient() -> None:
    rng = np.random.default_rng(12)
    x = rng.standard_normal((30, 1)).astype(np.float32)
    y = rng.standard_normal((1, 40)).astype(np.float32)
    a, b = gradsum.tensor(x, requires_grad=True), gradsum.tensor(y, requires_grad=True)
    out = gradsum.hypot(a, b)
    np.testing.assert_array_equal(_bits(out.detach().numpy()), _bits(np.hypot(x, y)))
    out.sum().backward()
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    torch.hypot(ta, tb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
