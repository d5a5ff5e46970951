"""Ops that take an index along one dimension: ``index_select``, ``index_add``, ``index_copy``,
``index_fill``, ``index_reduce``, and the index builders ``one_hot``, ``triu_indices``,
``tril_indices``, ``unravel_index``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([10.0, 20.0, 30.0])
    >>> x.index_select(0, gradsum.tensor([2, 0])).tolist()
    [30.0, 10.0]
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
    index_range,
    needs_grad,
    record,
    register,
    require_tensor,
    tensor_method,
    twin,
    wrap_dim,
)
from gradsum.ops.indexing.subscript import (
    _int_shape,
    _max_reduce,
    _min_reduce,
    add_rows_at,
    in_bounds,
)
from gradsum.ops.linalg._base import _require, _warn_once


class IndexSelectBackward0(Node):
    __slots__ = ("dim", "in_shape", "index")

    def backward(self, g: Tensor) -> Tensor:
        # index_add into zeros, without re-checking the index index_select already checked
        zeros = _make(xp.zeros(self.in_shape, dtype=g._array.dtype))
        return _index_add(zeros, self.dim, self.index, g, 1, copy=False)


def _check_index_bounds(idx: Any, size: int, dim: int) -> None:
    """torch's check for gather/scatter indices: ``0 <= index < size`` (no wrapping)."""
    if not in_bounds(idx, size):
        hi, lo = _max_reduce(idx, None), _min_reduce(idx, None)
        if hi >= size or lo < 0:
            bad = int(hi) if hi >= size else int(lo)
            raise RuntimeError(_messages.index_out_of_bounds_valid_range(bad, dim, size))


def _index_array(index: Any, name: str) -> Any:
    arr = index._array if index.__class__ is Tensor or isinstance(index, Tensor) else (
        xp.asarray(index))
    if arr.dtype.kind not in "iu":
        raise RuntimeError(_messages.index_op_index_not_int64(name, arr))
    return arr


@register("index_select", method=True)
def index_select(a: Tensor, dim: int, index: Any) -> Tensor:
    """Entries of ``a`` along ``dim`` at the 1-D ``index`` (repeats allowed)."""
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise IndexError(_messages.index_not_a_vector("index_select"))
    x = a._array
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not x.ndim and idx.size != 1:
        raise RuntimeError(_messages.index_select_scalar_many_indices(idx))
    if not in_bounds(idx, size):
        # torch refuses negative indices too; its kernel for dim 1 raises RuntimeError,
        # the others IndexError (and its path for an empty >= 2-d tensor RuntimeError)
        err = RuntimeError if x.ndim >= 2 and (d == 1 or not x.size) else IndexError
        raise err(
            f"index out of range in self: index_select on dimension {d} of size {size} with "
            f"indices in [{int(idx.min())}, {int(idx.max())}]; valid indices are 0 to "
            f"{size - 1} (negative indices are not wrapped)"
        )
    return _index_select(a, d, idx)


def _index_select(a: Tensor, d: int, idx: Any) -> Tensor:
    """index_select once its arguments are checked (``d`` wrapped, ``idx`` in range)."""
    x = a._array
    out = xp.take(x, idx.reshape(-1), axis=d) if x.ndim else x.reshape(1)[idx].reshape(())
    if not needs_grad(a):
        return _make(out)
    node = IndexSelectBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index, node.in_shape = d, _make(idx.reshape(-1)), x.shape
    return record(node, (a,), out)


class IndexAddBackward0(Node):
    __slots__ = ("alpha", "dim", "index")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gs = g if self.needs(0) else None
        gsrc = None
        if self.needs(1):
            gsrc = F.index_select(g, self.dim, self.index)
            if self.alpha != 1:
                gsrc = F.mul(gsrc, self.alpha)
        return gs, gsrc


