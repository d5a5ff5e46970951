"""Gather and scatter: ``gather``, ``scatter_add``, ``scatter_reduce``, ``take``,
``take_along_dim``, ``put``, ``index_put`` and the view scatters ``select_scatter``,
``slice_scatter``, ``diagonal_scatter``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.gather(1, gradsum.tensor([[1], [0]])).tolist()
    [[2.0], [3.0]]
"""

from __future__ import annotations

import builtins
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    broadcast_error,
    const,
    index_range,
    needs_grad,
    record,
    register,
    require_tensor,
    tensor_method,
    twin,
    wrap_dim,
)
from gradsum.ops.indexing.index import (
    _FLAT_INDEX_MIN,
    _along_key,
    _at,
    _check_index_bounds,
    _flat_along,
    _index_arg,
    _index_array,
    _on,
)
from gradsum.ops.indexing.subscript import index_grad
from gradsum.ops.reduction import _contig


class GatherBackward0(Node):
    __slots__ = ("dim", "in_shape", "index", "key")
    #: whether the index never repeats along ``dim`` (a sort's or topk's order), so the
    #: backward may assign the gradient instead of adding it up
    distinct = False

    def backward(self, g: Tensor) -> Tensor:
        # scatter_add into zeros, without re-checking the index gather already checked
        zeros = _make(xp.zeros(self.in_shape, dtype=g._array.dtype))
        return _scatter_add(zeros, self.dim, self.index, g, self.key, fresh=True,
                            distinct=self.distinct)


