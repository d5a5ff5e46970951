"""Pooling primitives. Every pooling op is linear once its windows (and, for max pooling, the
argmax positions) are fixed, so each is a pair of array maps, the op and its adjoint, applied
by :func:`_apply`: the op's node (named like torch's grad_fn) backpropagates with the adjoint,
whose node backpropagates with the op again, so any order of derivative works.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> x = gradsum.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
    >>> y, idx = F.max_pool2d(x, 2, return_indices=True)
    >>> y.tolist(), idx.tolist()
    ([[[[5.0, 7.0], [13.0, 15.0]]]], [[[[5, 7], [13, 15]]]])
    >>> y.grad_fn.name()
    'MaxPool2DWithIndicesBackward0'
    >>> F.avg_pool2d(x, 2, stride=1, padding=1, count_include_pad=False)[0, 0, 0].tolist()
    [0.0, 0.5, 1.5, 2.5, 3.0]
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _messages
from gradsum.ops import views as _shape_ops
from gradsum.ops._core import _make, needs_grad, record

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]


# -- the linear pair mechanism -----------------------------------------------------------------
class _Plan:
    """A linear map (``fwd``) and its adjoint (``adj``) on arrays, with the node classes that
    record each."""

    __slots__ = ("adj", "adj_node", "fwd", "fwd_node")

    def __init__(self, fwd: Any, adj: Any, fwd_node: type, adj_node: type) -> None:
        self.fwd, self.adj, self.fwd_node, self.adj_node = fwd, adj, fwd_node, adj_node


class _PlanNode(Node):
    __slots__ = ("plan", "transposed")

    def backward(self, g: Tensor) -> Tensor:
        return _apply(g, self.plan, not self.transposed)


class MaxPool2DWithIndicesBackward0(_PlanNode):
    __slots__ = ()


class MaxPool2DWithIndicesBackwardBackward0(_PlanNode):
    __slots__ = ()


class AvgPool2DBackward0(_PlanNode):
    __slots__ = ()


class AvgPool2DBackwardBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveAvgPool2DBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveAvgPool2DBackwardBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveMaxPool2DBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveMaxPool2DBackwardBackward0(_PlanNode):
    __slots__ = ()


class MaxPool3DWithIndicesBackward0(_PlanNode):
    __slots__ = ()


class MaxPool3DWithIndicesBackwardBackward0(_PlanNode):
    __slots__ = ()


class AvgPool3DBackward0(_PlanNode):
    __slots__ = ()


class AvgPool3DBackwardBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveAvgPool3DBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveAvgPool3DBackwardBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveMaxPool3DBackward0(_PlanNode):
    __slots__ = ()


class AdaptiveMaxPool3DBackwardBackward0(_PlanNode):
    __slots__ = ()


class MaxUnpool2DBackward0(_PlanNode):
    __slots__ = ()


class MaxUnpool2DBackwardBackward0(_PlanNode):
    __slots__ = ()


class MaxUnpool3DBackward0(_PlanNode):
    __slots__ = ()


class MaxUnpool3DBackwardBackward0(_PlanNode):
    __slots__ = ()


def _apply(x: Tensor, plan: _Plan, transposed: bool = False) -> Tensor:
    out = (plan.adj if transposed else plan.fwd)(x._array)
    if not needs_grad(x):
        return _make(out)
    node = (plan.adj_node if transposed else plan.fwd_node)()
    node._saved = HOLDS_STATE  # (torch saves the input / the indices)
    node.plan, node.transposed = plan, transposed
    return record(node, (x,), out)


# -- argument parsing --------------------------------------------------------------------------


def _tuple_n(v: Any, name: str, fn: str, nd: int = 2,
             allow_empty: bool = False) -> tuple[int, ...] | None:
    if isinstance(v, (tuple, list)):
        if len(v) == 0 and allow_empty:
            return None
        if len(v) == 1:
            return (int(v[0]),) * nd
        if len(v) == nd:
            return tuple(int(i) for i in v)
        raise RuntimeError(_messages.pool_argument_wrong_length(fn, name, nd, allow_empty, v))
    return (int(v),) * nd


def _tuple2(v: Any, name: str, fn: str, allow_empty: bool = False) -> tuple[int, ...] | None:
    return _tuple_n(v, name, fn, 2, allow_empty)


def _out_size(size: int, k: int, pad: int, stride: int, dil: int, ceil: bool) -> int:
    """torch's pooling_output_shape."""
    num = size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil else 0)
    out = num // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _geometry(x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, fn: str, nd: int = 2) -> tuple[Any, ...]:
    k = _tuple_n(kernel_size, "kernel_size", fn, nd)
    s = _tuple_n(stride if stride is not None else (), "stride", fn, nd, allow_empty=True) or k
    p = _tuple_n(padding, "padding", fn, nd)
    d = _tuple_n(dilation, "dilation", fn, nd)
    assert k is not None and p is not None and d is not None
    if x.ndim not in (nd + 1, nd + 2) or (x.numel() == 0 and x.ndim == nd + 1):
        raise RuntimeError(_messages.pool_input_wrong_rank(nd, x))
    if min(s) == 0:
        raise RuntimeError(_messages.pool_stride_zero(s))
    if min(k) <= 0:
        raise RuntimeError(_messages.pool_kernel_size_not_positive(k))
    if min(s) < 0:
        raise RuntimeError(_messages.pool_stride_negative(s))
    if min(d) <= 0:
        raise RuntimeError(_messages.pool_dilation_not_positive(d))
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(_messages.pool_pad_too_large(pp, kk, dd))
    size = tuple(x.shape[-nd:])
    out = tuple(_out_size(*a, ceil_mode) for a in zip(size, k, p, s, d))
    if min(out) < 1:
        c = x.shape[-nd - 1]
        raise RuntimeError(_messages.pool_output_size_too_small(c, size, out))
    return k, s, p, d, out


