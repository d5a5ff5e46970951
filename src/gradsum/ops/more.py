"""More of torch's tensor ops: cumulative products and extrema, diagonals and traces, rolls and
rotations, ``einsum``/``tensordot``/``kron``/``cross``/``cdist``, the fused ``add*mm`` family,
``repeat_interleave``, ``take_along_dim`` and the triangle index helpers.

Each primitive has its own ``<Op>Backward0`` with torch's derivative formula written in gradsum
ops (double backward works) and saves what torch's node saves, so a second backward without
``retain_graph`` raises exactly where torch's does. Ops that torch itself composes from other
ops (``movedim``, ``tensordot``, ``take_along_dim``, ``fliplr``, ``repeat_interleave``) are
composed the same way here, so their ``grad_fn`` is torch's.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> gradsum.einsum("ii->", x).backward()
    >>> x.grad.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy, cast_for
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops._core import (
    _make,
    broadcast_error,
    const,
    index_range,
    mark_view,
    needs_grad,
    quietly,
    record,
    register,
    scalar_value,
    wrap_dim,
)
from gradsum.ops.reduction import _cumsum_array, _scan_array, values_indices


def _dims_arg(v: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints."""
    if isinstance(v, (int, xp.integer)):
        return (int(v),)
    return tuple(int(d) for d in v)


def _contig(a: Any, dtype: Any = None) -> Any:
    """``a`` as a C-contiguous array of ``dtype`` (0-d stays 0-d, unlike ascontiguousarray)."""
    a = xp.asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous else a.copy()


def _tname(dt: Any) -> str:
    """torch's scalar-type name of a NumPy dtype (``Float``, ``Long``)."""
    return D._TORCH_SCALAR_NAMES.get(str(dt), str(dt))


def _require_tensor(name: str, arg: str, pos: int, v: Any) -> Tensor:
    """``v``, or torch's TypeError for a non-tensor argument ``arg`` at position ``pos``."""
    if not isinstance(v, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}. Wrap it with gradsum.tensor().")
    return v


def _moved_last(a: Tensor, d: int) -> Tensor:
    return F.movedim(a, d, -1) if d != a.ndim - 1 else a


# -- cumprod -----------------------------------------------------------------------------------
class CumprodBackward0(Node):
    """torch's ``cumprod_backward``: ``reversed_cumsum(out * g) / x`` without zeros; with
    zeros the exact gradient, by torch's O(n) masked pass, or, when the backward itself is
    recorded, by torch's O(n^2) form (slices, prods and cumprods) whose derivative is the
    second derivative of cumprod. The two treat an inf or nan gradient differently (the
    first selects, the second multiplies), as torch's do."""

    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        x = a._array
        if x.size <= 1 or x.shape[self.dim] == 1:
            return g
        d = self.dim
        if not (x == 0).any():
            ga, oa = g._array, out._array
            if not _state.enabled and ga.dtype is oa.dtype is x.dtype \
                    and x.dtype.char in "fd":  # (no graph: one reversed scan, no flips)
                r = _cumsum_array(oa * ga, d, reverse=True)
                r /= x
                return _make(r)
            w = F.mul(out, g)
            return F.div(F.flip(F.cumsum(F.flip(w, (d,)), d), (d,)), a)
        if not _state.enabled:
            return _make(_cumprod_grad_zeros(x, g._array, d))
        n = x.shape[d]
        ones = F.ones(x.shape[:d] + (1,) + x.shape[d + 1:], dtype=a.dtype)
        parts = []
        for k in range(n):
            if k == 0:
                omitted = F.cat([ones, cumprod(F.narrow(a, d, 1, n - 1), d)], d)
            else:
                until = F.prod(F.narrow(a, d, 0, k), d, keepdim=True)
                if k == n - 1:
                    omitted = until
                else:
                    after = cumprod(F.narrow(a, d, k + 1, n - k - 1), d)
                    omitted = F.cat([until, F.mul(F.expand(until, after.shape), after)], d)
            parts.append(F.sum(F.mul(F.narrow(g, d, k, n - k), omitted), d))
        return F.stack(parts, d)


def _cumprod_grad_zeros(x: Any, g: Any, d: int) -> Any:
    """torch's O(n) cumprod gradient of an input ``x`` with zeros along ``d`` (NumPy): before
    the first zero ``reversed_cumsum(out * g) / x``; at the first zero ``z1``,
    ``prod_{i < z1} x_i * sum_{z1 <= j < z2} g_j prod_{z1 < i <= j} x_i`` (``z2`` the second
    zero); 0 after it. Each region selects its part of ``g`` (torch's ``masked_fill``), so an
    inf or nan gradient elsewhere does not reach it."""
    xm, gm = xp.moveaxis(x, d, -1), xp.moveaxis(g, d, -1)
    is_zero = xm == 0
    zc = xp.cumsum(is_zero, axis=-1)
    before = zc == 0  # positions before the first zero
    first = is_zero & (zc == 1)
    between = (zc == 1) & ~first  # after the first zero, before the second
    xb = xp.where(before, xm, 1)
    pre = xp.cumprod(xb, axis=-1)
    w = xp.where(before, pre * gm, 0)
    res = xp.where(before, xp.flip(xp.cumsum(xp.flip(w, -1), -1), -1) / xb, 0)
    tail = xp.cumprod(xp.where(between, xm, 1), axis=-1)
    s = xp.sum(tail * xp.where(zc == 1, gm, 0), axis=-1, keepdims=True)
    e = xp.prod(xb, axis=-1, keepdims=True)
    res = xp.where(first, s * e, res)
    return _contig(xp.moveaxis(res, -1, d)).astype(x.dtype, copy=False)


@register("cumprod")
def cumprod(input: Tensor, dim: int, *, dtype: D.dtype | None = None) -> Tensor:
    """Cumulative product along ``dim`` (integers give int64, as torch); the gradient is exact
    where the input has zeros.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([2.0, 0.0, 3.0], requires_grad=True)
        >>> y = gradsum.cumprod(x, 0)
        >>> y.sum().backward()
        >>> y.tolist(), x.grad.tolist()
        ([2.0, 0.0, 0.0], [1.0, 8.0, 0.0])
    """
    if dtype is not None:
        input = input.to(dtype)
    x = input._array
    d = wrap_dim(dim, x.ndim)
    if x.ndim and x.size and x.dtype.char in "fd":
        out = _scan_array(xp.multiply, x, d)
    else:
        out = xp.cumprod(x, axis=d) if x.ndim else x.copy()
    if x.dtype.kind in "biu" and dtype is None:
        out = out.astype(xp.int64)
    if not needs_grad(input):
        return _make(out)
    node = CumprodBackward0()
    node.dim = d
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


