"""The error a damaged or foreign checkpoint raises, and the advice its messages end with.

Example:
    >>> from gradsum.serialization.errors import CheckpointError
    >>> issubclass(CheckpointError, RuntimeError), issubclass(CheckpointError, ValueError)
    (True, True)
"""

from __future__ import annotations

__all__ = ["CheckpointError", "FIX_CORRUPT"]

FIX_CORRUPT = (
    "The file is damaged (an interrupted copy or a disk error?): load an earlier checkpoint "
    "or save this one again from the live objects."
)


class CheckpointError(RuntimeError, ValueError):
    """A file that is not a readable checkpoint: empty, truncated, corrupted or foreign.

    A ``RuntimeError``, as torch raises for such files (``PytorchStreamReader failed ...``,
    ``Invalid magic number; corrupt file?``), and a ``ValueError``, as gradsum raised before.
    The message starts with torch's phrase where torch has one, names the file, what is
    wrong with it and how to fix it.

    Example:
        >>> import io, gradsum
        >>> try:
        ...     gradsum.load(io.BytesIO(b""))
        ... except CheckpointError as e:
        ...     print(isinstance(e, RuntimeError), "empty" in str(e))
        True True
    """
