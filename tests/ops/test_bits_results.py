"""Results built on the bits (select, select_grad, select_const, threshold_backward) own their
buffer, and the fast float paths of sign, relu and angle: bit for bit against NumPy's formulas (the
paths they replace) and against torch, at sizes that take the fast paths and below them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradsum
from gradsum.ops.arithmetic import select, select_const, select_grad

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]")

SPECIALS = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 5e-324, -5e-324, 1.0]


def _values(dtype: type, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    v = rng.standard_normal(n).astype(dtype)
    v[: len(SPECIALS)] = np.array(SPECIALS, dtype)
    return v


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [21, 70000])
def test_sign_float_bits(dtype: type, n: int) -> None:
    v = _values(dtype, n)
    for arr in (v, v.reshape(7, -1)[:, ::2] if n % 7 == 0 else v[::3], np.array(v[2]),
                np.array(v[0])):
        got = gradsum.sign(gradsum.tensor(arr)).numpy()
        ref = np.sign(arr)
        ref = np.where(np.isnan(ref), 0, ref).astype(dtype)  # (the formula before: nan -> 0)
        want = torch.sign(torch.from_numpy(np.ascontiguousarray(arr))).numpy()
        assert got.dtype == dtype and got.shape == arr.shape
        assert np.array_equal(_bits(got), _bits(ref))
        assert np.array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [100, 70000])
def test_relu_bits_and_grad(dtype: type, n: int) -> None:
    v = _values(dtype, n)
    x = gradsum.tensor(v, requires_grad=True)
    y = gradsum.relu(x)
    assert np.array_equal(_bits(y.detach().numpy()), _bits(np.maximum(v, dtype(0))))
    g = _values(dtype, n + 1)[:n]
    y.backward(gradsum.tensor(g))
    xt = torch.from_numpy(v.copy()).requires_grad_()
    torch.relu(xt).backward(torch.from_numpy(g))
    assert np.array_equal(_bits(x.grad.numpy()), _bits(xt.grad.numpy()))
    # a strided input takes the scalar form
    s = gradsum.relu(gradsum.tensor(v)[::2]).numpy()
    assert np.array_equal(_bits(s), _bits(np.maximum(v[::2], dtype(0))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [100, 70000])
def test_select_helpers_bits_and_owned(dtype: type, n: int) -> None:
    a, b = _values(dtype, n), _values(dtype, n + 3)[:n][::-1].copy()
    cond = np.random.default_rng(1).random(n) < 0.5
    out = select(cond, a, b)
    assert out.flags.owndata and out.dtype == dtype
    assert np.array_equal(_bits(out), _bits(np.where(cond, a, b)))
    out = select_grad(a, cond.copy())
    # (below 32768 elements the result is the view of its integer array: fewer passes)
    assert out.flags.owndata == (n >= 32768) and out.dtype == dtype
    assert np.array_equal(_bits(out), _bits(np.where(cond, dtype(0), a)))
    row = cond[: n // 10].reshape(1, -1).copy()  # (a mask broadcast against the gradient)
    ga = a[: (n // 10) * 10].reshape(10, -1)
    out = select_grad(ga, row.copy())
    assert out.flags.owndata and out.shape == ga.shape
    assert np.array_equal(_bits(out), _bits(np.where(row, dtype(0), ga)))
    out = select_const(cond, 0.25, -3.0, dtype)
    assert out.flags.owndata and out.dtype == dtype
    assert np.array_equal(_bits(out), _bits(np.where(cond, dtype(0.25), dtype(-3.0))))


def test_relu_leaf_grad_owned() -> None:
    """At the fast path's size, relu's backward gives an array that owns its buffer, which the
    engine may take over as the leaf's .grad (a view of an integer array it would copy)."""
    from gradsum.autograd import engine

    v = _values(np.float32, 70000)
    x = gradsum.tensor(v, requires_grad=True)
    y = gradsum.relu(x)
    y.backward(gradsum.ones_like(y))
    assert engine._is_owned(x.grad, {})
    xt = torch.from_numpy(v.copy()).requires_grad_()
    torch.relu(xt).sum().backward()
    assert np.array_equal(_bits(x.grad.numpy()), _bits(xt.grad.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_angle_bits(dtype: type) -> None:
    v = _values(dtype, 70000)
    for arr in (v, v[:5], v.reshape(100, 700)[:, ::3], v[len(SPECIALS):]):
        got = gradsum.angle(gradsum.tensor(arr)).numpy()
        ref = np.multiply(arr < 0, np.asarray(math.pi, dtype=dtype))  # (the formula before)
        ref = np.where(np.isnan(arr), arr, ref)
        assert got.dtype == dtype and np.array_equal(_bits(got), _bits(ref))
