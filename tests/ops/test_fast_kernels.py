"""The vectorised kernels of issue 18 against torch, bit for bit on inputs that reach their
fallbacks: ``floor_divide`` (and ``div(rounding_mode="floor")``), ``fmod`` and ``remainder``
(float32: exact in float64, in blocks), the no-graph ``as_strided`` backward (strided adds),
``one_hot``, ``angle``, ``hardshrink``, ``rot90``, the shifts, ``equal``'s early stop and the
in-place ops computed from their own buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip("torch", reason="the kernels are compared with torch's")


def _edgy(rng: np.random.Generator, n: int, dtype: Any, lo: int, hi: int) -> np.ndarray:
    x = rng.standard_normal(n) * 10.0 ** rng.integers(lo, hi, n)
    x[::97] = np.round(x[::97])
    x[::101] = np.inf
    x[::103] = -np.inf
    x[::107] = np.nan
    x[::13] = -0.0
    return x.astype(dtype)


def _same_bits(g: Any, t: Any) -> None:
    a, b = g.numpy(), t.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(np.signbit(a[~np.isnan(a)]), np.signbit(b[~np.isnan(b)]))


@pytest.mark.parametrize("n", [1000, 300_001])
@pytest.mark.parametrize("op", ["floor_divide", "fmod", "remainder", "div_floor"])
def test_division_kernels_match_torch(op: str, n: int) -> None:
    rng = np.random.default_rng(n)
    x = _edgy(rng, n, np.float32, -6, 9)
    y = _edgy(rng, n, np.float32, -3, 5)
    y[::89] = 0.0
    with np.errstate(invalid="ignore"):  # (inf * 0)
        x[::7] = y[::7] * np.round(rng.standard_normal(len(x[::7])) * 100)  # exact multiples
    x[::17], y[::17] = -1e-30, 1.0  # (remainder: fmod + y rounds to y)

    def call(m: Any, a: Any, b: Any) -> Any:
        if op == "div_floor":
            return m.div(a, b, rounding_mode="floor")
        return getattr(m, op)(a, b)

    for b in (y, y[:1], 0.1, -3.0, 0.5):
        gb = gradsum.tensor(b) if isinstance(b, np.ndarray) else b
        tb = torch.tensor(b) if isinstance(b, np.ndarray) else b
        with np.errstate(all="ignore"):
            _same_bits(call(gradsum, gradsum.tensor(x), gb), call(torch, torch.tensor(x), tb))


@pytest.mark.parametrize("geom", [
    ((4096,), (1,), 0), ((2000, 2), (1, 1), 0), ((500, 4), (2, 1), 3), ((30, 40, 3), (40, 1, 1), 0),
    ((64, 64), (1, 64), 5), ((3, 1000), (0, 1), 0),
])
def test_as_strided_backward_matches_torch(geom: tuple[Any, ...]) -> None:
    size, stride, off = geom
    rng = np.random.default_rng(0)
    x = rng.standard_normal(8192).astype(np.float32)
    g = rng.standard_normal(size).astype(np.float32)
    g[rng.random(size) < 0.1] = -0.0
    xg = gradsum.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    gradsum.as_strided(xg, size, stride, off).backward(gradsum.tensor(g))
    torch.as_strided(xt, size, stride, off).backward(torch.tensor(g))
    np.testing.assert_array_equal(xg.grad.numpy(), xt.grad.numpy())


def test_small_kernels_match_torch() -> None:
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 10, (300, 7))
    np.testing.assert_array_equal(
        gradsum.nn.functional.one_hot(gradsum.tensor(idx), 12).numpy(),
        torch.nn.functional.one_hot(torch.tensor(idx), 12).numpy())
    x = _edgy(rng, 10_000, np.float32, -2, 2)
    _same_bits(gradsum.angle(gradsum.tensor(x)), torch.angle(torch.tensor(x)))
    for lambd in (0.5, 0.0, 2.0):
        _same_bits(gradsum.nn.functional.hardshrink(gradsum.tensor(x), lambd),
                   torch.nn.functional.hardshrink(torch.tensor(x), lambd))
    m = rng.standard_normal((3, 64, 96)).astype(np.float32)
    for k in (-1, 1, 2, 3):
        for dims in ((1, 2), (2, 1), (0, 2)):
            np.testing.assert_array_equal(gradsum.rot90(gradsum.tensor(m), k, dims).numpy(),
                                          torch.rot90(torch.tensor(m), k, dims).numpy())
    a = rng.integers(-1000, 1000, 5000)
    s = rng.integers(0, 63, 5000)
    for fn in ("bitwise_left_shift", "bitwise_right_shift"):
        np.testing.assert_array_equal(
            getattr(gradsum, fn)(gradsum.tensor(a), gradsum.tensor(s)).numpy(),
            getattr(torch, fn)(torch.tensor(a), torch.tensor(s)).numpy())
    big = rng.standard_normal(100_000).astype(np.float32)
    for other in (big.copy(), np.r_[big[:-1], 1.0].astype(np.float32), big[::-1].copy()):
        assert gradsum.equal(gradsum.tensor(big), gradsum.tensor(other)) == torch.equal(
            torch.tensor(big), torch.tensor(other))


@pytest.mark.parametrize("name", ["relu_", "neg_", "sign_", "sigmoid_", "abs_", "sin_", "exp_",
                                  "zero_", "floor_"])
def test_inplace_from_own_buffer_matches_torch(name: str) -> None:
    """In-place ops computed from the buffer itself (or, when their node keeps the old
    value, from a copy): bit for bit what the copy gives, and torch's values and gradients
    (to the ulps the kernels themselves differ by), through a view too."""
    from gradsum.ops import inplace

    rng = np.random.default_rng(2)
    x = rng.standard_normal((200, 100)) * 0.3  # (above the size where the copy is skipped)
    g = rng.standard_normal((200, 100))

    def run(m: Any) -> tuple[Any, ...]:
        leaf = m.tensor(x, requires_grad=True)
        y = leaf * 2
        v = y[1:180]
        getattr(v, name)()
        out = getattr(y * 1.5, name)()
        (out * m.tensor(g)).sum().backward()
        return y.detach().numpy(), out.detach().numpy(), leaf.grad.numpy()

    had = name in inplace._KEEPS_OLD
    fast = run(gradsum)
    inplace._KEEPS_OLD.add(name)  # (the copy, as before)
    try:
        copied = run(gradsum)
    finally:
        if not had:
            inplace._KEEPS_OLD.discard(name)
    for a, b, t in zip(fast, copied, run(torch)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, t, rtol=1e-12, atol=0)