def _windows(a: Any, k: tuple[int, ...], s: tuple[int, ...], p: tuple[int, ...],
             d: tuple[int, ...], out: tuple[int, ...], fill: Any) -> Any:
    """The (..., *out, *k) windows of ``a`` padded with ``fill`` (a read-only view)."""
    nd = len(k)
    size = a.shape[-nd:]
    extra = [max((o - 1) * ss + dd * (kk - 1) + 1 - n - pp, pp)
             for o, ss, dd, kk, n, pp in zip(out, s, d, k, size, p)]
    if any(p) or any(extra):  # (xp.pad's checks cost more than the copy for small inputs)
        padded = xp.full(a.shape[:-nd] + tuple(n + pp + ee for n, pp, ee in
                                               zip(size, p, extra)), fill, dtype=a.dtype)
        padded[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, size))] = a
        a = padded
    st = a.strides
    sp = st[-nd:]
    return xp.lib.stride_tricks.as_strided(
        a, shape=a.shape[:-nd] + tuple(out) + tuple(k),
        strides=st[:-nd] + tuple(x * y for x, y in zip(sp, s))
        + tuple(x * y for x, y in zip(sp, d)),
        writeable=False,
    )


def _gather_plan(idx: Any, in_size: tuple[int, ...], fwd_node: type, adj_node: type,
                 flat: Any = None, distinct: bool = False) -> _Plan:
    """``out[..., *o] = x[..., idx[..., *o]]`` (flat positions in ``in_size``) and its
    adjoint, the gradient summed back at those positions. ``flat``: the positions in the
    whole input, if known; ``distinct``: no two outputs share a position (windows that do
    not overlap), so the adjoint is a plain assignment."""
    nd = len(in_size)
    hw = math.prod(in_size)
    lead = idx.shape[:-nd]
    m = int(math.prod(lead))
    if flat is None:
        flat = (idx.reshape(m, -1) + (xp.arange(m, dtype=xp.int64) * hw)[:, None]).reshape(-1)

    def fwd(a: Any) -> Any:
        return a.reshape(-1)[flat].reshape(idx.shape)

    def adj(g: Any) -> Any:
        if distinct:
            out = xp.zeros(m * hw, dtype=g.dtype)
            out[flat] = g.reshape(-1)
            return out.reshape(lead + tuple(in_size))
        if g.dtype.kind in "fV":
            out = xp.bincount(flat, weights=g.reshape(-1), minlength=m * hw)
            return out.astype(g.dtype, copy=False).reshape(lead + tuple(in_size))
        out = xp.zeros(m * hw, dtype=g.dtype)
        xp.add.at(out, flat, g.reshape(-1))
        return out.reshape(lead + tuple(in_size))

    return _Plan(fwd, adj, fwd_node, adj_node)


