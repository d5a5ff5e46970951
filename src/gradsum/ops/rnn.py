"""The recurrence primitive of ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU`` and their cells: one layer
in one direction over a whole sequence (padded or packed) is one op and one graph node.

:func:`rnn_layer` computes the input projection of every time step in one matrix product
(``x W_ih^T + b_ih``, as torch's CPU kernel does), then runs the recurrence on arrays: per
step one product ``h W_hh^T`` and the gate arithmetic in place, in torch's order (LSTM gates
``i, f, g, o``, ``c' = f c + i g``, ``h' = o tanh(c')``, optionally projected by ``W_hr``; GRU
gates ``r, z, n`` with ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))`` and ``h' = (h - n) z +
n``; Elman ``tanh`` or ``relu``). It keeps the gate activations the backward needs. The
backward is backpropagation through time on arrays: per step one product with ``W_hh`` and a
few passes, then the weight gradients as one product each over all steps.

With ``create_graph=True`` the backward instead recomputes the layer from gradsum ops
(:func:`compose_layer`, the same arithmetic step by step) and differentiates that, so every
order of derivative works. The composed form is also what runs under CPU autocast and for
dtypes other than float32 / float64.

A layer's time steps are described by :class:`Steps`: the rows of the flattened ``(N,
features)`` sequence each step reads, in processing order (reversed for the backward
direction). A packed sequence's steps shrink; its state works as torch's packed layers do:
step ``t`` updates the first ``batch_sizes[t]`` rows of the running state in place, so a
sequence that ends keeps its last state and one that starts (backward direction) starts
from its initial state.

Example:
    >>> import gradsum
    >>> from gradsum.ops.rnn import Steps, rnn_layer
    >>> _ = gradsum.manual_seed(0)
    >>> lstm = gradsum.nn.LSTM(3, 4)
    >>> x = gradsum.randn(5, 2, 3)
    >>> y, h, c = rnn_layer("LSTM", x, lstm.weight_ih_l0, lstm.bias_ih_l0, lstm.weight_hh_l0,
    ...                     lstm.bias_hh_l0, None, gradsum.zeros(2, 4), gradsum.zeros(2, 4),
    ...                     Steps.uniform(5, 2, False))
    >>> y.shape, h.shape, y.grad_fn.name()
    ((5, 2, 4), (2, 4), 'MkldnnRnnLayerBackward0')
    >>> bool((y - lstm(x)[0]).abs().max() < 1e-6)
    True
"""

from __future__ import annotations

from typing import Any

from gradsum import _autocast, _blas, ops
from gradsum._backend import dot as _dot
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import Node
from gradsum.ops._core import any_needs_grad, const, record
from gradsum.ops.rearrange import cat, stack

__all__ = ["Steps", "compose_layer", "rnn_layer"]

#: row blocks of the weights per mode
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}

_make = Tensor._make
_mm = _blas.matmul
_FAST = (xp.dtype(xp.float32), xp.dtype(xp.float64))


class Steps:
    """The time steps of one layer in one direction: ``order`` holds ``(t, offset, rows)`` in
    processing order, ``offset`` being the first row of step ``t`` in the flattened ``(n,
    features)`` sequence and ``rows`` its batch size (the first ``rows`` sequences); ``b0``
    is the state's batch size, ``same`` says every step has all ``b0`` rows.

    Example:
        >>> Steps.packed([3, 2, 1], reverse=True).order
        [(2, 5, 1), (1, 3, 2), (0, 0, 3)]
    """

    __slots__ = ("b0", "n", "order", "same")

    def __init__(self, order: list[tuple[int, int, int]], n: int, b0: int,
                 uniform: bool) -> None:
        self.order = order
        self.n = n
        self.b0 = b0
        self.same = uniform

    @classmethod
    def uniform(cls, seq_len: int, batch: int, reverse: bool) -> Steps:
        """A padded ``(seq_len, batch, features)`` sequence (a cell: ``seq_len`` 1)."""
        ts = range(seq_len - 1, -1, -1) if reverse else range(seq_len)
        return cls([(t, t * batch, batch) for t in ts], seq_len * batch, batch, True)

    @classmethod
    def packed(cls, batch_sizes: list[int], reverse: bool) -> Steps:
        """A packed sequence's data, ``batch_sizes[t]`` rows at step ``t``."""
        order = []
        off = 0
        for t, bs in enumerate(batch_sizes):
            order.append((t, off, bs))
            off += bs
        if reverse:
            order.reverse()
        b0 = batch_sizes[0] if batch_sizes else 0
        return cls(order, off, b0, all(bs == b0 for bs in batch_sizes))