@register("gather", method=True)
def gather(a: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = a[index[i][j]][j]`` for ``dim=0`` (and so on): values along ``dim``."""
    idx = _index_array(index, "gather")
    if index.__class__ is not Tensor:
        index = _make(idx)
    x = a._array
    d = wrap_dim(dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError(_messages.gather_index_ndim_mismatch(idx, x))
    for i in range(x.ndim):
        if i != d and idx.shape[i] > x.shape[i]:
            raise RuntimeError(_messages.gather_index_size_mismatch(i, idx, x, d))
    _check_index_bounds(idx, x.shape[d] if x.ndim else 1, d)
    key: Any
    if x.ndim and idx.size >= _FLAT_INDEX_MIN:
        key = _flat_along(idx, d, x.shape)
        out = xp.take(x.reshape(-1), key)  # (a 1-D take: several times a 2-D fancy index)
    else:
        key = _along(idx, d)
        out = x[key]
    if not needs_grad(a):
        return _make(out)
    node = GatherBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index, node.in_shape, node.key = d, index, x.shape, key
    return record(node, (a,), out)


def _along(idx: Any, d: int) -> tuple[Any, ...]:
    """The fancy index that picks ``idx`` along dimension ``d`` (and position i elsewhere):
    what ``take_along_axis`` builds, without its overhead for small arrays."""
    nd = idx.ndim
    if nd == 2:  # (the common case: a class index of a batch)
        return ((idx, index_range(idx.shape[1], 1, 2)) if d == 0
                else (index_range(idx.shape[0], 0, 2), idx))
    key: list[Any] = []
    for i in range(nd):
        if i == d:
            key.append(idx)
        else:
            key.append(index_range(idx.shape[i], i, nd))
    return tuple(key)


class ScatterAddBackward0(Node):
    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gs = g if self.needs(0) else None
        gsrc = None
        if self.needs(1):
            gsrc = F.gather(g, self.dim, self.index)
            if gsrc.shape != self.src_shape:  # src may be larger than index: zeros elsewhere
                # (torch refuses this backward with "invalid gradient"; the zeros are exact)
                key = tuple(slice(0, n) for n in gsrc.shape)
                gsrc = index_grad(gsrc, key, self.src_shape)
        return gs, gsrc


@register("scatter_add", method=True, inplace=twin("scatter_add_", no_overlap=(2, "src")))
def scatter_add(a: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``a`` with ``src`` added at ``index`` along ``dim`` (the reverse of gather)."""
    idx = _index_array(index, "scatter_add")
    x = a._array
    d = wrap_dim(dim, x.ndim)
    sa = src._array
    if not idx.ndim == x.ndim == sa.ndim:
        raise RuntimeError(_messages.scatter_add_index_ndim_mismatch(idx, x, sa))
    if builtins.any(idx.shape[i] > sa.shape[i] or (i != d and idx.shape[i] > x.shape[i])
                    for i in range(x.ndim)):
        raise RuntimeError(_messages.index_larger_than_self_or_src(idx, x, d, sa))
    _check_index_bounds(idx, x.shape[d] if x.ndim else 1, d)
    return _scatter_add(a, d, _make(idx), src,
                        _flat_along(idx, d, x.shape) if x.ndim and idx.size >= _FLAT_INDEX_MIN
                        else _along(idx, d))


def _scatter_add(a: Tensor, d: int, index: Tensor, src: Tensor, key: Any,
                 fresh: bool = False, distinct: bool = False) -> Tensor:
    """scatter_add once its arguments are checked; ``key`` is ``_flat_along(index, d,
    a.shape)`` (or ``_along(index, d)``, a tuple). ``fresh``: ``a`` is zeros made for this
    call, which it may fill instead of a copy. ``distinct``: the index never repeats along
    ``d``."""
    x, idx, sa = a._array, index._array, src._array
    out = x if fresh else x.copy()
    s = sa if sa.shape == idx.shape else sa[tuple(slice(0, n) for n in idx.shape)]
    s = s.astype(x.dtype, copy=False)
    if isinstance(key, xp.ndarray):  # flat positions: into the (C-contiguous) copy's buffer
        o1, k1, s1 = out.reshape(-1), key.reshape(-1), s.reshape(-1)
        if distinct or (x.ndim and idx.shape[d] == 1):
            if fresh:  # (``s + 0``: the bits an add into zeros gives, -0.0 included)
                o1[k1] = s1 + const(s.dtype, 0)
            else:
                o1[k1] += s1
        else:
            xp.add.at(o1, k1, s1)  # repeated indices add up, in order
    elif x.ndim and idx.shape[d] == 1:
        # one index per position: no repeats, plain fancy-index add is exact (into zeros an
        # assignment of ``s + 0``: the same bits, -0.0 included, without reading ``out``)
        if fresh:
            out[key] = s + const(s.dtype, 0)
        else:
            out[key] += s
    else:
        xp.add.at(out, key, s)  # repeated indices add up
    if not needs_grad(a, src):
        return _make(out)
    node = ScatterAddBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index, node.src_shape = d, index, sa.shape
    return record(node, (a, src), out)


@register("take_along_dim", method=True)
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Pick values along ``dim`` at ``indices`` (broadcast with ``input`` on the other dims);
    without ``dim`` both are flattened. A :func:`gather`.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([[10, 30, 20], [60, 40, 50]])
        >>> gradsum.take_along_dim(x, x.argmax(1, keepdim=True), 1).tolist()
        [[30], [60]]
    """
    idx = require_tensor("take_along_dim", "indices", 2, indices)._array
    if idx.dtype != xp.int64:
        raise RuntimeError(_messages.take_along_dim_index_not_long(idx))
    if dim is None:
        return F.gather(F.reshape(input, (-1,)), 0, F.reshape(indices, (-1,)))
    x = input._array
    if x.ndim != idx.ndim:
        raise RuntimeError(_messages.take_along_dim_ndim_mismatch(x, idx))
    d = wrap_dim(dim, x.ndim)
    xs, isz = list(x.shape), list(idx.shape)
    xs[d] = isz[d] = 1
    try:
        common = list(xp.broadcast_shapes(tuple(xs), tuple(isz)))
    except ValueError:
        raise broadcast_error(xp.empty(xs), xp.empty(isz)) from None
    ishape, xshape = list(common), list(common)
    ishape[d], xshape[d] = idx.shape[d], x.shape[d]
    a = F.expand(input, tuple(xshape)) if tuple(xshape) != x.shape else input
    i = F.expand(indices, tuple(ishape)) if tuple(ishape) != idx.shape else indices
    return F.gather(a, d, i)


# -- take --------------------------------------------------------------------------------------
class TakeBackward0(Node):
    """torch's ``take_backward``: the gradient added at the (flat) indices of a zero tensor."""

    __slots__ = ("flat_index", "in_shape")

    def backward(self, g: Tensor) -> Tensor:
        n = 1
        for s in self.in_shape:
            n *= s
        # (scatter_add into zeros made here: filled in place, not copied first)
        flat = _scatter_add(F.zeros((n,), dtype=g.dtype), 0, self.flat_index,
                            F.reshape(g, (-1,)), self.flat_index._array, fresh=True)
        return F.reshape(flat, self.in_shape)


@register("take", method=True)
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of ``input`` read as a flat array at ``index`` (negative counts from the
    end); the result has ``index``'s shape.

    Example:
        >>> import gradsum
        >>> gradsum.take(gradsum.tensor([[1, 2], [3, 4]]), gradsum.tensor([0, -1])).tolist()
        [1, 4]
    """
    require_tensor("take", "input", 1, input)
    require_tensor("take", "index", 2, index)
    x, idx = input._array, index._array
    if idx.dtype != xp.int64:
        raise RuntimeError(_messages.expected_long_tensor_index("take", idx))
    n = x.size
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(_messages.take_index_out_of_range(int(bad.reshape(-1)[0]), n))
    wrapped = xp.where(idx < 0, idx + n, idx)
    out = _contig(x.reshape(-1)[wrapped])
    if not needs_grad(input):
        return _make(out)
    node = TakeBackward0()
    node.flat_index, node.in_shape = _make(wrapped.reshape(-1)), x.shape
    node._saved = HOLDS_STATE  # (torch saves the index)
    return record(node, (input,), out)


# -- scatter_reduce ----------------------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_array(x: Any, d: int, idx: Any, s: Any, reduce: str, include_self: bool
                          ) -> Any:
    """The result of scatter_reduce."""
    out = x.copy()
    key = _along_key(idx, d, x.shape)
    s = s[tuple(slice(0, k) for k in idx.shape)].astype(x.dtype, copy=False)
    if not include_self:
        hit = _hit_mask(x.shape, key)
        init = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if init is not None:
            out[hit] = init
        elif reduce == "amax":
            out[hit] = -xp.inf if x.dtype.kind in "fV" else xp.iinfo(x.dtype).min
        else:
            out[hit] = xp.inf if x.dtype.kind in "fV" else xp.iinfo(x.dtype).max
    if reduce in ("sum", "mean"):
        _at(xp.add, out, key, s)
        if reduce == "mean":
            cnt = xp.zeros(x.shape, dtype=xp.int64) + (1 if include_self else 0)
            _at(xp.add, cnt, key, 1)
            cnt = xp.maximum(cnt, 1)
            out = out / cnt if x.dtype.kind in "fV" else out // cnt
    elif reduce == "prod":
        _at(xp.multiply, out, key, s)
    elif reduce == "amax":
        _at(xp.maximum, out, key, s)
    else:
        _at(xp.minimum, out, key, s)
    return _contig(out.astype(x.dtype, copy=False))


def _hit_mask(shape: tuple[int, ...], key: Any) -> Any:
    """A bool mask of the positions :func:`_along_key`'s ``key`` writes."""
    hit = xp.zeros(shape, dtype=bool)
    _on(hit, key)[key] = True
    return hit


class ScatterReduceBackward0(Node):
    """torch's ``scatter_reduce_backward`` (sum, mean, prod, amax, amin; ``include_self``)."""

    __slots__ = ("dim", "include_self", "index", "reduce")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, src, out = self.saved()
        d, idx, red = self.dim, self.index, self.reduce
        if red not in _REDUCES:
            raise RuntimeError(_messages.scatter_reduce_backward_invalid_reduce(red))
        hit = (_make(_hit_mask(x.shape, _along_key(idx._array, d, x.shape)))
               if not self.include_self else None)
        zero = F.zeros((), dtype=g.dtype)
        gs = gsrc = None
        if red == "sum":
            gs = g
            gsrc = F.gather(g, d, idx)
        elif red == "mean":
            cnt = xp.zeros(x.shape, dtype=g._array.dtype) + (1 if self.include_self else 0)
            _at(xp.add, cnt, _along_key(idx._array, d, x.shape), 1)
            cnt = _make(xp.maximum(cnt, 1).astype(g._array.dtype))
            gs = F.div(g, cnt)
            gsrc = F.gather(gs, d, idx)
        elif red == "prod":
            gs, gsrc = _scatter_prod_grads(g, x, src, out, d, idx, self.include_self)
        else:
            # torch multiplies by the masks (an inf or nan gradient gives nan where the
            # element is not the extreme) and divides by the tie count, 0 where the result
            # is nan (nothing equals it)
            value = F.gather(out, d, idx)
            dt = g._array.dtype
            s_used = F.getitem(src, tuple(slice(0, k) for k in idx.shape))
            self_is = (x._array == out._array).astype(dt)
            src_is = (s_used._array == value._array).astype(dt)
            n = self_is.copy()
            _at(xp.add, n, _along_key(idx._array, d, x.shape), src_is)
            with xp.errstate(divide="ignore", invalid="ignore"):
                dist = F.div(g, _make(n))
            gs = F.mul(_make(self_is), dist)
            gsrc = F.mul(_make(src_is), F.gather(dist, d, idx))
        if hit is not None:
            gs = F.where(hit, zero, gs)
        if gsrc is not None and tuple(gsrc.shape) != tuple(src.shape):
            full = F.zeros(tuple(src.shape), dtype=g.dtype)
            gsrc = F.scatter_add(full, d, _make(_arange_like(idx._array, d)), gsrc)
        return (gs if self.needs(0) else None, gsrc if self.needs(1) else None)


class DelayedError(Node):
    """A gradient whose own derivative torch does not provide: passing through it is
    fine, differentiating it raises (torch's ``DelayedError`` node)."""

    __slots__ = ("msg",)

    def name(self) -> str:
        return "Error"  # (torch's grad_fn shows <Error>)

    def backward(self, g: Tensor) -> Tensor:
        raise RuntimeError(self.msg)


def _scatter_prod_grads(g: Tensor, x: Tensor, src: Tensor, out: Tensor, d: int, idx: Tensor,
                        include_self: bool) -> tuple[Tensor, Tensor]:
    """torch's ``scatter_reduce_backward`` for ``'prod'``: the product of the others by
    reducing again with the zeros masked to 1 (one zero among a position's sources: the
    product of the others; two or more: 0, and a double backward that raises)."""
    xa = x._array
    used = tuple(slice(0, k) for k in idx.shape)
    s_used = F.getitem(src, used)
    masked_self = F.masked_fill(x, _make(xa == 0), 1.0)
    gs = F.div(F.mul(g, scatter_reduce(masked_self, d, idx, src, "prod",
                                       include_self=include_self)), masked_self)
    src_zero = s_used._array == 0
    nz = xp.zeros(xa.shape, dtype=xp.int64)
    _at(xp.add, nz, _along_key(idx._array, d, xa.shape), src_zero)
    num_zeros = xp.take_along_axis(nz, idx._array, d)
    single = src_zero & (num_zeros == 1)
    single_full = xp.zeros(src.shape, dtype=bool)
    single_full[used] = single
    masked_src = F.masked_fill(src, _make(single_full), 1.0)
    others = scatter_reduce(x, d, idx, masked_src, "prod", include_self=include_self)
    gsrc = F.where(_make(single), F.gather(F.mul(g, others), d, idx),
                   F.div(F.gather(F.mul(g, out), d, idx),
                         F.masked_fill(s_used, _make(src_zero), 1.0)))
    if (num_zeros > 1).any() and gsrc.requires_grad:
        node = DelayedError()
        node.msg = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros "
                    "in src are scattered to the same position in self")
        gsrc = record(node, (gsrc,), gsrc._array)
    return gs, gsrc


