"""Views: ops whose output shares the input's storage (``view``, ``reshape``, ``expand``,
``squeeze``/``unsqueeze``, ``permute``/``transpose``/``t``, ``narrow``, ``select``, ``split``,
``chunk``, ``unbind``, ``diagonal``, ``movedim``, ``unfold``, ``as_strided``, the ``atleast_*``
and ``*split`` families, ``broadcast_tensors``, ``conj``/``real`` and the storage queries).
(Named ``views``, not ``view``: ``gradsum.ops.view`` is the op.)

Example:
    >>> import gradsum
    >>> x = gradsum.zeros(2, 3)
    >>> v = x.view(3, 2)
    >>> v._array.base is not None or v.data_ptr() == x.data_ptr()
    True
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum import _memory_format
from gradsum._backend import copy_c, xp
from gradsum._tensor import Size, Tensor
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state, no_grad
from gradsum.autograd.graph import Node
from gradsum.ops import _messages as _ops_messages
from gradsum.ops._core import (
    _make,
    broadcast_view,
    guard_view,
    mark_view,
    needs_grad,
    record,
    register,
    require_tensor,
    tensor_method,
    wrap_dim,
    wrap_dims,
)
from gradsum.ops._messages import torch_name
from gradsum.ops.indexing.gather_scatter import put
from gradsum.ops.indexing.subscript import _int_shape, getitem


def _sizes(args: Sequence[Any]) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(map(int, args))


class ExpandBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        return F.sum_to(g, self.in_shape)


@register("expand", "broadcast_to", method=True)
def expand(a: Tensor, *sizes: Any) -> Tensor:
    """A broadcast view of ``a`` with ``sizes`` (-1 keeps a dimension). Read-only, like torch's
    expanded tensors that refuse in-place writes."""
    shape = _sizes(sizes)
    x = a._array
    lead = len(shape) - x.ndim
    if lead < 0:
        raise RuntimeError(_ops_messages.expand_too_few_sizes(shape, x))
    if -1 in shape[:lead]:
        raise RuntimeError(_ops_messages.expand_minus_one_in_new_leading_dim(shape, x))
    target = shape if -1 not in shape else tuple(
        (x.shape[i - lead] if s == -1 else s) for i, s in enumerate(shape)
    )
    try:
        # (to its own shape: a plain view, writable like torch's, still a new tensor)
        out = x.view() if target == x.shape else broadcast_view(x, target)
    except ValueError:
        raise RuntimeError(_ops_messages.expand_size_mismatch(x, target)) from None
    if not needs_grad(a):
        return mark_view(_make(out), a, (lambda b: expand(b, target)) if _state.enabled else None)
    node = ExpandBackward0()
    node.in_shape = x.shape
    return mark_view(record(node, (a,), out), a, lambda b: expand(b, target))


@tensor_method("expand_as")
def expand_as(a: Tensor, other: Tensor) -> Tensor:
    return expand(a, other.shape)


# -- reshape family ----------------------------------------------------------------------------
class ViewBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        return F.reshape(g, self.in_shape)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class ReshapeAliasBackward0(ViewBackward0):
    """A reshape of a non-contiguous tensor that is still a view (torch's ``_reshape_alias``)."""

    __slots__ = ()


class SqueezeBackward0(ViewBackward0):
    """``squeeze()`` (torch: ``squeeze(dim)`` is ``SqueezeBackward1``, a tuple of dims
    ``SqueezeBackward2``: the same rule)."""

    __slots__ = ()


class SqueezeBackward1(SqueezeBackward0):
    __slots__ = ()


class SqueezeBackward2(SqueezeBackward0):
    __slots__ = ()


class UnsqueezeBackward0(ViewBackward0):
    __slots__ = ()


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(_ops_messages.view_only_one_inferred_dim())
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(_ops_messages.view_invalid_shape_dimension(s))
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(_ops_messages.view_shape_invalid_for_size(shape, numel))
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(_ops_messages.view_shape_invalid_for_size(shape, numel))
    return shape


def _reshape(a: Tensor, shape: tuple[int, ...], cls: type[ViewBackward0], must_view: bool
             ) -> Tensor:
    x = a._array
    if shape and min(shape) < 0:
        shape = _infer_shape(shape, x.size)
    try:
        out = x.reshape(shape)
    except ValueError:
        shape = _infer_shape(shape, x.size)  # raises torch's message for a bad shape
        raise RuntimeError(_ops_messages.view_size_not_compatible(x, shape)) from None
    # (an empty array shares no memory, but numpy still returns a view of it; a reshape
    # that had to copy returns a fresh array whose bounds do not overlap x's; a view's base
    # is x or x's own base, the quick test)
    b = out.base
    is_view = b is not None and (b is x or b is x.base or x.size == 0
                                 or xp.may_share_memory(out, x))
    if must_view and not is_view:
        raise RuntimeError(_ops_messages.view_size_not_compatible(x, tuple(out.shape)))
    shape = out.shape
    if not needs_grad(a):
        t = _make(out)
        if not is_view:
            return t
        return mark_view(t, a, (lambda b: reshape(b, shape)) if _state.enabled else None)
    if not is_view:
        # torch's reshape that must copy is ``_unsafe_view(clone(a))``: two nodes, the clone
        # (of a's shape, here a view of the copy just made) under an UnsafeViewBackward0
        c = record(F.pointwise.CloneBackward0(), (a,), out.reshape(x.shape))
        node: ViewBackward0 = UnsafeViewBackward0()
        node.in_shape = x.shape
        return record(node, (c,), out)
    # (torch: a reshape of a non-contiguous tensor that can still be a view is
    # ``_reshape_alias``; ``view`` and a contiguous input are ``ViewBackward0``)
    node = (ReshapeAliasBackward0() if cls is ViewBackward0 and not must_view
            and not x.flags.c_contiguous else cls())
    node.in_shape = x.shape
    t = record(node, (a,), out)
    return mark_view(t, a, lambda b: reshape(b, shape))


@register("reshape", method=True)
def reshape(a: Tensor, *shape: Any) -> Tensor:
    """Same elements in a new shape; a view when the layout allows, else a copy."""
    return _reshape(a, _sizes(shape), ViewBackward0, False)


@register("view", method=True)
def view(a: Tensor, *shape: Any) -> Tensor:
    """A view with a new shape; raises when the layout needs a copy (use reshape)."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise RuntimeError(_ops_messages.view_dtype_unsupported())
    return _reshape(a, _sizes(shape), ViewBackward0, True)


@tensor_method("view_as")
def view_as(a: Tensor, other: Tensor) -> Tensor:
    return view(a, other.shape)


@tensor_method("reshape_as")
def reshape_as(a: Tensor, other: Tensor) -> Tensor:
    return reshape(a, other.shape)


@register("flatten", method=True)
def flatten(a: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim..end_dim`` into one."""
    nd = a._array.ndim
    if nd == 0:  # (dims are checked as for a 1-d tensor, like torch)
        wrap_dim(start_dim, 0)
        wrap_dim(end_dim, 0)
        return reshape(a, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError(_ops_messages.flatten_start_after_end())
    shp = a._array.shape
    n = 1
    for d in shp[s : e + 1]:
        n *= d
    return reshape(a, shp[:s] + (n,) + shp[e + 1 :])


@register("unflatten", method=True)
def unflatten(a: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = wrap_dim(dim, a._array.ndim)
    shp = a._array.shape
    sizes = tuple(int(s) for s in sizes)
    n = shp[d] if shp else 1
    # torch infers a -1 from the size of ``dim`` alone: reshaping the whole tensor could not
    # (an empty tensor of shape (0, 1, 1) leaves -1 undetermined, yet dim -1 has size 1)
    try:
        sizes = _infer_shape(sizes, n)
    except RuntimeError:
        raise RuntimeError(_ops_messages.unflatten_sizes_mismatch(sizes, dim, n, shp)) from None
    return reshape(a, shp[:d] + sizes + shp[d + 1 :])


@register("squeeze", method=True)
def squeeze(a: Tensor, dim: Any = None) -> Tensor:
    """Remove dimensions of size 1 (all, or those in ``dim``)."""
    shp = a._array.shape
    if shp:
        dims = wrap_dims(dim, len(shp))
    else:  # (a 0-d tensor takes dim 0 or -1, like torch)
        dims = ()
        if dim is not None:
            wrap_dims(dim, 1)
    new = tuple(s for i, s in enumerate(shp) if not (i in dims and s == 1))
    cls = (SqueezeBackward0 if dim is None
           else SqueezeBackward1 if isinstance(dim, (int, xp.integer)) else SqueezeBackward2)
    return _reshape(a, new, cls, True)


@register("unsqueeze", method=True)
def unsqueeze(a: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    shp = a._array.shape
    d = wrap_dim(dim, len(shp) + 1)
    return _reshape(a, shp[:d] + (1,) + shp[d:], UnsqueezeBackward0, True)


class PermuteBackward0(Node):
    __slots__ = ("inverse",)

    def backward(self, g: Tensor) -> Tensor:
        return F.permute(g, self.inverse)


class TransposeBackward0(PermuteBackward0):
    __slots__ = ()


class TBackward0(PermuteBackward0):
    __slots__ = ()


def _permute(a: Tensor, dims: tuple[int, ...], cls: type[PermuteBackward0],
             checked: bool = False) -> Tensor:
    """``checked``: ``dims`` is already a permutation of ``range(ndim)`` (t, transpose)."""
    x = a._array
    if not checked:
        if len(dims) != x.ndim:
            raise RuntimeError(_ops_messages.permute_dims_mismatch(x, dims))
        dims = wrap_dims(dims, x.ndim)
    out = x.transpose(dims)
    if not needs_grad(a):
        return mark_view(_make(out), a, (lambda b: permute(b, dims)) if _state.enabled else None)
    node = cls()
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    node.inverse = tuple(inv)
    return mark_view(record(node, (a,), out), a, lambda b: permute(b, dims))


@register("permute", method=True)
def permute(a: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions (a view)."""
    return _permute(a, _sizes(dims), PermuteBackward0)


@register("transpose", "swapaxes", method=True)
def transpose(a: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    nd = a._array.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)  # (a 0-d tensor takes 0 and -1)
    if nd == 0:
        return _permute(a, (), TransposeBackward0, True)  # a view, as torch's
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return _permute(a, tuple(dims), TransposeBackward0, True)


@register("t", method=True)
def t(a: Tensor) -> Tensor:
    """Transpose of a tensor of at most 2 dimensions."""
    nd = a._array.ndim
    if nd > 2:
        raise RuntimeError(_ops_messages.t_expects_at_most_2d(nd, a))
    return _permute(a, _REVERSED[nd], TBackward0, True)


_REVERSED = {0: (), 1: (0,), 2: (1, 0)}  # t()'s dims by rank


@register("contiguous", method=True)
def contiguous(a: Tensor, memory_format: Any = None) -> Tensor:
    """``a`` itself when laid out in ``memory_format``'s order (default: row-major, i.e.
    C-contiguous), else a copy in that layout that stays in the graph."""
    fmt = (_memory_format.contiguous_format if memory_format is None
           else _memory_format.check(memory_format, "contiguous"))
    _memory_format.check_rank(a._array, fmt)
    if _memory_format.is_contiguous(a._array, fmt):
        return a
    if fmt is _memory_format.preserve_format:
        raise RuntimeError(_ops_messages.contiguous_preserve_format_unsupported())
    x = a._array
    return F.copied(a, copy_c(x) if fmt is _memory_format.contiguous_format
                    else _memory_format.relayout(x, fmt))


@register("narrow", method=True)
def narrow(a: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` entries of ``dim`` from ``start`` (a negative start counts from the end;
    the range must fit: torch checks it rather than clipping like a slice)."""
    if a._array.ndim == 0:
        raise RuntimeError(_ops_messages.narrow_zero_dim())
    if length < 0:
        raise RuntimeError(_ops_messages.narrow_negative_length(length))
    d = wrap_dim(dim, a._array.ndim)
    n = a._array.shape[d]
    if not -n <= start <= n:
        raise IndexError(_ops_messages.narrow_start_out_of_range(n, start, d, a))
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(_ops_messages.narrow_exceeds_dimension(start, length, n, d, a))
    return getitem(a, (slice(None),) * d + (slice(start, start + length),))


@register("select", method=True)
def select(a: Tensor, dim: int, index: int) -> Tensor:
    d = wrap_dim(dim, a._array.ndim)
    return getitem(a, (slice(None),) * d + (index,))


def _check_splittable(a: Tensor, name: str) -> None:
    """torch refuses a 0-d tensor before looking at ``dim`` or the sizes."""
    if not a._array.ndim:
        raise RuntimeError(_ops_messages.split_expects_at_least_1d(name))


@register("split", method=True)
def split(a: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` (the last may be smaller) or of the given section sizes."""
    _check_splittable(a, "split")
    d = wrap_dim(dim, a._array.ndim)
    n = a._array.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(_ops_messages.split_size_zero(step, n))
        sizes = [min(step, n - s) for s in range(0, n, step)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(_ops_messages.split_sizes_sum_mismatch(n, d, sizes))
    cls = SplitBackward0 if isinstance(split_size_or_sections, int) else SplitWithSizesBackward0
    if a._view_guard is not None:  # (a piece of a guarded view: narrow's own bookkeeping)
        out = []
        start = 0
        for s in sizes:
            out.append(narrow(a, d, start, s))
            start += s
        return _multi_views(tuple(out), a, cls.__name__[:-9], cls, d)
    return _multi_views(_pieces(a, d, sizes, cls), a, cls.__name__[:-9], cls, d)


def _pieces(a: Tensor, d: int, sizes: list[int], cls: type[SplitBackward0]
            ) -> tuple[Tensor, ...]:
    """The views ``narrow(a, d, start, size)`` for consecutive ``sizes`` (in range), each
    what narrow makes (a view of ``a`` that narrow replays on a new base), but sliced at once
    and recorded by one ``cls`` node (what :func:`_multi_views` would attach)."""
    x = a._array
    pre = (slice(None),) * d
    keys = []
    start = 0
    for s in sizes:
        keys.append(pre + (slice(start, start + s),))
        start += s
    enabled = _state.enabled
    if not needs_grad(a):
        return tuple(mark_view(_make(x[k]), a, _regetter(k) if enabled else None)
                     for k in keys)
    shared = cls()
    return tuple(mark_view(record(shared, (a,), x[k], i), a, _regetter(k))
                 for i, k in enumerate(keys))


def _regetter(key: Any) -> Callable[[Tensor], Tensor]:
    """A view's ``view_fn``: ``getitem(base, key)`` on a new base."""
    return lambda b: getitem(b, key)


class SplitBackward0(Node):
    """One node for all the pieces of a split (output ``i`` is piece ``i``), as torch's:
    the gradient is the pieces' gradients concatenated, zeros for a piece that got none."""

    __slots__ = ("_dtype", "_shapes", "dim", "num_outputs")

    def backward(self, *grads: Tensor | None) -> Tensor:
        if not _state.enabled and self._shapes and builtins.all(
                g is None or g._array.dtype == self._dtype.np for g in grads):
            # (no graph: each piece's gradient written into one buffer, zeros where none)
            d, first = self.dim, self._shapes[0]
            shape = (first[:d] + (builtins.sum(s[d] for s in self._shapes),) + first[d + 1:])
            missing = builtins.any(g is None for g in grads)
            out = (xp.zeros if missing else xp.empty)(shape, dtype=self._dtype.np)
            start = 0
            for g, sh in zip(grads, self._shapes):
                if g is not None:
                    out[(slice(None),) * d + (slice(start, start + sh[d]),)] = g._array
                start += sh[d]
            return _make(out)
        parts = [g if g is not None else F.zeros(s, dtype=self._dtype)
                 for g, s in zip(grads, self._shapes)]
        return F.cat(parts, self.dim)

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


class SplitWithSizesBackward0(SplitBackward0):
    __slots__ = ()


class UnbindBackward0(SplitBackward0):
    """The slices of an unbind: their gradients stacked."""

    __slots__ = ()

    def backward(self, *grads: Tensor | None) -> Tensor:
        parts = [g if g is not None else F.zeros(s, dtype=self._dtype)
                 for g, s in zip(grads, self._shapes)]
        return F.stack(parts, self.dim)


def _multi_views(out: tuple[Tensor, ...], a: Tensor, node: str,
                 cls: type[SplitBackward0], dim: int) -> tuple[Tensor, ...]:
    """Mark the outputs of split/chunk/unbind made in grad mode of a tensor that requires
    grad: torch refuses an in-place op on them (``_check_leaf`` in ops.inplace). While
    recording, the pieces (views made by narrow/select) share one ``cls`` node instead of
    a slice node each, as torch's (their ``output_nr`` is their position)."""
    first = out[0]._grad_fn if out else None
    if first is not None:
        made = first.__class__ is cls  # (split's pieces come with their node: _pieces)
        shared = first if made else cls()
        shared.num_outputs = len(out)
        shared.dim, shared._dtype = dim, a.dtype
        shared._shapes = [o._array.shape for o in out]
        if not made:
            shared._next = first._next
            for i, o in enumerate(out):
                o._grad_fn, o._output_nr = shared, i
    if _state.enabled and a.requires_grad:
        for i, o in enumerate(out):
            o._multi_view = (node, i)
            if o._grad_fn is not None:
                guard_view(o, "multi", node, i)
    elif _state.enabled:  # (torch: no grad_fn, so "created in no_grad mode": a recorded
        for o in out:     # write into one raises, see ops.inplace.apply_inplace)
            o._view_fn = None
    return out


@register("chunk", method=True)
def chunk(a: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``chunks`` pieces of equal size (the last may be smaller), like torch."""
    _check_splittable(a, "chunk")
    if chunks <= 0:
        raise RuntimeError(_ops_messages.chunk_not_positive(chunks))
    d = wrap_dim(dim, a._array.ndim)
    n = a._array.shape[d]
    if n == 0:  # torch: ``chunks`` empty pieces
        return split(a, [0] * chunks, d)
    return split(a, -(-n // chunks), d)


@register("unbind", method=True)
def unbind(a: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along ``dim``, as a tuple."""
    d = wrap_dim(dim, a._array.ndim)
    return _multi_views(tuple(select(a, d, i) for i in range(a._array.shape[d])), a, "Unbind",
                        UnbindBackward0, d)


def _dims_arg(v: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints."""
    if isinstance(v, (int, xp.integer)):
        return (int(v),)
    return tuple(int(d) for d in v)


# -- diagonals ---------------------------------------------------------------------------------
def _diag_view(x: Any, offset: int, d1: int, d2: int) -> Any:
    """The diagonal of ``x`` along ``d1``/``d2`` as a strided view (writeable when ``x`` is),
    that dimension last, as torch's ``diagonal``."""
    n1, n2 = x.shape[d1], x.shape[d2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        start = [0] * x.ndim
        start[d2] = min(offset, n2)
    else:
        length = max(0, min(n1 + offset, n2))
        start = [0] * x.ndim
        start[d1] = min(-offset, n1)
    y = x[tuple(slice(s, None) for s in start)] if length else x
    keep = [i for i in range(x.ndim) if i not in (d1, d2)]
    shape = tuple(x.shape[i] for i in keep) + (length,)
    strides = tuple(y.strides[i] for i in keep) + (y.strides[d1] + y.strides[d2],)
    return xp.lib.stride_tricks.as_strided(y, shape, strides,
                                           writeable=bool(x.flags.writeable))


def _diag_dims(nd: int, dim1: int, dim2: int) -> tuple[int, int]:
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(_ops_messages.diagonal_dims_identical(dim1, dim2))
    return d1, d2


class DiagonalBackward0(Node):
    __slots__ = ("dim1", "dim2", "in_shape", "offset")

    def backward(self, g: Tensor) -> Tensor:
        return _diagonal_backward(g, self.in_shape, self.offset, self.dim1, self.dim2)


class DiagonalBackwardBackward0(Node):
    __slots__ = ("dim1", "dim2", "offset")

    def backward(self, g: Tensor) -> Tensor:
        return diagonal(g, self.offset, self.dim1, self.dim2)


def _diagonal_backward(g: Tensor, shape: tuple[int, ...], offset: int, d1: int, d2: int
                       ) -> Tensor:
    """Zeros of ``shape`` with ``g`` written on the diagonal (diagonal's adjoint)."""
    out = xp.zeros(shape, dtype=g._array.dtype)
    _diag_view(out, offset, d1, d2)[...] = g._array
    if not needs_grad(g):
        return _make(out)
    node = DiagonalBackwardBackward0()
    node.offset, node.dim1, node.dim2 = offset, d1, d2
    return record(node, (g,), out)


@register("diagonal", method=True)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of ``input`` along ``dim1``/``dim2`` (``offset`` > 0: above it), as the
    last dimension; a view that shares storage and version counter with ``input``.

    Example:
        >>> import gradsum
        >>> x = gradsum.arange(6.0).reshape(2, 3)
        >>> gradsum.diagonal(x).tolist(), gradsum.diagonal(x, 1).tolist()
        ([0.0, 4.0], [1.0, 5.0])
    """
    x = input._array
    d1, d2 = _diag_dims(x.ndim, dim1, dim2)
    out = _diag_view(x, int(offset), d1, d2)
    off = int(offset)
    if not needs_grad(input):
        return mark_view(_make(out), input, (lambda b: diagonal(b, off, d1, d2))
                         if _state.enabled else None)
    node = DiagonalBackward0()
    node.in_shape, node.offset, node.dim1, node.dim2 = x.shape, off, d1, d2
    return mark_view(record(node, (input,), out), input, lambda b: diagonal(b, off, d1, d2))


# -- movedim / repeat_interleave / take_along_dim / triangle indices ---------------------------
@register("movedim", "moveaxis", method=True)
def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (the others keep their order); a
    view (torch records it as a permute).

    Example:
        >>> import gradsum
        >>> gradsum.movedim(gradsum.zeros(2, 3, 4), 0, -1).shape
        (3, 4, 2)
    """
    src, dst = _dims_arg(source), _dims_arg(destination)
    nd = input._array.ndim
    if len(src) != len(dst):
        raise RuntimeError(_ops_messages.movedim_length_mismatch(src, dst))
    ws = [wrap_dim(d, nd) for d in src]
    wd = [wrap_dim(d, nd) for d in dst]
    for what, given, w in (("source", src, ws), ("destination", dst, wd)):
        if len(set(w)) != len(w):
            raise RuntimeError(_ops_messages.movedim_repeated_dim(what, given))
    if nd == 0:
        return F.permute(input, ())
    order = [-1] * nd
    for s, d in zip(ws, wd):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in ws)
    perm = tuple(o if o != -1 else next(rest) for o in order)
    return F.permute(input, perm)


# -- broadcasting ---------------------------------------------------------------------------
def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (an int is a 1-D shape).

    Example:
        >>> import gradsum
        >>> gradsum.broadcast_shapes((3, 1), (4,), 1)
        (3, 4)
    """
    norm = [_int_shape(s) for s in shapes]
    for s in norm:
        if builtins.any(v < 0 for v in s):
            raise ValueError(_ops_messages.broadcast_negative_length(s))
    ndim = max((len(s) for s in norm), default=0)
    result = [1] * ndim
    for i, s in enumerate(norm):
        for j, v in enumerate(s):
            k = ndim - len(s) + j
            if v == 1:
                continue
            if result[k] == 1:
                result[k] = v
            elif result[k] != v:
                raise RuntimeError(_ops_messages.broadcast_shapes_mismatch(v, j, s, i, result))
    return Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape (``ExpandBackward0`` views; a tensor that
    already has that shape is returned itself, as torch's).

    Example:
        >>> import gradsum
        >>> a, b = gradsum.broadcast_tensors(gradsum.zeros(2, 1), gradsum.ones(3))
        >>> tuple(a.shape), tuple(b.shape)
        ((2, 3), (2, 3))
    """
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(_ops_messages.broadcast_tensors_not_tensor(i, t))
    shape: tuple[int, ...] = ()
    for t in tensors:
        s = tuple(t._array.shape)
        for i in range(min(len(shape), len(s))):
            a, b = shape[len(shape) - 1 - i], s[len(s) - 1 - i]
            if a != b and a != 1 and b != 1:
                raise RuntimeError(_messages.broadcast_mismatch(shape, s, i))
        shape = tuple(xp.broadcast_shapes(shape, s))
    return tuple(t if tuple(t._array.shape) == shape else F.expand(t, shape) for t in tensors)


def _atleast(n: int, name: str, tensors: tuple[Any, ...]) -> Any:
    seq = len(tensors) == 1 and isinstance(tensors[0], (list, tuple))
    items = tuple(tensors[0]) if seq else tensors
    out = []
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(_ops_messages.atleast_invalid_argument(name, t))
        nd = t._array.ndim
        if nd >= n:
            out.append(t)
        elif nd == 0:
            out.append(F.reshape(t, (1,) * n))
        elif nd == 1:
            out.append(F.unsqueeze(F.unsqueeze(t, 0), -1) if n == 3 else F.unsqueeze(t, 0))
        else:
            out.append(F.unsqueeze(t, -1))
    if len(tensors) == 1 and not seq:
        return out[0]
    return tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension (a 0-d one becomes shape ``(1,)``, a view);
    one tensor in, one tensor out, otherwise a tuple.

    Example:
        >>> import gradsum
        >>> gradsum.atleast_1d(gradsum.tensor(3.0)).shape
        (1,)
    """
    return _atleast(1, "atleast_1d", tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (a 1-D one of size ``n`` becomes ``(1, n)``).

    Example:
        >>> import gradsum
        >>> gradsum.atleast_2d(gradsum.tensor([1, 2])).shape
        (1, 2)
    """
    return _atleast(2, "atleast_2d", tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` ->
    ``(m, n, 1)``, as NumPy's).

    Example:
        >>> import gradsum
        >>> gradsum.atleast_3d(gradsum.ones(2, 3)).shape
        (2, 3, 1)
    """
    return _atleast(3, "atleast_3d", tensors)


# -- tensor_split and the *split helpers ------------------------------------------------------
def _slice_dim(input: Tensor, d: int, start: int, stop: int) -> Tensor:
    lo, hi, _ = slice(start, stop).indices(input._array.shape[d])
    key = (slice(None),) * d + (slice(lo, max(lo, hi)),)
    return F.getitem(input, key)


@register("tensor_split", method=True)
def tensor_split(input: Tensor, indices_or_sections: Any = None, dim: int = 0, *,
                 sections: int | None = None, indices: Sequence[int] | None = None
                 ) -> tuple[Tensor, ...]:
    """Split into ``sections`` near-equal parts (the first ``size % sections`` one longer) or
    at the ``indices`` along ``dim``; the parts are views (``SliceBackward0``).

    Example:
        >>> import gradsum
        >>> [p.tolist() for p in gradsum.arange(5).tensor_split(2)]
        [[0, 1, 2], [3, 4]]
        >>> [p.tolist() for p in gradsum.arange(5).tensor_split([1, 4])]
        [[0], [1, 2, 3], [4]]
    """
    spec = indices_or_sections
    if spec is None:
        spec = sections if sections is not None else indices
    if spec is None:
        raise TypeError(_ops_messages.tensor_split_missing_argument())
    nd = input._array.ndim
    if nd == 0:
        raise RuntimeError(_ops_messages.tensor_split_zero_dim())
    if isinstance(spec, Tensor):
        arr = spec._array
        if arr.dtype != xp.int64:
            raise RuntimeError(_ops_messages.tensor_split_indices_not_long(torch_name(arr.dtype)))
        if arr.ndim > 1:
            raise RuntimeError(_ops_messages.tensor_split_indices_bad_ndim(arr))
        spec = int(arr) if arr.ndim == 0 else [int(v) for v in arr]
    d = wrap_dim(dim, nd)
    size = input._array.shape[d]
    if isinstance(spec, (int, xp.integer)):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(_ops_messages.tensor_split_sections_not_positive(n))
        base, extra = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            stop = start + base + (1 if i < extra else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [int(v) for v in spec]
        starts = [0, *cuts]
        stops = [*cuts, size]
        bounds = list(zip(starts, stops))
    return tuple(_slice_dim(input, d, a, b) for a, b in bounds)


def _split_helper(name: str, min_dim: int, input: Tensor, spec: Any) -> tuple[Tensor, ...]:
    nd = input._array.ndim
    if nd < min_dim:
        raise RuntimeError(_ops_messages.dim_split_too_few_dims(name, min_dim, nd))
    d = {"hsplit": 1 if nd > 1 else 0, "vsplit": 0, "dsplit": 2}[name]
    if isinstance(spec, (int, xp.integer)):
        n, size = int(spec), input._array.shape[d]
        if n == 0 or size % n:
            raise RuntimeError(_ops_messages.dim_split_not_divisible(name, d, size, n))
    return tensor_split(input, spec, d)


@register("hsplit", method=True)
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 1 (dim 0 for 1-D); a number of sections must divide
    the size.

    Example:
        >>> import gradsum
        >>> [p.tolist() for p in gradsum.tensor([[1, 2, 3, 4]]).hsplit(2)]
        [[[1, 2]], [[3, 4]]]
    """
    return _split_helper("hsplit", 1, input, indices_or_sections)


@register("vsplit", method=True)
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 0 of a tensor of at least 2 dimensions.

    Example:
        >>> import gradsum
        >>> [p.shape[0] for p in gradsum.zeros(4, 2).vsplit([1])]
        [1, 3]
    """
    return _split_helper("vsplit", 2, input, indices_or_sections)


@register("dsplit", method=True)
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 2 of a tensor of at least 3 dimensions.

    Example:
        >>> import gradsum
        >>> [tuple(p.shape) for p in gradsum.zeros(1, 2, 4).dsplit(2)]
        [(1, 2, 2), (1, 2, 2)]
    """
    return _split_helper("dsplit", 3, input, indices_or_sections)


@register("swapdims", method=True)
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """:func:`transpose` under NumPy's other name (a view).

    Example:
        >>> import gradsum
        >>> gradsum.swapdims(gradsum.zeros(2, 3), 0, 1).shape
        (3, 2)
    """
    return F.transpose(input, dim0, dim1)


@register("ravel", method=True)
def ravel(input: Tensor) -> Tensor:
    """The tensor as 1-D: a view when it is contiguous, otherwise a view of a contiguous copy
    (torch's ``contiguous().view(-1)``).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([[1, 2], [3, 4]]).t().ravel().tolist()
        [1, 3, 2, 4]
    """
    return F.reshape(F.contiguous(input), (-1,))


@tensor_method("conj", "conj_physical", "resolve_conj", "resolve_neg")
def conj(input: Tensor) -> Tensor:
    """The complex conjugate: the tensor itself for gradsum's real dtypes.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0])
        >>> gradsum.conj(x) is x
        True
    """
    return input


conj_physical = resolve_conj = resolve_neg = real = conj


@tensor_method("is_conj", "is_neg")
def is_conj(input: Tensor) -> bool:
    """Whether the conjugate bit is set: never, for real tensors."""
    return False


is_neg = is_conj


@tensor_method("is_inference")
def is_inference(input: Tensor) -> bool:
    """Whether this is an inference tensor: never (gradsum's inference_mode is no_grad)."""
    return False


@tensor_method("adjoint")
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions: a transpose view for real tensors.

    Example:
        >>> import gradsum
        >>> gradsum.ones(2, 3).adjoint().shape
        (3, 2)
    """
    if input._array.ndim < 2:
        raise RuntimeError(_ops_messages.adjoint_not_matrix(input))
    return F.transpose(input, -2, -1)


# -- unfold (a view), narrow_copy, split_with_sizes, unsafe_split --------------------------------
class UnfoldBackwardBackward0(Node):
    __slots__ = ("dim", "size", "step")

    def backward(self, g: Tensor) -> Tensor:
        return unfold(g, self.dim, self.size, self.step)


def _unfold_backward(g: Tensor, shape: tuple[int, ...], dim: int, size: int, step: int
                     ) -> Tensor:
    """Zeros of ``shape`` with every window of ``g`` added back where it was read."""
    ga = g._array
    out = xp.zeros(shape, dtype=ga.dtype)
    if out.ndim == 0:
        out = out + ga.reshape(())
    else:
        mv = xp.moveaxis(out, dim, -1)
        gw = xp.moveaxis(ga, dim, -2)  # (..., windows, size)
        for k in range(gw.shape[-2]):
            mv[..., k * step:k * step + size] += gw[..., k, :]
    if not (_state.enabled and g.requires_grad):
        return _make(out)
    node = UnfoldBackwardBackward0()
    node.dim, node.size, node.step = dim, size, step
    return record(node, (g,), out)


class UnfoldBackward0(Node):
    __slots__ = ("dim", "in_shape", "size", "step")

    def backward(self, g: Tensor) -> Tensor:
        return _unfold_backward(g, self.in_shape, self.dim, self.size, self.step)


@tensor_method("unfold")
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every slice of length ``size`` along ``dimension``, ``step`` apart, as a
    new last dimension (``Tensor.unfold``).

    Example:
        >>> import gradsum
        >>> gradsum.arange(4.0).unfold(0, 2, 1).tolist()
        [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    x = input._array
    nd = x.ndim
    d = wrap_dim(dimension, nd)
    n = x.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(_ops_messages.unfold_size_too_large(d, n, size))
    if step <= 0:
        raise RuntimeError(_ops_messages.unfold_step_not_positive(step))
    if size < 0:
        raise RuntimeError(_ops_messages.unfold_size_negative(size))
    if nd == 0:
        out = x.reshape(1)
    else:
        count = (n - size) // step + 1
        shape = x.shape[:d] + (count,) + x.shape[d + 1:] + (size,)
        st = x.strides
        strides = st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],)
        out = xp.lib.stride_tricks.as_strided(
            x, shape, strides, writeable=bool(x.flags.writeable and step >= size))

    def view_fn(b: Tensor) -> Tensor:
        return unfold(b, d, size, step)

    if not needs_grad(input):
        return mark_view(_make(out), input, view_fn if _state.enabled else None)
    node = UnfoldBackward0()
    node.dim, node.in_shape, node.size, node.step = d, x.shape, size, step
    return mark_view(record(node, (input,), out), input, view_fn)


@tensor_method("split_with_sizes")
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0
                     ) -> tuple[Tensor, ...]:
    """Pieces of the given sizes along ``dim`` (they must add up to its length); views.

    Example:
        >>> import gradsum
        >>> [t.tolist() for t in gradsum.arange(3).split_with_sizes([1, 2])]
        [[0], [1, 2]]
    """
    if isinstance(split_sizes, int):
        raise TypeError(_ops_messages.split_with_sizes_int_argument())
    return F.split(input, list(split_sizes), dim)


class UnsafeSplitBackward0(Node):
    __slots__ = ("_dtype", "_shapes", "dim", "in_shape", "num_outputs")

    def backward(self, *grads: Tensor | None) -> Tensor:
        parts = [g if g is not None else F.zeros(s, dtype=self._dtype)
                 for g, s in zip(grads, self._shapes)]
        return F.cat(parts, self.dim)

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


def _unsafe_pieces(input: Tensor, pieces: tuple[Tensor, ...], dim: int) -> tuple[Tensor, ...]:
    """The pieces of a split as tensors that are not views (torch's ``unsafe_*``): they share
    memory with ``input`` but autograd does not track them as views."""
    arrays = [p._array for p in pieces]
    if not needs_grad(input):
        return tuple(_make(a) for a in arrays)
    node = UnsafeSplitBackward0()
    node.num_outputs = len(arrays)
    node.dim, node.in_shape = dim, input._array.shape
    node._shapes = [a.shape for a in arrays]
    node._dtype = input.dtype
    return tuple(record(node, (input,), a, i) for i, a in enumerate(arrays))


@tensor_method("unsafe_split")
def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split` whose pieces autograd does not treat as views (torch's
    ``UnsafeSplitBackward0``): writing into one in place is allowed.

    Example:
        >>> import gradsum
        >>> [t.tolist() for t in gradsum.unsafe_split(gradsum.arange(3), 2)]
        [[0, 1], [2]]
    """
    with no_grad():
        pieces = F.split(input, split_size, dim)
    return _unsafe_pieces(input, pieces, wrap_dim(dim, input._array.ndim))


@tensor_method("unsafe_chunk")
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`chunk` whose pieces autograd does not treat as views (see
    :func:`unsafe_split`).

    Example:
        >>> import gradsum
        >>> len(gradsum.unsafe_chunk(gradsum.arange(4), 2))
        2
    """
    with no_grad():
        pieces = F.chunk(input, chunks, dim)
    return _unsafe_pieces(input, pieces, wrap_dim(dim, input._array.ndim))


# -- memory introspection --------------------------------------------------------------------------
def _root(a: Any) -> Any:
    """The array that owns the memory ``a`` looks at (the end of its ``.base`` chain)."""
    while True:
        b = a.base
        if not isinstance(b, xp.ndarray):  # (as_strided's interface holder keeps its array)
            b = getattr(b, "base", None)
            if not isinstance(b, xp.ndarray):
                return a
        a = b


@tensor_method("data_ptr")
def data_ptr(self: Tensor) -> int:
    """The address of the tensor's first element.

    Example:
        >>> import gradsum
        >>> x = gradsum.zeros(4)
        >>> x[1:].data_ptr() - x.data_ptr()
        4
    """
    return int(self._array.__array_interface__["data"][0])


@tensor_method("storage_offset")
def storage_offset(self: Tensor) -> int:
    """The offset, in elements, of the first element in the memory the tensor views.

    Example:
        >>> import gradsum
        >>> gradsum.arange(6)[2:].storage_offset()
        2
    """
    a = self._array
    r = _root(a)
    diff = a.__array_interface__["data"][0] - r.__array_interface__["data"][0]
    return int(diff // a.itemsize) if a.itemsize else 0


@tensor_method("get_device")
def get_device(self: Tensor) -> int:
    """The CUDA device index: -1 for a CPU tensor (always, in gradsum)."""
    return -1


@tensor_method("is_pinned")
def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether the tensor lives in pinned memory: never, in gradsum."""
    return False


@tensor_method("is_shared")
def is_shared(self: Tensor) -> bool:
    """Whether the tensor lives in shared memory: never, in gradsum."""
    return False


# -- as_strided (a view of the storage with explicit sizes, strides and offset) -------------------
def _geometry_indices(size: Sequence[int], stride: Sequence[int], offset: int) -> Any:
    """The storage index of every element of a ``(size, stride, offset)`` view (int64)."""
    idx = xp.full(tuple(size), offset, dtype=xp.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (xp.arange(n, dtype=xp.int64) * st).reshape(shape)
    return idx


def _as_strided_backward(g: Tensor, in_geom: tuple[Any, ...], out_geom: tuple[Any, ...]
                         ) -> Tensor:
    """torch's ``as_strided_backward``: ``g`` added (overlapping windows too) into zeros over
    the storage both geometries cover, divided where the input's own elements share memory,
    then read back with the input's geometry. Written in gradsum ops (put/take): linear in
    ``g``, so double backward works."""
    in_size = in_geom[0]
    if not (_state.enabled and g.requires_grad):
        fast = _as_strided_backward_array(g._array, in_geom, out_geom)
        if fast is not None:
            return _make(fast)
    inp = _geometry_indices(*in_geom)
    outp = _geometry_indices(*out_geom)
    if inp.size == 0 or outp.size == 0:
        return F.zeros(in_size, dtype=g.dtype)
    lo = int(min(inp.min(), outp.min()))
    hi = int(max(inp.max(), outp.max())) + 1
    buf = F.zeros(hi - lo, dtype=g.dtype)
    buf = put(buf, _make(outp - lo), g, accumulate=True)
    count = xp.bincount((inp - lo).reshape(-1), minlength=hi - lo)
    if count.max() > 1:
        inv = xp.where(count > 0, 1.0 / xp.maximum(count, 1), 0.0).astype(g._array.dtype)
        buf = buf * _make(inv)
    return F.take(buf, _make(inp - lo))


def _overlap_free(size: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether no two elements of a ``(size, stride)`` geometry share a storage index."""
    reach = 0  # (the largest offset the inner dimensions reach)
    for st, n in sorted((st, n) for n, st in zip(size, stride) if n != 1):
        if st <= reach:
            return False
        reach += (n - 1) * st
    return True


def _strided(buf: Any, geom: tuple[Any, ...], lo: int) -> Any:
    size, stride, off = geom
    return xp.lib.stride_tricks.as_strided(
        buf[off - lo:], shape=tuple(size), strides=tuple(st * buf.itemsize for st in stride))


def _as_strided_backward_array(g: Any, in_geom: tuple[Any, ...], out_geom: tuple[Any, ...]
                               ) -> Any:
    """:func:`_as_strided_backward` without a graph, as strided adds into the storage buffer,
    where that gives the same sums in the same order: the input's elements share no memory
    (nothing to divide), and the output's windows are added one slice at a time along a
    leading run of dimensions (the order ``put`` adds them in), or along one dimension of 2
    (a sum of two, in either order), the rest free of overlap; None otherwise."""
    (in_size, in_stride, in_off), (size, stride, off) = in_geom, out_geom
    if not all(in_size) or not all(size) or not _overlap_free(in_size, in_stride):
        return None
    nd = len(size)
    loop: tuple[int, ...] | None = None
    if _overlap_free(size, stride):
        loop = ()
    else:
        for d in range(nd):
            if size[d] == 2 and _overlap_free(size[:d] + size[d + 1:],
                                              stride[:d] + stride[d + 1:]):
                loop = (d,)
                break
        else:
            count = 1
            for k in range(1, nd):
                count *= size[k - 1]
                if count > 64:
                    break
                if _overlap_free(size[k:], stride[k:]):
                    loop = tuple(range(k))
                    break
    if loop is None:
        return None
    lo = min(in_off, off)
    hi = max(in_off + sum((n - 1) * st for n, st in zip(in_size, in_stride)),
             off + sum((n - 1) * st for n, st in zip(size, stride))) + 1
    buf = xp.zeros(hi - lo, dtype=g.dtype)
    view = _strided(buf, out_geom, lo)
    if not loop:
        view += g  # (0 + g, as put's sums: a -0 becomes +0)
    else:
        keys = [(slice(None),) * nd]
        for d in loop:
            keys = [k[:d] + (i,) + k[d + 1:] for k in keys for i in range(size[d])]
        for k in keys:
            view[k] += g[k]
    return xp.ascontiguousarray(_strided(buf, in_geom, lo))


class AsStridedBackward0(Node):
    __slots__ = ("in_geom", "out_geom")

    def backward(self, g: Tensor) -> Tensor:
        return _as_strided_backward(g, self.in_geom, self.out_geom)


def _int_list(name: str, arg: str, pos: int, v: Any) -> tuple[int, ...]:
    if isinstance(v, Tensor) or not isinstance(v, (tuple, list)):
        raise TypeError(_ops_messages.int_list_argument_not_tuple(name, arg, pos, v))
    return tuple(int(s) for s in v)


@register("as_strided", method=True)
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes and strides (in elements), starting
    ``storage_offset`` elements into the storage (default: ``input``'s own offset). Windows
    may overlap; the gradient adds up where they do.

    Example:
        >>> import gradsum
        >>> gradsum.arange(5.0).as_strided((3, 2), (1, 1)).tolist()
        [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    input = require_tensor("as_strided", "input", 0, input)
    size = _int_list("as_strided", "size", 1, size)
    stride = _int_list("as_strided", "stride", 2, stride)
    x = input._array
    item = x.itemsize
    in_off = _storage_offset_of(x)
    off = in_off if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError(_ops_messages.as_strided_length_mismatch())
    if any(s < 0 for s in stride):
        raise RuntimeError(_ops_messages.as_strided_negative_strides(stride))
    if any(n < 0 for n in size):
        raise RuntimeError(_ops_messages.as_strided_storage_overflow(size, stride))
    if off < 0:
        raise RuntimeError(_ops_messages.as_strided_invalid_offset(off))
    root = _root(x)
    storage_bytes = int(root.nbytes)
    if all(size):
        need = item * (off + 1 + sum((n - 1) * s for n, s in zip(size, stride)))
    else:
        need = 0
    if need > storage_bytes:
        raise RuntimeError(
            _ops_messages.as_strided_storage_too_small(size, stride, off, item, need, storage_bytes)
        )
    interface = dict(x.__array_interface__)
    base_ptr = int(root.__array_interface__["data"][0])
    interface["data"] = (base_ptr + off * item, not x.flags.writeable)
    interface["shape"] = size
    interface["strides"] = tuple(s * item for s in stride)
    interface.pop("offset", None)
    interface.pop("mask", None)
    # (numpy.lib.stride_tricks.as_strided's own construction, from the storage's start
    # rather than from ``x``'s first element)
    out = xp.asarray(_Interface(interface, x))
    if x.flags.writeable and any(s == 0 and n > 1 for n, s in zip(size, stride)):
        out.flags.writeable = False  # (shared elements: in-place ops raise, as in torch)
    delta = off - in_off

    def view_fn(b: Tensor) -> Tensor:
        return as_strided(b, size, stride, _storage_offset_of(b._array) + delta)

    if not needs_grad(input):
        return mark_view(_make(out), input, view_fn if _state.enabled else None)
    node = AsStridedBackward0()
    in_stride = tuple(s // item for s in x.strides) if item else (0,) * x.ndim
    node.in_geom = (x.shape, in_stride, in_off)
    node.out_geom = (size, stride, off)
    return mark_view(record(node, (input,), out), input, view_fn)


class _Interface:
    """An ``__array_interface__`` holder that keeps the array it looks into alive."""

    def __init__(self, interface: dict[str, Any], base: Any) -> None:
        self.__array_interface__ = interface
        self.base = base


def _storage_offset_of(a: Any) -> int:
    r = _root(a)
    diff = a.__array_interface__["data"][0] - r.__array_interface__["data"][0]
    return int(diff // a.itemsize) if a.itemsize else 0
