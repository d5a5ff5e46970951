"""The array-namespace seam: the only module in gradsum that imports NumPy.

Op code never imports ``numpy``; it asks a tensor for its backend (``tensor._xp``) or uses
:data:`xp` from here. A CuPy backend can later provide the same names without touching op code.

Example:
    >>> from gradsum._backend import xp
    >>> xp.add(xp.ones(2), 1.0).tolist()
    [2.0, 2.0]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy

#: The array namespace every op uses (NumPy for now).
xp: Any = numpy

#: The array type of this backend.
ndarray: type = numpy.ndarray

#: ``xp.dot`` without its ``__array_function__`` dispatch, which runs a Python function on
#: every call (a tenth of a small product's time): gradsum passes it plain arrays only.
dot: Any = getattr(numpy.dot, "_implementation", numpy.dot)
bincount: Any = getattr(numpy.bincount, "_implementation", numpy.bincount)  # (the same)

#: NumPy 2's floating-point error state (a context variable) and the function that derives a
#: new state from the current one (what ``errstate`` does on entry), or None elsewhere
_fp_state: Any
_make_extobj: Any
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _fp_state
    from numpy._core.umath import _make_extobj

    _token = _fp_state.set(_make_extobj(divide="ignore", invalid="ignore", over="ignore"))
    try:  # (the state must be what errstate would set: else errstate itself is used)
        _ok = all(numpy.geterr()[k] == "ignore" for k in ("divide", "invalid", "over"))
    finally:
        _fp_state.reset(_token)
    del _token
    if not _ok:
        raise ImportError
except (ImportError, AttributeError, TypeError):  # (NumPy 1.x, or a changed internal)
    _fp_state = _make_extobj = None


def cpu_features() -> dict[str, bool]:
    """NumPy's table of the CPU's instruction sets (``"AVX2"``, ``"AVX512F"``, ...: True where
    present), empty where this NumPy keeps it elsewhere.

    Example:
        >>> isinstance(cpu_features().get("AVX512F", False), bool)
        True
    """
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        return {}
    return dict(__cpu_features__)


def silenced(fn: Callable[..., Any], underflow: bool = False) -> Callable[..., Any]:
    """``fn`` run without NumPy's divide/invalid/overflow warnings (torch's kernels raise
    none: ``log(0)`` is ``-inf`` silently), and without underflow ones if ``underflow``: what
    ``np.errstate(divide="ignore", ...)(fn)`` (or ``errstate(all="ignore")``) does.

    NumPy 2 keeps its error state in a context variable; ``errstate`` builds the quiet state
    from the current one on every call. Here it is built once per current state and cached,
    which halves the cost on the small arrays of a training step. Where NumPy keeps its state
    otherwise, this is ``errstate``'s own decorator."""
    settings = {"divide": "ignore", "invalid": "ignore", "over": "ignore"}
    if underflow:
        settings["under"] = "ignore"
    if _fp_state is None:
        return numpy.errstate(**settings)(fn)  # type: ignore[no-any-return]
    get, put = _fp_state.get, _fp_state.set
    quiet: dict[Any, Any] = {}  # the caller's state -> the same with the warnings off

    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        state = get()
        q = quiet.get(state)
        if q is None:
            if len(quiet) >= 8:
                quiet.clear()
            q = quiet[state] = _make_extobj(**settings)
        # (the change inside the ``try``, the caller's state put back: an exception raised at
        # any point, a KeyboardInterrupt too, leaves NumPy's error state as it was; a token
        # from ``set`` could be lost between the call and its assignment)
        try:
            put(q)
            return fn(*args, **kwargs)
        finally:
            put(state)

    return inner


def is_array(obj: object) -> bool:
    """True when ``obj`` is an array of this backend (or a NumPy scalar)."""
    return isinstance(obj, (numpy.ndarray, numpy.generic))


def copy_c(x: Any) -> Any:
    """A C-contiguous copy of ``x`` (``x.copy()``, the same bytes). A transposed view (the
    last two axes of a C-contiguous array swapped, as ``t()`` or ``transpose(-1, -2)``)
    moves 16 bytes at a time, then deinterleaves them: NumPy's strided copy moves one
    element per step, 3-4 times slower than these two passes."""
    if x.ndim >= 2 and x.size >= 4096 and not x.flags.c_contiguous:
        size = x.dtype.itemsize
        base = x.swapaxes(-1, -2)
        if (size in (2, 4, 8) and x.dtype.kind in "fiucV" and base.flags.c_contiguous
                and base.shape[-1] % (16 // size) == 0):
            w = 16 // size
            lead, rows, cols = base.shape[:-2], base.shape[-2], base.shape[-1]
            wide = base.view(numpy.complex128).swapaxes(-1, -2).copy()  # (..., cols/w, rows)
            parts = wide.view(x.dtype).reshape(lead + (cols // w, rows, w))
            return parts.swapaxes(-1, -2).copy().reshape(lead + (cols, rows))
    return x.copy()


def asarray(obj: Any, dtype: Any = None) -> Any:
    """Convert ``obj`` (nested lists, scalars, arrays) to a backend array."""
    return numpy.asarray(obj, dtype=dtype)


def scalar_dtype_kind(value: object) -> str:
    """Kind letter of a Python/NumPy scalar: ``'b'`` bool, ``'i'`` integer, ``'f'`` float."""
    if isinstance(value, (bool, numpy.bool_)):
        return "b"
    if isinstance(value, (int, numpy.integer)):
        return "i"
    if isinstance(value, (float, numpy.floating)):
        return "f"
    if isinstance(value, (complex, numpy.complexfloating)):
        return "c"
    raise TypeError(f"unsupported scalar type {type(value).__name__}")
