"""Upsampling primitives for ``F.interpolate`` (modes nearest, nearest-exact, linear,
bilinear). Each is separable and linear, so each is one matrix per spatial axis applied by
:func:`gradsum.ops.pool._apply`: the op's node (named like torch's grad_fn) backpropagates with
the adjoint (the transposed matrices), whose node backpropagates with the op again.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> x = gradsum.tensor([[[1.0, 2.0]]], requires_grad=True)
    >>> y = F.interpolate(x, scale_factor=2, mode="linear")
    >>> y.tolist(), y.grad_fn.name()
    ([[[1.0, 1.25, 1.75, 2.0]]], 'UpsampleLinear1DBackward0')
"""

from __future__ import annotations

import math
from typing import Any

from gradsum import _blas
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.ops import _messages
from gradsum.ops.pool import _apply, _Plan, _PlanNode


def _matmul(a: Any, b: Any) -> Any:
    """``xp.matmul``; bfloat16 operands through :func:`gradsum._blas.matmul` (float32
    products, rounded once: NumPy's bfloat16 matmul loop rounds as it goes)."""
    if a.dtype.kind == "V" or b.dtype.kind == "V":
        return _blas.matmul(a, b)
    return xp.matmul(a, b)

__all__ = ["interpolate"]

class UpsampleNearest1DBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearest1DBackwardBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearest2DBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearest2DBackwardBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearestExact1DBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearestExact1DBackwardBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearestExact2DBackward0(_PlanNode):
    __slots__ = ()


class UpsampleNearestExact2DBackwardBackward0(_PlanNode):
    __slots__ = ()


class UpsampleLinear1DBackward0(_PlanNode):
    __slots__ = ()


class UpsampleLinear1DBackwardBackward0(_PlanNode):
    __slots__ = ()


class UpsampleBilinear2DBackward0(_PlanNode):
    __slots__ = ()


class UpsampleBilinear2DBackwardBackward0(_PlanNode):
    __slots__ = ()


_NODES: dict[str, tuple[type[_PlanNode], type[_PlanNode]]] = {
    "UpsampleNearest1D": (UpsampleNearest1DBackward0, UpsampleNearest1DBackwardBackward0),
    "UpsampleNearest2D": (UpsampleNearest2DBackward0, UpsampleNearest2DBackwardBackward0),
    "UpsampleNearestExact1D": (UpsampleNearestExact1DBackward0,
                               UpsampleNearestExact1DBackwardBackward0),
    "UpsampleNearestExact2D": (UpsampleNearestExact2DBackward0,
                               UpsampleNearestExact2DBackwardBackward0),
    "UpsampleLinear1D": (UpsampleLinear1DBackward0, UpsampleLinear1DBackwardBackward0),
    "UpsampleBilinear2D": (UpsampleBilinear2DBackward0, UpsampleBilinear2DBackwardBackward0),
}


def _scale_value(scale: float | None, n_in: int, n_out: int) -> float:
    """torch's compute_scales_value: ``1 / scale`` when given (and > 0), else in / out."""
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _axis_matrix(mode: str, n_in: int, n_out: int, align_corners: bool, scale: float | None,
                 dtype: Any) -> Any:
    """The ``(n_out, n_in)`` interpolation matrix of one axis."""
    m = xp.zeros((n_out, n_in), dtype=dtype)
    dst = xp.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        if mode == "nearest" and n_out == n_in:
            src = dst
        elif mode == "nearest" and n_out == 2 * n_in:
            src = dst >> 1
        else:
            s = xp.float32(_scale_value(scale, n_in, n_out))
            off = xp.float32(0.5 if mode == "nearest-exact" else 0.0)
            src = xp.minimum(xp.floor((dst.astype(xp.float32) + off) * s).astype(xp.int64),
                             n_in - 1)
        m[dst, src] = 1
        return m
    acc = xp.float64 if xp.dtype(dtype) == xp.float64 else xp.float32
    if align_corners:
        s = acc((n_in - 1) / (n_out - 1)) if n_out > 1 else acc(0.0)
        real = s * dst.astype(acc)
    else:
        s = acc(_scale_value(scale, n_in, n_out))
        real = xp.maximum(s * (dst.astype(acc) + acc(0.5)) - acc(0.5), acc(0.0))
    i0 = real.astype(xp.int64)
    i1 = i0 + (i0 < n_in - 1)
    lam1 = xp.clip(real - i0.astype(acc), 0, 1)
    lam0 = acc(1.0) - lam1
    xp.add.at(m, (dst, i0), lam0.astype(dtype))
    xp.add.at(m, (dst, i1), lam1.astype(dtype))
    return m


