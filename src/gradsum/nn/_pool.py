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

import math
from typing import Any

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import shape as _shape_ops
from gradsum.ops._core import _make, needs_grad, record

__all__ = [
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d",
    "max_pool2d",
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


def _node(name: str) -> type:
    return type(name, (_PlanNode,), {"__slots__": ()})


MaxPool2DWithIndicesBackward0 = _node("MaxPool2DWithIndicesBackward0")
MaxPool2DWithIndicesBackwardBackward0 = _node("MaxPool2DWithIndicesBackwardBackward0")
AvgPool2DBackward0 = _node("AvgPool2DBackward0")
AvgPool2DBackwardBackward0 = _node("AvgPool2DBackwardBackward0")
AdaptiveAvgPool2DBackward0 = _node("AdaptiveAvgPool2DBackward0")
AdaptiveAvgPool2DBackwardBackward0 = _node("AdaptiveAvgPool2DBackwardBackward0")
AdaptiveMaxPool2DBackward0 = _node("AdaptiveMaxPool2DBackward0")
AdaptiveMaxPool2DBackwardBackward0 = _node("AdaptiveMaxPool2DBackwardBackward0")


def _apply(x: Tensor, plan: _Plan, transposed: bool = False) -> Tensor:
    out = (plan.adj if transposed else plan.fwd)(x._array)
    if not needs_grad(x):
        return _make(out)
    node = (plan.adj_node if transposed else plan.fwd_node)()
    node._saved = HOLDS_STATE  # (torch saves the input / the indices)
    node.plan, node.transposed = plan, transposed
    return record(node, (x,), out)


# -- argument parsing --------------------------------------------------------------------------
def _tuple2(v: Any, name: str, fn: str, allow_empty: bool = False) -> tuple[int, int] | None:
    if isinstance(v, (tuple, list)):
        if len(v) == 0 and allow_empty:
            return None
        if len(v) == 1:
            return int(v[0]), int(v[0])
        if len(v) == 2:
            return int(v[0]), int(v[1])
        what = ("either be omitted, a single int, or a tuple of two ints" if allow_empty
                else "either be a single int, or a tuple of two ints")
        raise RuntimeError(f"{fn}: {name} must {what} (got {v})")
    return int(v), int(v)


def _out_size(size: int, k: int, pad: int, stride: int, dil: int, ceil: bool) -> int:
    """torch's pooling_output_shape."""
    num = size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil else 0)
    out = num // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _geometry(x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, fn: str) -> tuple[Any, ...]:
    k = _tuple2(kernel_size, "kernel_size", fn)
    s = _tuple2(stride if stride is not None else (), "stride", fn, allow_empty=True) or k
    p = _tuple2(padding, "padding", fn)
    d = _tuple2(dilation, "dilation", fn)
    assert k is not None and p is not None and d is not None
    if x.ndim not in (3, 4) or (x.numel() == 0 and x.ndim == 3):
        raise RuntimeError(
            f"non-empty 3D or 4D (batch mode) tensor expected for input (got shape "
            f"{list(x.shape)})"
        )
    if s[0] == 0 or s[1] == 0:
        raise RuntimeError(f"stride should not be zero (got stride={list(s)})")
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(
            f"kernel_size should be greater than zero, but got kH: {k[0]} kW: {k[1]}"
        )
    if s[0] < 0 or s[1] < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}"
        )
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}"
            )
    h, w = x.shape[-2:]
    oh = _out_size(h, k[0], p[0], s[0], d[0], ceil_mode)
    ow = _out_size(w, k[1], p[1], s[1], d[1], ceil_mode)
    if oh < 1 or ow < 1:
        c = x.shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). "
            "Output size is too small"
        )
    return k, s, p, d, (oh, ow)


