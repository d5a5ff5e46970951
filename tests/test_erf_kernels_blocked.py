"""The float32-result erf kernels (ops._erf): block by block (a large input) and on the bit
select, the same bits as on the whole array, and torch's values."""

import numpy as np
import pytest

import gradsum
from gradsum.ops import _erf

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


def _x(n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(n) * 2.5).astype(np.float32)
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 0.5, -0.5, 4.0, -4.0, 30.0]
    return x


@pytest.mark.parametrize("fn", [_erf.erf64, _erf.erfc64])
def test_blocks_give_the_whole_arrays_bits(fn, monkeypatch) -> None:
    x = _x(5000).reshape(50, 100)
    whole = fn(x, False)
    monkeypatch.setattr(_erf, "BLOCK", 64)
    blocked = fn(x, False)
    assert blocked.shape == x.shape and blocked.dtype == np.float64
    np.testing.assert_array_equal(blocked.view(np.int64), whole.view(np.int64))


def test_bit_select_is_where() -> None:
    rng = np.random.default_rng(4)
    y = np.abs(rng.standard_normal(1000))
    a, b = rng.standard_normal(1000), rng.standard_normal(1000)
    a[:3] = [-0.0, np.nan, np.inf]
    b[:3] = [np.nan, -0.0, -np.inf]
    y[:3] = [0.1, np.nan, 0.7]
    got = _erf._where_below(y, 0.5, a, b)
    np.testing.assert_array_equal(got.view(np.int64), np.where(y < 0.5, a, b).view(np.int64))


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_large_float32_against_torch(name) -> None:
    x = _x(200_000)
    out = getattr(gradsum, name)(gradsum.tensor(x)).numpy()
    ref = getattr(torch, name)(torch.tensor(x.astype(np.float64))).numpy()
    ok = np.isfinite(ref)
    unit = np.spacing(np.abs(ref[ok].astype(np.float32))).astype(np.float64)
    assert np.max(np.abs(out[ok] - ref[ok]) / unit) <= 0.5 + 1e-3
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_array_equal(out[~ok], ref[~ok].astype(np.float32))