@register("index_add", method=True, inplace=twin("index_add_", no_overlap=(2, "source")))
def index_add(a: Tensor, dim: int, index: Any, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """``a`` with ``alpha * source`` added at ``index`` along ``dim`` (repeats add up)."""
    idx = _index_array(index, "index_add")
    x = a._array
    d = wrap_dim(dim, x.ndim)
    src = source._array if alpha == 1 else source._array * alpha
    if idx.ndim > 1:
        raise IndexError(_messages.index_not_a_vector("index_add_"))
    if not src.ndim and idx.size != 1:
        # torch's count check formats source.size(dim) into its message, and a 0-d source
        # has no dim 0: it raises IndexError instead of the count's RuntimeError
        raise IndexError(_messages.index_add_0d_source_many_indices(idx))
    src_n = src.shape[d] if src.ndim else 1
    if src_n != idx.size or src.ndim != x.ndim or builtins.any(
        src.shape[i] != x.shape[i] for i in range(x.ndim) if i != d
    ):
        raise RuntimeError(_messages.index_add_count_mismatch(idx, src_n, d, x, src))
    if source._array.dtype != x.dtype:
        raise RuntimeError(_messages.index_add_dtype_mismatch(x.dtype, source._array.dtype))
    size = x.shape[d] if x.ndim else 1
    if not x.size and x.ndim >= 2:
        # torch checks no index against an empty >= 2-d self (nothing is written; a 1-d one
        # is checked); a backward for the source then refuses the index in index_select
        return _index_add(a, d, _make(idx.reshape(-1)), source, alpha)
    if (x.ndim <= 1 or 0 < d < x.ndim - 1) and not in_bounds(idx, size):
        # torch's kernels for the first and last dim of a >= 2-d tensor raise RuntimeError
        # (below); its others (0-d, 1-d, the middle dims) raise IndexError
        raise IndexError(_messages.index_add_index_out_of_range(d, size, idx))
    _check_index_bounds(idx, size, d)
    return _index_add(a, d, _make(idx.reshape(-1)), source, alpha)


def _index_add(a: Tensor, d: int, index: Tensor, source: Tensor, alpha: Any,
               copy: bool = True) -> Tensor:
    """index_add once its arguments are checked (``index`` 1-D). ``copy=False`` adds into
    ``a``'s own buffer: only for a fresh ``a`` nobody else sees (a backward's zeros)."""
    x = a._array
    src = source._array if alpha == 1 else source._array * alpha
    out = x.copy() if copy else x
    src = src.astype(x.dtype, copy=False)
    if not x.size:
        pass  # (nothing to write into an empty self: see index_add)
    elif not x.ndim:  # a 0-d tensor is indexed as one dim of size 1 (NumPy has no axis 0)
        add_rows_at(out.reshape(1), index._array, src.reshape(1), zeros=not copy)
    elif d == 0:
        add_rows_at(out, index._array, src, zeros=not copy)
    else:
        add_rows_at(xp.moveaxis(out, d, 0), index._array, xp.moveaxis(src, d, 0), not copy)
    if not needs_grad(a, source):
        return _make(out)
    node = IndexAddBackward0()
    if source.requires_grad:  # (torch saves the index for the source's gradient only)
        node._saved = HOLDS_STATE
    node.dim, node.index, node.alpha = d, index, alpha
    return record(node, (a, source), out)


#: from this many indices gather and scatter_add index by flat positions (below, building
#: them costs more than the 2-D fancy index saves: a 32-row gather 7.3 -> 9.9 us)
_FLAT_INDEX_MIN = 4096


def _flat_along(idx: Any, d: int, shape: tuple[int, ...]) -> Any:
    """The flat (C-order) positions in an array of ``shape`` that ``idx`` picks along
    dimension ``d`` (and position i elsewhere), shaped as ``idx``: :func:`_along` as one
    integer array, which NumPy's 1-D take, put and ``add.at`` run many times faster than a
    tuple of broadcast indices."""
    nd = idx.ndim
    strides = [1] * nd
    for i in range(nd - 1, 0, -1):
        strides[i - 1] = strides[i] * shape[i]
    offsets = [index_range(idx.shape[i], i, nd) * strides[i] for i in range(nd)
               if i != d and idx.shape[i] > 1]
    if strides[d] != 1:
        lin = xp.multiply(idx, strides[d], dtype=xp.intp)
    elif offsets:  # (the common 2-D case: one pass)
        return xp.add(idx, offsets.pop() if len(offsets) == 1 else builtins.sum(offsets),
                      dtype=xp.intp)
    else:
        lin = idx.astype(xp.intp, copy=True)
    for off in offsets:
        lin += off
    return lin


@register("one_hot")
def one_hot(index: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dimension (not differentiable)."""
    idx = index._array
    if idx.dtype.kind not in "iu":
        raise RuntimeError(_messages.one_hot_not_long())
    if not idx.size:
        n = int(idx.max()) + 1 if num_classes == -1 else num_classes
        return _make(xp.zeros(idx.shape + (n,), dtype=xp.int64))
    if idx.min() < 0:
        raise RuntimeError(_messages.one_hot_negative_class())
    hi = int(idx.max())
    n = hi + 1 if num_classes == -1 else num_classes
    if hi >= n:
        raise RuntimeError(_messages.one_hot_class_too_large())
    # (zeros, then a 1 at each row's class: no comparison against every class)
    out = xp.zeros(idx.shape + (n,), dtype=xp.int64)
    flat = xp.arange(0, idx.size * n, n, dtype=xp.int64)
    flat += idx.reshape(-1)
    out.reshape(-1)[flat] = 1
    return _make(out)


def _tri_indices(name: str, row: int, col: int, offset: int, dtype: Any, upper: bool
                 ) -> Tensor:
    for what, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(_messages.tri_indices_negative(what, v))
    npdt = (dtype or D.int64).np
    if npdt.kind not in "iu":
        raise RuntimeError(_messages.integer_kernel_not_implemented(name, npdt))
    # row i holds columns first[i] .. first[i] + counts[i] - 1; written straight into the
    # (2, N) result: the rows repeated, the columns a running sum of steps (1 within a row)
    i = xp.arange(row, dtype=xp.int64)
    if upper:
        first = xp.clip(i + offset, 0, col)
        counts = col - first
    else:
        first = xp.zeros(row, dtype=xp.int64)
        counts = xp.clip(i + offset + 1, 0, col)
    out = xp.empty((2, int(counts.sum())), dtype=npdt)
    out[0] = xp.repeat(i, counts)
    nz = counts > 0
    if nz.any():
        f, c = first[nz], counts[nz]
        out[1] = 1
        prev_last = xp.concatenate([[0], (f + c - 1)[:-1]])
        out[1, (xp.cumsum(c) - c)] = f - prev_last
        out[1, 0] = f[0]
        xp.cumsum(out[1], out=out[1])
    return _make(out)


@register("triu_indices")
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None) -> Tensor:
    """The ``(2, N)`` row/column indices of the upper triangle of a ``row x col`` matrix
    (from diagonal ``offset`` up), in row-major order.

    Example:
        >>> import gradsum
        >>> gradsum.triu_indices(2, 2).tolist()
        [[0, 0, 1], [0, 1, 1]]
    """
    return _tri_indices("triu_indices", row, col, offset, dtype, True)


@register("tril_indices")
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None) -> Tensor:
    """The ``(2, N)`` indices of the lower triangle of a ``row x col`` matrix."""
    return _tri_indices("tril_indices", row, col, offset, dtype, False)


def _along_key(idx: Any, d: int, shape: tuple[int, ...]) -> Any:
    """The index that picks ``idx`` along ``d`` (and position i elsewhere) in an array of
    ``shape``: from :data:`_FLAT_INDEX_MIN` indices its flat positions as one 1-D array
    (``idx``'s C order), for the 1-D view that :func:`_on` gives, else that tuple. NumPy's
    ``ufunc.at`` runs 10-15 times faster with one 1-D index and 1-D values than with a tuple
    of broadcast ones (or an N-D index); see :func:`_at` for the order."""
    if idx.ndim and idx.size >= _FLAT_INDEX_MIN:
        return _flat_along(idx, d, shape).reshape(-1)
    grids = list(xp.indices(idx.shape, sparse=True))
    grids[d] = idx
    return tuple(grids)


def _on(a: Any, key: Any) -> Any:
    """What :func:`_along_key`'s ``key`` indexes: ``a`` (C-contiguous) as a 1-D view for
    flat positions, else ``a``."""
    if isinstance(key, tuple):
        return a
    assert a.flags.c_contiguous  # (a reshape would copy: the writes would be lost)
    return a.reshape(-1)


def _at(op: Any, a: Any, key: Any, vals: Any) -> None:
    """``op.at(a, key, vals)`` in place for :func:`_along_key`'s ``key`` (``vals`` of
    ``idx``'s shape, or a number). Flat positions visit the elements in the same C order of
    ``idx`` as the tuple, so each position is updated in the same order (the same bits); a
    count (adding the number 1, which ``ufunc.at`` runs element by element) is a
    ``bincount``, exact in integers."""
    if isinstance(key, tuple):
        op.at(a, key, vals)
        return
    flat = _on(a, key)
    if op is xp.add and isinstance(vals, int) and vals == 1:
        flat += xp.bincount(key, minlength=flat.size).astype(a.dtype, copy=False)
        return
    op.at(flat, key, xp.reshape(vals, -1))


# -- index_copy, index_fill, masked_select ----------------------------------------------------
def _index_arg(index: Any, name: str) -> Any:
    """The array of a tensor ``index`` argument (torch refuses lists and numbers there)."""
    if not isinstance(index, Tensor):
        raise TypeError(_messages.index_argument_not_tensor(name, index))
    return index._array


def _along_slice(d: int, idx: Any) -> tuple[Any, ...]:
    return (slice(None),) * d + (idx,)


class IndexCopyBackward0(Node):
    """``self`` gets ``g`` with the copied slices zeroed; ``source`` gets the slices of ``g``
    at ``index`` (each one, so a repeated index hands the same slice to every copy, as
    torch's ``index_select``)."""

    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        idx = _make(self.index)
        ga = index_fill(g, self.dim, idx, 0) if self.needs(0) else None
        gs = None
        if self.needs(1):
            g1 = g if g._array.ndim else F.reshape(g, (1,))
            gs = F.reshape(F.index_select(g1, self.dim, idx), self.src_shape)
        return ga, gs


@register("index_copy", method=True, inplace="index_copy_")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with the slices of ``source`` copied to positions ``index`` along ``dim`` (for
    a repeated index the last slice wins).

    Example:
        >>> import gradsum
        >>> src = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> gradsum.zeros(2, 3).index_copy(1, gradsum.tensor([2, 0]), src).tolist()
        [[2.0, 0.0, 1.0], [4.0, 0.0, 3.0]]
    """
    x, s = input._array, source._array
    idx = _index_arg(index, "index_copy")
    d = wrap_dim(dim, x.ndim)
    if idx.ndim > 1:
        raise IndexError(_messages.index_copy_index_ndim(idx))
    if s.ndim == 0 and idx.size != 1:
        raise IndexError(_messages.index_copy_scalar_source_many_indices(idx))
    if s.ndim != x.ndim and s.ndim != 0 and x.ndim != 0:
        raise IndexError(_messages.index_copy_ndim_mismatch(s, x))
    if idx.dtype != xp.int64:
        raise RuntimeError(_messages.expected_long_tensor_index("index_copy_", idx))
    if x.dtype != s.dtype:
        raise RuntimeError(_messages.index_copy_dtype_mismatch(x, s))
    xs = [n for i, n in enumerate(x.shape) if i != d]
    ss = [n for i, n in enumerate(s.shape) if i != d]
    if xs != ss:
        raise RuntimeError(_messages.index_copy_slice_shape_mismatch(x, s, d))
    if s.ndim and idx.size != s.shape[d]:
        raise IndexError(_messages.index_copy_count_mismatch(idx, s, d))
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1)
    bad = flat[(flat < 0) | (flat >= size)]
    if bad.size:
        raise IndexError(_messages.index_copy_index_out_of_bounds(bad, d, size))
    out = x.copy()
    o1 = out if x.ndim else out.reshape(1)
    s1 = s.reshape((1,) * o1.ndim) if s.ndim == 0 else s.reshape(s.shape or (1,))
    # a repeated index keeps its last slice (torch's CPU loop); NumPy's fancy assignment does
    # not promise an order, so only the last occurrence of each index is written
    _, last = xp.unique(flat[::-1], return_index=True)
    keep = flat.size - 1 - last
    o1[_along_slice(d, flat[keep])] = xp.take(s1, keep, axis=d)
    if not needs_grad(input, source):
        return _make(out)
    node = IndexCopyBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index: a second backward raises)
    node.dim, node.index, node.src_shape = d, flat, s.shape
    return record(node, (input, source), out)


class IndexFillBackward0(Node):
    """``self`` gets ``g`` with the filled slices zeroed (the fill value is a number)."""

    __slots__ = ("dim", "index", "value_dtype")

    def backward(self, g: Tensor) -> Any:
        return index_fill(g, self.dim, _make(self.index), 0)


class IndexFillBackward1(IndexFillBackward0):
    """A 0-d tensor value: it also gets the sum of ``g`` over the filled slices, each counted
    once (torch's ``index_select`` of the unique indices; as torch's, a negative index makes
    that ``index_select`` raise)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Any:
        ga = index_fill(g, self.dim, _make(self.index), 0) if self.needs(0) else None
        gv = None
        if self.needs(1):
            g1 = g if g._array.ndim else F.reshape(g, (1,))
            gv = F.sum(F.index_select(g1, self.dim, _make(xp.unique(self.index))))
            if gv._array.dtype != self.value_dtype:
                gv = F.to_dtype(gv, D.from_numpy_dtype(self.value_dtype))
        return ga, gv


@register("index_fill", method=True, inplace="index_fill_")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` (a number or a 0-d tensor) at positions ``index`` along
    ``dim`` (negative indices count from the end).

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 3).index_fill(1, gradsum.tensor([0, 2]), 7).tolist()
        [[7.0, 0.0, 7.0], [7.0, 0.0, 7.0]]
    """
    idx = _index_arg(index, "index_fill")
    if idx.dtype != xp.int64:
        raise IndexError(_messages.index_fill_index_not_long(idx))
    if idx.ndim > 1:
        raise RuntimeError(_messages.index_fill_index_not_vector(idx))
    v_t = value if isinstance(value, Tensor) else None
    if v_t is not None and v_t._array.ndim != 0:
        raise RuntimeError(_messages.index_fill_value_not_0d(v_t))
    x = input._array
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1)
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise IndexError(_messages.index_fill_index_out_of_bounds(bad, d, size))
    out = x.copy()
    v = v_t._array if v_t is not None else value
    with xp.errstate(invalid="ignore"):  # (nan/inf into an int tensor: torch's cast, silently)
        (out if x.ndim else out.reshape(1))[_along_slice(d, flat)] = xp.asarray(v).astype(x.dtype)
    if not needs_grad(input, v_t):
        return _make(out)
    node = IndexFillBackward0() if v_t is None else IndexFillBackward1()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index = d, flat
    node.value_dtype = v_t._array.dtype if v_t is not None else None
    return record(node, (input, v_t) if v_t is not None else (input,), out)


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices`` (int64 tensors, one per
    dimension; as torch, indices are taken modulo the size, so -1 is the last element).

    Example:
        >>> import gradsum
        >>> [t.tolist() for t in gradsum.unravel_index(gradsum.tensor([5, 7]), (3, 4))]
        [[1, 1], [1, 3]]
    """
    require_tensor("unravel_index", "indices", 1, indices)
    arr = indices._array
    if arr.dtype.kind not in "iu":
        raise TypeError(_messages.unravel_index_not_integer(arr))
    dims = _int_shape(shape)
    if builtins.any(s < 0 for s in dims):
        raise ValueError(_messages.unravel_index_negative_shape(dims))
    arr = arr.astype(xp.int64)
    coords = []
    stride = 1
    for s in reversed(dims):
        coords.append(xp.floor_divide(arr, stride) % s if s else xp.zeros_like(arr))
        stride *= s
    return tuple(_make(xp.asarray(c, dtype=xp.int64)) for c in reversed(coords))


# == index_reduce ==============================================================================
_IDX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce_array(x: Any, d: int, idx: Any, s: Any, reduce: str, include_self: bool
                        ) -> Any:
    # (the slices reduced element by element through scatter_reduce's flat positions: each
    # position takes its sources in index order, as a loop over the index would)
    full = x.copy()
    along = [1] * x.ndim
    along[d] = -1
    key = _along_key(xp.broadcast_to(idx.reshape(along), s.shape), d, x.shape)
    out = xp.moveaxis(full, d, 0)
    if not include_self:
        if reduce in ("prod", "mean"):
            ident: Any = 1 if reduce == "prod" else 0
        elif out.dtype.kind in "fV":
            ident = -xp.inf if reduce == "amax" else xp.inf
        else:
            info = xp.iinfo(out.dtype)
            ident = info.min if reduce == "amax" else info.max
        out[idx] = ident
    if reduce == "prod":
        _at(xp.multiply, full, key, s)
    elif reduce == "amax":
        _at(xp.maximum, full, key, s)
    elif reduce == "amin":
        _at(xp.minimum, full, key, s)
    else:
        _at(xp.add, full, key, s)
        counts = xp.full(out.shape[0], 1 if include_self else 0, dtype=xp.int64)
        xp.add.at(counts, idx, 1)
        counts = xp.maximum(counts, 1).reshape((-1,) + (1,) * (out.ndim - 1))
        if out.dtype.kind in "fV":
            out /= counts.astype(out.dtype)
        else:
            out[...] = xp.floor_divide(out, counts)
    return xp.ascontiguousarray(xp.moveaxis(out, 0, d))


class IndexReduceBackward0(Node):
    """torch's ``index_reduce_backward`` (prod: zeros of ``self`` and single zeros of
    ``source`` handled as torch's; amax/amin: the gradient shared among ties)."""

    __slots__ = ("dim", "include_self", "index", "reduce")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, src, result = self.saved()
        d, index, red = self.dim, self.index, self.reduce
        if red == "prod":
            masked_self = F.masked_fill(x, F.eq(x, 0), 1)
            msr = index_reduce(masked_self, d, index, src, red, include_self=self.include_self)
            gs = F.div(F.mul(g, msr), masked_self)
            src_zero = F.eq(src, 0)
            nz = F.index_select(F.index_add(F.zeros_like(x), d, index, src_zero.to(x.dtype)),
                                d, index)
            single = F.logical_and(src_zero, F.eq(nz, 1))
            masked_src = F.masked_fill(src, single, 1)
            msrc_res = index_reduce(x, d, index, masked_src, red,
                                    include_self=self.include_self)
            g_src = F.where(single, F.index_select(F.mul(g, msrc_res), d, index),
                            F.div(F.index_select(F.mul(g, result), d, index),
                                  F.masked_fill(src, src_zero, 1)))
        elif red == "mean":
            N = F.ones_like(g) if self.include_self else F.zeros_like(g)
            N = F.index_add(N, d, index, F.ones_like(src))
            N = F.masked_fill(N, F.eq(N, 0), 1)
            gs = F.div(g, N)
            g_src = F.div(F.index_select(g, d, index), F.index_select(N, d, index))
        else:
            value = F.index_select(result, d, index)
            self_is = F.eq(x, result).to(x.dtype)
            src_is = F.eq(src, value).to(x.dtype)
            n_dist = F.index_add(self_is, d, index, src_is)
            gd = F.div(g, n_dist)
            gs = F.mul(self_is, gd)
            g_src = F.mul(src_is, F.index_select(gd, d, index))
        if not self.include_self:
            gs = F.index_fill(gs, d, index, 0)
        return (gs if self.needs(0) else None), (g_src if self.needs(1) else None)


@tensor_method("index_reduce", inplace="index_reduce_")
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``input`` with the slices of ``source`` reduced (``prod``, ``mean``, ``amax``,
    ``amin``) into the positions ``index`` along ``dim``; ``include_self=False`` leaves the
    input's values out of the positions written. Integer ``mean`` rounds down, as torch's.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0, 2.0, 3.0])
        >>> x.index_reduce(0, gradsum.tensor([0, 0]), gradsum.tensor([4.0, 5.0]), "prod").tolist()
        [20.0, 2.0, 3.0]
    """
    x = _require("index_reduce", "input", 1, input)
    idx = _require("index_reduce", "index", 3, index)
    s = _require("index_reduce", "source", 4, source)
    _warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if reduce not in _IDX_REDUCES:
        raise RuntimeError(_messages.index_reduce_invalid_reduce(reduce))
    d = wrap_dim(dim, max(x.ndim, 1))
    if idx.dtype not in (xp.int64, xp.int32):
        raise RuntimeError(_messages.index_reduce_index_not_integer(idx))
    if idx.ndim > 1:
        raise IndexError(_messages.index_not_a_vector("index_reduce_"))
    if x.dtype != s.dtype:
        raise RuntimeError(_messages.index_reduce_dtype_mismatch(x, s))
    if x.dtype.kind not in "fiu":
        raise D.not_implemented("index_reduce_func_cpu_", x.dtype, "Convert with .float().")
    if s.ndim != x.ndim or (x.ndim and s.shape[d] != idx.size):
        raise RuntimeError(_messages.index_reduce_count_mismatch(idx, s, d, x))
    if any(s.shape[i] != x.shape[i] for i in range(x.ndim) if i != d):
        raise RuntimeError(_messages.index_reduce_shape_mismatch(s, x, d))
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1).astype(xp.int64)
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise IndexError(_messages.index_reduce_index_out_of_range(bad, d, size))
    flat = xp.where(flat < 0, flat + size, flat)
    if x.ndim == 0:
        out = _index_reduce_array(x.reshape(1), 0, flat, s.reshape(1), reduce,
                                  include_self).reshape(())
    else:
        out = _index_reduce_array(x, d, flat, s, reduce, include_self)
    if not needs_grad(input, source):
        return _make(out)
    node = IndexReduceBackward0()
    node.dim, node.index, node.reduce, node.include_self = d, _make(flat), reduce, include_self
    t = record(node, (input, source), out)
    node.save(input, source, outputs=(t,))
    return t


register("index_reduce")(index_reduce)
