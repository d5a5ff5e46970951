"""The float32-result erf kernels (ops._erf): block by block (a large input) and on the bit
select, the same bits as on the whole array, and torch's values."""

import math

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


@pytest.mark.parametrize("exp64", [False, True], ids=["split-exp", "float64-exp"])
def test_gelu_kernel_both_ways_within_its_bound(exp64, monkeypatch) -> None:
    # x * cdf(x) within the docstring's bound of gelu_parts_f32 (7.5 units in the last place
    # with the float64 exp; with the split, 9 on an AVX-512 CPU and 10 allowed, as NumPy's
    # float32 exp differs by CPU), whichever way this CPU takes by default, against
    # Python's math.erfc in float64 (torch's float64 gelu, 1 + erf, cancels below -8); the
    # derivative against torch's, and the special values as torch's
    monkeypatch.setattr(_erf, "EXP64_VECTORISED", exp64)
    x = np.concatenate([np.linspace(-14, 10, 100_001, dtype=np.float32), _x(50_000)])
    out, deriv = _erf.gelu_f32(x, True)
    x64 = x.astype(np.float64)
    ref = np.array([v * 0.5 * math.erfc(-v / math.sqrt(2.0)) if math.isfinite(v) else np.nan
                    for v in x64.tolist()])
    ok = np.isfinite(ref) & (np.abs(ref) > 2.0**-124)
    unit = np.spacing(np.abs(ref[ok].astype(np.float32))).astype(np.float64)
    assert np.max(np.abs(out[ok] - ref[ok]) / unit) <= (7.5 if exp64 else 10.0)
    xt = torch.tensor(x64, requires_grad=True)
    y = torch.nn.functional.gelu(xt)
    y.sum().backward()
    special = ~np.isfinite(x64)
    np.testing.assert_array_equal(out[special], y.detach().numpy()[special].astype(np.float32))
    dref = xt.grad.numpy()
    fin = np.isfinite(dref)
    assert np.max(np.abs(deriv[fin] - dref[fin])) <= 4e-7  # (absolute: the slope crosses 0)
