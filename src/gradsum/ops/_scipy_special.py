"""The optional ``scipy.special`` backend of the special functions (the ``special`` extra).

Where SciPy's compiled ufunc is much faster than the NumPy kernel and as accurate, the NumPy
float64 kernel in :mod:`gradsum.ops.special` is decorated with
:func:`kernel`, and the call goes to this module's SciPy version of it, with torch's values at
the points where SciPy's differ (poles, nan and inf operands, subnormals). The choice is made
here, once: SciPy is imported lazily on the first call of such a kernel and used when it is
installed, unless the environment sets ``GRADSUM_SCIPY=0`` (or ``false``/``no``/``off``);
:func:`use_scipy` overrides both (tests force the NumPy path with ``use_scipy(False)``).
Kernels elsewhere with a SciPy path (LU) ask :func:`module` for their SciPy module, under the
same switch.

The kernels compute in float64 (SciPy's ``d->d`` loops, the input cast in its buffers) and
return float64, as the NumPy kernels do; the op rounds once to the input's dtype. The
functions here: ``lgamma`` (``gammaln``), ``digamma`` (``psi`` of ``x`` or, below 0, of
``1 - x``, with torch's reflection), ``igamma``/``igammac`` (``gammainc``/``gammaincc``,
Cephes' algorithm as torch's), ``ndtri`` and ``log_ndtr``. The others stay on NumPy: ``i0``,
``i1``, ``i0e``, ``i1e``, ``erfcx``, ``zeta`` and ``polygamma`` run faster there (measured),
and SciPy's ``j0``/``j1``/``y0``/``y1``, though faster, are not torch's values near their
zeros (torch's Cephes evaluation is off by up to 1e-7 there, SciPy's is not).

Example:
    >>> import gradsum
    >>> from gradsum.ops import _scipy_special
    >>> previous = _scipy_special.use_scipy(False)  # the NumPy kernels
    >>> round(gradsum.lgamma(gradsum.tensor([0.5], dtype=gradsum.float64)).item(), 12)
    0.572364942925
    >>> _ = _scipy_special.use_scipy(previous)  # back to the automatic choice
"""

from __future__ import annotations

import functools
import importlib
import math
import os
from typing import Any

from gradsum._backend import xp

#: the environment switch: ``0``, ``false``, ``no`` or ``off`` keeps the NumPy kernels
ENV = "GRADSUM_SCIPY"
_OFF = ("0", "false", "no", "off")

#: ``None``: automatic (SciPy when installed, unless ``GRADSUM_SCIPY`` says no); else forced
_forced: bool | None = None
#: the kernels in use (name -> SciPy version), ``{}`` for the NumPy path, ``None`` when not
#: decided yet
_table: dict[str, Any] | None = None

_ERR = {"divide": "ignore", "invalid": "ignore", "over": "ignore", "under": "ignore"}
_F64 = xp.float64
_SQRT1_2 = math.sqrt(0.5)


def _choose() -> dict[str, Any]:
    global _table
    table: dict[str, Any] = {}
    if _wanted():
        try:
            import scipy.special as sc
        except ImportError:
            sc = None
        if sc is not None:
            table = _kernels(sc)
    _table = table
    return table


def use_scipy(flag: bool | None) -> bool | None:
    """Force the SciPy kernels on (``True``, where SciPy is installed) or off (``False``), or
    go back to the automatic choice (``None``); returns the previous setting."""
    global _forced, _table
    previous = _forced
    _forced = flag
    _table = None
    return previous


def active() -> bool:
    """Whether the special functions run on SciPy's kernels now."""
    return bool(_table if _table is not None else _choose())


def _wanted() -> bool:
    if _forced is not None:
        return _forced
    return os.environ.get(ENV, "1").strip().lower() not in _OFF


@functools.cache
def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def module(name: str) -> Any:
    """The SciPy module ``name`` (``"scipy.linalg.lapack"``, say) for a kernel outside this
    module that has a SciPy path (LU in :mod:`gradsum.ops.linalg._base`), under the same switch:
    ``None`` when SciPy is not installed, ``GRADSUM_SCIPY`` says no or :func:`use_scipy` forced
    the NumPy path."""
    return _import(name) if _wanted() else None


def kernel(name: str) -> Any:
    """Decorate the NumPy float64 kernel ``name``: a call runs SciPy's version of it when the
    SciPy backend is in use, the NumPy kernel otherwise (kept as ``.numpy``)."""

    def deco(numpy_fn: Any) -> Any:
        @functools.wraps(numpy_fn)
        def dispatch(*args: Any) -> Any:
            table = _table if _table is not None else _choose()
            fast = table.get(name)
            return numpy_fn(*args) if fast is None else fast(*args)

        dispatch.numpy = numpy_fn  # type: ignore[attr-defined]
        return dispatch

    return deco


