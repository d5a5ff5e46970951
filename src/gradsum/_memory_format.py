"""Memory formats (``gradsum.channels_last`` ...): how a tensor's elements are laid out.

gradsum's tensors are NumPy arrays, which carry strides, so the layouts are real:
``x.to(memory_format=gradsum.channels_last)`` gives the strides torch gives (``(60, 1, 15, 3)``
for a ``(2, 3, 4, 5)`` tensor), ``x.is_contiguous(memory_format=...)`` answers as torch's, and
``model.to(memory_format=gradsum.channels_last)`` relays out the 4-D parameters. Values never
change with the layout, only strides (and speed).

Example:
    >>> import gradsum
    >>> x = gradsum.zeros(2, 3, 4, 5).to(memory_format=gradsum.channels_last)
    >>> x.stride(), x.is_contiguous(), x.is_contiguous(memory_format=gradsum.channels_last)
    ((60, 1, 15, 3), False, True)
"""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp

__all__ = ["channels_last", "channels_last_3d", "contiguous_format", "memory_format",
           "preserve_format"]


class memory_format:
    """A memory format (torch's ``torch.memory_format``): compared by identity."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"gradsum.{self._name}"

    def __reduce__(self) -> str:
        return self._name  # (pickles as the module attribute of that name)


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
memory_format.__module__ = "gradsum"

# the order of the dimensions in memory, outermost first, for the channels-last formats
_ORDER = {channels_last: (0, 2, 3, 1), channels_last_3d: (0, 2, 3, 4, 1)}


def check(fmt: Any, name: str) -> memory_format:
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    return fmt


def _check_rank(arr: Any, fmt: memory_format) -> tuple[int, ...]:
    order = _ORDER[fmt]
    if arr.ndim != len(order):
        raise RuntimeError(f"required rank {len(order)} tensor to use "
                           f"{fmt._name} format (got a {arr.ndim}-D tensor); use it for "
                           f"{'NCHW' if len(order) == 4 else 'NCDHW'} tensors only")
    return order


def is_contiguous(arr: Any, fmt: memory_format) -> bool:
    """Whether ``arr``'s strides are ``fmt``'s (dimensions of size 1 do not count, as in
    torch)."""
    if fmt is contiguous_format or fmt is preserve_format:  # (torch: preserve asks C order)
        return bool(arr.flags.c_contiguous)
    order = _ORDER[fmt]
    if arr.ndim != len(order):
        return False
    expected = 1
    for d in reversed(order):
        if arr.shape[d] != 1 and arr.strides[d] != expected * arr.itemsize:
            return False
        expected *= arr.shape[d]
    return True


def has_canonical_strides(arr: Any, fmt: memory_format) -> bool:
    """Whether ``arr`` has exactly the strides torch gives a new tensor in ``fmt`` (size-1
    dimensions included: ``to(memory_format=...)`` restrides unless they match)."""
    if fmt is contiguous_format or fmt is preserve_format:
        return bool(arr.flags.c_contiguous)
    order = _ORDER[fmt]
    if arr.ndim != len(order):
        return False
    expected = [0] * arr.ndim
    running = arr.itemsize
    for d in reversed(order):
        expected[d] = running
        running *= arr.shape[d]
    return tuple(expected) == arr.strides


def relayout(arr: Any, fmt: memory_format) -> Any:
    """A copy of ``arr`` with ``fmt``'s strides (``arr`` for ``preserve_format``)."""
    if fmt is preserve_format:
        return arr
    if fmt is contiguous_format:
        return xp.ascontiguousarray(arr)
    order = _check_rank(arr, fmt)
    inverse = tuple(order.index(d) for d in range(len(order)))
    # (a new buffer: NumPy keeps odd strides of size-1 dimensions of an array it need not copy)
    out = xp.empty(tuple(arr.shape[d] for d in order), dtype=arr.dtype)
    out[...] = arr.transpose(order)
    return out.transpose(inverse)


def check_rank(arr: Any, fmt: memory_format) -> None:
    """torch's error for a channels-last format on a tensor of another rank."""
    if fmt in _ORDER:
        _check_rank(arr, fmt)


def _non_overlapping_and_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's ``is_non_overlapping_and_dense`` on element strides: the dimensions of size
    two or more, by stride, tile the storage without gaps or overlaps."""
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _dense_strides_like(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """torch's ``infer_dense_strides``: dense strides that keep the input's order of the
    dimensions in memory (a stride of 0 is ambiguous and keeps the given order)."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # (innermost first)

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * ndim
    running = 1
    for d in perm:
        out[d] = running
        running *= max(shape[d], 1)
    return tuple(out)


def preserved_strides(arr: Any) -> tuple[int, ...] | None:
    """The element strides torch's ``preserve_format`` gives a tensor made like ``arr``
    (``empty_like``, ``clone``, ``ones_like``, ...), or None for plain row-major: ``arr``'s own
    strides when it is non-overlapping and dense, else dense strides in its memory order."""
    if arr.flags.c_contiguous or arr.ndim < 2:
        return None
    size = arr.itemsize
    strides = tuple(s // size for s in arr.strides)
    shape = arr.shape
    out = strides if _non_overlapping_and_dense(shape, strides) else \
        _dense_strides_like(shape, strides)
    c_order = [0] * arr.ndim
    running = 1
    for d in range(arr.ndim - 1, -1, -1):
        c_order[d] = running
        running *= max(shape[d], 1)
    return None if out == tuple(c_order) else out


def empty_preserving(arr: Any, dtype: Any = None) -> Any:
    """An uninitialised array of ``arr``'s shape (and ``dtype``, default ``arr``'s) with the
    strides :func:`preserved_strides` gives (row-major when None)."""
    dt = arr.dtype if dtype is None else xp.dtype(dtype)
    strides = preserved_strides(arr)
    if strides is None:
        return xp.empty(arr.shape, dtype=dt)
    extent = 1 + sum((n - 1) * s for n, s in zip(arr.shape, strides) if n > 0)
    buf = xp.empty(extent if arr.size else 0, dtype=dt)
    return xp.lib.stride_tricks.as_strided(
        buf, arr.shape, tuple(s * dt.itemsize for s in strides))


def like_array(arr: Any, fmt: Any, name: str, dtype: Any = None) -> Any:
    """An uninitialised array for a ``*_like`` factory or ``clone``: laid out as ``arr`` under
    ``preserve_format`` (the default, ``fmt`` None), else in ``fmt``'s order."""
    if fmt is None or fmt is preserve_format:
        return empty_preserving(arr, dtype)
    fmt = check(fmt, name)
    dt = arr.dtype if dtype is None else xp.dtype(dtype)
    if fmt is contiguous_format:
        return xp.empty(arr.shape, dtype=dt)
    order = _check_rank(arr, fmt)
    inverse = tuple(order.index(d) for d in range(len(order)))
    return xp.empty(tuple(arr.shape[d] for d in order), dtype=dt).transpose(inverse)
