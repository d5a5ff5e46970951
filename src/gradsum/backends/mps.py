"""``gradsum.backends.mps``: torch.backends.mps on a build without Apple's Metal backend.

Example:
    >>> import gradsum
    >>> gradsum.backends.mps.is_available(), gradsum.backends.mps.is_built()
    (False, False)
"""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer"]


def is_available() -> bool:
    """Whether an MPS device can be used: False."""
    return False


def is_built() -> bool:
    """Whether gradsum was built with MPS: False."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    """torch's RuntimeError without the MPS backend."""
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend: gradsum runs on "
                       "the CPU only. Guard the call with torch.backends.mps.is_available().")