def _upsample(x: Tensor, mode: str, out_size: list[int], scales: list[float | None],
              align_corners: bool) -> Tensor:
    spatial = list(x.shape[2:])
    if any(s <= 0 for s in spatial) or any(o <= 0 for o in out_size):
        names = ("W",) if len(spatial) == 1 else ("H", "W")
        inp = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        out = ", ".join(f"{n}: {s}" for n, s in zip(names, out_size))
        raise RuntimeError(_messages.upsample_sizes_not_positive(inp, out))
    dtype = x._array.dtype
    # (bfloat16: weights in float32, products through _blas in float32, rounded once)
    mats = [_axis_matrix(mode, n, o, align_corners, s, dtype if dtype.kind == "f"
                         else xp.float32 if dtype.kind == "V" else xp.float64)
            for n, o, s in zip(spatial, out_size, scales)]
    if dtype.kind not in "fV":
        mats = [m.astype(dtype) for m in mats]
    if len(mats) == 1:
        (mw,) = mats

        def fwd(a: Any) -> Any:
            return _matmul(a, mw.T)

        def adj(g: Any) -> Any:
            return _matmul(g, mw)
    else:
        mh, mw = mats

        def fwd(a: Any) -> Any:
            return xp.ascontiguousarray(_matmul(mh, _matmul(a, mw.T)))

        def adj(g: Any) -> Any:
            return xp.ascontiguousarray(_matmul(mh.T, _matmul(g, mw)))

    base = {
        ("nearest", 1): "UpsampleNearest1D", ("nearest", 2): "UpsampleNearest2D",
        ("nearest-exact", 1): "UpsampleNearestExact1D",
        ("nearest-exact", 2): "UpsampleNearestExact2D",
        ("linear", 1): "UpsampleLinear1D", ("bilinear", 2): "UpsampleBilinear2D",
    }[(mode, len(mats))]
    fwd_node, adj_node = _NODES[base]
    return _apply(x, _Plan(fwd, adj, fwd_node, adj_node))


_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize ``(N, C, L)`` (modes nearest, nearest-exact, linear) or ``(N, C, H, W)`` (nearest,
    nearest-exact, bilinear) inputs to ``size`` or by ``scale_factor``, with torch's sampling
    positions (``align_corners``; the scale factor, not the size ratio, places the samples
    unless ``recompute_scale_factor=True``).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.arange(4.0).reshape(1, 1, 2, 2)
        >>> F.interpolate(x, scale_factor=2)[0, 0].tolist()
        [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0], [2.0, 2.0, 3.0, 3.0]]
        >>> F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)[0, 0].tolist()
        [[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0]]
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(_messages.interpolate_align_corners_not_interpolating())
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError(_messages.interpolate_size_and_scale_factor())
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(_messages.interpolate_size_rank_mismatch(input, size))
            output_size: list[int] | None = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
        scale_factors: list[float] | None = None
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    _messages.interpolate_scale_factor_rank_mismatch(input, scale_factor)
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError(_messages.interpolate_no_size_nor_scale_factor())
    if recompute_scale_factor and size is not None:
        raise ValueError(_messages.interpolate_recompute_scale_factor_with_size())
    if recompute_scale_factor:
        assert scale_factors is not None
        output_size = [math.floor(float(input.shape[i + 2] * scale_factors[i]))
                       for i in range(dim)]
        scale_factors = None
    if antialias:
        raise NotImplementedError(_messages.interpolate_antialias_not_supported())
    supported = {(3, "nearest"), (3, "nearest-exact"), (3, "linear"), (4, "nearest"),
                 (4, "nearest-exact"), (4, "bilinear")}
    if (input.ndim, mode) not in supported:
        need = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}.get(mode)
        if need is not None and input.ndim in (3, 4, 5) and input.ndim != need:
            raise NotImplementedError(_messages.interpolate_mode_wrong_rank(input, mode, need))
        raise NotImplementedError(_messages.interpolate_input_rank_not_supported(input, mode))
    spatial = list(input.shape[2:])
    scales: list[float | None]
    if output_size is None:
        assert scale_factors is not None
        output_size = [math.floor(n * s) for n, s in zip(spatial, scale_factors)]
        scales = list(scale_factors)
    else:
        scales = [None] * dim
    return _upsample(input, mode, output_size, scales, bool(align_corners))
