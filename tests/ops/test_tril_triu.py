"""tril / triu: the bit select on C-contiguous floating inputs against NumPy's tril/triu (the
path before, which non-contiguous and non-float inputs still take) bit for bit, and against
torch, with nan inputs, batches, offsets past the matrix and empty shapes."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.bool_])
@pytest.mark.parametrize("name", ["triu", "tril"])
def test_tri(dtype: type, name: str) -> None:
    rng = np.random.default_rng(0)
    for shape in ((255, 255), (4, 64, 100), (3, 1), (1, 5), (2, 0, 3), (7, 3)):
        x = (rng.standard_normal(shape) * 10).astype(dtype)
        if dtype in (np.float32, np.float64):
            x.reshape(-1)[::7] = np.nan
        for k in (0, 1, -2, 300, -300):
            for arr in (x, np.swapaxes(x, -1, -2)):
                got = getattr(gradsum, name)(gradsum.tensor(arr), k).numpy()
                ref = getattr(np, name)(arr, k)
                want = getattr(torch, name)(torch.from_numpy(np.ascontiguousarray(arr)), k)
                assert got.dtype == ref.dtype and got.shape == ref.shape
                assert np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                                      np.ascontiguousarray(ref).view(np.uint8))
                np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize("name", ["triu", "tril"])
def test_tri_grad(name: str) -> None:
    x = np.random.default_rng(1).standard_normal((64, 80)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal((64, 80)).astype(np.float32)
    a = gradsum.tensor(x, requires_grad=True)
    getattr(gradsum, name)(a, 1).backward(gradsum.tensor(g))
    b = torch.from_numpy(x.copy()).requires_grad_()
    getattr(torch, name)(b, 1).backward(torch.from_numpy(g))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