# -- the composed form (autocast, other dtypes, and the backward under create_graph) -------------
@_autocast.autocast_policy("linear")
def _linear(x: Tensor, w: Tensor, b: Tensor | None = None) -> Tensor:
    """``F.linear`` on a layer's own weights (which fit, so without its checks): ``linear``
    under torch's CPU autocast policy."""
    return ops.linear(x, w, b)


def _rnn_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    pre = gi + _linear(h, w_hh, b_hh)
    return ops.relu(pre) if relu else pre.tanh()


def _lstm_step(gi: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None) -> tuple[Tensor, Tensor]:
    gates = gi + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c_new = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h_new = o.sigmoid() * c_new.tanh()
    if w_hr is not None:
        h_new = _linear(h_new, w_hr)
    return h_new, c_new


def _gru_step(gi: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    gh = _linear(h, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (h - n)


def _rows(prev: Any, init: Any, bs: int) -> Any:
    """The state rows a step with ``bs`` rows reads: the last step's, then (a backward
    packed direction, where sequences start) the initial state's."""
    k = prev.shape[0]
    if k == bs:
        return prev
    if k > bs:
        return prev[:bs]
    return cat([prev, init[k:bs]], 0)


def compose_layer(mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None, w_hh: Tensor,
                  b_hh: Tensor | None, w_hr: Tensor | None, h0: Tensor, c0: Tensor | None,
                  steps: Steps) -> tuple[Tensor, Tensor, Tensor | None]:
    """:func:`rnn_layer` from gradsum ops, one time step at a time."""
    relu = mode == "RNN_RELU"
    gi = _linear(x, w_ih, b_ih)
    per_t = gi.unbind(0) if x.ndim == 3 else None
    ys: dict[int, Tensor] = {}  # by the step's first row
    cs: dict[int, Tensor] = {}  # (the LSTM's cell states, for its final state)
    h, c = h0, c0
    for t, off, bs in steps.order:
        if per_t is not None:
            g_t = per_t[t]
        else:
            g_t = gi if off == 0 and bs == gi.shape[0] else gi[off:off + bs]
        hp = _rows(h, h0, bs)
        if mode == "LSTM":
            assert c is not None and c0 is not None
            h, c = _lstm_step(g_t, hp, _rows(c, c0, bs), w_hh, b_hh, w_hr)
        elif mode == "GRU":
            h = _gru_step(g_t, hp, w_hh, b_hh)
        else:
            h = _rnn_step(g_t, hp, w_hh, b_hh, relu)
        ys[off] = h
        if c is not None:
            cs[off] = c
    offs = sorted(ys)
    if x.ndim == 3:
        y = stack([ys[o] for o in offs])
    else:
        y = ys[offs[0]] if len(offs) == 1 else cat([ys[o] for o in offs], 0)

    def final(states: dict[int, Tensor], init: Tensor) -> Tensor:
        if steps.same:
            return states[steps.order[-1][1]]
        parts, cov = [], 0
        for _t, off, bs in reversed(steps.order):
            if bs > cov:
                s = states[off]
                parts.append(s[cov:bs] if cov else s)
                cov = bs
        if cov < init.shape[0]:
            parts.append(init[cov:])
        return parts[0] if len(parts) == 1 else cat(parts, 0)

    h_n = final(ys, h0)
    c_n = None if c0 is None else final(cs, c0)
    return y, h_n, c_n


# -- the fused kernel ----------------------------------------------------------------------------
def _fits(mode: str, arrays: tuple[Any, ...], steps: Steps) -> bool:
    """Whether the array kernel applies: one float32/float64 dtype, the shapes it expects,
    autocast off (the composed form casts as torch's policy says)."""
    if _autocast._state.cpu:
        return False
    x, w_ih, b_ih, w_hh, b_hh, w_hr, h0, c0 = arrays
    dt = x.dtype
    if dt not in _FAST:
        return False
    for a in arrays[1:]:
        if a is not None and a.dtype != dt:
            return False
    gate = w_hh.shape[0]
    hid = gate // GATES[mode]
    p = w_hr.shape[0] if w_hr is not None else hid
    return (x.ndim in (2, 3) and w_ih.ndim == 2 and w_hh.ndim == 2 and w_ih.shape[0] == gate
            and w_ih.shape[1] == x.shape[-1] and w_hh.shape[1] == p
            and (b_ih is None or b_ih.shape == (gate,)) and (b_hh is None or b_hh.shape == (gate,))
            and (w_hr is None or w_hr.shape == (p, hid)) and h0.shape == (steps.b0, p)
            and (c0 is None or c0.shape == (steps.b0, hid))
            and x.size == steps.n * x.shape[-1])


def _into(a: Any, b: Any, out: Any) -> None:
    """``out[...] = a @ b`` (``out`` C-contiguous)."""
    if a.shape[0] * a.shape[1] * b.shape[1] < _blas.MIN_FLOPS:
        _dot(a, b, out=out)
    else:
        out[...] = _mm(a, b)


def _matmul(a: Any, b: Any) -> Any:
    if a.shape[0] * a.shape[1] * b.shape[1] < _blas.MIN_FLOPS:
        return _dot(a, b)
    return _mm(a, b)


def _gates(w: Any, g: int, neg: int) -> Any:
    """A weight ``(g * hid, k)`` as ``(g, k, hid)`` (each gate's transpose, row-major), its
    first ``neg`` gates negated (note "Negated gates")."""
    hid = w.shape[0] // g
    # (always a copy: with one input feature or one hidden unit the transpose is already
    # row-major, and ascontiguousarray would hand back the weight itself to be negated)
    out = w.reshape(g, hid, w.shape[1]).transpose(0, 2, 1).copy()
    if neg:
        xp.negative(out[:neg], out=out[:neg])
    return out


def _g2b(glob: Any, steps: Steps) -> Any:
    """Gate-major ``(g, n, hid)`` as step blocks: a flat array in which step ``(off, bs)``
    owns ``[g * hid * off, g * hid * (off + bs))``, its gates ``(g, bs, hid)`` contiguous."""
    g, n, hid = glob.shape
    if n == 0:
        return xp.empty(0, glob.dtype)
    if steps.same:
        b = steps.b0
        return xp.ascontiguousarray(
            glob.reshape(g, n // b, b, hid).transpose(1, 0, 2, 3)).reshape(-1)
    out = xp.empty(g * n * hid, glob.dtype)
    for _t, off, bs in steps.order:
        out[g * hid * off:g * hid * (off + bs)].reshape(g, bs, hid)[...] = glob[:, off:off + bs]
    return out


def _b2g(flat: Any, steps: Steps, g: int, hid: int) -> Any:
    """The inverse of :func:`_g2b`: ``(g, n, hid)``."""
    n = steps.n
    if n == 0:
        return xp.empty((g, 0, hid), flat.dtype)
    if steps.same:
        b = steps.b0
        return xp.ascontiguousarray(
            flat.reshape(n // b, g, b, hid).transpose(1, 0, 2, 3)).reshape(g, n, hid)
    out = xp.empty((g, n, hid), flat.dtype)
    for _t, off, bs in steps.order:
        out[:, off:off + bs] = flat[g * hid * off:g * hid * (off + bs)].reshape(g, bs, hid)
    return out


def _prev(order: list[tuple[int, int, int]], flat: Any, init: Any, uniform: bool) -> Any:
    """The state each step read, as rows of the flattened sequence: from the outputs
    ``flat`` of the step before, or the initial state ``init``."""
    n = flat.shape[0]
    if uniform and order:
        b = order[0][2]
        if order[0][1] == 0:  # forward in time
            return xp.concatenate((init, flat[:n - b]))
        return xp.concatenate((flat[b:], init))
    out = xp.empty_like(flat)
    prev = init
    for _t, off, bs in order:
        k = prev.shape[0]
        if k >= bs:
            out[off:off + bs] = prev[:bs]
        else:
            out[off:off + k] = prev
            out[off + k:off + bs] = init[k:bs]
        prev = flat[off:off + bs]
    return out


def _final(steps: Steps, flat: Any, init: Any) -> Any:
    """The state after the last step: each row from the last step that updated it."""
    if steps.same:
        off = steps.order[-1][1]
        return flat[off:off + steps.b0].copy()
    out = xp.empty_like(init)
    cov = 0
    for _t, off, bs in reversed(steps.order):
        if bs > cov:
            out[cov:bs] = flat[off + cov:off + bs]
            cov = bs
    if cov < out.shape[0]:
        out[cov:] = init[cov:]
    return out


def _forward(mode: str, arrays: tuple[Any, ...], steps: Steps, keep: bool
             ) -> tuple[Any, Any, Any, Any]:
    """The layer on arrays: ``(ys, h_n, c_n, cache)``; ``cache`` (when ``keep``) holds what
    the backward reads.

    Gated layers keep their gates gate-major, ``(gates, n, hid)``: a step's gates are the
    contiguous blocks ``[:, off:off + bs]`` (NumPy's fast loops; a gate as a column block
    of ``(bs, gates * hid)`` would be strided), made by one batched product per step.

    Note "Negated gates": the products of every gate that goes through a sigmoid are formed
    negated (the weight's rows and the input projection negated once per call, exactly), so
    ``1 / (1 + exp(-a))`` (torch's formula) is three passes over the gates; an LSTM's ``g``
    gate rides along and is kept as ``tanh(-a) = -g``. The recurrent bias is added to the
    input projection of the whole sequence once (except GRU's ``b_hn``, inside ``r * (...)``),
    so a step adds one array to its product."""
    x, w_ih, b_ih, w_hh, b_hh, w_hr, h0, c0 = arrays
    dt = x.dtype
    n, order = steps.n, steps.order
    gate = w_hh.shape[0]
    ng_ = GATES[mode]
    hid = gate // ng_
    p = w_hh.shape[1]
    one = const(dt, 1)
    x2 = x.reshape(n, x.shape[-1])
    h0 = xp.ascontiguousarray(h0)
    ys = xp.empty((n, p), dt)
    ph = h0
    cache: Any = None
    c_n = None
    if mode == "RNN_TANH" or mode == "RNN_RELU":
        # (the transposed weights copied once, row-major: BLAS multiplies by those faster)
        gi = _matmul(x2, xp.ascontiguousarray(w_ih.T))
        for bias in (b_ih, b_hh):
            if bias is not None:
                gi += bias
        whh_t = xp.ascontiguousarray(w_hh.T)
        relu = mode == "RNN_RELU"
        zero = const(dt, 0)
        for _t, off, bs in order:
            end = off + bs
            hp = ph if ph.shape[0] == bs else ph[:bs] if ph.shape[0] > bs else \
                xp.concatenate((ph, h0[ph.shape[0]:bs]))
            y = ys[off:end]
            _into(hp, whh_t, y)
            y += gi[off:end]
            if relu:
                xp.maximum(y, zero, out=y)
            else:
                xp.tanh(y, out=y)
            ph = y
        if keep:
            deriv = (ys > zero).astype(dt) if relu else one - ys * ys
            cache = (deriv, _prev(order, ys, h0, steps.same))
        return ys, _final(steps, ys, h0), None, cache
    neg = ng_ if mode == "LSTM" else 2  # (GRU: r and z)
    gi = xp.matmul(x2, _gates(w_ih, ng_, neg))  # (gates, n, hid)
    for bias in (b_ih, b_hh):
        if bias is None or (mode == "GRU" and bias is b_hh):
            continue
        b3 = bias.reshape(ng_, 1, hid)
        gi[:neg] -= b3[:neg]
        if neg < ng_:
            gi[neg:] += b3[neg:]
    if mode == "GRU" and b_hh is not None:
        gi[:2] -= b_hh.reshape(3, 1, hid)[:2]
    whh_g = _gates(w_hh, ng_, neg)  # (gates, p, hid)
    gi = _g2b(gi, steps)  # step blocks (see _g2b)
    gb = ng_ * hid
    ys1 = ys.reshape(-1)
    if mode == "LSTM":
        assert c0 is not None
        c0 = xp.ascontiguousarray(c0)
        c01 = c0.reshape(-1)
        act = xp.empty(n * gb, dt)  # blocks: sigmoid(i), sigmoid(f), scratch, sigmoid(o)
        ngs = xp.empty(n * hid, dt)  # -g, as rows
        cs = xp.empty(n * hid, dt)
        tcs = xp.empty(n * hid, dt)
        ms = xp.empty(n * hid, dt) if w_hr is not None else ys1
        whr_t = xp.ascontiguousarray(w_hr.T) if w_hr is not None else None
        scratch = xp.empty(steps.b0 * hid, dt)
        pc = c01
        for _t, off, bs in order:
            end = off + bs
            hp = ph if ph.shape[0] == bs else ph[:bs] if ph.shape[0] > bs else \
                xp.concatenate((ph, h0[ph.shape[0]:bs]))
            m_ = bs * hid
            cp = pc if pc.shape[0] == m_ else pc[:m_] if pc.shape[0] > m_ else \
                xp.concatenate((pc, c01[pc.shape[0]:m_]))
            s0 = gb * off
            a = act[s0:s0 + 4 * m_]
            xp.matmul(hp, whh_g, out=a.reshape(4, bs, hid))
            a += gi[s0:s0 + 4 * m_]  # -(gates)
            r0, r1 = off * hid, end * hid
            ng = ngs[r0:r1]
            xp.tanh(a[2 * m_:3 * m_], out=ng)
            xp.exp(a, out=a)
            a += one
            xp.reciprocal(a, out=a)
            c = cs[r0:r1]
            xp.multiply(a[m_:2 * m_], cp, out=c)
            sc = scratch[:m_]
            xp.multiply(a[:m_], ng, out=sc)
            c -= sc  # f c + i g
            tc = tcs[r0:r1]
            xp.tanh(c, out=tc)
            m = ms[r0:r1]
            xp.multiply(a[3 * m_:], tc, out=m)
            if whr_t is not None:
                _into(m.reshape(bs, hid), whr_t, ys[off:end])
            ph, pc = ys[off:end], c
        cs2 = cs.reshape(n, hid)
        c_n = _final(steps, cs2, c0)
        if keep:
            cache = (act, ngs.reshape(n, hid), tcs.reshape(n, hid),
                     ms.reshape(n, hid) if w_hr is not None else None,
                     _prev(order, ys, h0, steps.same), _prev(order, cs2, c0, steps.same))
    else:
        rzs = xp.empty(n * 2 * hid, dt)  # blocks: r, z
        nns = xp.empty(n * hid, dt)  # n, as rows
        ghs = xp.empty(n * gb, dt)  # blocks: -(W_hr h), -(W_hz h), W_hn h + b_hn
        b_hn = None if b_hh is None else b_hh[2 * hid:]
        for _t, off, bs in order:
            end = off + bs
            hp = ph if ph.shape[0] == bs else ph[:bs] if ph.shape[0] > bs else \
                xp.concatenate((ph, h0[ph.shape[0]:bs]))
            m_ = bs * hid
            s0 = gb * off
            gh = ghs[s0:s0 + 3 * m_]
            xp.matmul(hp, whh_g, out=gh.reshape(3, bs, hid))
            if b_hn is not None:
                ghn = gh[2 * m_:].reshape(bs, hid)
                ghn += b_hn
            s2 = 2 * hid * off
            rz = rzs[s2:s2 + 2 * m_]
            xp.add(gh[:2 * m_], gi[s0:s0 + 2 * m_], out=rz)
            xp.exp(rz, out=rz)
            rz += one
            xp.reciprocal(rz, out=rz)
            r0, r1 = off * hid, end * hid
            nn = nns[r0:r1]
            xp.multiply(gh[2 * m_:], rz[:m_], out=nn)
            nn += gi[s0 + 2 * m_:s0 + 3 * m_]
            xp.tanh(nn, out=nn)
            y = ys1[r0:r1]
            xp.subtract(hp.reshape(-1), nn, out=y)
            y *= rz[m_:]
            y += nn
            ph = ys[off:end]
        if keep:
            cache = (rzs, nns.reshape(n, hid), ghs, _prev(order, ys, h0, steps.same))
    return ys, _final(steps, ys, h0), c_n, cache


def _state_grad(g: Any, shape: tuple[int, ...], dt: Any) -> Any:
    """A writable C-contiguous copy of an incoming state gradient (zeros for none)."""
    if g is None:
        return xp.zeros(shape, dt)
    return xp.array(g, dtype=dt, order="C", copy=True)


def _rows_major(d: Any) -> Any:
    """Gate-major ``(gates, n, hid)`` as the rows ``(n, gates * hid)`` (torch's layout)."""
    g, n, hid = d.shape
    return xp.ascontiguousarray(d.transpose(1, 0, 2)).reshape(n, g * hid)


def _backward(mode: str, cache: Any, arrays: tuple[Any, ...], steps: Steps, gy: Any,
              g_h: Any, g_c: Any, need: tuple[bool, ...]) -> list[Any]:
    """Backpropagation through time on arrays: the gradients of the eight inputs (``None``
    where ``need`` says none is wanted)."""
    x, w_ih, w_hh, w_hr = arrays[0], arrays[1], arrays[3], arrays[5]
    dt = x.dtype
    n, order, b0 = steps.n, steps.order, steps.b0
    gate = w_hh.shape[0]
    ng_ = GATES[mode]
    hid = gate // ng_
    p = w_hh.shape[1]
    one = const(dt, 1)
    gyf = None if gy is None else gy.reshape(n, p)
    d_h = _state_grad(g_h, (b0, p), dt)
    d_c = None
    d_whr = None
    if mode == "LSTM":
        act, ngs, tcs, ms, hprev, cprev = cache
        act = _b2g(act, steps, 4, hid)
        i, f, o = act[0], act[1], act[3]
        q = one - tcs * tcs
        q *= o  # dc += dm * o (1 - tanh(c)^2)
        po = one - o
        po *= o
        po *= tcs  # d(o gate) = dm * tanh(c) o (1 - o)
        pi = i - one
        pi *= i
        pi *= ngs  # d(i gate) = dc * g i (1 - i), from -g
        pf = one - f
        pf *= f
        pf *= cprev
        pg = ngs * ngs
        xp.subtract(one, pg, out=pg)
        pg *= i
        d_rm = xp.empty((n, gate), dt)  # the gates' gradients, torch's rows
        blk = xp.empty((4, b0, hid), dt)
        d_c = _state_grad(g_c, (b0, hid), dt)
        dhs = xp.empty((n, p), dt) if w_hr is not None else None
        for _t, off, bs in reversed(order):
            end = off + bs
            dh = d_h[:bs]
            if gyf is not None:
                dh += gyf[off:end]
            if dhs is not None:
                dhs[off:end] = dh
                dm = _matmul(dh, w_hr)
            else:
                dm = dh
            dc = d_c[:bs]
            dc += dm * q[off:end]
            d4 = blk[:, :bs]
            xp.multiply(dc, pi[off:end], out=d4[0])
            xp.multiply(dc, pf[off:end], out=d4[1])
            xp.multiply(dc, pg[off:end], out=d4[2])
            xp.multiply(dm, po[off:end], out=d4[3])
            rows = d_rm[off:end]
            xp.copyto(rows.reshape(bs, 4, hid), d4.transpose(1, 0, 2))
            _into(rows, w_hh, dh)
            dc *= f[off:end]
        d_gh = d_gi = d_rm
        if dhs is not None and need[5]:
            d_whr = _matmul(dhs.T, ms)
    elif mode == "GRU":
        rzs, nn, ghs, hprev = cache
        r, z = _b2g(rzs, steps, 2, hid)
        ghn = _b2g(ghs, steps, 3, hid)[2]
        pn = one - nn * nn
        pn *= one - z  # d(n pre-activation) = dh (1 - z)(1 - n^2)
        pz = hprev - nn
        pz *= z
        pz *= one - z  # d(z pre-activation) = dh (h - n) z (1 - z)
        qr = one - r
        qr *= r
        qr *= ghn  # d(r pre-activation) = d(n pre) (W_hn h + b_hn) r (1 - r)
        d_gh = xp.empty((n, gate), dt)
        dan = xp.empty((n, hid), dt)
        blk = xp.empty((3, b0, hid), dt)
        for _t, off, bs in reversed(order):
            end = off + bs
            dh = d_h[:bs]
            if gyf is not None:
                dh += gyf[off:end]
            da = dan[off:end]
            xp.multiply(dh, pn[off:end], out=da)
            d3 = blk[:, :bs]
            xp.multiply(da, qr[off:end], out=d3[0])
            xp.multiply(dh, pz[off:end], out=d3[1])
            xp.multiply(da, r[off:end], out=d3[2])
            keep_z = dh * z[off:end]
            rows = d_gh[off:end]
            xp.copyto(rows.reshape(bs, 3, hid), d3.transpose(1, 0, 2))
            _into(rows, w_hh, dh)
            dh += keep_z
        d_gi = d_gh.copy()
        d_gi[:, 2 * hid:] = dan
    else:
        deriv, hprev = cache
        d_gi = d_gh = xp.empty((n, gate), dt)
        for _t, off, bs in reversed(order):
            end = off + bs
            dh = d_h[:bs]
            if gyf is not None:
                dh += gyf[off:end]
            xp.multiply(dh, deriv[off:end], out=d_gi[off:end])
            _into(d_gi[off:end], w_hh, dh)
    out: list[Any] = [None] * 8
    if need[0]:
        out[0] = _matmul(d_gi, w_ih).reshape(x.shape)
    if need[1]:
        out[1] = _matmul(d_gi.T, x.reshape(n, x.shape[-1]))
    if need[2]:
        out[2] = d_gi.sum(0)
    if need[3]:
        out[3] = _matmul(d_gh.T, hprev)
    if need[4]:  # (the same sum for LSTM and Elman layers: a copy, each gradient its buffer)
        out[4] = out[2].copy() if d_gh is d_gi and out[2] is not None else d_gh.sum(0)
    out[5] = d_whr
    if need[6]:
        out[6] = d_h
    if need[7] and d_c is not None:
        out[7] = d_c
    return out


class _LayerBackward(Node):
    """One recurrent layer in one direction; inputs ``(x, w_ih, b_ih, w_hh, b_hh, w_hr, h0,
    c0)``, outputs ``(ys, h_n[, c_n])``. Without ``create_graph`` the rule is
    :func:`_backward` on the kept activations; with it, :func:`compose_layer` recomputed and
    differentiated in gradsum ops."""

    __slots__ = ("cache", "mode", "steps")
    num_outputs = 2

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads  # (a missing output gradient is a zero term: left out)

    def backward(self, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        need = tuple(self.needs(k) for k in range(8))
        if _state.enabled:
            return self._recorded(grads, need)
        arrays = tuple(self.saved_arrays())
        g_c = grads[2] if len(grads) > 2 else None
        res = _backward(self.mode, self.cache, arrays, self.steps,
                        None if grads[0] is None else grads[0]._array,
                        None if grads[1] is None else grads[1]._array,
                        None if g_c is None else g_c._array, need)
        return tuple(None if a is None else _make(a) for a in res)

    def _recorded(self, grads: tuple[Tensor | None, ...], need: tuple[bool, ...]
                  ) -> tuple[Tensor | None, ...]:
        """The backward under create_graph: the layer recomputed from gradsum ops (with grad
        mode on, as the engine has it here) and differentiated, the result recorded."""
        from gradsum import autograd

        ins = self.saved()
        outs = compose_layer(self.mode, *ins, self.steps)  # type: ignore[arg-type]
        pairs = [(o, g) for o, g in zip(outs, grads) if o is not None and g is not None]
        wanted = [k for k in range(8) if need[k] and ins[k] is not None]
        res: list[Tensor | None] = [None] * 8
        if not pairs or not wanted:
            return tuple(res)
        got = autograd.grad([o for o, _ in pairs], [ins[k] for k in wanted],
                            [g for _, g in pairs], create_graph=True, allow_unused=True)
        for k, gk in zip(wanted, got):
            res[k] = gk
        return tuple(res)

    def _release(self) -> None:
        super()._release()
        self.cache = None


class MkldnnRnnLayerBackward0(_LayerBackward):
    """An LSTM layer (torch's CPU node has this name): three outputs ``ys, h_n, c_n``."""

    __slots__ = ()
    num_outputs = 3


class GruLayerBackward0(_LayerBackward):
    """A GRU layer."""

    __slots__ = ()


class RnnTanhLayerBackward0(_LayerBackward):
    """An Elman layer with tanh."""

    __slots__ = ()


class RnnReluLayerBackward0(_LayerBackward):
    """An Elman layer with relu."""

    __slots__ = ()


_NODES: dict[str, type[_LayerBackward]] = {
    "LSTM": MkldnnRnnLayerBackward0, "GRU": GruLayerBackward0,
    "RNN_TANH": RnnTanhLayerBackward0, "RNN_RELU": RnnReluLayerBackward0,
}


def rnn_layer(mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None, w_hh: Tensor,
              b_hh: Tensor | None, w_hr: Tensor | None, h0: Tensor, c0: Tensor | None,
              steps: Steps) -> tuple[Tensor, Tensor, Tensor | None]:
    """One layer in one direction: ``x`` is ``(seq, batch, features)`` (``steps`` uniform)
    or the flattened rows ``(n, features)`` of a packed sequence or a cell's batch; ``h0``
    ``(batch, proj or hidden)`` and, for ``"LSTM"``, ``c0`` ``(batch, hidden)``. Returns the
    outputs of every step (shaped like ``x`` with the output size last), the final hidden
    state and the final cell state (``None`` but for LSTM). ``mode`` is ``"LSTM"``,
    ``"GRU"``, ``"RNN_TANH"`` or ``"RNN_RELU"``; ``w_hr`` is the LSTM projection."""
    ins = (x, w_ih, b_ih, w_hh, b_hh, w_hr, h0, c0)
    arrays = tuple(None if t is None else t._array for t in ins)
    if not _fits(mode, arrays, steps):
        return compose_layer(mode, *ins, steps)  # type: ignore[arg-type]
    rec = any_needs_grad(ins)
    with xp.errstate(over="ignore"):
        ys, h_n, c_n, cache = _forward(mode, arrays, steps, rec)
    ys = ys.reshape(tuple(x.shape[:-1]) + (ys.shape[1],))
    if not rec:
        return _make(ys), _make(h_n), (None if c_n is None else _make(c_n))
    node = _NODES[mode]()
    node.mode = mode
    node.steps = steps
    node.cache = cache
    y = record(node, ins, ys)
    node.save(*ins)
    return (y, _make(h_n, False, node, 1),
            None if c_n is None else _make(c_n, False, node, 2))
