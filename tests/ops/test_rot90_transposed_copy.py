"""rot90 in the last two axes of a C-contiguous array (the two-pass transposed copy with the
flip folded in, widths that are not whole 16-byte groups too) against torch, for every element
width it takes and the shapes around it."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64])
@pytest.mark.parametrize("shape", [(208, 120), (3, 64, 128), (2, 4, 96, 40), (64, 66), (3, 61, 77),
                                   (70, 125), (4096, 3)])
def test_rot90_last_two_axes(dtype: type, shape: tuple[int, ...]) -> None:
    x = (np.random.default_rng(0).standard_normal(shape) * 100).astype(dtype)
    for k in (1, 3, -1, 5, 2, 0):
        for dims in ((-2, -1), (-1, -2), (0, 1)):
            got = gradsum.rot90(gradsum.tensor(x), k, dims).numpy()
            want = torch.rot90(torch.from_numpy(x), k, dims).numpy()
            assert got.shape == want.shape and got.flags.c_contiguous
            np.testing.assert_array_equal(got, want)


def test_rot90_grad() -> None:
    x = np.random.default_rng(1).standard_normal((2, 96, 80)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal((2, 80, 96)).astype(np.float32)
    for k in (1, 3):
        a = gradsum.tensor(x, requires_grad=True)
        gradsum.rot90(a, k, (1, 2)).backward(gradsum.tensor(g))
        b = torch.from_numpy(x.copy()).requires_grad_()
        torch.rot90(b, k, (1, 2)).backward(torch.from_numpy(g))
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
