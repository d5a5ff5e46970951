"""``gradsum.backends.openmp``: whether gradsum computes with OpenMP.

gradsum's products run in NumPy's BLAS (OpenBLAS's own threads), not in an OpenMP runtime,
so :func:`is_available` is False (torch's CPU build, built with OpenMP, says True).

Example:
    >>> import gradsum
    >>> gradsum.backends.openmp.is_available()
    False
"""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether gradsum's kernels use OpenMP: False."""
    return False
