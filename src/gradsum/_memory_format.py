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
