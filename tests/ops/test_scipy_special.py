"""The optional SciPy backend of the special functions (``gradsum.ops._scipy_special``): the
choice (SciPy when installed, ``GRADSUM_SCIPY=0`` and ``use_scipy`` to keep NumPy), the op
table's special-function entries run again on the NumPy kernels (the rest of the suite runs
on whichever path is chosen, SciPy's where the ``test`` extra installs it), and a
differential test of the SciPy kernels against the NumPy kernels and torch on wide inputs:
the same inf/nan pattern as torch, float32 results within the sweep's stated bound of
torch's float64 ones, float64 results close to torch's."""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch (the reference oracle) is not installed")

import gradsum  # noqa: E402
from gradsum.ops import _scipy_special  # noqa: E402
from ops import test_ops as _ops  # noqa: E402

HAS_SCIPY = importlib.util.find_spec("scipy") is not None
needs_scipy = pytest.mark.skipif(not HAS_SCIPY, reason="scipy is not installed")

#: the op-table entries whose kernels have a SciPy version
ACCELERATED = {"lgamma", "digamma", "polygamma", "mvlgamma", "igamma", "igammac",
               "special_ndtri", "special_log_ndtr", "special_gammaln", "special_digamma",
               "special_psi", "special_gammainc", "special_gammaincc", "special_multigammaln"}


def _mine(cases: list[Any]) -> list[Any]:
    return [c for c in cases if c.values[0].name in ACCELERATED]


@pytest.fixture
def numpy_path() -> Iterator[None]:
    previous = _scipy_special.use_scipy(False)
    try:
        yield
    finally:
        _scipy_special.use_scipy(previous)


@pytest.fixture
def scipy_path() -> Iterator[None]:
    previous = _scipy_special.use_scipy(True)
    try:
        yield
    finally:
        _scipy_special.use_scipy(previous)


# -- the choice --------------------------------------------------------------------------------
def test_choice_follows_env_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    previous = _scipy_special.use_scipy(None)
    try:
        monkeypatch.setenv(_scipy_special.ENV, "0")
        _scipy_special.use_scipy(None)
        assert not _scipy_special.active()
        monkeypatch.delenv(_scipy_special.ENV)
        _scipy_special.use_scipy(None)
        assert _scipy_special.active() is HAS_SCIPY
        _scipy_special.use_scipy(False)
        assert not _scipy_special.active()
        monkeypatch.setenv(_scipy_special.ENV, "0")
        _scipy_special.use_scipy(True)  # (the override wins over the environment)
        assert _scipy_special.active() is HAS_SCIPY
    finally:
        _scipy_special.use_scipy(previous)


# -- the op table's entries on the NumPy kernels ----------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("info", "i", "sample"), _mine(_ops.CASES))
def test_forward_numpy_path(info: Any, i: int, sample: Any, dtype: str,
                            numpy_path: None) -> None:
    _ops.test_forward(info, i, sample, dtype)


@pytest.mark.parametrize(("info", "i", "sample"), _mine(_ops.DIFF_CASES))
def test_gradcheck_numpy_path(info: Any, i: int, sample: Any, numpy_path: None) -> None:
    _ops.test_gradcheck(info, i, sample)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("info", "i", "sample"), _mine(_ops.DIFF_CASES))
def test_torch_parity_numpy_path(info: Any, i: int, sample: Any, dtype: str,
                                 numpy_path: None) -> None:
    _ops.test_torch_parity(info, i, sample, dtype)


def test_table_has_the_accelerated_entries() -> None:
    names = {c.values[0].name for c in _mine(_ops.CASES)}
    assert {"lgamma", "digamma", "mvlgamma", "igamma", "igammac", "special_ndtri",
            "special_log_ndtr"} <= names


# -- SciPy against NumPy and torch ------------------------------------------------------------
_RNG = np.random.default_rng(18)
_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, -3.0, -100.0, -1e10, 1.0, 2.0, 3.0,
            0.5, -0.5, -1.5, 1e-30, 1e30, 1e10, 1e17, 1e20, -2.4570247382208, 1.4616321449683622,
            1e-8, -1e-8, 171.6, 35.0, 40.0, 1e-310, 2.3e-308]
_WIDE = np.concatenate([_SPECIAL, _RNG.standard_normal(3000) * 3, _RNG.uniform(-50, 50, 3000),
                        10 ** _RNG.uniform(-30, 30, 3000), -(10 ** _RNG.uniform(-30, 30, 3000)),
                        1 + _RNG.uniform(-0.3, 0.3, 1000), 2 + _RNG.uniform(-0.3, 0.3, 1000)])
_PROB = np.concatenate([_SPECIAL, _RNG.uniform(0, 1, 3000), 10 ** _RNG.uniform(-300, 0, 2000),
                        1 - 10 ** _RNG.uniform(-16, 0, 1000)])
_GRID_A, _GRID_X = (v.ravel() for v in np.meshgrid(_SPECIAL, _SPECIAL))
_A = np.concatenate([_GRID_A, np.abs(_RNG.standard_normal(3000)) * 5,
                     10 ** _RNG.uniform(-3, 3, 3000)])
