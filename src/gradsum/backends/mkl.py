"""Intel MKL for large matrix products (the optional ``mkl`` extra).

With the ``mkl`` package installed (``pip install mkl``, about 1 GB; in a clone of gradsum
``pip install -e ".[mkl]"``), in a process whose BLAS is asked for one thread
(``OMP_NUM_THREADS=1``), 2-D float32/float64 products of at least ``MIN_FLOPS``
multiply-adds run in MKL's sequential GEMM (PyTorch's CPU build uses the same library)
instead of NumPy's OpenBLAS; see :mod:`gradsum._blas` for what is routed where and why only
with one thread. Results can differ from the NumPy path in the last bits, as two BLAS
libraries sum in different orders. Only matrix products go to MKL: the optimizers' updates
are NumPy's, with torch's fused multiply-adds emulated bit for bit (:mod:`gradsum._fma`);
MKL's level-1 routines (``axpy``/``axpby``) are not torch's bits on every CPU.

Example:
    >>> import gradsum
    >>> isinstance(gradsum.backends.mkl.is_available(), bool)
    True
    >>> with gradsum.backends.mkl.flags(enabled=False):
    ...     gradsum.backends.mkl.enabled
    False
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator

from gradsum import _blas

#: products with at least this many multiply-adds go to MKL
MIN_FLOPS = _blas.MIN_FLOPS


def is_available() -> bool:
    """Whether MKL is installed and loads (``False`` also under ``GRADSUM_BLAS=numpy``)."""
    return _blas.available()


def unavailable_reason() -> str | None:
    """Why :func:`is_available` is False, in words (None when MKL is available)."""
    return _blas.unavailable_reason()


@contextlib.contextmanager
def flags(enabled: bool = True) -> Iterator[None]:
    """Use (or not) MKL for the products inside the block; restored afterwards."""
    prev = _blas.enabled
    _blas.enabled = bool(enabled)
    try:
        yield
    finally:
        _blas.enabled = prev


class _MklModule(types.ModuleType):
    """Makes ``gradsum.backends.mkl.enabled`` a live switch (read and assigned)."""

    @property
    def enabled(self) -> bool:
        """Whether large products may use MKL (when it is available). Default True."""
        return _blas.enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        _blas.enabled = bool(value)


sys.modules[__name__].__class__ = _MklModule