# -- logcumsumexp ------------------------------------------------------------------------------
class LogcumsumexpBackward0(Node):
    """torch's ``logcumsumexp_backward``: the positive and negative parts of the gradient
    through reversed logcumsumexps (stable for large inputs)."""

    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        if g._array.ndim == 0 or g._array.size == 0:
            return g
        d = self.dim
        low = _make(xp.asarray(xp.finfo(g._array.dtype).min, dtype=g._array.dtype))
        with xp.errstate(divide="ignore"):
            log_abs = F.log(F.abs(g))
        pos = F.where(F.gt(g, 0), log_abs, low)
        neg = F.where(F.lt(g, 0), log_abs, low)

        def rev(v: Tensor) -> Tensor:
            return F.flip(logcumsumexp(F.flip(v, (d,)), d), (d,))

        with xp.errstate(over="ignore", invalid="ignore"):
            op = F.exp(F.add(rev(F.sub(pos, out)), a))
            on = F.exp(F.add(rev(F.sub(neg, out)), a))
            return F.sub(op, on)


@register("logcumsumexp")
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably (floating dtypes only).

    Example:
        >>> import gradsum
        >>> gradsum.logcumsumexp(gradsum.tensor([0.0, 0.0]), 0).tolist()
        [0.0, 0.6931471824645996]
    """
    x = input._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented("logcumsumexp_out_cpu", x.dtype,
                                "Convert the input with .float() first.")
    d = wrap_dim(dim, x.ndim)
    out = xp.logaddexp.accumulate(x, axis=d) if x.ndim and x.size else x.copy()
    out = xp.asarray(out, dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = LogcumsumexpBackward0()
    node.dim = d
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


# -- cummax / cummin ---------------------------------------------------------------------------
class CummaxBackward0(Node):
    """The gradient goes to the positions of the running extremum (``scatter_add``)."""

    __slots__ = ("dim", "in_shape", "indices")

    def backward(self, g: Tensor) -> Tensor:
        if not self.in_shape:
            return g
        ga = g._array
        if (not _state.enabled or not g.requires_grad) and ga.size and ga.dtype.char in "fd":
            return _make(_cum_extreme_grad(ga, self.indices._array, self.dim))
        return F.scatter_add(F.zeros(self.in_shape, dtype=g.dtype), self.dim, self.indices, g)


def _cum_extreme_grad(g: Any, idx: Any, d: int) -> Any:
    """cummax/cummin's gradient (arrays): each run of positions sharing an index (where
    ``idx[j] == j`` starts one) sums its gradient into that index, in order (the bits of
    ``scatter_add`` into zeros: ``+ 0`` after the sum, as the add into zeros)."""
    n = g.shape[d]
    lines_i = xp.moveaxis(idx, d, -1).reshape(-1, n)
    lines_g = xp.moveaxis(g, d, -1).reshape(-1, n)
    starts = xp.flatnonzero(lines_i == index_range(n, 0, 1))
    out = xp.zeros(lines_g.shape, dtype=g.dtype)
    sums = xp.add.reduceat(lines_g.reshape(-1), starts)
    sums += const(g.dtype, 0)
    out.reshape(-1)[starts] = sums
    out = out.reshape(xp.moveaxis(g, d, -1).shape)
    return xp.ascontiguousarray(xp.moveaxis(out, -1, d))


class CumminBackward0(CummaxBackward0):
    __slots__ = ()


def _cum_extreme(input: Tensor, dim: int, is_max: bool) -> Any:
    x = input._array
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        vals, idx = x.copy(), xp.zeros((), dtype=xp.int64)
    elif x.size == 0:
        vals, idx = x.copy(), xp.zeros(x.shape, dtype=xp.int64)
    elif x.dtype.char in "fdil" and not (x.dtype.kind == "f" and xp.isnan(x).any()):
        vals = _scan_array(xp.maximum if is_max else xp.minimum, x, d)
        idx = _last_hit(x == vals, d)
    else:
        acc = xp.maximum if is_max else xp.minimum
        vals = acc.accumulate(x, axis=d)
        if x.dtype.kind in "fV":  # torch: a nan stays (and is the index) once seen
            seen = xp.logical_or.accumulate(xp.isnan(x), axis=d)
            vals = xp.where(seen, xp.nan, vals).astype(x.dtype)
            hit = (x == vals) | xp.isnan(x)
        else:
            hit = x == vals
        shape = [1] * x.ndim
        shape[d] = x.shape[d]
        pos = xp.broadcast_to(xp.arange(x.shape[d]).reshape(shape), x.shape)
        idx = xp.maximum.accumulate(xp.where(hit, pos, 0), axis=d).astype(xp.int64)
    idx_t = _make(idx)
    if not needs_grad(input):
        return values_indices(_make(vals), idx_t)
    node = CummaxBackward0() if is_max else CumminBackward0()
    node.dim, node.indices, node.in_shape = d, idx_t, x.shape
    node._saved = HOLDS_STATE  # (torch saves the indices)
    return values_indices(record(node, (input,), vals), idx_t)


def _last_hit(hit: Any, d: int) -> Any:
    """Per position along ``d``, the last position at or before it where ``hit`` holds
    (int64; ``hit`` holds at every line's first position): each hit's flat position
    repeated over its run, less the line's start."""
    n = hit.shape[d]
    moved = xp.moveaxis(hit, d, -1)
    lines = moved.reshape(-1, n)
    flat = xp.flatnonzero(lines)
    runs = xp.diff(flat, append=lines.size)
    idx = xp.repeat(flat, runs).reshape(lines.shape)
    idx -= index_range(lines.shape[0], 0, 2) * n
    return xp.ascontiguousarray(xp.moveaxis(idx.reshape(moved.shape), -1, d))


@register("cummax")
def cummax(input: Tensor, dim: int) -> Any:
    """``(values, indices)`` of the running maximum along ``dim`` (ties: the later index, as
    torch's); the gradient goes to the argmax positions.

    Example:
        >>> import gradsum
        >>> v, i = gradsum.cummax(gradsum.tensor([1.0, 3.0, 2.0, 3.0]), 0)
        >>> v.tolist(), i.tolist()
        ([1.0, 3.0, 3.0, 3.0], [0, 1, 1, 3])
    """
    return _cum_extreme(input, dim, True)


@register("cummin")
def cummin(input: Tensor, dim: int) -> Any:
    """``(values, indices)`` of the running minimum along ``dim`` (see :func:`cummax`)."""
    return _cum_extreme(input, dim, False)


# -- roll / rot90 / flips ----------------------------------------------------------------------
class RollBackward0(Node):
    __slots__ = ("dims", "shifts")

    def backward(self, g: Tensor) -> Tensor:
        return roll(g, tuple(-s for s in self.shifts), self.dims)


@register("roll")
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Roll ``input`` by ``shifts`` along ``dims`` (elements leaving one end come back at the
    other); without ``dims`` the flattened tensor is rolled and the shape restored.

    Example:
        >>> import gradsum
        >>> gradsum.roll(gradsum.tensor([[1, 2, 3], [4, 5, 6]]), 1, 1).tolist()
        [[3, 1, 2], [6, 4, 5]]
    """
    sh = _dims_arg(shifts)
    x = input._array
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0 "
                               "(pass one dim per shift, or a single shift without dims)")
        out = xp.roll(x.reshape(-1), sh[0]).reshape(x.shape)
        wd: tuple[int, ...] = ()
    else:
        dm = _dims_arg(dims)
        if not sh:
            raise RuntimeError("`shifts` required: pass at least one shift")
        if len(sh) != len(dm):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:"
                               f"{len(dm)} (pass one shift per dim)")
        if x.ndim == 0:
            raise IndexError(f"Dimension specified as {dm[0]} but tensor has no dimensions. "
                             "Roll a 0-d tensor without dims.")
        wd = tuple(wrap_dim(d, x.ndim) for d in dm)
        out = xp.roll(x, sh, wd)
    out = _contig(out)
    if out is x or xp.shares_memory(out, x):
        out = out.copy()
    if not needs_grad(input):
        return _make(out)
    node = RollBackward0()
    node.shifts, node.dims = sh, (wd if dims is not None else None)
    return record(node, (input,), out)


class Rot90Backward0(Node):
    __slots__ = ("dims", "k")

    def backward(self, g: Tensor) -> Tensor:
        return rot90(g, -self.k, self.dims)


def _rot90_last2(x: Any, kk: int) -> Any:
    """``rot90`` by ``kk`` (1 or 3) turns in the last two axes of a C-contiguous array of 2-,
    4- or 8-byte elements, as a new C-contiguous array. The transposed copy in two passes, as
    copy_c's fast path: 16 bytes at a time, then deinterleaved (NumPy's strided copy moves one
    element per step, 2-3x slower), with the flip folded into them (one turn: each row's
    16-byte groups in reverse order, then each group's elements reversed; three: the rows in
    reverse order). A width that is not a whole number of groups leaves its last few columns
    to a small strided copy."""
    w = 16 // x.dtype.itemsize
    lead, rows, cols = x.shape[:-2], x.shape[-2], x.shape[-1]
    r = cols % w
    c0 = cols - r
    out = xp.empty(lead + (cols, rows), x.dtype)
    wide = x[..., :c0].view(xp.complex128)
    wide = (wide[..., ::-1] if kk == 1 else wide[..., ::-1, :]).swapaxes(-1, -2).copy()
    parts = wide.view(x.dtype).reshape(lead + (c0 // w, rows, w)).swapaxes(-1, -2)
    dst = out[..., r:, :] if kk == 1 else out[..., :c0, :]
    # (splitting an axis: always a view of ``out``)
    dst.reshape(lead + (c0 // w, w, rows))[...] = parts[..., ::-1, :] if kk == 1 else parts
    if r:
        if kk == 1:
            out[..., :r, :] = x[..., c0:][..., ::-1].swapaxes(-1, -2)
        else:
            out[..., c0:, :] = x[..., ::-1, c0:].swapaxes(-1, -2)
    return out


@register("rot90")
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the
    second axis; a copy).

    Example:
        >>> import gradsum
        >>> gradsum.rot90(gradsum.tensor([[1, 2], [3, 4]])).tolist()
        [[2, 4], [1, 3]]
    """
    dm = tuple(int(d) for d in dims)
    x = input._array
    if len(dm) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dm)}. "
                           "Pass two dims, e.g. dims=(0, 1).")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim} (shape "
                           f"{tuple(x.shape)})")
    d0, d1 = wrap_dim(dm[0], x.ndim), wrap_dim(dm[1], x.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    kk = int(k) % 4 if (d0, d1) == (x.ndim - 2, x.ndim - 1) else (-int(k)) % 4
    it = x.dtype.itemsize
    if (kk in (1, 3) and {d0, d1} == {x.ndim - 2, x.ndim - 1} and x.flags.c_contiguous
            and x.size >= 4096 and it in (2, 4, 8) and x.dtype.kind in "fiucV"
            and x.shape[-1] >= 16 // it):
        out = _rot90_last2(x, kk)
    else:
        out = _contig(xp.rot90(x, k, (d0, d1)))
        if xp.shares_memory(out, x):
            out = out.copy()
    if not needs_grad(input):
        return _make(out)
    node = Rot90Backward0()
    node.k, node.dims = int(k), (d0, d1)
    return record(node, (input,), out)


@register("fliplr")
def fliplr(input: Tensor) -> Tensor:
    """Reverse the columns (dim 1) of a tensor of at least 2 dimensions."""
    if input._array.ndim < 2:
        raise RuntimeError(f"Input must be >= 2-d (got shape {tuple(input.shape)}).")
    return F.flip(input, (1,))


@register("flipud")
def flipud(input: Tensor) -> Tensor:
    """Reverse the rows (dim 0) of a tensor of at least 1 dimension."""
    if input._array.ndim < 1:
        raise RuntimeError("Input must be >= 1-d (got a 0-d tensor).")
    return F.flip(input, (0,))


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
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}. Pass two "
                           "different dims.")
    return d1, d2