def _squeeze_batch(x: Tensor, fn: str, nd: int = 2) -> None:
    if x.ndim not in (nd + 1, nd + 2):
        dims = "(N, C, D, H, W) or (C, D, H, W)" if nd == 3 else "(N, C, H, W) or (C, H, W)"
        raise RuntimeError(_messages.pool_expected_input_rank(fn, nd, x, dims))


def _flat_index(coords: list[Any], size: tuple[int, ...]) -> Any:
    """Row-major flat positions of per-dim coordinates in ``size``."""
    idx = coords[0]
    for c, n in zip(coords[1:], size[1:]):
        idx = idx * n + c
    return idx.astype(xp.int64)


# -- max pooling -------------------------------------------------------------------------------
def _argmax_last(a: Any) -> Any:
    if a.dtype.kind in "fV":  # torch takes a nan as the maximum (the first one here)
        return xp.argmax(xp.where(xp.isnan(a), xp.inf, a), axis=-1)
    return xp.argmax(a, axis=-1)


_POOL_INDEX: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _pool_index(m: int, size: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...],
                p: tuple[int, ...], d: tuple[int, ...], out: tuple[int, ...]
                ) -> tuple[Any, Any]:
    """(cached) The flat position in ``size`` of every window's first tap, ``(prod(out),)``
    (padding makes it negative), and each tap's offset from it, ``(prod(k),)``."""
    key = (m, size, k, s, p, d, out)
    hit = _POOL_INDEX.get(key)
    if hit is None:
        nd = len(size)
        sz = [math.prod(size[i + 1:]) for i in range(nd)]
        base = xp.zeros(out, dtype=xp.int64)
        offs = xp.zeros(k, dtype=xp.int64)
        for i in range(nd):
            sh = (-1,) + (1,) * (nd - 1 - i)
            base = base + ((xp.arange(out[i], dtype=xp.int64) * s[i] - p[i]) * sz[i]).reshape(sh)
            offs = offs + (xp.arange(k[i], dtype=xp.int64) * (d[i] * sz[i])).reshape(sh)
        if len(_POOL_INDEX) >= 64:
            _POOL_INDEX.clear()
        hit = _POOL_INDEX[key] = (base.reshape(-1), offs.reshape(-1))
    return hit


def _max_pool_fast(input: Tensor, win: Any, k: tuple[int, ...], s: tuple[int, ...],
                   p: tuple[int, ...], d: tuple[int, ...], out: tuple[int, ...],
                   return_indices: bool, nodes: tuple[type, type]) -> Any:
    """Max pooling of a float input without NaN, tap by tap on contiguous copies of the
    taps (the first maximum wins, as the argmax of the general path); None when the windows
    hold a NaN (the general path takes it as the maximum)."""
    nd = len(k)
    a = input._array
    size = a.shape[-nd:]
    lead = a.shape[:-nd]
    kk = math.prod(k)
    mo = math.prod(out)
    nl = win.ndim - 2 * nd
    # the taps first: (prod(k), lead..., *out), one copy with the windows' rows
    taps = xp.ascontiguousarray(win.transpose(
        tuple(range(nl + nd, nl + 2 * nd)) + tuple(range(nl + nd)))).reshape(kk, -1)
    if xp.isnan(taps).any():
        return None
    best = taps[0].copy()
    arg = xp.zeros(best.shape, dtype=xp.int64)
    for t in range(1, kk):  # (taps in order: the last strict improvement is the largest t)
        v = taps[t]
        xp.maximum(arg, (v > best) * t, out=arg)
        xp.maximum(best, v, out=best)
    if kk > 1 and not best.all():  # (of -0.0 and 0.0 the first one, as the argmax)
        best = xp.take_along_axis(taps, arg[None], 0)[0]
    lm = int(math.prod(lead))
    base, offs = _pool_index(lm, tuple(size), k, s, p, d, out)
    idx = (offs[arg].reshape(lm, mo) + base).reshape(lead + out)
    hw = math.prod(size)
    flat = (idx.reshape(lm, mo) + (xp.arange(lm, dtype=xp.int64) * hw)[:, None]).reshape(-1)
    distinct = all(ss >= dd * (kv - 1) + 1 for ss, dd, kv in zip(s, d, k))
    res_arr = best.reshape(lead + out)
    if needs_grad(input):
        plan = _gather_plan(idx, tuple(size), *nodes, flat=flat, distinct=distinct)
        node = plan.fwd_node()
        node._saved = HOLDS_STATE  # (torch saves the input / the indices)
        node.plan, node.transposed = plan, False
        res = record(node, (input,), res_arr)
    else:
        res = _make(res_arr)
    if return_indices:
        return res, _make(idx)
    return res


