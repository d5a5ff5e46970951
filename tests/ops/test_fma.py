"""gradsum._fma: the correctly rounded fused multiply-add, and the ops built on it.

- against the C library's ``fma``/``fmaf`` (correctly rounded by the C standard), element by
  element: random operands at several scales, cancellations, float32 ties (where rounding
  the float64 sum to float32 rounds twice), subnormal float32 results, broadcasting, chunks;
- against torch (marked ``bitwise``): ``add``/``sub`` with ``alpha`` (in and out of place),
  ``addcmul``, ``addcdiv`` and ``lerp`` give the bits of torch's AVX2/AVX-512 kernels, which
  fuse the multiply-add; under ``ATEN_CPU_CAPABILITY=default`` (the product rounded first)
  they agree within half an ulp of the product plus one of the result.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum import _fma


def _libm() -> Any:
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("no C math library to compare with (ctypes.util.find_library('m'))")
    lib = ctypes.CDLL(name)
    lib.fma.restype, lib.fma.argtypes = ctypes.c_double, [ctypes.c_double] * 3
    lib.fmaf.restype, lib.fmaf.argtypes = ctypes.c_float, [ctypes.c_float] * 3
    return lib


def _reference(a: Any, x: Any, y: Any) -> Any:
    """The C library's fused multiply-add, one element at a time."""
    lib = _libm()
    a, x, y = np.broadcast_arrays(a, x, y)
    fn = lib.fmaf if y.dtype == np.float32 else lib.fma
    out = [fn(float(p), float(q), float(r)) for p, q, r in zip(a.ravel(), x.ravel(), y.ravel())]
    return np.array(out, dtype=y.dtype).reshape(y.shape)


def _same_bits(a: Any, b: Any) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    bits = np.int32 if a.dtype == np.float32 else np.int64
    bad = np.flatnonzero(a.view(bits) != b.view(bits))
    assert bad.size == 0, (bad[:5], a.ravel()[bad[:5]], b.ravel()[bad[:5]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1.0, 1e-20, 1e20])
def test_random_operands_match_the_c_library(dtype: Any, scale: float) -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    a = (rng.standard_normal(n) * scale).astype(dtype)
    x = rng.standard_normal(n).astype(dtype)
    y = (rng.standard_normal(n) * scale).astype(dtype)
    y[::4] = -(a[::4] * x[::4])  # (cancellation: the product's rounding error is all that is left)
    _same_bits(_fma.fma(a, x, y), _reference(a, x, y))


def test_float32_ties_are_rounded_once() -> None:
    # a * x = 2**i * (1 - 2**-46) and y = 2**i * (2**24 + 2 + 4k): the float64 sum lands exactly
    # on a float32 tie, which the exact value is just below (or, negated, just above)
    rng = np.random.default_rng(1)
    n = 5_000
    i, k = rng.integers(-20, 20, n), rng.integers(0, 1000, n)
    sign = rng.choice([-1.0, 1.0], n)
    a = (sign * (1 + 2.0**-23) * 2.0**i).astype(np.float32)
    x = np.full(n, 1 - 2.0**-23, dtype=np.float32)
    y = ((2**24 + 2 + 4 * k + np.where(sign < 0, 4, 0)) * 2.0**i).astype(np.float32)
    ref = _reference(a, x, y)
    assert (ref != (a.astype(np.float64) * x + y).astype(np.float32)).all()  # (double rounding)
    _same_bits(_fma.fma(a, x, y), ref)


def test_subnormal_float32_results() -> None:
    rng = np.random.default_rng(2)
    n = 5_000
    a = (rng.standard_normal(n) * 1e-20).astype(np.float32)
    x = (rng.standard_normal(n) * 1e-20).astype(np.float32)
    y = (rng.standard_normal(n) * 1e-39).astype(np.float32)
    _same_bits(_fma.fma(a, x, y), _reference(a, x, y))


@pytest.mark.parametrize("n", [64, 1 << 16])  # (fresh temporaries, and the scratch buffers)
def test_subnormal_ties_beside_zeros_and_nans(n: int) -> None:
    # a * x = 2**-150 (1 - 2**-46) and y = k 2**-149, k odd: the float64 sum lands exactly on
    # a subnormal float32 tie (the exact value is just below it), where rounding to even goes
    # up. The smallest magnitude of the results screens for subnormal ones first: a nan or a
    # zero elsewhere in the array must not hide them (nan compares false, zero passes)
    rng = np.random.default_rng(4)
    a = np.float32((1 + 2.0**-23) * 2.0**-75)
    x = np.full(n, (1 - 2.0**-23) * 2.0**-75, dtype=np.float32)
    y = ((2 * rng.integers(1 << 20, (1 << 22) - 1, n) + 1) * 2.0**-149).astype(np.float32)
    x[0], y[0] = np.nan, 1.0
    x[1], y[1] = 0.0, 0.0
    ref = _reference(a, x, y)
    rounded_twice = (np.float64(a) * x + y).astype(np.float32)
    assert (ref[2:] != rounded_twice[2:]).all()
    _same_bits(_fma.fma(a, x, y), ref)
    _same_bits(_fma.fma(float(a), x, y), ref)  # (the Python-float fast entry)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcasting_chunks_and_special_values(dtype: Any, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    monkeypatch.setattr(_fma, "CHUNK", 64)  # (several chunks, through the buffered iterator)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 50)).astype(dtype)
    y = rng.standard_normal((50,)).astype(dtype)
    y[:3] = [np.inf, -np.inf, np.nan]
    a = dtype(-0.37)
    out = _fma.fma(a, x, y)
    assert out.shape == (7, 50) and out.dtype == dtype
    _same_bits(out, _reference(a, x, y))
    assert _fma.fma(dtype(2.0), np.array(3.0, dtype), np.array(1.0, dtype)).shape == ()
    big = np.array([np.finfo(dtype).max], dtype)
    assert np.isposinf(_fma.fma(dtype(2.0), big, np.zeros(1, dtype))).all()