class DiagonalBackward0(Node):
    __slots__ = ("dim1", "dim2", "in_shape", "offset")

    def backward(self, g: Tensor) -> Tensor:
        return _diagonal_backward(g, self.in_shape, self.offset, self.dim1, self.dim2)


class DiagonalBackward0_copy(DiagonalBackward0):  # (torch's name for diag() of a matrix)
    __slots__ = ()


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


@register("diagonal")
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


class DiagEmbedBackward0(Node):
    __slots__ = ("dim1", "dim2", "offset")

    def backward(self, g: Tensor) -> Tensor:
        return diagonal(g, self.offset, self.dim1, self.dim2)


@register("diag_embed")
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonals along ``dim1``/``dim2`` (new dims of size ``n + |offset|``)
    hold the last dimension of ``input``; zeros elsewhere.

    Example:
        >>> import gradsum
        >>> gradsum.diag_embed(gradsum.tensor([1, 2])).tolist()
        [[1, 0], [0, 2]]
    """
    x = input._array
    nd = x.ndim + 1
    d1, d2 = _diag_dims(nd, dim1, dim2)
    off = int(offset)
    n = x.shape[-1] if x.ndim else 1
    m = n + abs(off)
    rest = iter(x.shape[:-1])
    shape = tuple(m if i in (d1, d2) else next(rest) for i in range(nd))
    out = xp.zeros(shape, dtype=x.dtype)
    _diag_view(out, off, d1, d2)[...] = x
    if not needs_grad(input):
        return _make(out)
    node = DiagEmbedBackward0()
    node.offset, node.dim1, node.dim2 = off, d1, d2
    return record(node, (input,), out)


@register("diag")
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A vector -> the square matrix with it on diagonal ``diagonal``; a matrix -> that
    diagonal (a copy).

    Example:
        >>> import gradsum
        >>> gradsum.diag(gradsum.tensor([1, 2]), 1).tolist()
        [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    x = input._array
    if x.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if x.ndim != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D (shape "
                           f"{tuple(x.shape)}). Use diagonal() or diag_embed() otherwise.")
    off = int(diagonal)
    out = _diag_view(x, off, 0, 1).copy()
    if not needs_grad(input):
        return _make(out)
    node = DiagonalBackward0_copy()
    node.in_shape, node.offset, node.dim1, node.dim2 = x.shape, off, 0, 1
    return record(node, (input,), out)


class TraceBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        n = min(self.in_shape)
        return _diagonal_backward(F.expand(g, (n,)), self.in_shape, 0, 0, 1)


@register("trace")
@autocast_policy("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers give int64).

    Example:
        >>> import gradsum
        >>> gradsum.trace(gradsum.tensor([[1, 2], [3, 4]])).item()
        5
    """
    x = input._array
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim} (shape "
                           f"{tuple(x.shape)}). Use diagonal(...).sum(-1) for batches.")
    out = xp.asarray(xp.trace(x))
    if x.dtype.kind in "biu":
        out = out.astype(xp.int64)
    if not needs_grad(input):
        return _make(out)
    node = TraceBackward0()
    node.in_shape = x.shape
    return record(node, (input,), out)


