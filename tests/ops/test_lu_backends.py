"""LU factorisation (``getrf``) by SciPy's LAPACK and by gradsum's own blocked NumPy steps:
the same pivots and ``info`` as each other and as torch's ``linalg.lu_factor_ex``, factors
within rounding, for single matrices and batches, square and rectangular, singular ones
included (torch pins: ``info`` is the first exactly-zero pivot, pivots 1-based int32)."""

from __future__ import annotations

import numpy as np
import pytest

import gradsum
from gradsum.ops import _scipy_special
from gradsum.ops.linalg._base import _getrf, _lapack_getrf

scipy = pytest.importorskip("scipy", reason="the SciPy LU path needs scipy (the special extra)")


def _cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    out = [
        ("square", rng.standard_normal((40, 40))),
        ("tall", rng.standard_normal((45, 20))),
        ("wide", rng.standard_normal((20, 45))),
        ("batch", rng.standard_normal((3, 24, 24))),
        ("order 1", rng.standard_normal((1, 1))),
    ]
    sing = rng.standard_normal((30, 30))
    sing[:, 7] = 0.0  # an exactly zero pivot at column 8
    out.append(("zero column", sing))
    # (not a numerically rank-deficient product: after its rank the pivots are chosen among
    # rounding noise, which no two LAPACKs agree on, torch's included)
    ties = np.tile(np.array([[1.0, -1.0, 1.0]]).T, (1, 20)) + np.eye(3, 20)
    out.append(("tied pivots", np.vstack([ties] * 7)[:20]))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,a", _cases(), ids=[c[0] for c in _cases()])
def test_scipy_and_numpy_getrf_agree(name: str, a: np.ndarray, dtype: str) -> None:
    a = a.astype(dtype)
    previous = _scipy_special.use_scipy(True)
    try:
        fast = _lapack_getrf(a)
    finally:
        _scipy_special.use_scipy(previous)
    assert fast is not None, "the SciPy path should apply to finite float matrices"
    previous = _scipy_special.use_scipy(False)
    try:
        assert _lapack_getrf(a) is None  # (switched off: the NumPy steps)
        slow = _getrf(a)
    finally:
        _scipy_special.use_scipy(previous)
    for f, s in zip(fast, slow):
        assert f.dtype == s.dtype and f.shape == s.shape
    np.testing.assert_array_equal(fast[1], slow[1])
    np.testing.assert_array_equal(fast[2], slow[2])
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(fast[0], slow[0], rtol=tol, atol=tol * np.abs(a).max())


@pytest.mark.parametrize("use", [True, False], ids=["scipy", "numpy"])
@pytest.mark.parametrize("name,a", _cases(), ids=[c[0] for c in _cases()])
def test_lu_factor_ex_matches_torch(name: str, a: np.ndarray, use: bool) -> None:
    torch = pytest.importorskip("torch", reason="the differential test compares with torch")
    previous = _scipy_special.use_scipy(use)
    try:
        g = gradsum.linalg.lu_factor_ex(gradsum.tensor(a))
    finally:
        _scipy_special.use_scipy(previous)
    t = torch.linalg.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(g.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(g.info.numpy(), t.info.numpy())
    np.testing.assert_allclose(g.LU.numpy(), t.LU.numpy(), rtol=1e-9, atol=1e-9)


def test_nonfinite_and_small_batches_keep_the_numpy_steps() -> None:
    previous = _scipy_special.use_scipy(True)
    try:
        a = np.eye(20)
        a[3, 3] = np.nan
        assert _lapack_getrf(a) is None
        assert _lapack_getrf(np.ones((5, 3, 3))) is None
        assert _lapack_getrf(np.ones((2, 2), dtype=np.complex128)) is None
    finally:
        _scipy_special.use_scipy(previous)
