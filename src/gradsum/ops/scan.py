"""Scans: ``cumsum``, ``cumprod``, ``cummax``, ``cummin`` and ``logcumsumexp``, with the shared
blocked scan kernels.

Example:
    >>> import gradsum
    >>> gradsum.tensor([1.0, 2.0, 3.0]).cumsum(0).tolist()
    [1.0, 3.0, 6.0]
"""

from __future__ import annotations

import builtins
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    const,
    index_range,
    needs_grad,
    record,
    register,
    wrap_dim,
)
from gradsum.ops.reduction import _check_differentiable, _contig, values_indices


@register("cumsum", method=True, inplace="cumsum_")
def cumsum(a: Tensor, dim: int, *, dtype: D.dtype | None = None) -> Tensor:
    """Cumulative sum along ``dim`` (its gradient is a reversed cumulative sum); ``dtype``
    converts the input first, as torch does."""
    if dtype is None:
        return _cumsum(a, dim)
    x = a._array
    d = wrap_dim(dim, x.ndim)
    # an explicit dtype is kept (_cumsum widens integers to int64, torch's default only)
    out = xp.cumsum(x, axis=d, dtype=dtype.np) if x.ndim else x.astype(dtype.np)
    if not needs_grad(a):
        return _make(out)
    _check_differentiable(out, "cumsum")
    # a floating dtype: torch converts first, so the gradient flows back through the cast
    return _cumsum(a.to(dtype), dim)


class CumsumBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> Tensor:
        if g._array.ndim == 0:
            return g
        if (not _state.enabled or not g.requires_grad) and g._array.dtype.char in "fd":
            # (no graph: one reversed scan, no flipped copies)
            return _make(_cumsum_array(g._array, self.dim, reverse=True))
        return F.flip(_cumsum(F.flip(g, (self.dim,)), self.dim), (self.dim,))


#: along a dim other than the last, a scan runs as one vectorised add per step when each step
#: adds at least this many elements (NumPy's own accumulate there is several times slower)
_SCAN_ROW = 128


def _cumsum_array(x: Any, d: int, reverse: bool = False) -> Any:
    """``cumsum(x, axis=d)`` as a fresh C-contiguous array, summed in order along ``d``
    (the same bits as NumPy's accumulate); ``reverse`` sums from the end (cumsum's
    backward) without flipped copies."""
    return _scan_array(xp.add, x, d, reverse)


def _scan_array(op: Any, x: Any, d: int, reverse: bool = False) -> Any:
    """``op.accumulate(x, axis=d)`` (a binary ufunc: add, multiply, maximum, ...) as a
    fresh C-contiguous array of ``x``'s dtype, in order along ``d`` (the same bits);
    ``reverse`` scans from the end without flipped copies."""
    n = x.shape[d]
    out = xp.empty(x.shape, dtype=x.dtype)
    if d != x.ndim - 1 and n > 1 and x.size // n >= _SCAN_ROW:
        xm, om = xp.moveaxis(x, d, 0), xp.moveaxis(out, d, 0)
        steps = range(n - 1, -1, -1) if reverse else range(n)
        prev = None
        for i in steps:
            if prev is None:
                om[i] = xm[i]
            else:
                op(om[prev], xm[i], out=om[i])
            prev = i
        return out
    if reverse:
        key = (slice(None),) * d + (slice(None, None, -1),)
        op.accumulate(x[key], axis=d, out=out[key])
    else:
        op.accumulate(x, axis=d, out=out)
    return out


def _cumsum(a: Tensor, dim: int) -> Tensor:
    x = a._array
    d = wrap_dim(dim, x.ndim)
    if x.ndim and x.dtype.char in "fd" and x.size:
        out = _cumsum_array(x, d)
    else:
        out = xp.cumsum(x, axis=d) if x.ndim else x.copy()
    if x.dtype.kind in "biu":
        out = out.astype(xp.int64)
    if not needs_grad(a):
        return _make(out)
    node = CumsumBackward0()
    node.dim = d
    return record(node, (a,), out)


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


@register("cumprod", method=True, inplace="cumprod_")
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
    return _result_saving_both(CumprodBackward0, input, out, d)


def _result_saving_both(cls: type[Node], input: Tensor, out: Any, d: int) -> Tensor:
    """The result of a scan along ``d`` whose backward needs its input and output (cumprod,
    logcumsumexp): recorded under a ``cls`` node when ``input`` needs a gradient."""
    if not needs_grad(input):
        return _make(out)
    node = cls()
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


@register("logcumsumexp", method=True)
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
    return _result_saving_both(LogcumsumexpBackward0, input, out, d)


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


@register("cummax", method=True)
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


@register("cummin", method=True)
def cummin(input: Tensor, dim: int) -> Any:
    """``(values, indices)`` of the running minimum along ``dim`` (see :func:`cummax`)."""
    return _cum_extreme(input, dim, False)


# -- diff (bound as Tensor methods in gradsum.ops) -------------------------------------------------
def _slab(nd: int, d: int, s: slice) -> tuple[Any, ...]:
    return (slice(None),) * d + (s,) + (slice(None),) * (nd - d - 1)

@register("diff", method=True)
def diff(a: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bool), after
    concatenating ``prepend`` and ``append`` along ``dim``.

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 4, 9, 16]).diff().tolist()
        [3, 5, 7]
        >>> gradsum.tensor([1, 4, 9, 16]).diff(n=2, prepend=gradsum.tensor([0])).tolist()
        [2, 2, 2]
    """
    nd = a._array.ndim
    if nd == 0:
        raise RuntimeError(_messages.diff_zero_d())
    if n < 0:
        raise RuntimeError(_messages.diff_negative_order(n))
    d = wrap_dim(dim, nd)
    for other in (prepend, append):
        if other is None:
            continue
        if other.ndim != nd:
            raise RuntimeError(_messages.diff_prepend_append_wrong_dim(nd, other.ndim))
        if builtins.any(other.shape[i] != a.shape[i] for i in range(nd) if i != d):
            raise RuntimeError(
                _messages.diff_prepend_append_shape_mismatch(a.shape, other.shape, d))
    parts = [t for t in (prepend, a, append) if t is not None]
    out = F.cat(parts, d) if len(parts) > 1 else a
    if n == 0:
        return out.clone() if out is a else out
    hi, lo = _slab(nd, d, slice(1, None)), _slab(nd, d, slice(None, -1))
    for _ in range(n):
        x, y = F.getitem(out, hi), F.getitem(out, lo)
        out = F.logical_xor(x, y) if out._array.dtype.kind == "b" else F.sub(x, y)
    return out