def _windows(a: Any, k: tuple[int, int], s: tuple[int, int], p: tuple[int, int],
             d: tuple[int, int], out: tuple[int, int], fill: Any) -> Any:
    """The (..., oh, ow, kh, kw) windows of ``a`` padded with ``fill`` (a read-only view)."""
    h, w = a.shape[-2:]
    need_h = (out[0] - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (out[1] - 1) * s[1] + d[1] * (k[1] - 1) + 1
    extra_h = max(need_h - h - p[0], p[0])
    extra_w = max(need_w - w - p[1], p[1])
    if p[0] or p[1] or extra_h or extra_w:
        width = [(0, 0)] * (a.ndim - 2) + [(p[0], extra_h), (p[1], extra_w)]
        a = xp.pad(a, width, constant_values=fill)
    st = a.strides
    return xp.lib.stride_tricks.as_strided(
        a, shape=a.shape[:-2] + out + k,
        strides=st[:-2] + (st[-2] * s[0], st[-1] * s[1], st[-2] * d[0], st[-1] * d[1]),
        writeable=False,
    )


def _gather_plan(idx: Any, in_hw: tuple[int, int], fwd_node: type, adj_node: type) -> _Plan:
    """``out[..., i, j] = x[..., idx[..., i, j]]`` (flat H*W positions) and its adjoint, the
    gradient summed back at those positions."""
    h, w = in_hw
    lead = idx.shape[:-2]
    m = int(math.prod(lead))
    flat = (idx.reshape(m, -1) + (xp.arange(m, dtype=xp.int64) * (h * w))[:, None]).reshape(-1)

    def fwd(a: Any) -> Any:
        return a.reshape(-1)[flat].reshape(idx.shape)

    def adj(g: Any) -> Any:
        if g.dtype.kind == "f":
            out = xp.bincount(flat, weights=g.reshape(-1), minlength=m * h * w)
            return out.astype(g.dtype, copy=False).reshape(lead + (h, w))
        out = xp.zeros(m * h * w, dtype=g.dtype)
        xp.add.at(out, flat, g.reshape(-1))
        return out.reshape(lead + (h, w))

    return _Plan(fwd, adj, fwd_node, adj_node)


def _squeeze_batch(x: Tensor, fn: str) -> None:
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"{fn}(): Expected 3D or 4D tensor, but got: {list(x.shape)} (pass (N, C, H, W) or "
            "(C, H, W))"
        )