_X = np.concatenate([_GRID_X, np.abs(_RNG.standard_normal(3000)) * 5,
                     10 ** _RNG.uniform(-3, 3, 3000)])

#: name: (gradsum op, torch op, inputs, float64 rtol and atol against torch)
UNARY = {
    "lgamma": (gradsum.lgamma, torch.lgamma, _WIDE, 1e-13, 1e-15),
    "digamma": (gradsum.digamma, torch.digamma, _WIDE, 1e-12, 1e-14),
    "mvlgamma": (lambda t: gradsum.mvlgamma(t, 3), lambda t: torch.mvlgamma(t, 3),
                 np.abs(_WIDE[np.isfinite(_WIDE)]) + 1.0, 1e-13, 1e-14),
    "ndtri": (gradsum.special.ndtri, torch.special.ndtri, _PROB, 1e-14, 1e-15),
    "log_ndtr": (gradsum.special.log_ndtr, torch.special.log_ndtr, _WIDE, 1e-13, 0.0),
    "igamma": (gradsum.igamma, torch.igamma, (_A, _X), 1e-7, 1e-14),
    "igammac": (gradsum.igammac, torch.igammac, (_A, _X), 1e-7, 1e-14),
}


def _run(fn: Any, args: tuple[np.ndarray, ...], dtype: Any) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(*[gradsum.tensor(a.astype(dtype)) for a in args]).numpy()
    assert out.dtype == dtype
    return out


def _float32_ulps(out: np.ndarray, ref: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32)
    ok = np.isfinite(ref) & np.isfinite(ref32)
    unit = np.spacing(np.abs(ref32[ok])).astype(np.float64)
    return float(np.max(np.abs(out[ok].astype(np.float64) - ref[ok]) / unit))


@needs_scipy
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_scipy_kernels_against_numpy_and_torch(name: str, dtype: Any) -> None:
    g, t, inputs, rtol, atol = UNARY[name]
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    args = tuple(a.astype(dtype) for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = t(*[torch.from_numpy(a.astype(np.float64)) for a in args]).numpy()
    previous = _scipy_special.use_scipy(True)
    try:
        assert _scipy_special.active()
        fast = _run(g, args, dtype)
        _scipy_special.use_scipy(False)
        slow = _run(g, args, dtype)
    finally:
        _scipy_special.use_scipy(previous)
    with np.errstate(over="ignore"):
        refc = ref.astype(dtype)
    # torch's inf/nan pattern, signs included
    special = ~np.isfinite(refc)
    np.testing.assert_array_equal(fast[special], refc[special])
    assert np.isfinite(fast[~special]).all()
    if name in ("igamma", "igammac"):  # (the NumPy kernel's own values on nan operands)
        finite = np.isfinite(args[0]) & np.isfinite(args[1])
        np.testing.assert_array_equal(np.isfinite(slow[finite]), np.isfinite(fast[finite]))
    else:
        np.testing.assert_array_equal(slow[special], fast[special])
    if dtype == np.float32:
        # the sweep's bound: correctly rounded (0.5 ulp, up to torch's float64 error), where
        # torch is accurate
        bound = 1.6 if name == "mvlgamma" else 0.51  # (mvlgamma: the NumPy path's 1.59)
        if name == "igammac":  # torch's igammac is 2x off at a = 1e-30: away from it
            keep = ~(np.abs(args[0]) < 1e-20)
            fast, slow, ref = fast[keep], slow[keep], ref[keep]
        assert _float32_ulps(fast, ref) <= bound
        if name not in ("igamma", "igammac"):  # (the NumPy kernel: up to 1e7 ulps there)
            assert _float32_ulps(slow, ref) <= bound
    else:
        ok = np.isfinite(ref)
        if name in ("igamma", "igammac"):  # torch's own error at a = 1e-30
            ok &= ~(args[0] < 1e-20)
        np.testing.assert_allclose(fast[ok], ref[ok], rtol=rtol, atol=atol)


@needs_scipy
@pytest.mark.parametrize("path", ["numpy_path", "scipy_path"])
def test_gradients_on_both_paths(path: str, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue(path)
    x = gradsum.tensor([0.3, 1.7, 4.5, -0.6, -2.3, 12.0], dtype=gradsum.float64,
                       requires_grad=True)
    a = gradsum.tensor([0.5, 1.0, 2.5, 3.0, 7.0, 20.0], dtype=gradsum.float64)
    xp_ = gradsum.tensor([0.2, 1.5, 3.0, 2.0, 9.0, 15.0], dtype=gradsum.float64,
                         requires_grad=True)
    for fn, arg in [(gradsum.lgamma, x), (gradsum.digamma, x),
                    (lambda v: gradsum.mvlgamma(v, 2), xp_ + 1.0),
                    (lambda v: gradsum.igamma(a, v), xp_), (lambda v: gradsum.igammac(a, v), xp_),
                    (gradsum.special.log_ndtr, x)]:
        leaf = arg.detach().requires_grad_(True)
        assert gradsum.autograd.gradcheck(fn, (leaf,), eps=1e-6, atol=1e-5, rtol=1e-4)
        assert gradsum.autograd.gradgradcheck(fn, (leaf,), eps=1e-6, atol=1e-5, rtol=1e-4)
