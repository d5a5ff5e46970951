"""Switches for the libraries gradsum computes with (like ``torch.backends``).

- :mod:`gradsum.backends.mkl`: Intel MKL's GEMM for large float matrix products, used when
  the optional ``mkl`` package is installed.
"""

from gradsum.backends import mkl

__all__ = ["mkl"]