def _arange_like(idx: Any, d: int) -> Any:
    """Indices ``0 .. idx.shape[d]-1`` along ``d`` broadcast to ``idx``'s shape."""
    shape = [1] * idx.ndim
    shape[d] = idx.shape[d]
    return _contig(xp.broadcast_to(xp.arange(idx.shape[d]).reshape(shape),
                                                idx.shape))


@register("scatter_reduce", method=True, inplace="scatter_reduce_")
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """``input`` with each ``src[i][j]`` reduced into position ``[index[i][j]][j]`` (for
    ``dim=0``) by ``reduce`` (sum, prod, mean, amax, amin); ``include_self=False`` leaves the
    input's value out of the positions written.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0, 2.0])
        >>> src = gradsum.tensor([5.0, 3.0, 4.0])
        >>> gradsum.scatter_reduce(x, 0, gradsum.tensor([0, 0, 1]), src, "amax").tolist()
        [5.0, 4.0]
    """
    require_tensor("scatter_reduce", "input", 1, input)
    require_tensor("scatter_reduce", "index", 3, index)
    require_tensor("scatter_reduce", "src", 4, src)
    if reduce not in _REDUCES + ("max", "min"):
        raise RuntimeError(_messages.scatter_reduce_invalid_reduce(reduce))
    # (torch's kernel also takes "max"/"min" for amax/amin; its backward then raises)
    fwd = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    x, idx, s = input._array, index._array, src._array
    if idx.dtype != xp.int64:
        raise RuntimeError(_messages.scatter_reduce_index_not_long(idx))
    if x.dtype != s.dtype:
        raise RuntimeError(_messages.scatter_reduce_dtype_mismatch(x, s))
    d = wrap_dim(dim, x.ndim)
    if not (idx.ndim == x.ndim == s.ndim):
        raise RuntimeError(_messages.scatter_reduce_index_ndim_mismatch(idx, x, s))
    if any(idx.shape[i] > s.shape[i] or (i != d and idx.shape[i] > x.shape[i])
           for i in range(x.ndim)):
        raise RuntimeError(_messages.index_larger_than_self_or_src(idx, x, d, s))
    size = x.shape[d] if x.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise RuntimeError(_messages.index_out_of_bounds_for_dim(int(bad.reshape(-1)[0]), d, size))
    if x.ndim == 0:
        res = scatter_reduce(F.reshape(input, (1,)), 0, F.reshape(index, (1,)),
                             F.reshape(src, (1,)), reduce, include_self=include_self)
        return F.reshape(res, ())
    out = _scatter_reduce_array(x, d, idx, s, fwd, include_self)
    if not needs_grad(input, src):
        return _make(out)
    node = ScatterReduceBackward0()
    node.dim, node.index, node.reduce, node.include_self = d, index, reduce, include_self
    t = record(node, (input, src), out)
    node.save(input, src, outputs=(t,))
    return t


