"""The array-namespace seam: the only module in gradsum that imports NumPy.

Op code never imports ``numpy``; it asks a tensor for its backend (``tensor._xp``) or uses
:data:`xp` from here. A CuPy backend can later provide the same names without touching op code.

Example:
    >>> from gradsum._backend import xp
    >>> xp.add(xp.ones(2), 1.0).tolist()
    [2.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy

#: The array namespace every op uses (NumPy for now).
xp: Any = numpy

#: The array type of this backend.
ndarray: type = numpy.ndarray

#: ``xp.dot`` without its ``__array_function__`` dispatch, which runs a Python function on
#: every call (a tenth of a small product's time): gradsum passes it plain arrays only.
dot: Any = getattr(numpy.dot, "_implementation", numpy.dot)


def is_array(obj: object) -> bool:
    """True when ``obj`` is an array of this backend (or a NumPy scalar)."""
    return isinstance(obj, (numpy.ndarray, numpy.generic))


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