def _max_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, return_indices: bool, nd: int, fn: str,
              nodes: tuple[type, type]) -> Any:
    k, s, p, d, out = _geometry(input, kernel_size, stride, padding, dilation, ceil_mode, fn,
                                nd)
    a = input._array
    size = a.shape[-nd:]
    fill = -xp.inf if a.dtype.kind in "fV" else xp.iinfo(a.dtype).min
    win = _windows(a, k, s, p, d, out, fill)
    if a.dtype.kind == "f" and a.size:
        res = _max_pool_fast(input, win, k, s, p, d, out, return_indices, nodes)
        if res is not None:
            return res
    am = _argmax_last(win.reshape(win.shape[:-nd] + (math.prod(k),)))
    ks = xp.unravel_index(am, k)
    coords = []
    for i in range(nd):
        o = xp.arange(out[i], dtype=xp.int64).reshape((-1,) + (1,) * (nd - 1 - i))
        coords.append(o * s[i] - p[i] + ks[i] * d[i])
    idx = _flat_index(coords, size)
    res = _apply(input, _gather_plan(idx, size, *nodes))
    if return_indices:
        return res, _make(idx)
    return res


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; the gradient goes to each
    window's (first) maximum. ``return_indices`` also returns the flat ``H * W`` argmax
    positions (int64)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     2, "max_pool2d", (MaxPool2DWithIndicesBackward0,
                                       MaxPool2DWithIndicesBackwardBackward0))


@autocast_policy("max_pool3d")
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (indices: flat
    ``D * H * W`` positions)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     3, "max_pool3d", (MaxPool3DWithIndicesBackward0,
                                       MaxPool3DWithIndicesBackwardBackward0))


