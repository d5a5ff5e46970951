"""Convolution over any number of spatial dims. Two linear primitives, ``im2col`` (sliding
windows to columns) and its adjoint ``col2im`` (columns summed back into the image), each
one's backward being the other, and the ``convolution`` primitive (torch's
``ConvolutionBackward0``): forward on arrays (``im2col`` + one matmul per group, or the
transposed ``matmul`` + ``col2im``), backward written with ``im2col``/``col2im``/``matmul`` so
that any order of derivative works.

Example:
    >>> import gradsum
    >>> from gradsum.ops.conv import Geometry, im2col
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
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
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
                raise RuntimeError(_messages.conv_kernel_larger_than_input(padded, extent))
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


# -- the flat layout of the convolution's arrays -----------------------------------------------
def _strided(base: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    """A view of the C-contiguous ``base`` with ``shape`` and byte ``strides``
    (``as_strided`` without its Python wrapper, a tenth of its cost for a small array)."""
    if base.flags.c_contiguous:
        return xp.ndarray(shape, base.dtype, buffer=base, strides=strides)
    return xp.lib.stride_tricks.as_strided(base, shape=shape, strides=strides, writeable=False)


def _finite(a: Any) -> bool:
    """Whether ``a`` holds no inf or nan (its sum is finite: an overflow only sends a
    finite array to the general path)."""
    with xp.errstate(over="ignore", invalid="ignore"):
        return bool(xp.isfinite(_add_reduce(a, None)))


_add_reduce = xp.add.reduce


class _Flat:
    """Where the windows of one geometry lie in a flat layout made for long copies.

    The padded image is split into ``prod(stride)`` phases (per dim, the positions with one
    residue modulo the stride; a single phase for stride 1), each flattened row-major over
    its grid ``q``. Every kernel tap is then a phase and one offset into it, and the windows
    of all outputs of a sample are one run of ``span`` consecutive positions from there
    (output ``o`` at ``sum(o_d * sq_d)``; the positions between the output rows are computed
    and thrown away). So im2col is one copy whose rows are ``span`` long, col2im one addition
    per tap, and the convolution one matrix product, whatever the stride, dilation and
    padding. Taps are ordered (channel, phase, tap within the phase), the kernel's own order
    when the stride is 1; otherwise the kernel is laid out the same way, with zeros where a
    phase has fewer taps (a kernel size the stride does not divide)."""

    __slots__ = ("_q", "filled", "kshape", "ktaps", "maxoff", "nphase", "nq", "offsets", "out",
                 "packed", "regions", "span", "sq", "taps", "tstrides", "wsize", "wslice",
                 "wsplit")

    def __init__(self, geo: Geometry) -> None:
        nd = len(geo.size)
        phases: list[int] = []
        ka: list[int] = []
        step: list[int] = []
        q: list[int] = []
        self.wsize: tuple[int, ...] = ()
        wslice: list[slice] = []
        for d in range(nd):
            s, k, dl, o = geo.stride[d], geo.kernel[d], geo.dilation[d], geo.out[d]
            padded = geo.size[d] + geo.padding[2 * d] + geo.padding[2 * d + 1]
            if s == 1:
                phases.append(1)
                ka.append(k)
                step.append(dl)
                q.append(max(padded, (k - 1) * dl + o))
                self.wsize += (k,)
                wslice.append(slice(None))
            else:  # tap i at e = i * dilation: phase e % s, position e // s in the phase
                e = (k - 1) * dl + 1
                a = -(-e // s)
                phases.append(s)
                ka.append(a)
                step.append(1)
                q.append(max(-(-padded // s), a - 1 + o))
                self.wsize += (a * s,)
                wslice.append(slice(0, e, dl))
        sq = [math.prod(q[d + 1:]) for d in range(nd)]
        self.sq = tuple(sq)
        self.nq = math.prod(q)
        self.out = tuple(geo.out)
        self.span = sum((o - 1) * t for o, t in zip(geo.out, sq)) + 1
        self.nphase = math.prod(phases)
        self.ktaps = tuple(ka)
        self.taps = math.prod(ka)
        self.tstrides = tuple(st * t for st, t in zip(step, sq))  # per tap dim
        self.offsets = [sum(a * t for a, t in zip(pos, self.tstrides))
                        for pos in itertools.product(*(range(a) for a in ka))]
        self.maxoff = max(self.offsets)
        self.kshape = tuple(geo.kernel)
        self.packed = all(p == 1 for p in phases)  # the kernel's own layout
        #: some (phase, tap) slots hold no tap of the kernel (zeros in the kernel matrix)
        self.filled = self.nphase * self.taps > math.prod(geo.kernel)
        self.wslice = tuple(wslice)
        self.wsplit = tuple(v for a, p in zip(ka, phases) for v in (a, p))
        regions = []
        for r in itertools.product(*(range(p) for p in phases)):
            qs, xs = [], []
            for d in range(nd):
                s, pb, n = phases[d], geo.padding[2 * d], geo.size[d]
                q0 = max(0, -((r[d] - pb) // s))  # the first phase position inside the image
                x0 = q0 * s + r[d] - pb
                cnt = max(0, -(-(n - x0) // s))
                qs.append(slice(q0, q0 + cnt))
                xs.append(slice(x0, x0 + (cnt - 1) * s + 1, s) if cnt else slice(0, 0))
            if all(sl.stop > sl.start for sl in qs):
                ri = 0
                for d in range(nd):
                    ri = ri * phases[d] + r[d]
                regions.append((ri, tuple(qs), tuple(xs)))
        whole = (len(regions) == 1 and self.nphase == 1
                 and all(sl.start == 0 and sl.stop == n for sl, n in zip(regions[0][1], q)))
        self.regions = None if whole else regions  # None: the image is the phase itself
        self._q = tuple(q)

    def to_buf(self, a: Any) -> Any:
        """The image ``(N, C, *size)`` in the phases ``(N, C, nphase * nq)`` (zero padded)."""
        n, c = a.shape[:2]
        if self.regions is None:
            return xp.ascontiguousarray(a).reshape(n, c, self.nq)
        buf = xp.zeros((n, c, self.nphase * self.nq), dtype=a.dtype)
        v = buf.reshape((n, c, self.nphase) + self._q)
        for ri, qs, xs in self.regions:
            v[(slice(None), slice(None), ri) + qs] = a[(slice(None), slice(None)) + xs]
        return buf

    def from_buf(self, buf: Any, size: tuple[int, ...]) -> Any:
        """The adjoint of :meth:`to_buf`: the image ``(N, C, *size)`` read from the phases."""
        n, c = buf.shape[:2]
        if self.regions is None:
            return xp.ascontiguousarray(buf).reshape((n, c) + size)
        v = buf.reshape((n, c, self.nphase) + self._q)
        out = xp.empty((n, c) + size, dtype=buf.dtype)
        for ri, qs, xs in self.regions:
            out[(slice(None), slice(None)) + xs] = v[(slice(None), slice(None), ri) + qs]
        return out

    def im2col(self, buf: Any) -> Any:
        """``(N, C, nphase * nq)`` -> the columns ``(N, C * nphase * taps, span)``."""
        n, c = buf.shape[:2]
        e = buf.itemsize
        cols = _strided(buf, (n, c, self.nphase) + self.ktaps + (self.span,),
                        (buf.strides[0], buf.strides[1], self.nq * e)
                        + tuple(t * e for t in self.tstrides) + (e,))
        return cols.reshape(n, c * self.nphase * self.taps, self.span)

    def col2im(self, cols: Any, c: int) -> Any:
        """The adjoint of :meth:`im2col`: columns summed into the phases
        ``(N, C, nphase * nq)``, tap by tap."""
        n = cols.shape[0]
        buf = xp.zeros((n, c, self.nphase, self.nq), dtype=cols.dtype)
        g = cols.reshape(n, c, self.nphase, self.taps, self.span)
        span = self.span
        for t, off in enumerate(self.offsets):
            buf[:, :, :, off:off + span] += g[:, :, :, t]
        return buf.reshape(n, c, self.nphase * self.nq)

    def to_full(self, y: Any, plane: bool = False) -> Any:
        """Outputs ``(N, O, *out)`` at their places in the span ``(N, O, span)`` (zeros
        between the rows; ``plane``: in the whole phase grid ``(N, O, nq)``)."""
        n, o = y.shape[:2]
        length = self.nq if plane else self.span
        if length == math.prod(self.out):
            return xp.ascontiguousarray(y).reshape(n, o, length)
        full = xp.zeros((n, o, length), dtype=y.dtype)
        e = full.itemsize
        view = _strided(full, (n, o) + self.out,
                        full.strides[:2] + tuple(t * e for t in self.sq))
        view[...] = y
        return full

    def from_full(self, full: Any) -> Any:
        """The adjoint of :meth:`to_full`: the outputs ``(N, O, *out)`` of the span."""
        n, o = full.shape[:2]
        if self.span == math.prod(self.out):
            return full.reshape((n, o) + self.out)
        e = full.itemsize
        return _strided(full, (n, o) + self.out,
                        full.strides[:2] + tuple(t * e for t in self.sq)).copy()

    def col2im_plane(self, m: Any, full: Any, c: int) -> Any:
        """``col2im(m.T @ full)`` for outputs laid out in the whole phase grid (``full``
        from ``to_full(..., plane=True)``, zero off the outputs; ``m`` a finite kernel
        matrix ``(A, C * nphase * taps)``): the product ordered tap first, so each tap's
        columns are one block added at its offset. The samples lie back to back in one flat
        buffer (an output's taps stay inside its own plane, so none reaches the next sample):
        each tap's addition writes one contiguous run."""
        n = full.shape[0]
        a = m.shape[0]
        r = c * self.nphase
        mt = m.reshape(a, r, self.taps).transpose(2, 1, 0).reshape(self.taps * r, a)
        g = (mt @ full).reshape(n, self.taps, r * self.nq)
        size = r * self.nq
        total = n * size
        buf = xp.zeros(total + self.maxoff, dtype=g.dtype)
        for t, off in enumerate(self.offsets):
            dst = buf[off:off + total].reshape(n, size)
            dst += g[:, t]
        return buf[:total].reshape(n, c, self.nphase * self.nq)

    def pack(self, w: Any) -> Any:
        """A kernel ``(A, B, *k)`` as the matrix ``(A, B * nphase * taps)`` of the columns'
        order."""
        a, b = w.shape[:2]
        if self.packed:
            return w.reshape(a, b * self.taps)
        wz = xp.zeros((a, b) + self.wsize, dtype=w.dtype)
        wz[(slice(None), slice(None)) + self.wslice] = w
        nd = len(self.ktaps)
        wz = wz.reshape((a, b) + self.wsplit)
        perm = (0, 1) + tuple(3 + 2 * d for d in range(nd)) + tuple(2 + 2 * d
                                                                     for d in range(nd))
        return wz.transpose(perm).reshape(a, b * self.nphase * self.taps)

    def unpack(self, m: Any, a: int, b: int) -> Any:
        """The adjoint of :meth:`pack`: ``(A, B * nphase * taps)`` -> ``(A, B, *k)``."""
        if self.packed:
            return m.reshape((a, b) + self.kshape)
        nd = len(self.ktaps)
        phases = self.wsplit[1::2]
        g = m.reshape((a, b) + phases + self.ktaps)
        perm = [0, 1]
        for d in range(nd):
            perm += [2 + nd + d, 2 + d]
        g = g.transpose(perm).reshape((a, b) + self.wsize)
        return xp.ascontiguousarray(g[(slice(None), slice(None)) + self.wslice])


_FLAT: dict[tuple[Any, ...], _Flat] = {}


def _flat(geo: Geometry) -> _Flat:
    """The (cached) flat layout of ``geo``."""
    key = (geo.c, geo.size, geo.kernel, geo.dilation, geo.padding, geo.stride, geo.out)
    f = _FLAT.get(key)
    if f is None:
        if len(_FLAT) >= 256:
            _FLAT.clear()
        f = _FLAT[key] = _Flat(geo)
    return f


def _grouped(m: Any, cols: Any, groups: int, trans: bool = False) -> Any:
    """``m @ cols`` per group (``m.T`` with ``trans``): ``m`` ``(A, B)``, ``cols``
    ``(N, R, span)`` -> ``(N, A or B per group * groups, span)``."""
    if groups == 1:
        return (m.T if trans else m) @ cols
    n, r, span = cols.shape
    mg = m.reshape(groups, m.shape[0] // groups, m.shape[1])
    if trans:
        mg = mg.transpose(0, 2, 1)
    out = mg @ cols.reshape(n, groups, r // groups, span)
    return out.reshape(n, groups * out.shape[2], span)


def _grouped_wgrad(a: Any, b: Any, groups: int) -> Any:
    """``sum_n a[n] @ b[n].T`` per group: ``a`` ``(N, A, span)``, ``b`` ``(N, B, span)`` ->
    ``(A, B / groups)``."""
    if groups == 1:
        return (a @ b.transpose(0, 2, 1)).sum(0)
    n, ra, span = a.shape
    rb = b.shape[1] // groups
    ag = a.reshape(n, groups, ra // groups, span)
    bg = b.reshape(n, groups, rb, span)
    return (ag @ bg.transpose(0, 1, 3, 2)).sum(0).reshape(ra, rb)


def _conv_backward_arrays(ga: Any, xa: Any, wa: Any, geo: Geometry, groups: int,
                          transposed: bool, nx: bool, nw: bool, nb: bool
                          ) -> tuple[Any, Any, Any]:
    """:func:`_conv_backward` on arrays (nothing recorded): each gradient one product in
    the flat layout."""
    f = _flat(geo)
    gx = gw = gb = None
    a, b = wa.shape[:2]
    wp = f.pack(wa) if nx else None
    if transposed:  # g: the image; x: (N, Cin, *out)
        gcols = f.im2col(f.to_buf(ga))
        if nx:
            gx = f.from_full(_grouped(wp, gcols, groups))
        if nw:
            gw = f.unpack(_grouped_wgrad(f.to_full(xa), gcols, groups), a, b)
    else:
        gf = f.to_full(ga)
        if nx:
            if groups == 1 and f.nq <= 2 * f.span:
                buf = f.col2im_plane(wp, f.to_full(ga, plane=True), geo.c)
            else:
                buf = f.col2im(_grouped(wp, gf, groups, True), geo.c)
            gx = f.from_buf(buf, geo.size)
        if nw:
            gw = f.unpack(_grouped_wgrad(gf, f.im2col(f.to_buf(xa)), groups), a, b)
    if nb:
        gb = ga.sum(axis=(0, *range(2, ga.ndim)))
    return gx, gw, gb


# -- the convolution primitive -----------------------------------------------------------------
class ConvolutionBackward0(Node):
    """torch's node of every convolution; inputs ``(input, weight, bias)``."""

    __slots__ = ("geo", "groups", "transposed")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        ga = g._array
        if not _state.enabled and ga.dtype.kind == "f" and ga.dtype.itemsize >= 4:
            xa, wa = self.saved_arrays()  # (nothing to record: the products of the arrays)
            # (the flat layout computes 0 * x between the rows: with an inf or nan where
            # that lands in a sum, the windows' layout, as torch)
            nx = self.needs(0)
            if (xa.dtype is ga.dtype and wa.dtype is ga.dtype
                    and (not nx or (_finite(wa) and (not _flat(self.geo).filled
                                                     or _finite(ga))))
                    and (not self.needs(1) or _finite(ga if self.transposed else xa))):
                gx, gw, gb = _conv_backward_arrays(
                    ga, xa, wa, self.geo, self.groups, self.transposed, nx,
                    self.needs(1), self.needs(2))
                return (None if gx is None else _make(gx), None if gw is None else _make(gw),
                        None if gb is None else _make(gb))
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
    """The convolution (``transposed``: its adjoint) of arrays: one product of the kernel
    matrix and the flat columns per sample (per group). An inf or nan where the flat layout
    would multiply it by one of its zeros (between the rows, or a kernel slot holding no tap)
    takes the windows' layout."""
    f = _flat(geo)
    if (transposed and not _finite(wa)) or (f.filled and not _finite(xa)):
        return _conv_array_windows(xa, wa, geo, groups, transposed)
    wp = f.pack(wa)
    if transposed:
        if groups == 1 and f.nq <= 2 * f.span:  # (else the plane is mostly zeros)
            buf = f.col2im_plane(wp, f.to_full(xa, plane=True), geo.c)
        else:
            buf = f.col2im(_grouped(wp, f.to_full(xa), groups, True), geo.c)
        return f.from_buf(buf, geo.size)
    return f.from_full(_grouped(wp, f.im2col(f.to_buf(xa)), groups))


def _conv_array_windows(xa: Any, wa: Any, geo: Geometry, groups: int, transposed: bool
                        ) -> Any:
    """:func:`_conv_array` on the windows' columns ``(N, C * k, prod(out))``."""
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
            raise RuntimeError(_messages.conv_argument_wrong_length(name, nd, v))
        return tuple(int(i) for i in v)
    return (int(v),) * nd


def _batched(input: Tensor, nd: int, fn: str) -> bool:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(_messages.conv_input_wrong_rank(nd, fn, input))
    return input.ndim == nd + 2


def _check_common(input: Tensor, weight: Tensor, bias: Tensor | None, nd: int,
                  stride: Any, dilation: Any, groups: int, transposed: bool, fn: str
                  ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if weight.ndim != nd + 2:
        raise RuntimeError(_messages.conv_weight_wrong_rank(fn, nd, transposed, weight))
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        other = weight if input.dtype != weight.dtype else bias
        assert other is not None
        raise RuntimeError(_messages.conv_dtype_mismatch(input, other, weight))
    s, d = expand(stride, nd, "stride"), expand(dilation, nd, "dilation")
    if min(s) <= 0:
        raise RuntimeError(_messages.conv_stride_not_positive(s))
    if min(d) <= 0:
        raise RuntimeError(_messages.conv_dilation_not_positive(d))
    if groups <= 0:
        raise RuntimeError(_messages.conv_groups_not_positive(groups))
    c, wc = input.shape[1], weight.shape[0]
    if wc % groups:
        raise RuntimeError(_messages.conv_weight_not_divisible_by_groups(groups, weight))
    want = wc if transposed else weight.shape[1] * groups
    if c != want:
        raise RuntimeError(
            _messages.conv_input_channels_mismatch(transposed, groups, weight, input, want, c)
        )
    o = weight.shape[1] * groups if transposed else wc
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise RuntimeError(_messages.conv_bias_size_mismatch(transposed, weight, o, bias))
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
                raise RuntimeError(_messages.conv_same_padding_strided())
            pads = same_padding(k, d)
            if any(pads[2 * i] != pads[2 * i + 1] for i in range(nd)):
                warn_asymmetric()
        else:
            raise RuntimeError(_messages.conv_invalid_padding_string(padding))
    else:
        p = expand(padding, nd, "padding")
        if min(p) < 0:
            raise RuntimeError(_messages.conv_negative_padding(p))
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
        raise TypeError(_messages.conv_padding_str_not_supported(fn))
    batched = _batched(input, nd, fn)
    x = input if batched else ops.unsqueeze(input, 0)
    s, d = _check_common(x, weight, bias, nd, stride, dilation, groups, True, fn)
    p = expand(padding, nd, "padding")
    op = expand(output_padding, nd, "output_padding")
    if min(p) < 0:
        raise RuntimeError(_messages.conv_negative_padding(p))
    if min(op) < 0:
        raise RuntimeError(_messages.conv_negative_output_padding(op))
    if any(o >= st and o >= dl for o, st, dl in zip(op, s, d)):
        raise RuntimeError(_messages.conv_output_padding_too_large(op, s, d))
    k = tuple(weight.shape[2:])
    ins = tuple(x.shape[2:])
    size = tuple((i - 1) * st - 2 * pp + dl * (kk - 1) + oo + 1
                 for i, st, pp, dl, kk, oo in zip(ins, s, p, d, k, op))
    if min(size) < 1:
        shown = (1,) * (nd == 1)  # (torch shows a 1-D size as 2-D)
        raise RuntimeError(_messages.conv_output_size_too_small(shown, ins, size))
    c = weight.shape[1] * groups
    geo = Geometry.make((x.shape[0], c) + size, k, d, tuple(v for q in p for v in (q, q)), s,
                        out=ins)
    out = convolution(x, weight, bias, geo, groups, True)
    return out if batched else ops.squeeze(out, 0)