def _kernels(sc: Any) -> dict[str, Any]:
    """The SciPy kernels, by the name their NumPy kernel is decorated with."""

    def lgamma(x: Any) -> Any:
        x = xp.asarray(x)
        with xp.errstate(**_ERR):
            out = xp.atleast_1d(sc.gammaln(x, dtype=_F64))
            # torch: inf at -inf (SciPy: -inf), -log|x| at a subnormal x (SciPy: inf); poles
            # are inf in both
            idx = xp.flatnonzero(xp.isinf(out))
            if idx.size:
                v = xp.abs(xp.ravel(x)[idx].astype(_F64))
                out.flat[idx] = xp.where((v != 0) & (v < 2.3e-308), -xp.log(v), xp.inf)
            if x.dtype.itemsize >= 8:
                # around the zeros at 1 and 2 gammaln's error is about 1e-16 absolute (up to
                # 1e5 ulps of a float64 result, under 0.05 of a float32 one): the NumPy
                # kernel's series on those elements
                flat = xp.ravel(x)
                near = xp.flatnonzero((flat > 0.75) & (flat < 2.35))
                if near.size:
                    from gradsum.ops.special.gamma import _lgamma_array

                    out.flat[near] = _lgamma_array.numpy(flat[near])
        return out.reshape(xp.shape(x))

    def digamma(x: Any) -> Any:
        x = xp.asarray(x)
        with xp.errstate(**_ERR):
            neg = xp.less(x, 0.0)
            y = xp.atleast_1d(x.astype(_F64))  # (the negative ones through psi(1) here)
            xp.copyto(y, 1.0, where=neg)
            out = sc.psi(y, out=y)
            # below 0 torch's reflection: psi(1 - x) - pi / tan(pi frac(x)), nan at the
            # negative integers and -inf (SciPy's own is slower and differs near the poles)
            idx = xp.flatnonzero(neg)
            if idx.size:
                v = xp.ravel(x)[idx].astype(_F64)
                r = xp.fmod(v, 1.0)
                res = sc.psi(1.0 - v) - math.pi / xp.tan(math.pi * r)
                out.flat[idx] = xp.where(r == 0, xp.nan, res)
        return out.reshape(xp.shape(x))

    def igamma(a: Any, x: Any, upper: bool) -> Any:
        with xp.errstate(**_ERR):
            out = xp.atleast_1d((sc.gammaincc if upper else sc.gammainc)(a, x, dtype=_F64))
            idx = xp.flatnonzero(xp.isnan(out))
            if idx.size:  # (torch's order of tests, which gives some nan operands a value)
                ab, xb = xp.broadcast_arrays(xp.asarray(a, dtype=_F64), xp.asarray(x, dtype=_F64))
                ai, xi = ab.flat[idx], xb.flat[idx]
                lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
                val = xp.where(xp.isinf(xi), hi, xp.nan)
                val = xp.where(xp.isinf(ai), xp.where(xp.isinf(xi), xp.nan, lo), val)
                val = xp.where(xi == 0, lo, val)
                val = xp.where(ai == 0, xp.where(xi > 0, hi, xp.nan), val)
                val = xp.where((xi < 0) | (ai < 0), xp.nan, val)
                out.flat[idx] = val
        return out.reshape(xp.broadcast_shapes(xp.shape(a), xp.shape(x)))

    def log_ndtr(x: Any) -> Any:
        from gradsum.ops._erf import erfc64

        x = xp.asarray(x)
        with xp.errstate(**_ERR):
            out = xp.atleast_1d(sc.log_ndtr(x, dtype=_F64))
            # above x = 9.3 (and at inf) torch's log1p(-erfc(x / sqrt 2) / 2): SciPy's result
            # drifts from it there (65 ulps at 10, 500 at 30, 1e13 at 35, 0 beyond 37.5)
            idx = xp.flatnonzero(out > -1e-20)
            if idx.size:
                t = xp.ravel(x)[idx].astype(_F64) * _SQRT1_2
                out.flat[idx] = xp.log1p(-erfc64(t, exact=True) / 2.0)
        return out.reshape(xp.shape(x))

    def plain(fn: Any) -> Any:
        return lambda x: fn(x, dtype=_F64)

    return {
        "lgamma": lgamma,
        "digamma": digamma,
        "igamma": igamma,
        "ndtri": plain(sc.ndtri),
        "log_ndtr": log_ndtr,
    }
