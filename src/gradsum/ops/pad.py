"""Padding primitives behind ``F.pad``: a constant pad (negative amounts crop) whose backward
is the opposite constant pad, and index pads (reflect, replicate, circular) that gather along
each padded dim; their backward scatters (sums) the gradient back, and the scatter's backward
is the gather again, so every order of derivative works.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> x = gradsum.arange(3.0).reshape(1, 1, 3)
    >>> F.pad(x, (2, 1), mode="reflect").tolist()
    [[[2.0, 1.0, 0.0, 1.0, 2.0, 1.0]]]
    >>> F.pad(x, (1, -1), value=9.0).tolist()
    [[[9.0, 0.0, 1.0]]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradsum._autocast import cast_for
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, needs_grad, record

__all__ = ["constant_pad_nd", "index_pad", "pad"]


# -- constant --------------------------------------------------------------------------------
def _pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int]]:
    """F.pad's flat list (last dim first) as (before, after) per dim, all ``ndim`` dims."""
    per = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        per[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return per


class ConstantPadNdBackward0(Node):
    __slots__ = ("pad",)

    def backward(self, g: Tensor) -> Tensor:
        return constant_pad_nd(g, [-p for p in self.pad], 0.0)


def constant_pad_nd(x: Tensor, pad: Sequence[int], value: float = 0.0) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims with ``value``."""
    arr = x._array
    per = _pairs(pad, arr.ndim)
    out_shape = []
    src, dst = [], []
    for d, (lo, hi) in enumerate(per):
        size = arr.shape[d]
        new = size + lo + hi
        if new < 0 or -lo > size or -hi > size:
            raise RuntimeError(_messages.pad_crops_more_than_input(lo, hi, d, size))
        s0, s1 = max(-lo, 0), size - max(-hi, 0)
        o0 = max(lo, 0)
        out_shape.append(new)
        src.append(slice(s0, max(s1, s0)))
        dst.append(slice(o0, o0 + max(s1 - s0, 0)))
    out = xp.full(tuple(out_shape), value, dtype=arr.dtype)
    out[tuple(dst)] = arr[tuple(src)]
    if not needs_grad(x):
        return _make(out)
    node = ConstantPadNdBackward0()
    node.pad = [int(p) for p in pad]
    return record(node, (x,), out)


# -- reflect / replicate / circular: a gather per padded dim -----------------------------------
class _IndexPadNode(Node):
    __slots__ = ("dims", "idx", "in_shape")

    def backward(self, g: Tensor) -> Tensor:
        return _index_scatter(g, self.dims, self.idx, self.in_shape, type(self))


class _IndexScatterNode(Node):
    __slots__ = ("dims", "fwd", "idx", "in_shape")

    def backward(self, g: Tensor) -> Tensor:
        return index_pad(g, self.dims, self.idx, self.fwd)


class ReflectionPad1DBackward0(_IndexPadNode):
    __slots__ = ()


class ReflectionPad1DBackwardBackward0(_IndexScatterNode):
    __slots__ = ()


class ReflectionPad2DBackward0(_IndexPadNode):
    __slots__ = ()


class ReflectionPad2DBackwardBackward0(_IndexScatterNode):
    __slots__ = ()


class ReflectionPad3DBackward0(_IndexPadNode):
    __slots__ = ()


class ReflectionPad3DBackwardBackward0(_IndexScatterNode):
    __slots__ = ()


class ReplicationPad1DBackward0(_IndexPadNode):
    __slots__ = ()


class ReplicationPad1DBackwardBackward0(_IndexScatterNode):
    __slots__ = ()


class ReplicationPad2DBackward0(_IndexPadNode):
    __slots__ = ()


class ReplicationPad2DBackwardBackward0(_IndexScatterNode):
    __slots__ = ()


class ReplicationPad3DBackward0(_IndexPadNode):
    __slots__ = ()


class ReplicationPad3DBackwardBackward0(_IndexScatterNode):
    __slots__ = ()


#: torch pads circularly by copying slices into a new tensor: its grad_fn is CopySlices
class CopySlices(_IndexPadNode):
    __slots__ = ()


class CopySlicesBackward(_IndexScatterNode):
    __slots__ = ()


_FORWARD: dict[str, type] = {
    "reflect1": ReflectionPad1DBackward0,
    "reflect2": ReflectionPad2DBackward0,
    "reflect3": ReflectionPad3DBackward0,
    "replicate1": ReplicationPad1DBackward0,
    "replicate2": ReplicationPad2DBackward0,
    "replicate3": ReplicationPad3DBackward0,
    "circular1": CopySlices, "circular2": CopySlices, "circular3": CopySlices,
}
_BACKWARD: dict[type, type] = {
    ReflectionPad1DBackward0: ReflectionPad1DBackwardBackward0,
    ReflectionPad2DBackward0: ReflectionPad2DBackwardBackward0,
    ReflectionPad3DBackward0: ReflectionPad3DBackwardBackward0,
    ReplicationPad1DBackward0: ReplicationPad1DBackwardBackward0,
    ReplicationPad2DBackward0: ReplicationPad2DBackwardBackward0,
    ReplicationPad3DBackward0: ReplicationPad3DBackwardBackward0,
    CopySlices: CopySlicesBackward,
}


def index_pad(x: Tensor, dims: tuple[int, ...], idx: tuple[Any, ...], node_cls: type) -> Tensor:
    """``x`` gathered along each of ``dims`` at the source indices ``idx`` (one 1-D int array
    per dim)."""
    out = x._array
    for d, i in zip(dims, idx):
        out = xp.take(out, i, axis=d)
    if not needs_grad(x):
        return _make(out)
    node = node_cls()
    node._saved = HOLDS_STATE
    node.dims, node.idx, node.in_shape = dims, idx, tuple(x._array.shape)
    return record(node, (x,), out)


def _index_scatter(g: Tensor, dims: tuple[int, ...], idx: tuple[Any, ...],
                   in_shape: tuple[int, ...], fwd: type) -> Tensor:
    """The adjoint of :func:`index_pad`: ``g`` summed back onto the source positions."""
    out = g._array
    for d, i in reversed(list(zip(dims, idx))):
        moved = xp.moveaxis(out, d, 0)
        acc = xp.zeros((in_shape[d],) + moved.shape[1:], dtype=out.dtype)
        xp.add.at(acc, i, moved)
        out = xp.moveaxis(acc, 0, d)
    out = xp.ascontiguousarray(out)
    if not needs_grad(g):
        return _make(out)
    node = _BACKWARD[fwd]()
    node._saved = HOLDS_STATE
    node.dims, node.idx, node.in_shape, node.fwd = dims, idx, in_shape, fwd
    return record(node, (g,), out)


def _source_index(size: int, lo: int, hi: int, mode: str) -> Any:
    j = xp.arange(-lo, size + hi, dtype=xp.int64)
    if mode == "reflect":
        j = xp.abs(j)
        return xp.where(j > size - 1, 2 * (size - 1) - j, j)
    if mode == "replicate":
        return xp.clip(j, 0, size - 1)
    # circular: torch crops first (negative amounts), then wraps around the cropped part
    c0 = max(-lo, 0)
    csize = size - c0 - max(-hi, 0)
    j = xp.arange(-max(lo, 0), csize + max(hi, 0), dtype=xp.int64)
    return c0 + j % max(csize, 1)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """torch's ``F.pad``: ``pad`` lists (before, after) amounts from the last dim backwards.
    ``'constant'`` pads any number of dims with ``value`` (negative amounts crop);
    ``'reflect'``, ``'replicate'`` and ``'circular'`` pad the last 1, 2 or 3 dims of a
    (batched or unbatched) input.
    """
    if not isinstance(pad, (tuple, list)):
        raise TypeError(_messages.int_list_argument_not_tuple("pad", "pad", 2, pad))
    for i, p in enumerate(pad):
        if not isinstance(p, (int, xp.integer)) or isinstance(p, bool):
            raise TypeError(_messages.pad_element_not_int(p, i))
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(_messages.pad_unrecognised_mode(mode))
    if len(pad) % 2:
        raise RuntimeError(_messages.pad_odd_length(pad))
    ndim = input.ndim
    if len(pad) > 2 * ndim:
        raise RuntimeError(_messages.pad_too_long(pad, ndim))
    if mode == "constant":
        return constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(_messages.pad_mode_takes_no_value(mode))
    k = len(pad) // 2
    if k == 0 or ndim not in (k + 1, k + 2):
        raise NotImplementedError(_messages.pad_size_not_supported(pad, ndim))
    if mode != "circular" and not (mode == "reflect" and k == 3):  # (torch's fp32 list)
        (input,) = cast_for(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{k}d",
                            input)
    shape = tuple(input.shape)
    dims, idx = [], []
    for i in range(k):
        d = ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        size = shape[d]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(_messages.pad_reflect_too_large(i, lo, hi, d, shape))
        if mode == "circular" and (lo > size or hi > size or (
                size + min(lo, 0) + min(hi, 0) <= 0 and (lo > 0 or hi > 0))):
            raise RuntimeError(_messages.pad_circular_wraps_twice(lo, hi, d, size))
        if mode == "replicate" and size == 0 and (lo > 0 or hi > 0):
            raise RuntimeError(_messages.pad_replicate_empty_dimension(d, shape))
        if size + lo + hi < 0 or -lo > size or -hi > size:
            raise RuntimeError(_messages.pad_negative_output_size(shape, lo, hi, d))
        dims.append(d)
        idx.append(_source_index(size, lo, hi, mode))
    return index_pad(input, tuple(dims), tuple(idx), _FORWARD[f"{mode}{k}"])