# -- movedim / repeat_interleave / take_along_dim / triangle indices ---------------------------
@register("movedim", "moveaxis")
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
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    ws = [wrap_dim(d, nd) for d in src]
    wd = [wrap_dim(d, nd) for d in dst]
    for what, given, w in (("source", src, ws), ("destination", dst, wd)):
        if len(set(w)) != len(w):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({list(given)}). Each dim "
                               "may appear once.")
    if nd == 0:
        return F.permute(input, ())
    order = [-1] * nd
    for s, d in zip(ws, wd):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in ws)
    perm = tuple(o if o != -1 else next(rest) for o in order)
    return F.permute(input, perm)


def _repeats_index(reps: Any, what: str = "repeats") -> Any:
    if reps.ndim > 1:
        raise RuntimeError(f"repeats must be 0-dim or 1-dim tensor (got shape "
                           f"{tuple(reps.shape)})")
    if reps.dtype.kind not in "iu":
        raise D.not_implemented("repeat_interleave_cpu", reps.dtype,
                                "Pass integer repeats (.long()).")
    if reps.size and reps.min() < 0:
        raise RuntimeError(f"repeats can not be negative (got {reps.tolist()})")
    return xp.repeat(xp.arange(reps.size), reps.reshape(-1))


@register("repeat_interleave")
def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element (or each slice along ``dim``) ``repeats`` times; ``repeats`` is an
    int or a tensor with one count per slice. Without ``dim`` the flattened input is repeated.
    ``repeat_interleave(repeats_tensor)`` alone gives the index ``[0]*r0 + [1]*r1 + ...``.

    Example:
        >>> import gradsum
        >>> gradsum.repeat_interleave(gradsum.tensor([[1, 2], [3, 4]]), 2, 0).tolist()
        [[1, 2], [1, 2], [3, 4], [3, 4]]
    """
    if repeats is None:
        return _make(_repeats_index(_require_tensor("repeat_interleave", "input", 1, input)
                                    ._array).astype(xp.int64))
    a = input if dim is not None else F.reshape(input, (-1,))
    d = wrap_dim(dim, a._array.ndim) if dim is not None else 0
    if a._array.ndim == 0:
        a = F.reshape(a, (1,))
    n = a._array.shape[d]
    if isinstance(repeats, Tensor):
        reps = repeats._array
        if reps.ndim > 1 or reps.dtype.kind not in "iu":
            _repeats_index(reps)
        if reps.size == 1:
            reps = xp.broadcast_to(reps.reshape(1), (n,))
        elif reps.size != n:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) "
                f"= {reps.size} and input.size({d}) = {n}"
            )
        idx = _repeats_index(xp.asarray(reps))
        if output_size is not None and output_size != idx.size:
            raise RuntimeError(f"allocated size does not match required size: output_size="
                               f"{output_size}, sum(repeats)={idx.size}")
        return F.index_select(a, d, _make(idx.astype(xp.int64)))
    r = int(scalar_value(repeats))
    if r < 0:
        raise RuntimeError(f"Repeats must be non-negative (got {r})")
    if output_size is not None and output_size != r * n:
        raise RuntimeError(f"allocated size does not match required size: output_size="
                           f"{output_size}, repeats * size = {r * n}")
    shape = a._array.shape
    tiled = F.clone(F.expand(F.unsqueeze(a, d + 1), shape[:d + 1] + (r,) + shape[d + 1:]))
    return F.reshape(tiled, shape[:d] + (n * r,) + shape[d + 1:])


@register("take_along_dim")
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Pick values along ``dim`` at ``indices`` (broadcast with ``input`` on the other dims);
    without ``dim`` both are flattened. A :func:`gather`.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([[10, 30, 20], [60, 40, 50]])
        >>> gradsum.take_along_dim(x, x.argmax(1, keepdim=True), 1).tolist()
        [[30], [60]]
    """
    idx = _require_tensor("take_along_dim", "indices", 2, indices)._array
    if idx.dtype != xp.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_tname(idx.dtype)}. Convert them with .long().")
    if dim is None:
        return F.gather(F.reshape(input, (-1,)), 0, F.reshape(indices, (-1,)))
    x = input._array
    if x.ndim != idx.ndim:
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for "
            "indices"
        )
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


def _tri_indices(name: str, row: int, col: int, offset: int, dtype: Any, upper: bool
                 ) -> Tensor:
    for what, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{what} must be non-negative, got{v}")
    npdt = (dtype or D.int64).np
    if npdt.kind not in "iu":
        raise RuntimeError(f"\"{name}\" not implemented for '{_tname(npdt)}': pass an integer "
                           "dtype")
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