# -- max pooling -------------------------------------------------------------------------------
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; the gradient goes to each
    window's (first) maximum. ``return_indices`` also returns the flat ``H * W`` argmax
    positions (int64)."""
    k, s, p, d, out = _geometry(input, kernel_size, stride, padding, dilation, ceil_mode,
                                "max_pool2d")
    a = input._array
    h, w = a.shape[-2:]
    fill = -xp.inf if a.dtype.kind == "f" else xp.iinfo(a.dtype).min
    win = _windows(a, k, s, p, d, out, fill)
    flatwin = win.reshape(win.shape[:-2] + (k[0] * k[1],))
    if a.dtype.kind == "f":
        # torch takes a nan as the maximum (the first one here)
        am = xp.argmax(xp.where(xp.isnan(flatwin), xp.inf, flatwin), axis=-1)
    else:
        am = xp.argmax(flatwin, axis=-1)
    oi = xp.arange(out[0], dtype=xp.int64)[:, None]
    oj = xp.arange(out[1], dtype=xp.int64)[None, :]
    hh = oi * s[0] - p[0] + (am // k[1]) * d[0]
    ww = oj * s[1] - p[1] + (am % k[1]) * d[1]
    idx = (hh * w + ww).astype(xp.int64)
    plan = _gather_plan(idx, (h, w), MaxPool2DWithIndicesBackward0,
                        MaxPool2DWithIndicesBackwardBackward0)
    res = _apply(input, plan)
    if return_indices:
        return res, _make(idx)
    return res


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max over the windows ``[floor(i * H / oh), ceil((i + 1) * H / oh))`` (per dim);
    ``None`` in ``output_size`` keeps that input size."""
    _squeeze_batch(input, "adaptive_max_pool2d")
    oh, ow = _adaptive_size(input, output_size, "adaptive_max_pool2d")
    a = input._array
    h, w = a.shape[-2:]
    idx = xp.zeros(a.shape[:-2] + (oh, ow), dtype=xp.int64)
    for i in range(oh):
        hs, he = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            ws, we = (j * w) // ow, -((-(j + 1) * w) // ow)
            sub = a[..., hs:he, ws:we].reshape(a.shape[:-2] + (-1,))
            if a.dtype.kind == "f":
                sub = xp.where(xp.isnan(sub), xp.inf, sub)
            am = xp.argmax(sub, axis=-1)
            idx[..., i, j] = (hs + am // (we - ws)) * w + ws + am % (we - ws)
    plan = _gather_plan(idx, (h, w), AdaptiveMaxPool2DBackward0,
                        AdaptiveMaxPool2DBackwardBackward0)
    res = _apply(input, plan)
    if return_indices:
        return res, _make(idx)
    return res


def _adaptive_size(x: Tensor, output_size: Any, fn: str) -> tuple[int, int]:
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 2:
            raise RuntimeError(f"{fn}: output_size must be 2 (got {tuple(output_size)})")
        oh, ow = output_size
    else:
        oh = ow = output_size
    oh = x.shape[-2] if oh is None else int(oh)
    ow = x.shape[-1] if ow is None else int(ow)
    if oh < 0 or ow < 0:
        raise RuntimeError(
            f"{fn}: elements of output_size must be greater than or equal to 0 but received "
            f"{{{oh}, {ow}}}"
        )
    for d in range(1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(
                f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(x.shape)} with dimension {d} being empty"
            )
    return oh, ow


# -- average pooling ---------------------------------------------------------------------------
def _avg_divisor(size: int, k: int, s: int, p: int, out: int, include_pad: bool) -> Any:
    start = xp.arange(out, dtype=xp.int64) * s - p
    end = xp.minimum(start + k, size + p)
    full = end - start
    start, end = xp.maximum(start, 0), xp.minimum(end, size)
    return full if include_pad else end - start


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """2-D average pooling: each window's sum divided by its size (with ``count_include_pad``
    the padded zeros count, the part beyond the padding from ``ceil_mode`` never does), or by
    ``divisor_override``."""
    k, s, p, d, out = _geometry(input, kernel_size, stride, padding, 1, ceil_mode,
                                "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    a = input._array
    h, w = a.shape[-2:]
    if divisor_override is not None:
        div: Any = xp.asarray(float(divisor_override))
    else:
        dh = _avg_divisor(h, k[0], s[0], p[0], out[0], count_include_pad)
        dw = _avg_divisor(w, k[1], s[1], p[1], out[1], count_include_pad)
        div = (dh[:, None] * dw[None, :]).astype(xp.float64)
    lead = a.shape[:-2]
    ph = p[0] + max((out[0] - 1) * s[0] + k[0] - h - p[0], p[0])
    pw = p[1] + max((out[1] - 1) * s[1] + k[1] - w - p[1], p[1])

    def fwd(x: Any) -> Any:
        win = _windows(x, k, s, p, d, out, 0)
        total = win.sum(axis=(-2, -1))
        if x.dtype.kind in "biu":
            return xp.trunc(total / div).astype(x.dtype)
        return (total / div.astype(x.dtype)).astype(x.dtype, copy=False)

    def adj(g: Any) -> Any:
        gd = (g / div.astype(g.dtype)).astype(g.dtype, copy=False)
        acc = xp.zeros(lead + (h + ph, w + pw), dtype=g.dtype)
        for i in range(k[0]):
            for j in range(k[1]):
                acc[..., i: i + s[0] * (out[0] - 1) + 1: s[0],
                    j: j + s[1] * (out[1] - 1) + 1: s[1]] += gd
        return acc[..., p[0]: p[0] + h, p[1]: p[1] + w].copy()

    return _apply(input, _Plan(fwd, adj, AvgPool2DBackward0, AvgPool2DBackwardBackward0))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average over the windows ``[floor(i * H / oh), ceil((i + 1) * H / oh))`` (per dim);
    ``None`` in ``output_size`` keeps that input size."""
    _squeeze_batch(input, "adaptive_avg_pool2d")
    oh, ow = _adaptive_size(input, output_size, "adaptive_avg_pool2d")
    if (oh, ow) == (1, 1):  # (torch: a mean over the last two dims)
        from gradsum import ops

        return ops.mean(input, (-2, -1), keepdim=True)
    a = input._array
    h, w = a.shape[-2:]
    lead = a.shape[:-2]
    rows = [((i * h) // oh, -((-(i + 1) * h) // oh)) for i in range(oh)]
    cols = [((j * w) // ow, -((-(j + 1) * w) // ow)) for j in range(ow)]

    def fwd(x: Any) -> Any:
        out = xp.empty(lead + (oh, ow), dtype=x.dtype)
        for i, (hs, he) in enumerate(rows):
            for j, (ws, we) in enumerate(cols):
                out[..., i, j] = x[..., hs:he, ws:we].sum(axis=(-2, -1)) / (he - hs) / (we - ws)
        return out

    def adj(g: Any) -> Any:
        acc = xp.zeros(lead + (h, w), dtype=g.dtype)
        for i, (hs, he) in enumerate(rows):
            for j, (ws, we) in enumerate(cols):
                acc[..., hs:he, ws:we] += (g[..., i, j] / (he - hs) / (we - ws))[..., None, None]
        return acc

    return _apply(input, _Plan(fwd, adj, AdaptiveAvgPool2DBackward0,
                               AdaptiveAvgPool2DBackwardBackward0))


# -- 1-D pooling: the 2-D ops over a unit height -----------------------------------------------
def _one(v: Any, name: str, fn: str, default: Any = None) -> tuple[int, int] | None:
    if v is None or (isinstance(v, (tuple, list)) and len(v) == 0):
        return default
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{fn}: {name} must be a single int or a tuple of one int")
        v = v[0]
    return 1, int(v)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(input.shape)}"
        )
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
        raise RuntimeError(
            f"avg_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}"
        )
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = _one(stride, "stride", "avg_pool1d", k)
    p = _one(padding, "padding", "avg_pool1d")
    assert p is not None
    x2 = _shape_ops.unsqueeze(input, -2)
    return _shape_ops.squeeze(avg_pool2d(x2, k, s, (0, p[1]), ceil_mode, count_include_pad), -2)