def _adaptive_bounds(n: int, o: int) -> list[tuple[int, int]]:
    return [((i * n) // o, -((-(i + 1) * n) // o)) for i in range(o)]


def _adaptive_max(input: Tensor, output_size: Any, return_indices: bool, nd: int, fn: str,
                  nodes: tuple[type, type]) -> Any:
    _squeeze_batch(input, fn, nd)
    osz = _adaptive_size(input, output_size, fn, nd)
    a = input._array
    size = a.shape[-nd:]
    lead = a.shape[:-nd]
    idx = xp.zeros(lead + osz, dtype=xp.int64)
    bounds = [_adaptive_bounds(n, o) for n, o in zip(size, osz)]
    for pos in itertools.product(*(range(o) for o in osz)):
        b = [bounds[i][j] for i, j in enumerate(pos)]
        sub = a[(...,) + tuple(slice(lo, hi) for lo, hi in b)]
        am = _argmax_last(sub.reshape(lead + (-1,)))
        ks = xp.unravel_index(am, tuple(hi - lo for lo, hi in b))
        idx[(...,) + pos] = _flat_index([lo + c for (lo, _), c in zip(b, ks)], size)
    res = _apply(input, _gather_plan(idx, size, *nodes))
    if return_indices:
        return res, _make(idx)
    return res


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the windows ``[floor(i * H / oh), ceil((i + 1) * H / oh))`` (per dim);
    ``None`` in ``output_size`` keeps that input size."""
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d",
                         (AdaptiveMaxPool2DBackward0, AdaptiveMaxPool2DBackwardBackward0))


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-D :func:`adaptive_max_pool2d` over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d",
                         (AdaptiveMaxPool3DBackward0, AdaptiveMaxPool3DBackwardBackward0))


def _adaptive_size(x: Tensor, output_size: Any, fn: str, nd: int = 2) -> tuple[int, ...]:
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise RuntimeError(
                _messages.adaptive_pool_output_size_wrong_length(fn, nd, output_size)
            )
        sizes = list(output_size)
    else:
        sizes = [output_size] * nd
    osz = tuple(x.shape[-nd + i] if v is None else int(v) for i, v in enumerate(sizes))
    if min(osz) < 0:
        raise RuntimeError(_messages.adaptive_pool_negative_output_size(fn, osz))
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(_messages.adaptive_pool_empty_input_dimension(fn, x, d))
    return osz


# -- average pooling ---------------------------------------------------------------------------
def _avg_divisor(size: int, k: int, s: int, p: int, out: int, include_pad: bool) -> Any:
    start = xp.arange(out, dtype=xp.int64) * s - p
    end = xp.minimum(start + k, size + p)
    full = end - start
    start, end = xp.maximum(start, 0), xp.minimum(end, size)
    return full if include_pad else end - start


def _avg_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: int | None, nd: int, fn: str,
              nodes: tuple[type, type]) -> Tensor:
    k, s, p, d, out = _geometry(input, kernel_size, stride, padding, 1, ceil_mode, fn, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(_messages.pool_divisor_zero())
    a = input._array
    size = a.shape[-nd:]
    if divisor_override is not None:
        div: Any = xp.asarray(float(divisor_override))
    else:
        div = xp.ones((), dtype=xp.int64)
        for i in range(nd):
            di = _avg_divisor(size[i], k[i], s[i], p[i], out[i], count_include_pad)
            div = div[..., None] * di
        div = div.astype(xp.float64)
    lead = a.shape[:-nd]
    padded = tuple(n + pp + max((o - 1) * ss + kk - n - pp, pp)
                   for n, pp, o, ss, kk in zip(size, p, out, s, k))
    axes = tuple(range(-nd, 0))

    def fwd(x: Any) -> Any:
        win = _windows(x, k, s, p, d, out, 0)
        total = win.sum(axis=axes)
        if x.dtype.kind in "biu":
            return xp.trunc(total / div).astype(x.dtype)
        return (total / div.astype(x.dtype)).astype(x.dtype, copy=False)

    def adj(g: Any) -> Any:
        gd = (g / div.astype(g.dtype)).astype(g.dtype, copy=False)
        acc = xp.zeros(lead + padded, dtype=g.dtype)
        for pos in itertools.product(*(range(kk) for kk in k)):
            acc[(...,) + tuple(slice(i, i + ss * (o - 1) + 1, ss)
                               for i, ss, o in zip(pos, s, out))] += gd
        return acc[(...,) + tuple(slice(pp, pp + n) for pp, n in zip(p, size))].copy()

    return _apply(input, _Plan(fwd, adj, *nodes))


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-D average pooling: each window's sum divided by its size (with ``count_include_pad``
    the padded zeros count, the part beyond the padding from ``ceil_mode`` never does), or by
    ``divisor_override``."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d",
                     (AvgPool2DBackward0, AvgPool2DBackwardBackward0))


@autocast_policy("avg_pool3d")
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-D :func:`avg_pool2d` over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d",
                     (AvgPool3DBackward0, AvgPool3DBackwardBackward0))


def _adaptive_avg(input: Tensor, output_size: Any, nd: int, fn: str,
                  nodes: tuple[type, type]) -> Tensor:
    _squeeze_batch(input, fn, nd)
    osz = _adaptive_size(input, output_size, fn, nd)
    axes = tuple(range(-nd, 0))
    if osz == (1,) * nd:  # (torch: a mean over the spatial dims)
        from gradsum import ops

        return ops.mean(input, axes, keepdim=True)
    a = input._array
    size = a.shape[-nd:]
    lead = a.shape[:-nd]
    bounds = [_adaptive_bounds(n, o) for n, o in zip(size, osz)]
    cells = []
    for pos in itertools.product(*(range(o) for o in osz)):
        b = [bounds[i][j] for i, j in enumerate(pos)]
        cells.append((pos, tuple(slice(lo, hi) for lo, hi in b),
                      [hi - lo for lo, hi in b]))

    def fwd(x: Any) -> Any:
        out = xp.empty(lead + osz, dtype=x.dtype)
        for pos, sl, counts in cells:
            v = x[(...,) + sl].sum(axis=axes)
            for c in counts:
                v = v / c
            out[(...,) + pos] = v
        return out

    def adj(g: Any) -> Any:
        acc = xp.zeros(lead + size, dtype=g.dtype)
        for pos, sl, counts in cells:
            v = g[(...,) + pos]
            for c in counts:
                v = v / c
            acc[(...,) + sl] += v[(...,) + (None,) * nd]
        return acc

    return _apply(input, _Plan(fwd, adj, *nodes))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over the windows ``[floor(i * H / oh), ceil((i + 1) * H / oh))`` (per dim);
    ``None`` in ``output_size`` keeps that input size."""
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d",
                         (AdaptiveAvgPool2DBackward0, AdaptiveAvgPool2DBackwardBackward0))


@autocast_policy("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """3-D :func:`adaptive_avg_pool2d` over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d",
                         (AdaptiveAvgPool3DBackward0, AdaptiveAvgPool3DBackwardBackward0))


# -- 1-D pooling: the 2-D ops over a unit height -----------------------------------------------
def _one(v: Any, name: str, fn: str, default: Any = None) -> tuple[int, int] | None:
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return default
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(_messages.pool1d_argument_not_one_int(fn, name))
        v = v[0]
    return 1, int(v)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(_messages.max_pool1d_input_wrong_rank(input))
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = _one(stride, "stride", "max_pool1d", k)
    p = _one(padding, "padding", "max_pool1d")
    d = _one(dilation, "dilation", "max_pool1d")
    assert p is not None and d is not None
    x2 = _shape_ops.unsqueeze(input, -2)
    res = max_pool2d(x2, k, s, (0, p[1]), d, ceil_mode, return_indices)
    if return_indices:
        return _shape_ops.squeeze(res[0], -2), _shape_ops.squeeze(res[1], -2)
    return _shape_ops.squeeze(res, -2)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(_messages.avg_pool1d_input_wrong_rank(input))
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = _one(stride, "stride", "avg_pool1d", k)
    p = _one(padding, "padding", "avg_pool1d")
    assert p is not None
    x2 = _shape_ops.unsqueeze(input, -2)
    return _shape_ops.squeeze(avg_pool2d(x2, k, s, (0, p[1]), ceil_mode, count_include_pad), -2)


def _check_1d(input: Tensor, fn: str) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(_messages.adaptive_pool1d_input_wrong_rank(input, fn))


def _size1(output_size: Any, fn: str) -> Any:
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(_messages.adaptive_pool_output_size_wrong_length(fn, 1, output_size))
        output_size = output_size[0]
    return (1, output_size)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """1-D :func:`adaptive_avg_pool2d` over ``(N, C, L)`` or ``(C, L)`` (torch's: the 2-D op
    over a unit height)."""
    _check_1d(input, "adaptive_avg_pool1d")
    x2 = _shape_ops.unsqueeze(input, -2)
    return _shape_ops.squeeze(
        adaptive_avg_pool2d(x2, _size1(output_size, "adaptive_avg_pool1d")), -2)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """1-D :func:`adaptive_max_pool2d` over ``(N, C, L)`` or ``(C, L)``."""
    _check_1d(input, "adaptive_max_pool1d")
    x2 = _shape_ops.unsqueeze(input, -2)
    res = adaptive_max_pool2d(x2, _size1(output_size, "adaptive_max_pool1d"), True)
    out, idx = _shape_ops.squeeze(res[0], -2), _shape_ops.squeeze(res[1], -2)
    return (out, idx) if return_indices else out


# -- max unpooling -----------------------------------------------------------------------------
def _unpool_output_size(input: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...],
                        padding: tuple[int, ...], output_size: Any) -> tuple[int, ...]:
    """torch's ``_unpool_output_size``."""
    nd = len(kernel)
    default = tuple((input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
                    for d in range(nd))
    if output_size is None:
        return default
    out = [int(v) for v in output_size]
    if len(out) == nd + 2:
        out = out[2:]
    if len(out) != nd:
        raise ValueError(_messages.max_unpool_output_size_wrong_length(nd, out))
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < out[d] < hi:
            raise ValueError(_messages.max_unpool_invalid_output_size(output_size, d, lo, hi))
    return tuple(out)


def _max_unpool(input: Tensor, indices: Tensor, size: tuple[int, ...], nd: int,
                nodes: tuple[type, type]) -> Tensor:
    """``out[..., indices] = input`` over zeros of spatial ``size`` (torch's
    ``max_unpool{nd}d``); the gradient gathers at ``indices``."""
    fn = f"max_unpooling{nd}d"
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(_messages.max_unpool_input_wrong_rank(fn, nd, input))
    if indices.dtype.name != "int64":
        raise RuntimeError(_messages.max_unpool_indices_not_int64(indices))
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(_messages.max_unpool_indices_shape_mismatch(input, indices))
    idx = indices._array
    hw = math.prod(size)
    if idx.size and (idx.min() < 0 or idx.max() >= hw):
        bad = int(idx.min() if idx.min() < 0 else idx.max())
        raise RuntimeError(_messages.max_unpool_invalid_max_index(bad, size))
    lead = idx.shape[:-nd]
    m = int(math.prod(lead))
    flat = (idx.reshape(m, -1) + (xp.arange(m, dtype=xp.int64) * hw)[:, None]).reshape(-1)

    def scatter(a: Any) -> Any:  # (torch: of duplicate indices, one value is kept)
        out = xp.zeros(m * hw, dtype=a.dtype)
        out[flat] = a.reshape(-1)
        return out.reshape(lead + size)

    def scatter_add(a: Any) -> Any:  # the adjoint of gather, for the derivatives
        out = xp.zeros(m * hw, dtype=a.dtype)
        xp.add.at(out, flat, a.reshape(-1))
        return out.reshape(lead + size)

    def gather(g: Any) -> Any:
        return g.reshape(-1)[flat].reshape(idx.shape)

    out = scatter(input._array)
    if not needs_grad(input):
        return _make(out)
    node = nodes[0]()
    node._saved = HOLDS_STATE
    node.plan, node.transposed = _Plan(scatter_add, gather, *nodes), False
    return record(node, (input,), out)


def _unpool_args(kernel_size: Any, stride: Any, padding: Any, nd: int,
                 fn: str) -> tuple[tuple[int, ...], ...]:
    k = _tuple_n(kernel_size, "kernel_size", fn, nd)
    s = _tuple_n(stride if stride is not None else (), "stride", fn, nd, allow_empty=True) or k
    p = _tuple_n(padding, "padding", fn, nd)
    assert k is not None and p is not None
    return k, s, p


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of :func:`max_pool1d` (torch's: the 2-D op over a unit width)."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 1, "max_unpool1d")
    size = _unpool_output_size(input, k, s, p, output_size)
    x2 = _shape_ops.unsqueeze(input, -1)
    i2 = _shape_ops.unsqueeze(indices, -1)
    return _shape_ops.squeeze(_max_unpool(x2, i2, size + (1,), 2, (
        MaxUnpool2DBackward0, MaxUnpool2DBackwardBackward0)), -1)


@autocast_policy("max_unpool2d")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of :func:`max_pool2d`: each value put back at its index, zeros
    elsewhere.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> y, i = F.max_pool2d(gradsum.arange(16.0).reshape(1, 1, 4, 4), 2,
        ...                     return_indices=True)
        >>> F.max_unpool2d(y, i, 2)[0, 0, 1].tolist()
        [0.0, 5.0, 0.0, 7.0]
    """
    k, s, p = _unpool_args(kernel_size, stride, padding, 2, "max_unpool2d")
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, size, 2,
                       (MaxUnpool2DBackward0, MaxUnpool2DBackwardBackward0))


@autocast_policy("max_unpool3d")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of :func:`max_pool3d`."""
    k, s, p = _unpool_args(kernel_size, stride, padding, 3, "max_unpool3d")
    size = _unpool_output_size(input, k, s, p, output_size)
    return _max_unpool(input, indices, size, 3,
                       (MaxUnpool3DBackward0, MaxUnpool3DBackwardBackward0))


# -- power-average pooling (torch's composition) -----------------------------------------------
def _lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool,
             nd: int) -> Tensor:
    from gradsum import ops

    pool = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[nd]
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return pool(ops.abs(input), kernel_size, stride, 0, 1, ceil_mode)
        return ops.neg(pool(ops.neg(ops.abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    if nd == 1:
        out = avg_pool1d(ops.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
        k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    else:
        avg = avg_pool2d if nd == 2 else avg_pool3d
        out = avg(ops.pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
        k = math.prod(_tuple_n(kernel_size, "kernel_size", f"lp_pool{nd}d", nd) or ())
    out = ops.mul(ops.mul(ops.sign(out), ops.relu(ops.abs(out))), k)
    return ops.pow(out, 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum over each window of x**p) ** (1/p)`` over ``(N, C, L)`` or ``(C, L)``."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum over each window of x**p) ** (1/p)``; ``p = inf`` is max pooling of ``|x|``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.lp_pool2d(gradsum.full((1, 1, 2, 2), 2.0), 2, 2).tolist()
        [[[[4.0]]]]
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """3-D :func:`lp_pool2d`."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