def _check_src(src: Tensor, want: tuple[int, ...]) -> None:
    have = tuple(src._array.shape)
    if have != tuple(want):
        raise RuntimeError(_messages.scatter_src_not_slice_size(have, want))


class SelectScatterBackward0(Node):
    """``input`` gets ``g`` with the slot zeroed, ``src`` gets ``g.select(dim, index)``."""

    __slots__ = ("dim", "index", "src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = gs = None
        if self.needs(0):
            ga = select_scatter(g, F.zeros(self.src_shape, dtype=g.dtype), self.dim, self.index)
        if self.needs(1):
            gs = F.select(g, self.dim, self.index)
            if gs._array.dtype != self.src_dtype:
                gs = F.to_dtype(gs, D.from_numpy_dtype(self.src_dtype))
        return ga, gs


def _scatter_out(input: Tensor, src: Tensor, key: Any) -> Any:
    out = input._array.copy()
    out[key] = src._array
    return out


def _scatter_result(input: Tensor, src: Tensor, out: Any, node_cls: type[Node],
                    **saved: Any) -> Tensor:
    """``out``, the result of a ``*_scatter`` op, recorded when ``input`` or ``src`` needs grad
    (its node of ``node_cls`` keeps ``saved`` and src's shape and dtype)."""
    if not needs_grad(input, src):
        return _make(out)
    node = node_cls()
    for k, v in saved.items():
        setattr(node, k, v)
    node.src_shape, node.src_dtype = tuple(src._array.shape), src._array.dtype
    return record(node, (input, src), out)


@register("select_scatter", method=True)
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim`` (the reverse of
    :func:`select`).

    Example:
        >>> import gradsum
        >>> gradsum.select_scatter(gradsum.zeros(2, 2), gradsum.ones(2), 0, 1).tolist()
        [[0.0, 0.0], [1.0, 1.0]]
    """
    require_tensor("select_scatter", "input", 1, input)
    require_tensor("select_scatter", "src", 2, src)
    shape = input._array.shape
    d = wrap_dim(dim, len(shape))
    size = shape[d] if shape else 1
    if not -size <= index < size:
        raise IndexError(_messages.select_scatter_index_out_of_range(index, shape, d))
    idx = index + size if index < 0 else index
    _check_src(src, shape[:d] + shape[d + 1:])
    out = _scatter_out(input, src, (slice(None),) * d + (idx,))
    return _scatter_result(input, src, out, SelectScatterBackward0, dim=d, index=idx)


class SliceScatterBackward0(Node):
    """``input`` gets ``g`` with the slice zeroed, ``src`` gets the slice of ``g``."""

    __slots__ = ("dim", "sl", "src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = gs = None
        s = self.sl
        if self.needs(0):
            ga = slice_scatter(g, F.zeros(self.src_shape, dtype=g.dtype), self.dim, s.start,
                               s.stop, s.step)
        if self.needs(1):
            gs = F.getitem(g, (slice(None),) * self.dim + (s,))
            if gs._array.dtype != self.src_dtype:
                gs = F.to_dtype(gs, D.from_numpy_dtype(self.src_dtype))
        return ga, gs


@register("slice_scatter", method=True)
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input[start:end:step]`` along ``dim``.

    Example:
        >>> import gradsum
        >>> gradsum.slice_scatter(gradsum.zeros(4), gradsum.ones(2), 0, 0, 4, 2).tolist()
        [1.0, 0.0, 1.0, 0.0]
    """
    require_tensor("slice_scatter", "input", 1, input)
    require_tensor("slice_scatter", "src", 2, src)
    shape = input._array.shape
    d = wrap_dim(dim, len(shape))
    if step <= 0:
        raise RuntimeError(_messages.slice_scatter_step_not_positive(step))
    size = shape[d] if shape else 1
    lo, hi, _ = slice(start, end, step).indices(size)
    sl = slice(lo, max(lo, hi), step)
    key = (slice(None),) * d + (sl,)
    want = xp.empty(shape, dtype=bool)[key].shape
    _check_src(src, want)
    out = _scatter_out(input, src, key)
    return _scatter_result(input, src, out, SliceScatterBackward0, dim=d, sl=sl)


class DiagonalScatterBackward0(Node):
    """``input`` gets ``g`` with the diagonal zeroed, ``src`` gets ``g``'s diagonal."""

    __slots__ = ("dims", "src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        offset, d1, d2 = self.dims
        ga = gs = None
        if self.needs(0):
            ga = diagonal_scatter(g, F.zeros(self.src_shape, dtype=g.dtype), offset, d1, d2)
        if self.needs(1):
            gs = F.diagonal(g, offset, d1, d2)
            if gs._array.dtype != self.src_dtype:
                gs = F.to_dtype(gs, D.from_numpy_dtype(self.src_dtype))
        return ga, gs


@register("diagonal_scatter", method=True)
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written on the ``offset`` diagonal of dims
    ``dim1``/``dim2`` (the reverse of :func:`diagonal`).

    Example:
        >>> import gradsum
        >>> gradsum.diagonal_scatter(gradsum.zeros(2, 2), gradsum.ones(2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    require_tensor("diagonal_scatter", "input", 1, input)
    require_tensor("diagonal_scatter", "src", 2, src)
    x = input._array
    d1, d2 = wrap_dim(dim1, x.ndim), wrap_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(_messages.diagonal_dims_identical(dim1, dim2))
    _check_src(src, xp.diagonal(x, offset, d1, d2).shape)
    out = x.copy()
    n = src._array.shape[-1]
    rows = xp.arange(n) + builtins.max(-offset, 0)
    cols = xp.arange(n) + builtins.max(offset, 0)
    xp.moveaxis(out, (d1, d2), (-2, -1))[..., rows, cols] = src._array
    return _scatter_result(input, src, out, DiagonalScatterBackward0, dims=(offset, d1, d2))


# -- put, index_put with accumulate ---------------------------------------------------------------
class PutBackward0(Node):
    __slots__ = ("accumulate", "index", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        idx = _make(self.index)
        gi = None
        if self.needs(0):
            gi = g if self.accumulate else put(g, idx, F.zeros(self.src_shape, dtype=g.dtype))
        gs = F.reshape(F.take(g, idx), self.src_shape) if self.needs(1) else None
        return gi, gs


@register("put", method=True, inplace=twin("put_", no_overlap=(1, "source")))
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or, with ``accumulate``, added) at the
    flat positions ``index`` (negative counts from the end).

    Example:
        >>> import gradsum
        >>> gradsum.put(gradsum.zeros(2, 2), gradsum.tensor([0, 3, 3]),
        ...             gradsum.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
        [[1.0, 0.0], [0.0, 5.0]]
    """
    x, i, s = input._array, index._array, source._array
    if i.dtype.kind not in "iu":
        raise RuntimeError(_messages.put_index_not_long(i))
    if s.dtype != x.dtype:
        raise RuntimeError(_messages.put_dtype_mismatch(x, s))
    if i.size != s.size:
        raise IndexError(_messages.put_numel_mismatch(s, i))
    n = x.size
    flat_i = i.reshape(-1).astype(xp.int64)
    bad = (flat_i >= n) | (flat_i < -n)
    if bad.any():
        k = int(flat_i[bad][0])
        raise IndexError(_messages.take_index_out_of_range(k, n))
    flat_i = xp.where(flat_i < 0, flat_i + n, flat_i)
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        xp.add.at(flat, flat_i, s.reshape(-1))
    else:
        flat[flat_i] = s.reshape(-1)
    if not needs_grad(input, source):
        return _make(out)
    node = PutBackward0()
    node._saved = HOLDS_STATE
    node.accumulate, node.index, node.src_shape = bool(accumulate), flat_i, s.shape
    return record(node, (input, source), out)


class IndexPutBackward0(Node):
    """``index_put(..., accumulate=True)``: the input's gradient passes whole; the values'
    is the gradient read at the indices, summed back to their shape."""

    __slots__ = ("key", "value_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gv = None
        if self.needs(1):
            gv = F.sum_to(F.getitem(g, self.key), self.value_shape)
        return (g if self.needs(0) else None), gv


def _index_put_accumulate(input: Tensor, key: tuple[Any, ...], values: Tensor) -> Tensor:
    x = input._array
    k = tuple(t._array if isinstance(t, Tensor) else t for t in key)
    parts: list[Any] = []
    for kk in k:
        if isinstance(kk, xp.ndarray) and kk.dtype.kind == "b":
            parts.extend(xp.nonzero(kk))
        else:
            parts.append(kk)
    kk_t = tuple(parts)
    v = values._array.astype(x.dtype, copy=False)
    out = x.copy()
    try:
        target_shape = out[kk_t].shape
        xp.add.at(out, kk_t, xp.broadcast_to(v, target_shape))
    except ValueError as e:
        raise RuntimeError(_messages.index_put_value_shape_mismatch(v, e)) from None
    if not needs_grad(input, values):
        return _make(out)
    node = IndexPutBackward0()
    node._saved = HOLDS_STATE
    node.key = tuple(_make(a) if isinstance(a, xp.ndarray) else a for a in kk_t)
    node.value_shape = v.shape
    return record(node, (input, values), out)


@tensor_method("index_put", inplace=twin("index_put_", no_overlap=(1, "values")))
def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """``Tensor.index_put``: a copy with ``values`` written at ``input[indices]`` (a tuple of
    index tensors); ``accumulate`` adds instead, repeated indices adding up.

    Example:
        >>> import gradsum
        >>> x = gradsum.zeros(3)
        >>> x.index_put((gradsum.tensor([0, 0]),), gradsum.tensor(1.0), accumulate=True).tolist()
        [2.0, 0.0, 0.0]
    """
    if not isinstance(indices, (tuple, list)):
        raise TypeError(_messages.index_put_indices_not_tuple(indices))
    if not isinstance(values, Tensor):
        raise TypeError(_messages.index_put_values_not_tensor(values))
    if values._array.dtype != input._array.dtype:
        raise RuntimeError(_messages.index_put_dtype_mismatch(input, values))
    key = tuple(indices)
    if accumulate:
        return _index_put_accumulate(input, key, values)
    return F.index_put(input, key, values)


# -- scatter (bound as Tensor methods in gradsum.ops) ----------------------------------------------
@tensor_method("scatter", inplace="scatter_")
def scatter(a: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *,
            reduce: str | None = None) -> Tensor:
    """``a`` with ``src[i][j]`` written at ``[index[i][j]][j]`` (for ``dim=0``, and so on),
    or the number ``value`` at those positions (the reverse of :func:`gather`).

    Example:
        >>> import gradsum
        >>> idx = gradsum.tensor([[1, 0, 1]])
        >>> gradsum.zeros(2, 3).scatter(0, idx, gradsum.tensor([[7.0, 8.0, 9.0]])).tolist()
        [[0.0, 8.0, 0.0], [7.0, 0.0, 9.0]]
        >>> gradsum.zeros(2, 3).scatter(0, idx, 5).tolist()
        [[0.0, 5.0, 0.0], [5.0, 0.0, 5.0]]
    """
    if reduce is not None:
        raise NotImplementedError(_messages.scatter_reduce_arg_unsupported(reduce))
    if src is None:
        src = value
    x = a._array
    idx = _index_arg(index, "scatter")
    if idx.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(_messages.scatter_index_not_integer(idx))
    is_src = isinstance(src, Tensor)
    if is_src and src._array.dtype != x.dtype:
        raise RuntimeError(_messages.scatter_dtype_mismatch(x, src))
    d = wrap_dim(dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError(_messages.scatter_index_self_ndim_mismatch(idx, x))
    if is_src and idx.ndim != src._array.ndim:
        raise RuntimeError(_messages.scatter_index_src_ndim_mismatch(idx, src))
    if builtins.any(i != d and idx.shape[i] > x.shape[i] for i in range(x.ndim)) or (
            is_src and builtins.any(n > m for n, m in zip(idx.shape, src._array.shape))):
        tail = f" and to be no larger size than src {list(src.shape)}" if is_src else ""
        raise RuntimeError(_messages.index_larger_than_self(idx, x, d, tail))
    size = x.shape[d] if x.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise RuntimeError(_messages.index_out_of_bounds_not_wrapped(bad, d, size))
    if idx.size == 0:
        return a.clone()
    if x.ndim == 0:
        a1, idx, d = F.reshape(a, (1,)), idx.reshape(1), 0
        src = F.reshape(src, (1,)) if is_src else src
    else:
        a1 = a
    if is_src and src.shape != idx.shape:
        src = F.getitem(src, tuple(slice(0, n) for n in idx.shape))
    out = F.index_put(a1, _along(idx.astype(xp.int64, copy=False), d), src)
    return out if x.ndim else F.reshape(out, ())