def test_other_dtypes_use_plain_arithmetic() -> None:
    x, y = np.array([3, 4], np.int64), np.array([1, 2], np.int64)
    assert _fma.fma(2, x, y).tolist() == [7, 10]
    assert _fma.fma(2.0, np.array([1.5], np.float16), np.array([1.0], np.float16)).dtype == \
        np.float16


# -- the ops, against torch's kernels ---------------------------------------------------------
torch = pytest.importorskip("torch", reason="torch (the reference oracle) is not installed")
from diff_helpers import assert_torch_bits  # noqa: E402

_OPS = {
    "add_alpha": lambda L, x, y, w: L.add(x, y, alpha=-0.37),
    "sub_alpha": lambda L, x, y, w: L.sub(x, y, alpha=0.01),
    "add_alpha_scalar_other": lambda L, x, y, w: L.add(x, 1.7, alpha=0.3),
    "add_alpha_broadcast": lambda L, x, y, w: L.add(x, y[:1], alpha=2.5),
    "add_inplace": lambda L, x, y, w: x.clone().add_(y, alpha=-0.37),
    "sub_inplace": lambda L, x, y, w: x.clone().sub_(y, alpha=1e-3),
    "addcmul": lambda L, x, y, w: L.addcmul(x, y, w, value=0.3),
    "addcmul_inplace": lambda L, x, y, w: x.clone().addcmul_(y, w, value=-0.999),
    "addcdiv": lambda L, x, y, w: L.addcdiv(x, y, w + 2, value=0.3),
    "lerp_low": lambda L, x, y, w: L.lerp(x, y, 0.1),
    "lerp_high": lambda L, x, y, w: L.lerp(x, y, 0.9),
    "lerp_tensor": lambda L, x, y, w: L.lerp(x, y, w),
    "lerp_inplace": lambda L, x, y, w: x.clone().lerp_(y, 0.001),
}


@pytest.mark.bitwise
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_OPS))
def test_fused_ops_have_torchs_bits(name: str, dtype: str) -> None:
    """Exact against torch's AVX2/AVX-512 kernels; under the default kernel within one
    rounding of the product (relative 1e-6 of the operands' scale for float32)."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(10_001).astype(dtype) for _ in range(2)]
    arrays.append(rng.random(10_001).astype(dtype))
    outs = []
    for lib in (gradsum, torch):
        outs.append(_OPS[name](lib, *[lib.tensor(a) for a in arrays]))
    tol = 2e-6 if dtype == "float32" else 1e-14
    assert_torch_bits(outs[0], outs[1], rtol=tol, atol=tol, what=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lerp_array_weight_picks_operands_then_fuses_once(dtype: Any) -> None:
    """An array weight on both sides of 0.5 (nan, +-inf and 1 too), broadcast and in chunks:
    NumPy's where and the ops layer's select on the bits pick the same operands, and the one
    fused pass gives torch's bits (its kernel takes the nearer end per element)."""
    from gradsum.ops.arithmetic import select

    rng = np.random.default_rng(6)
    n = 2 * _fma.CHUNK + 77
    start = rng.standard_normal(n).astype(dtype)
    end = rng.standard_normal(n).astype(dtype)
    w = (rng.random(n) * 1.6 - 0.3).astype(dtype)
    w[:6] = [np.nan, np.inf, -np.inf, 1.0, 0.5, -0.5]
    outs = [_fma.lerp(start, end, w), _fma.lerp(start, end, w, select)]
    _same_bits(outs[0], outs[1])
    ref = torch.lerp(torch.from_numpy(start), torch.from_numpy(end), torch.from_numpy(w))
    _same_bits(outs[1], ref.numpy())
    row = w[:50].reshape(1, 50)  # (the weight enlarges the result)
    got = _fma.lerp(start[:50], end[:50], np.repeat(row, 3, 0), select)
    ref = torch.lerp(torch.from_numpy(start[:50]), torch.from_numpy(end[:50]),
                     torch.from_numpy(np.repeat(row, 3, 0)))
    _same_bits(got, ref.numpy())
