"""Two primitives for convolution: ``im2col`` (sliding windows to columns) and its adjoint
``col2im`` (columns summed back into the image). Each one's backward is the other, so both
are linear and any order of derivative works; ``conv2d`` is ``im2col`` + ``matmul``.

Example:
    >>> import gradsum
    >>> from gradsum.nn._conv import Geometry, im2col
    >>> x = gradsum.arange(9.0).reshape(1, 1, 3, 3)
    >>> geo = Geometry.make(x.shape, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1))
    >>> im2col(x, geo).shape      # (N, C*kh*kw, out_h*out_w)
    (1, 4, 4)
"""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops._core import _make, needs_grad, record


class Geometry:
    """Where every window of a 2-D convolution lies: input size, kernel, dilation, padding
    ``(top, bottom, left, right)``, stride and the resulting output size."""

    __slots__ = ("c", "dilation", "h", "kernel", "out_hw", "padding", "stride", "w")

    @classmethod
    def make(cls, in_shape: tuple[int, ...], kernel: tuple[int, int], dilation: tuple[int, int],
             padding: tuple[int, int, int, int], stride: tuple[int, int]) -> Geometry:
        g = cls()
        _, g.c, g.h, g.w = in_shape
        g.kernel, g.dilation, g.padding, g.stride = kernel, dilation, padding, stride
        (kh, kw), (dh, dw), (pt, pb, pl, pr), (sh, sw) = kernel, dilation, padding, stride
        hp, wp = g.h + pt + pb, g.w + pl + pr
        eh, ew = dh * (kh - 1) + 1, dw * (kw - 1) + 1
        if hp < eh or wp < ew:
            raise RuntimeError(
                f"Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
                f"({eh} x {ew}). Kernel size can't be greater than actual input size"
            )
        g.out_hw = ((hp - eh) // sh + 1, (wp - ew) // sw + 1)
        return g


def _im2col_array(x: Any, geo: Geometry) -> Any:
    n = x.shape[0]
    (kh, kw), (dh, dw), (pt, pb, pl, pr), (sh, sw) = (
        geo.kernel, geo.dilation, geo.padding, geo.stride)
    oh, ow = geo.out_hw
    if pt or pb or pl or pr:
        x = xp.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    s_n, s_c, s_h, s_w = x.strides
    win = xp.lib.stride_tricks.as_strided(
        x, shape=(n, geo.c, kh, kw, oh, ow),
        strides=(s_n, s_c, s_h * dh, s_w * dw, s_h * sh, s_w * sw), writeable=False,
    )
    return win.reshape(n, geo.c * kh * kw, oh * ow)


def _col2im_array(cols: Any, geo: Geometry) -> Any:
    n = cols.shape[0]
    (kh, kw), (dh, dw), (pt, pb, pl, pr), (sh, sw) = (
        geo.kernel, geo.dilation, geo.padding, geo.stride)
    oh, ow = geo.out_hw
    g6 = cols.reshape(n, geo.c, kh, kw, oh, ow)
    out = xp.zeros((n, geo.c, geo.h + pt + pb, geo.w + pl + pr), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                j * dw: j * dw + sw * (ow - 1) + 1: sw] += g6[:, :, i, j]
    return out[:, :, pt: pt + geo.h, pl: pl + geo.w].copy()


class Im2ColBackward0(Node):
    __slots__ = ("geo",)

    def backward(self, g: Tensor) -> Tensor:
        return col2im(g, self.geo)


class Col2ImBackward0(Node):
    __slots__ = ("geo",)

    def backward(self, g: Tensor) -> Tensor:
        return im2col(g, self.geo)


def im2col(x: Tensor, geo: Geometry) -> Tensor:
    """``(N, C, H, W)`` -> ``(N, C*kh*kw, L)``: every window of ``geo`` as a column."""
    out = _im2col_array(x._array, geo)
    if not needs_grad(x):
        return _make(out)
    node = Im2ColBackward0()
    node.geo = geo
    return record(node, (x,), out)


def col2im(cols: Tensor, geo: Geometry) -> Tensor:
    """The adjoint of :func:`im2col`: columns ``(N, C*kh*kw, L)`` summed into
    ``(N, C, H, W)``."""
    out = _col2im_array(cols._array, geo)
    if not needs_grad(cols):
        return _make(out)
    node = Col2ImBackward0()
    node.geo = geo
    return record(node, (cols,), out)
