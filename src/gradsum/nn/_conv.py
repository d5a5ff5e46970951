"""Convolution over any number of spatial dims. Two linear primitives, ``im2col`` (sliding
windows to columns) and its adjoint ``col2im`` (columns summed back into the image), each
one's backward being the other, and the ``convolution`` primitive (torch's
``ConvolutionBackward0``): forward on arrays (``im2col`` + one matmul per group, or the
transposed ``matmul`` + ``col2im``), backward written with ``im2col``/``col2im``/``matmul`` so
that any order of derivative works.

Example:
    >>> import gradsum
    >>> from gradsum.nn._conv import Geometry, im2col
    >>> x = gradsum.arange(9.0).reshape(1, 1, 3, 3)
    >>> geo = Geometry.make(x.shape, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1))
    >>> im2col(x, geo).shape      # (N, C*kh*kw, out_h*out_w)
    (1, 4, 4)
    >>> y = convolution(x.requires_grad_(), gradsum.ones(1, 1, 2, 2), None, geo, 1, False)
    >>> y.tolist(), y.grad_fn.name()
    ([[[[8.0, 12.0], [20.0, 24.0]]]], 'ConvolutionBackward0')
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from gradsum import ops
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops._core import _make, needs_grad, record


class Geometry:
    """Where every window of an N-D convolution lies: channels, spatial input ``size``,
    ``kernel``, ``dilation``, ``padding`` (flat ``(before_0, after_0, before_1, after_1,
    ...)``), ``stride`` and the ``out`` size (windows per dim)."""

    __slots__ = ("c", "dilation", "kernel", "out", "padding", "size", "stride")

    @classmethod
    def make(cls, in_shape: tuple[int, ...], kernel: tuple[int, ...],
             dilation: tuple[int, ...], padding: tuple[int, ...], stride: tuple[int, ...],
             out: tuple[int, ...] | None = None) -> Geometry:
        """``in_shape`` is ``(N, C, *size)``. ``out`` may name fewer windows than fit (the
        transposed convolution's ``output_padding`` leaves a margin no window reaches)."""
        g = cls()
        g.c, g.size = int(in_shape[1]), tuple(int(s) for s in in_shape[2:])
        g.kernel, g.dilation, g.stride = tuple(kernel), tuple(dilation), tuple(stride)
        g.padding = tuple(padding)
        padded = tuple(s + padding[2 * i] + padding[2 * i + 1] for i, s in enumerate(g.size))
        extent = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
        if out is None:
            if any(p < e for p, e in zip(padded, extent)):
                raise RuntimeError(
                    f"Calculated padded input size per channel: "
                    f"({' x '.join(map(str, padded))}). Kernel size: "
                    f"({' x '.join(map(str, extent))}). Kernel size can't be greater than "
                    "actual input size"
                )
            out = tuple((p - e) // s + 1 for p, e, s in zip(padded, extent, stride))
        g.out = tuple(out)
        return g

    @property
    def out_hw(self) -> tuple[int, ...]:
        """The output size (the 2-D name)."""
        return self.out

    def _pad_width(self) -> tuple[tuple[int, int], ...]:
        p = self.padding
        return ((0, 0), (0, 0)) + tuple((p[2 * i], p[2 * i + 1]) for i in range(len(self.size)))


def _im2col_array(x: Any, geo: Geometry) -> Any:
    n = x.shape[0]
    if any(geo.padding):
        x = xp.pad(x, geo._pad_width())
    st = x.strides
    sp = st[2:]
    win = xp.lib.stride_tricks.as_strided(
        x, shape=(n, geo.c) + geo.kernel + geo.out,
        strides=(st[0], st[1]) + tuple(s * d for s, d in zip(sp, geo.dilation))
        + tuple(s * t for s, t in zip(sp, geo.stride)), writeable=False,
    )
    return win.reshape(n, geo.c * math.prod(geo.kernel), math.prod(geo.out))


def _col2im_array(cols: Any, geo: Geometry) -> Any:
    n = cols.shape[0]
    g = cols.reshape((n, geo.c) + geo.kernel + geo.out)
    pw = geo._pad_width()[2:]
    out = xp.zeros((n, geo.c) + tuple(s + a + b for s, (a, b) in zip(geo.size, pw)),
                   dtype=cols.dtype)
    for pos in itertools.product(*(range(k) for k in geo.kernel)):
        sl = tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                   for i, d, s, o in zip(pos, geo.dilation, geo.stride, geo.out))
        out[(slice(None), slice(None)) + sl] += g[(slice(None), slice(None)) + pos]
    if not any(geo.padding):
        return out
    crop = tuple(slice(a, a + s) for s, (a, _) in zip(geo.size, pw))
    return out[(slice(None), slice(None)) + crop].copy()


class Im2ColBackward0(Node):
    __slots__ = ("geo",)

    def backward(self, g: Tensor) -> Tensor:
        return col2im(g, self.geo)


class Col2ImBackward0(Node):
    __slots__ = ("geo",)

    def backward(self, g: Tensor) -> Tensor:
        return im2col(g, self.geo)


def im2col(x: Tensor, geo: Geometry) -> Tensor:
    """``(N, C, *size)`` -> ``(N, C*prod(kernel), prod(out))``: every window as a column."""
    out = _im2col_array(x._array, geo)
    if not needs_grad(x):
        return _make(out)
    node = Im2ColBackward0()
    node.geo = geo
    return record(node, (x,), out)


def col2im(cols: Tensor, geo: Geometry) -> Tensor:
    """The adjoint of :func:`im2col`: columns ``(N, C*prod(kernel), prod(out))`` summed into
    ``(N, C, *size)``."""
    out = _col2im_array(cols._array, geo)
    if not needs_grad(cols):
        return _make(out)
    node = Col2ImBackward0()
    node.geo = geo
    return record(node, (cols,), out)


# -- the convolution primitive -----------------------------------------------------------------
class ConvolutionBackward0(Node):
    """torch's node of every convolution; inputs ``(input, weight, bias)``."""

    __slots__ = ("geo", "groups", "transposed")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        x, w = self.saved()
        assert x is not None and w is not None
        return _conv_backward(g, x, w, self.geo, self.groups, self.transposed,
                              self.needs(0), self.needs(1), self.needs(2))


def _conv_backward(g: Tensor, x: Tensor, w: Tensor, geo: Geometry, groups: int,
                   transposed: bool, nx: bool, nw: bool, nb: bool
                   ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """Gradients of :func:`convolution` for ``(input, weight, bias)`` in gradsum ops. With
    ``cols = im2col(image)`` per group: ``y = W @ cols`` (transposed: ``image = col2im(W^T
    @ x)``), so each gradient is one matmul and one ``im2col``/``col2im``."""
    n, gr, k = x.shape[0], groups, math.prod(geo.kernel)
    lin = math.prod(geo.out)
    gx = gw = gb = None
    if transposed:
        # x: (N, Cin, *out), w: (Cin, Cout/G, *k), g: the image (N, Cout, *size)
        cin = x.shape[1]
        gcols = ops.reshape(im2col(g, geo), (n, gr, geo.c // gr * k, lin))
        if nx:
            wf = ops.reshape(w, (gr, cin // gr, geo.c // gr * k))
            gx = ops.reshape(ops.matmul(wf, gcols), tuple(x.shape))
        if nw:
            xf = ops.reshape(x, (n, gr, cin // gr, lin))
            gw = ops.reshape(ops.sum(ops.matmul(xf, ops.transpose(gcols, -1, -2)), 0),
                             tuple(w.shape))
    else:
        # x: the image (N, C, *size), w: (O, C/G, *k), g: (N, O, *out)
        o = w.shape[0]
        gf = ops.reshape(g, (n, gr, o // gr, lin))
        if nx:
            wf = ops.reshape(w, (gr, o // gr, geo.c // gr * k))
            gcols = ops.matmul(ops.transpose(wf, -1, -2), gf)
            gx = col2im(ops.reshape(gcols, (n, geo.c * k, lin)), geo)
        if nw:
            cols = ops.reshape(im2col(x, geo), (n, gr, geo.c // gr * k, lin))
            gw = ops.reshape(ops.sum(ops.matmul(gf, ops.transpose(cols, -1, -2)), 0),
                             tuple(w.shape))
    if nb:
        gb = ops.sum(g, (0, *range(2, g.ndim)))
    return gx, gw, gb


def _conv_array(xa: Any, wa: Any, geo: Geometry, groups: int, transposed: bool) -> Any:
    n, k = xa.shape[0], math.prod(geo.kernel)
    lin = math.prod(geo.out)
    if transposed:
        cin = xa.shape[1]
        xf = xa.reshape(n, groups, cin // groups, lin)
        wf = wa.reshape(groups, cin // groups, geo.c // groups * k)
        cols = (wf.transpose(0, 2, 1) @ xf).reshape(n, geo.c * k, lin)
        return _col2im_array(cols, geo)
    o = wa.shape[0]
    cols = _im2col_array(xa, geo)  # (N, C*k, L)
    if groups == 1:
        out = wa.reshape(o, geo.c * k) @ cols
    else:
        out = (wa.reshape(groups, o // groups, geo.c // groups * k)
               @ cols.reshape(n, groups, geo.c // groups * k, lin))
    return out.reshape((n, o) + geo.out)


def convolution(x: Tensor, w: Tensor, b: Tensor | None, geo: Geometry, groups: int,
                transposed: bool) -> Tensor:
    """The batched convolution (``transposed``: its adjoint in the input) of checked
    arguments: ``geo`` describes the image (the input, or the transposed output)."""
    xa, wa = x._array, w._array
    # half, bfloat16: the products and the bias in float32, rounded once (torch's kernels)
    low = xa.dtype if xa.dtype.kind == "V" or xa.dtype == xp.float16 else None
    if low is not None:
        xa, wa = xa.astype(xp.float32), wa.astype(xp.float32)
    out = _conv_array(xa, wa, geo, groups, transposed)
    if b is not None:
        out += b._array.reshape((1, -1) + (1,) * len(geo.size)).astype(out.dtype, copy=False)
    if low is not None:
        out = out.astype(low)
    if not needs_grad(x, w, b):
        return _make(out)
    node = ConvolutionBackward0()
    node.geo, node.groups, node.transposed = geo, groups, transposed
    res = record(node, (x, w, b), out)
    node.save(x, w)
    return res


# -- argument checks (torch's ConvUtils) -------------------------------------------------------
def expand(v: Any, nd: int, name: str) -> tuple[int, ...]:
    """An int or a list of 1 or ``nd`` ints as ``nd`` ints (torch's argument parser)."""
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * nd
        if len(v) != nd:
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {nd} values to "
                f"match the convolution dimensions, but got {name}={list(v)}"
            )
        return tuple(int(i) for i in v)
    return (int(v),) * nd


def _batched(input: Tensor, nd: int, fn: str) -> bool:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got "
            f"input of size: {list(input.shape)}"
        )
    return input.ndim == nd + 2


def _check_common(input: Tensor, weight: Tensor, bias: Tensor | None, nd: int,
                  stride: Any, dilation: Any, groups: int, transposed: bool, fn: str
                  ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if weight.ndim != nd + 2:
        raise RuntimeError(
            f"{fn}: expected a {nd + 2}-D weight "
            f"({'in_channels, out_channels/groups' if transposed else 'out_channels, '}"
            f"{'' if transposed else 'in_channels/groups'}, *kernel_size), got weight of size "
            f"{list(weight.shape)}"
        )
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        other = weight if input.dtype != weight.dtype else bias
        assert other is not None
        raise RuntimeError(
            f"Input type ({input.dtype.name}) and {'weight' if other is weight else 'bias'} "
            f"type ({other.dtype.name}) should be the same: convert them to one dtype"
        )
    s, d = expand(stride, nd, "stride"), expand(dilation, nd, "dilation")
    if min(s) <= 0:
        raise RuntimeError(f"non-positive stride is not supported (got stride={list(s)})")
    if min(d) <= 0:
        raise RuntimeError(f"non-positive dilation is not supported (got dilation={list(d)})")
    if groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported (got groups={groups})")
    c, wc = input.shape[1], weight.shape[0]
    if wc % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    want = wc if transposed else weight.shape[1] * groups
    if c != want:
        t = "transposed=1, " if transposed else f"groups={groups}, "
        raise RuntimeError(
            f"Given {t}weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {want} channels, but got {c} channels instead"
        )
    o = weight.shape[1] * groups if transposed else wc
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        t = "transposed=1, " if transposed else ""
        raise RuntimeError(
            f"Given {t}weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {o} elements, but got bias of size {list(bias.shape)} instead"
        )
    return s, d


def same_padding(kernel: tuple[int, ...], dilation: tuple[int, ...]) -> tuple[int, ...]:
    """``padding='same'``: flat ``(before, after)`` per dim, the extra one after (torch)."""
    pads: list[int] = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


def conv_nd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
            dilation: Any, groups: int, nd: int, warn_asymmetric: Callable[[], None]) -> Tensor:
    """torch's ``conv{nd}d``: checks, then :func:`convolution` (unbatched input gets a batch
    dim of one, squeezed after)."""
    fn = f"conv{nd}d"
    batched = _batched(input, nd, fn)
    x = input if batched else ops.unsqueeze(input, 0)
    s, d = _check_common(x, weight, bias, nd, stride, dilation, groups, False, fn)
    k = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads: tuple[int, ...] = (0,) * (2 * nd)
        elif padding == "same":
            if any(v != 1 for v in s):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = same_padding(k, d)
            if any(pads[2 * i] != pads[2 * i + 1] for i in range(nd)):
                warn_asymmetric()
        else:
            raise RuntimeError(
                f"Invalid padding string: '{padding}' (expected 'valid' or 'same')")
    else:
        p = expand(padding, nd, "padding")
        if min(p) < 0:
            raise RuntimeError(f"negative padding is not supported (got padding={list(p)})")
        pads = tuple(v for q in p for v in (q, q))
    geo = Geometry.make(tuple(x.shape), k, d, pads, s)
    out = convolution(x, weight, bias, geo, groups, False)
    return out if batched else ops.squeeze(out, 0)


def conv_transpose_nd(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                      padding: Any, output_padding: Any, groups: int, dilation: Any,
                      nd: int) -> Tensor:
    """torch's ``conv_transpose{nd}d``: the adjoint of ``conv{nd}d`` in its input, with
    ``output_padding`` extra rows after (each dim)."""
    fn = f"conv_transpose{nd}d"
    if isinstance(padding, str):
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    batched = _batched(input, nd, fn)
    x = input if batched else ops.unsqueeze(input, 0)
    s, d = _check_common(x, weight, bias, nd, stride, dilation, groups, True, fn)
    p = expand(padding, nd, "padding")
    op = expand(output_padding, nd, "output_padding")
    if min(p) < 0:
        raise RuntimeError(f"negative padding is not supported (got padding={list(p)})")
    if min(op) < 0:
        raise RuntimeError(
            f"negative output_padding is not supported (got output_padding={list(op)})")
    if any(o >= st and o >= dl for o, st, dl in zip(op, s, d)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding={list(op)}, stride={list(s)}, dilation={list(d)}"
        )
    k = tuple(weight.shape[2:])
    ins = tuple(x.shape[2:])
    size = tuple((i - 1) * st - 2 * pp + dl * (kk - 1) + oo + 1
                 for i, st, pp, dl, kk, oo in zip(ins, s, p, d, k, op))
    if min(size) < 1:
        shown = (1,) * (nd == 1)  # (torch shows a 1-D size as 2-D)
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, shown + ins))}). Calculated "
            f"output size per channel: ({' x '.join(map(str, shown + size))}). Output size is "
            "too small (lower the padding or the stride)"
        )
    c = weight.shape[1] * groups
    geo = Geometry.make((x.shape[0], c) + size, k, d, tuple(v for q in p for v in (q, q)), s,
                        out=ins)
    out = convolution(x, weight, bias, geo, groups, True)
    return out if batched else ops.squeeze(out, 0)