# -- einsum ------------------------------------------------------------------------------------
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _parse_einsum(equation: str, shapes: list[tuple[int, ...]]
                  ) -> tuple[list[str], str, dict[str, int]]:
    """Each operand's labels and the output's (ellipsis dims as fresh letters, right-aligned),
    plus each label's broadcast size; torch's errors for a bad equation."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError(f"einsum(): fewer operands were provided than specified in the "
                           f"equation ({len(terms)} subscripts, {len(shapes)} operands)")
    if len(terms) < len(shapes):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the "
                           f"equation ({len(terms)} subscripts, {len(shapes)} operands)")
    pos = 0
    parsed: list[tuple[list[str], bool]] = []
    for k, term in enumerate(terms):
        labels: list[str] = []
        ell = False
        i = 0
        while i < len(term):
            c = term[i]
            if c == ".":
                if ell:
                    raise RuntimeError(f"einsum(): found '.' for operand {k} for which an "
                                       "ellipsis was already found")
                if term[i:i + 3] != "...":
                    raise RuntimeError(f"einsum(): found '.' for operand {k} that is not part "
                                       "of any ellipsis")
                ell = True
                labels.append("...")
                i += 3
                pos += 3
                continue
            if c not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {pos} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels.append(c)
            i += 1
            pos += 1
        pos += 1
        parsed.append((labels, ell))
    used = {c for c in eq if c in _LETTERS}
    fresh = [c for c in _LETTERS if c not in used]
    ell_nd = 0
    for k, ((labels, ell), shape) in enumerate(zip(parsed, shapes)):
        named = len(labels) - (1 if ell else 0)
        if ell:
            if named > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({named}) is more than the number of dimensions "
                                   f"({len(shape)}) for operand {k}")
            ell_nd = max(ell_nd, len(shape) - named)
        elif named != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                               f"does not match the number of dimensions ({len(shape)}) for "
                               f"operand {k} and no ellipsis was given")
    ell_letters = fresh[:ell_nd]
    ops: list[str] = []
    sizes: dict[str, int] = {}
    for k, ((labels, ell), shape) in enumerate(zip(parsed, shapes)):
        named = len(labels) - (1 if ell else 0)
        full: list[str] = []
        for lab in labels:
            if lab == "...":
                nd = len(shape) - named
                full.extend(ell_letters[ell_nd - nd:] if nd else [])
            else:
                full.append(lab)
        own: dict[str, int] = {}
        for lab, s in zip(full, shape):
            if lab in own and own[lab] != s:
                raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand {k} but "
                                   f"the sizes don't match, {own[lab]} != {s}")
            own[lab] = s
        for lab, s in own.items():
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = s
            elif s != 1 and s != prev:
                shown = lab if lab not in ell_letters else "..."
                raise RuntimeError(f"einsum(): subscript {shown} has size {s} for operand {k} "
                                   f"which does not broadcast with previously seen size {prev}")
        ops.append("".join(full))
    if arrow:
        out: list[str] = []
        seen_ell = False
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if seen_ell or rhs[i:i + 3] != "...":
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis" if rhs[i:i + 3] != "..." else
                                       "einsum(): found '.' for output for which an ellipsis "
                                       "was already found")
                seen_ell = True
                out.extend(ell_letters)
                i += 3
                continue
            if c not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i}"
                                   " in the equation string, subscripts must be in [a-zA-Z]")
            if c in out:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            if c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            out.append(c)
            i += 1
        out_s = "".join(out)
    else:
        counts: dict[str, int] = {}
        for o in ops:
            for c in o:
                if c not in ell_letters:
                    counts[c] = counts.get(c, 0) + 1
        out_s = "".join(ell_letters) + "".join(
            sorted((c for c, n in counts.items() if n == 1), key=_LETTERS.index))
    return ops, out_s, sizes


def _einsum_arrays(ops: list[str], out: str, sizes: dict[str, int], arrays: list[Any]) -> Any:
    expanded = []
    for sub, arr in zip(ops, arrays):
        target = tuple(sizes[c] for c in sub)
        expanded.append(arr if arr.shape == target else xp.broadcast_to(arr, target))
    spec = ",".join(ops) + "->" + out
    low = expanded[0].dtype if expanded and expanded[0].dtype.kind == "V" else None
    if low is not None:  # bfloat16 (NumPy's einsum has no loop): float32, rounded once
        expanded = [a.astype(xp.float32) for a in expanded]
    # two large operands: NumPy's optimised path contracts with BLAS (tensordot), as torch's
    # bmm does; small ones stay on the plain loop (the path search costs more than it saves)
    big = len(arrays) == 2 and max(a.size for a in expanded) >= 4096
    res = xp.einsum(spec, *expanded, optimize=len(arrays) > 2 or big)
    return _contig(res if low is None else res.astype(low))


class EinsumBackward0(Node):
    """Operand ``k``'s gradient is the einsum of the incoming gradient with the other operands
    onto ``k``'s labels: expanded along labels only ``k`` sums, placed on the diagonal for a
    repeated label, summed over dims ``k`` broadcast from size 1."""

    __slots__ = ("ops", "out", "shapes", "sizes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        ops, out, sizes = self.ops, self.out, self.sizes
        others_t = self.saved() if len(ops) > 1 else []
        res: list[Tensor | None] = []
        for k, sub in enumerate(ops):
            if not self.needs(k):
                res.append(None)
                continue
            rest = [(o, t) for j, (o, t) in enumerate(zip(ops, others_t)) if j != k]
            avail = set(out).union(*[set(o) for o, _ in rest]) if rest else set(out)
            uniq = list(dict.fromkeys(sub))
            keep = "".join(c for c in uniq if c in avail)
            if rest:
                # torch sums out an operand's labels that no other operand and not the output
                # has before it multiplies (so an inf gradient meets that sum, not its terms)
                rest = [_einsum_presum(o, t, set(out).union(sub, *[set(q) for j, (q, _)
                                                                   in enumerate(rest) if j != i]))
                        for i, (o, t) in enumerate(rest)]
            terms = [out] + [o for o, _ in rest]
            tens = [g] + [_expand_to(t, o, sizes) for o, t in rest]
            gk = einsum(",".join(terms) + "->" + keep, *tens)
            if len(keep) != len(uniq):  # labels only operand k sums: constant along them
                for i, c in enumerate(uniq):
                    if c not in avail:
                        gk = F.unsqueeze(gk, i)
                gk = F.expand(gk, tuple(sizes[c] for c in uniq))
            if len(uniq) != len(sub):  # a repeated label: onto the diagonal
                gk = _einsum_diagonal_embed(gk, uniq, sub, sizes)
            shape = self.shapes[k]
            red = tuple(i for i, (c, s) in enumerate(zip(sub, shape)) if s == 1 and sizes[c] != 1)
            if red:
                gk = F.sum(gk, red, keepdim=True)
            res.append(gk)
        return tuple(res)


def _einsum_presum(sub: str, t: Tensor, needed: set[str]) -> tuple[str, Tensor]:
    """``(sub, t)`` with the labels outside ``needed`` summed out (and repeats taken along
    their diagonal), when there are any."""
    kept = "".join(c for c in dict.fromkeys(sub) if c in needed)
    if kept == sub:
        return sub, t
    return kept, einsum(sub + "->" + kept, t)


def _expand_to(t: Tensor, sub: str, sizes: dict[str, int]) -> Tensor:
    target = tuple(sizes[c] for c in sub)
    return t if tuple(t.shape) == target else F.expand(t, target)


def _einsum_diagonal_embed(gk: Tensor, uniq: list[str], sub: str, sizes: dict[str, int]
                           ) -> Tensor:
    """``gk`` (labels ``uniq``) placed on ``sub``'s repeated-label diagonals, zeros elsewhere,
    selected (torch's ``diagonal_backward`` copies into zeros: an inf or nan gradient stays on
    the diagonal): ``gk`` broadcast along each repeat, then a ``where`` on the diagonal mask.
    """
    first: dict[str, int] = {}
    t = gk
    mask = None
    for p, c in enumerate(sub):
        if c not in first:
            first[c] = p
            continue
        t = F.unsqueeze(t, p)  # (first occurrences keep uniq's order: the dims line up)
        n = sizes[c]
        shape_q = [1] * len(sub)
        shape_q[first[c]] = n
        shape_p = [1] * len(sub)
        shape_p[p] = n
        on = xp.arange(n).reshape(shape_q) == xp.arange(n).reshape(shape_p)
        mask = on if mask is None else mask & on
    target = tuple(sizes[c] for c in sub)
    full = xp.broadcast_to(mask, target) if mask is not None else xp.ones(target, bool)
    return F.where(_make(xp.ascontiguousarray(full)), F.expand(t, target),
                   F.zeros((), dtype=gk.dtype))


@register("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    """Sum of products over the labels of ``equation`` (NumPy/torch notation: ``"ij,jk->ik"``,
    implicit output, repeated labels for diagonals, ``...`` for broadcast dims; a size-1 dim
    broadcasts against its label's size). Operands may also be given as one list.

    Example:
        >>> import gradsum
        >>> a, b = gradsum.ones(2, 3), gradsum.ones(3, 4)
        >>> gradsum.einsum("ij,jk->ik", a, b).shape
        (2, 4)
        >>> gradsum.einsum("ii", gradsum.eye(3)).item()
        3.0
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                        f"{type(equation).__name__}")
    for k, t in enumerate(operands):
        _require_tensor("einsum", f"operands[{k}]", 2, t)
    if len(operands) > 1:  # (torch contracts pairs with bmm, which autocast casts)
        operands = cast_for("bmm", *operands)
    arrays = [t._array for t in operands]
    for arr in arrays[1:]:
        if arr.dtype != arrays[0].dtype:
            raise RuntimeError(f"expected scalar type {_tname(arrays[0].dtype)} but found "
                               f"{_tname(arr.dtype)}: einsum operands must share one dtype. "
                               "Convert them (t.to(dtype)).")
    ops, out, sizes = _parse_einsum(equation, [a.shape for a in arrays])
    if len(ops) > 2:
        # torch contracts left to right, one pair at a time (without opt_einsum): the same
        # graph gives the same rounding and the same inf/nan in the gradients
        sub, acc = ops[0], operands[0]
        for i in range(1, len(ops)):
            needed = set(out).union(*ops[i + 1:])
            pair = out if i == len(ops) - 1 else "".join(
                c for c in dict.fromkeys(sub + ops[i]) if c in needed)
            acc = einsum(f"{sub},{ops[i]}->{pair}", acc, operands[i])
            sub = pair
        return acc
    res = _einsum_arrays(ops, out, sizes, arrays)
    if res.dtype != arrays[0].dtype:
        res = res.astype(arrays[0].dtype)
    if not needs_grad(*operands):
        return _make(res)
    node = EinsumBackward0()
    node.ops, node.out, node.sizes = ops, out, sizes
    node.shapes = [a.shape for a in arrays]
    t = record(node, operands, res)
    if len(operands) > 1:
        node.save(*operands)
    return t


