"""float32 ``logaddexp``/``logaddexp2`` of contiguous operands of one shape, computed in
float64 block by block and rounded once: within one float32 ULP of the float64 value
everywhere (almost always its rounding), the special values torch gives (infinities beside
infinities, nans), broadcasts and strided operands through NumPy's loop, and torch's values
and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum
from gradsum.ops import pointwise as special

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")

_OPS = [("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2)]
_SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -3.0, 88.0, -104.0, 3.4e38,
                     -3.4e38], np.float32)


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def _operands(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-3, 2, n)
    x = (rng.standard_normal(n) * scale).astype(np.float32)
    y = (x + rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 1, n)).astype(np.float32)
    return x, y


@pytest.mark.parametrize("name,ref", _OPS)
def test_within_one_ulp_of_the_float64_value(name: str, ref: object) -> None:
    # (more than one block of special._F64_BLOCK elements, and a part block)
    n = 2 * special._F64_BLOCK + 123
    x, y = _operands(n, 5)
    got = getattr(gradsum, name)(gradsum.tensor(x), gradsum.tensor(y)).numpy()
    want = ref(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)  # type: ignore
    assert got.dtype == np.float32
    ulps = _ulps(got, want)
    assert ulps.max() <= 1
    assert (ulps == 0).mean() > 0.999
    # torch's float32 kernel agrees to its own rounding (large in ULPs near a zero result)
    tgot = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    scale = np.maximum(np.abs(x), np.abs(y)) + 1
    assert (np.abs(tgot.astype(np.float64) - got) <= 4e-7 * scale).all()


@pytest.mark.parametrize("name,ref", _OPS)
def test_special_values_as_torch(name: str, ref: object) -> None:
    x, y = np.meshgrid(_SPECIAL, _SPECIAL)
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    got = getattr(gradsum, name)(gradsum.tensor(x), gradsum.tensor(y)).numpy()
    want = getattr(torch, name)(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-6, atol=0)
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])


@pytest.mark.parametrize("name,ref", _OPS)
def test_broadcast_and_strided_operands_take_numpys_loop(name: str, ref: object) -> None:
    x, y = _operands(4096, 7)
    x2, y2 = x.reshape(64, 64), y.reshape(64, 64)
    gx, gy = gradsum.tensor(x2), gradsum.tensor(y2)
    pairs = (((gx, gy[:1]), (x2, y2[:1])), ((gx.t(), gy), (x2.T, y2)),
             ((gx[:, ::2], gy[:, 1::2]), (x2[:, ::2], y2[:, 1::2])))
    for (a, b), (na, nb) in pairs:
        got = getattr(gradsum, name)(a, b).numpy()
        np.testing.assert_array_equal(got, ref(na, nb))  # type: ignore[operator]
    assert special._logaddexp32(x2, y2[:1], False) is None
    assert special._logaddexp32(x2.T, y2, False) is None


@pytest.mark.parametrize("name,ref", _OPS)
def test_values_and_gradients_as_torch(name: str, ref: object) -> None:
    x, y = _operands(3000, 9)
    g = np.random.default_rng(1).standard_normal(3000).astype(np.float32)
    a, b = gradsum.tensor(x, requires_grad=True), gradsum.tensor(y, requires_grad=True)
    ta, tb = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    out, tout = getattr(gradsum, name)(a, b), getattr(torch, name)(ta, tb)
    out.backward(gradsum.tensor(g))
    tout.backward(torch.from_numpy(g))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-5)
