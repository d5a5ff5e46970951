"""float32 fmod/remainder through float64 (the fast path) against NumPy's fmod loop (the
fallback), bit for bit: signed zeros, nan, inf, subnormals, huge and tiny ratios, broadcasts."""

import numpy as np
import pytest

from gradsum.ops.arithmetic import _fmod, _remainder, _remainder_fmod

_SP = np.array([0, -0.0, 1, -1, 2, -2, 3, 1.5, -1.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
                3.4e38, -3.4e38, 1e-38, 7, -7], np.float32)


def _operands():
    rng = np.random.default_rng(0)
    n = 30000

    def bits():
        return rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)

    x = np.concatenate([bits(), rng.uniform(-10, 10, n).astype(np.float32), rng.choice(_SP, n),
                        rng.integers(-20, 20, n).astype(np.float32),
                        rng.uniform(-1e30, 1e30, n).astype(np.float32)])
    y = np.concatenate([bits(), rng.uniform(-3, 3, n).astype(np.float32), rng.choice(_SP, n),
                        rng.choice(np.array([1, -1, 2, -0.5, 0, -0.0], np.float32), n),
                        rng.uniform(-1e-5, 1e-5, n).astype(np.float32)])
    return x, y


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_float32_fast_path_matches_loop(op):
    x, y = _operands()
    fast = _fmod if op == "fmod" else _remainder
    loop = np.fmod if op == "fmod" else _remainder_fmod
    big = np.concatenate([x] * 3)  # (above the block size: the blocked path)
    # mostly small quotients (float32 quotients) with a few large ones (the float64 quotient
    # for those elements) and one too far (ratios near 2**24)
    rng = np.random.default_rng(1)
    mixed = rng.uniform(-10, 10, 50000).astype(np.float32)
    mixed[::20] = x[: mixed[::20].size]
    mixed[1::20] = rng.uniform(1e6, 1.6e7, mixed[1::20].size).astype(np.float32)
    div = rng.uniform(0.5, 2, mixed.size).astype(np.float32)
    with np.errstate(all="ignore"):
        for a, b in [(x, y), (x, np.float32(1.7)), (x, np.float32(-0.5)), (big, np.float32(-3)),
                     (np.concatenate([y] * 3), np.concatenate([x] * 3)),
                     (_SP[:, None], _SP[None, :]), (x[:500, None], y[None, :200]),
                     (mixed, div), (-mixed, -div), (mixed, np.float32(1.3))]:
            got, want = np.asarray(fast(a, b)), np.asarray(loop(a, b))
            assert got.dtype == np.float32 and got.shape == want.shape
            assert (got.view(np.uint32) == want.view(np.uint32)).all()