# -- tensordot / kron / cross / cdist ----------------------------------------------------------
@register("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b``, or the dims
    listed in ``dims = (dims_a, dims_b)``: a permute, a reshape and one matrix product.

    Example:
        >>> import gradsum
        >>> gradsum.tensordot(gradsum.ones(2, 3, 4), gradsum.ones(3, 4, 5)).shape
        (2, 5)
    """
    if out is not None:
        raise NotImplementedError("tensordot(out=...) is not supported by gradsum; assign the "
                                  "result instead.")
    na, nb = a._array.ndim, b._array.ndim
    if isinstance(dims, (int, xp.integer)) or (isinstance(dims, Tensor) and dims.ndim == 0):
        n = int(dims.item() if isinstance(dims, Tensor) else dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        if n > na or n > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}")
        da, db = list(range(na - n, na)), list(range(n))
    else:
        pa, pb = dims
        da = [wrap_dim(d, na) for d in _dims_arg(pa)]
        db = [wrap_dim(d, nb) for d in _dims_arg(pb)]
        if len(da) != len(db):
            raise RuntimeError(f"both dimension lists should have same length (got {len(da)} "
                               f"and {len(db)})")
    for x, y in zip(da, db):
        sa, sb = a._array.shape[x], b._array.shape[y]
        if sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} "
                               f"in dim {x} and second has size {sb} in dim {y}")
    fa = [i for i in range(na) if i not in da]
    fb = [i for i in range(nb) if i not in db]
    sa_free = [a._array.shape[i] for i in fa]
    sb_free = [b._array.shape[i] for i in fb]
    k = 1
    for x in da:
        k *= a._array.shape[x]
    m = 1
    for s in sa_free:
        m *= s
    n_ = 1
    for s in sb_free:
        n_ *= s
    am = F.reshape(F.permute(a, tuple(fa + da)), (m, k))
    bm = F.reshape(F.permute(b, tuple(db + fb)), (k, n_))
    return F.reshape(F.mm(am, bm), tuple(sa_free + sb_free))


class KronBackward0(Node):
    """``kron(a, b)`` viewed as ``a[i, None, j, None] * b[None, k, None, l]``; torch records
    the final reshape of that product (``UnsafeViewBackward0``)."""

    __slots__ = ("nd",)

    def name(self) -> str:
        return "UnsafeViewBackward0"

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        nd = self.nd
        sa = (1,) * (nd - a.ndim) + tuple(a.shape)
        sb = (1,) * (nd - b.ndim) + tuple(b.shape)
        inter: list[int] = []
        for p, q in zip(sa, sb):
            inter += [p, q]
        g4 = F.reshape(g, tuple(inter))
        ga = gb = None
        if self.needs(0):
            br = F.reshape(b, tuple(v for q in sb for v in (1, q)))
            ga = F.reshape(F.sum(F.mul(g4, br), tuple(range(1, 2 * nd, 2))), tuple(a.shape))
        if self.needs(1):
            ar = F.reshape(a, tuple(v for p in sa for v in (p, 1)))
            gb = F.reshape(F.sum(F.mul(g4, ar), tuple(range(0, 2 * nd, 2))), tuple(b.shape))
        return ga, gb


@register("kron")
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (the operand with fewer dims gets leading ones).

    Example:
        >>> import gradsum
        >>> gradsum.kron(gradsum.tensor([1, 2]), gradsum.tensor([1, 10])).tolist()
        [1, 10, 2, 20]
    """
    _require_tensor("kron", "input", 1, input)
    _require_tensor("kron", "other", 2, other)
    rt = D.result_type(input, other).np
    x, y = input._array.astype(rt, copy=False), other._array.astype(rt, copy=False)
    nd = max(x.ndim, y.ndim)
    out = quietly(xp.kron, x.reshape((1,) * (nd - x.ndim) + x.shape),
                  y.reshape((1,) * (nd - y.ndim) + y.shape))  # (silent on inf, as torch)
    out = _contig(out, rt)
    if not needs_grad(input, other):
        return _make(out)
    node = KronBackward0()
    node.nd = nd
    t = record(node, (input, other), out)
    node.save(input, other)
    return t


class LinalgCrossBackward0(Node):
    __slots__ = ("dim", "shapes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        d = self.dim
        ga = F.sum_to(cross(b, g, dim=d), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(cross(g, a, dim=d), self.shapes[1]) if self.needs(1) else None
        return ga, gb


def _cross(input: Tensor, other: Tensor, dim: int) -> Tensor:
    _require_tensor("cross", "input", 1, input)
    _require_tensor("cross", "other", 2, other)
    x, y = input._array, other._array
    if x.ndim != y.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions "
                           f"(got {x.ndim} and {y.ndim}; shapes {tuple(x.shape)} and "
                           f"{tuple(y.shape)})")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.cross: expected input and other to have the same dtype, "
                           f"but got {_tname(x.dtype)} and {_tname(y.dtype)}. Convert one.")
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] != 3 or y.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{x.shape[d]} and {y.shape[d]}")
    try:
        shape = xp.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x, y) from None
    out = _contig(xp.cross(xp.broadcast_to(x, shape), xp.broadcast_to(y, shape),
                                        axis=d)).astype(x.dtype, copy=False)
    if not needs_grad(input, other):
        return _make(out)
    node = LinalgCrossBackward0()
    node.dim, node.shapes = d, (x.shape, y.shape)
    t = record(node, (input, other), out)
    node.save(input if node.needs(1) else None, other if node.needs(0) else None)
    return t


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcasting the other dims); without
    ``dim``, the first dim of size 3 (torch's deprecated default: prefer ``linalg.cross``).

    Example:
        >>> import gradsum
        >>> gradsum.cross(gradsum.tensor([1, 0, 0]), gradsum.tensor([0, 1, 0]), dim=0).tolist()
        [0, 0, 1]
    """
    if dim is None:
        shape = xp.broadcast_shapes(tuple(input.shape), tuple(other.shape)) \
            if isinstance(input, Tensor) and isinstance(other, Tensor) else ()
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _cross(input, other, dim)


register("cross")(cross)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product along ``dim`` (default the last)."""
    return _cross(input, other, dim)


#: ``gradsum.linalg``: torch.linalg's names that gradsum provides
linalg = types.ModuleType("gradsum.linalg", "torch.linalg's names that gradsum provides.")
linalg.cross = linalg_cross  # type: ignore[attr-defined]
sys.modules.setdefault("gradsum.linalg", linalg)


class CdistBackward0(Node):
    """torch's ``_cdist_backward`` (its gradient is 0 at zero distance), written in gradsum
    ops so it can itself be differentiated (torch's cannot)."""

    __slots__ = ("p", "shapes")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x1, x2, dist = self.saved()
        p = self.p
        diff = F.sub(F.unsqueeze(x1, -2), F.unsqueeze(x2, -3))  # (..., P, R, M)
        zero = F.zeros((), dtype=g.dtype)
        if p == 0:
            return (F.mul(x1, 0) if self.needs(0) else None,
                    F.mul(x2, 0) if self.needs(1) else None)
        at0 = _make(dist._array == 0)
        with xp.errstate(divide="ignore", invalid="ignore"):
            if p == 1:
                term = F.mul(F.sign(diff), F.unsqueeze(g, -1))
            elif p == 2:
                ratio = F.where(at0, zero, F.div(g, dist))
                term = F.mul(diff, F.unsqueeze(ratio, -1))
            elif p == float("inf"):
                hit = F.eq(F.abs(diff), F.unsqueeze(dist, -1))
                term = F.mul(F.mul(F.sign(diff), F.unsqueeze(g, -1)),
                             F.where(hit, F.ones((), dtype=g.dtype), zero))
            else:
                scale = F.where(at0, zero, F.div(g, F.pow(dist, p - 1)))
                mag = F.pow(F.abs(diff), p - 1)
                if p < 1:
                    mag = F.where(F.eq(diff, 0), zero, mag)
                term = F.mul(F.mul(F.sign(diff), mag), F.unsqueeze(scale, -1))
        ga = F.sum_to(F.sum(term, -2), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(F.neg(F.sum(term, -3)), self.shapes[1]) if self.needs(1) else None
        return ga, gb


@register("cdist")
@autocast_policy("cdist")
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The ``p``-norm distances between the rows of ``x1`` (``..., P, M``) and of ``x2``
    (``..., R, M``), batch dims broadcast: shape ``(..., P, R)``. The gradient at zero
    distance is 0, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.cdist(gradsum.tensor([[0.0, 0.0]]), gradsum.tensor([[3.0, 4.0]])).tolist()
        [[5.0]]
    """
    a, b = x1._array, x2._array
    for name, arr in (("X1", a), ("X2", b)):
        if arr.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{arr.ndim}D (shape {tuple(arr.shape)})")
    for name, arr in (("X1", a), ("X2", b)):
        if arr.dtype.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_tname(arr.dtype)}. Convert with .float().")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} "
                           f"X2: {b.shape[-1]} (shapes {tuple(a.shape)} and {tuple(b.shape)})")
    p = float(p)
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values (got p={p})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_tname(a.dtype)} but found "
                           f"{_tname(b.dtype)}: convert X2 with .to(X1.dtype)")
    try:
        batch = xp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise broadcast_error(a[..., 0, 0], b[..., 0, 0]) from None
    diff = xp.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        out = (diff != 0).sum(-1).astype(a.dtype)
    elif p == 1:
        out = diff.sum(-1)
    elif p == 2:
        out = xp.sqrt((diff * diff).sum(-1))
    elif p == float("inf"):
        out = diff.max(-1) if diff.shape[-1] else diff.sum(-1)
    else:
        out = ((diff ** p).sum(-1)) ** (1.0 / p)
    out = _contig(xp.broadcast_to(out, batch + out.shape[-2:]), dtype=a.dtype)
    if not needs_grad(x1, x2):
        return _make(out)
    node = CdistBackward0()
    node.p, node.shapes = p, (a.shape, b.shape)
    t = record(node, (x1, x2), out)
    node.save(x1, x2, outputs=(t,))
    return t


# -- addmm / addmv / addbmm / baddbmm ----------------------------------------------------------
class AddmmBackward0(Node):
    """``beta * input + alpha * (m1 @ m2)`` (and addmv, addbmm, baddbmm below)."""

    __slots__ = ("alpha", "beta", "in_shape", "kind")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        m1, m2 = self.saved() if (self.needs(1) or self.needs(2)) else (None, None)
        alpha, beta, kind = self.alpha, self.beta, self.kind
        gi = g1 = g2 = None
        if self.needs(0):
            gi = F.sum_to(g if beta == 1 else F.mul(g, beta), self.in_shape)
        if kind == "addbmm" and (self.needs(1) or self.needs(2)):
            nb = (m1 if m1 is not None else m2).shape[0]
            g = F.expand(F.unsqueeze(g, 0), (nb, *g.shape))
        if self.needs(1):
            if kind == "addmv":
                g1 = F.outer(g, m2)
            else:
                g1 = F.matmul(g, F.transpose(m2, -1, -2))
            g1 = g1 if alpha == 1 else F.mul(g1, alpha)
        if self.needs(2):
            g2 = F.matmul(F.transpose(m1, -1, -2), g)
            g2 = g2 if alpha == 1 else F.mul(g2, alpha)
        return gi, g1, g2


class AddmvBackward0(AddmmBackward0):
    __slots__ = ()


class AddbmmBackward0(AddmmBackward0):
    __slots__ = ()


class BaddbmmBackward0(AddmmBackward0):
    __slots__ = ()


_ADD_NODES: dict[str, type[AddmmBackward0]] = {
    "addmm": AddmmBackward0, "addmv": AddmvBackward0, "addbmm": AddbmmBackward0,
    "baddbmm": BaddbmmBackward0,
}


def _add_product(kind: str, input: Tensor, m1: Tensor, m2: Tensor, beta: Any, alpha: Any
                 ) -> Tensor:
    args = {"addmm": ("input", "mat1", "mat2"), "addmv": ("input", "mat", "vec"),
            "addbmm": ("input", "batch1", "batch2"),
            "baddbmm": ("input", "batch1", "batch2")}[kind]
    for pos, (arg, v) in enumerate(zip(args, (input, m1, m2)), 1):
        _require_tensor(kind, arg, pos, v)
    x, a, b = input._array, m1._array, m2._array
    want = {"addmm": (2, 2), "addmv": (2, 1), "addbmm": (3, 3), "baddbmm": (3, 3)}[kind]
    for arg, arr, nd in ((args[1], a, want[0]), (args[2], b, want[1])):
        if arr.ndim != nd:
            raise RuntimeError(f"{kind}: {arg} must be a {nd}D tensor, but got a {arr.ndim}D "
                               f"tensor of shape {tuple(arr.shape)}")
    if kind == "addmv":
        if a.shape[1] != b.shape[0] or x.shape not in ((), (1,), (a.shape[0],)):
            raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, x.shape))}), "
                               f"mat ({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})")
        shape: tuple[int, ...] = (a.shape[0],)
    elif kind == "addmm":
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                               f"{a.shape[1]} and {b.shape[0]}x{b.shape[1]})")
        shape = (a.shape[0], b.shape[1])
    else:
        if kind == "addbmm" and (a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]):
            raise RuntimeError(f"Incompatible matrix sizes for bmm ({a.shape[1]}x{a.shape[2]} "
                               f"and {b.shape[1]}x{b.shape[2]}); batch1 {tuple(a.shape)}, "
                               f"batch2 {tuple(b.shape)}")
        if kind == "baddbmm" and b.shape[:2] != (a.shape[0], a.shape[2]):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, "
                               f"{b.shape[1]}].")
        shape = (a.shape[1], b.shape[2]) if kind == "addbmm" else (a.shape[0], a.shape[1],
                                                                    b.shape[2])
    for arr in (a, b):
        if arr.dtype != x.dtype:
            raise RuntimeError(f"expected scalar type {_tname(x.dtype)} but found "
                               f"{_tname(arr.dtype)}: all operands of {kind} need one dtype")
    try:
        xb = xp.broadcast_to(x, shape)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[-1]}) must match the existing size "
            f"({x.shape[-1] if x.ndim else 1}) at non-singleton dimension {len(shape) - 1}.  "
            f"Target sizes: {list(shape)}.  Tensor sizes: {list(x.shape)}"
        ) from None
    beta, alpha = scalar_value(beta), scalar_value(alpha)
    if x.itemsize < 4 and D.is_float_np(x.dtype):  # half, bfloat16: float32, rounded once
        a, b, xb = a.astype(xp.float32), b.astype(xp.float32), xb.astype(xp.float32)
    prod = xp.matmul(a, b)
    if kind == "addbmm":
        prod = prod.sum(0)
    if alpha != 1:
        prod = prod * alpha
    out = prod if beta == 0 else (prod + (xb if beta == 1 else xb * beta))
    out = _contig(out, x.dtype)
    if not needs_grad(input, m1, m2):
        return _make(out)
    node = _ADD_NODES[kind]()
    node.kind, node.alpha, node.beta, node.in_shape = kind, alpha, beta, x.shape
    t = record(node, (input, m1, m2), out)
    if node.needs(1) or node.needs(2):  # (torch saves each factor for the other's gradient)
        node.save(m1 if node.needs(2) else None, m2 if node.needs(1) else None)
    return t


@register("addmm")
@autocast_policy("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
          ) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape
    (with ``beta=0`` it is ignored, nan included).

    Example:
        >>> import gradsum
        >>> gradsum.addmm(gradsum.ones(2, 2), gradsum.eye(2), gradsum.eye(2), beta=2).tolist()
        [[3.0, 2.0], [2.0, 3.0]]
    """
    return _add_product("addmm", input, mat1, mat2, beta, alpha)


@register("addmv")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _add_product("addmv", input, mat, vec, beta, alpha)


@register("addbmm")
@autocast_policy("addbmm")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
           ) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    return _add_product("addbmm", input, batch1, batch2, beta, alpha)


@register("baddbmm")
@autocast_policy("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
            ) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch."""
    return _add_product("baddbmm", input, batch1, batch2, beta, alpha)
