"""torch's fused CPU attention: the ``ScaledDotProductFlashAttentionForCpuBackward0`` node that
``scaled_dot_product_attention`` records where torch's CPU dispatcher picks its flash kernel
(:func:`_flash_cpu`), its forward and backward on arrays, and the math backend's attention
weights (:func:`_weights`: ``safe_softmax(q k^T * scale + mask)``) that its recorded rule
and the composed form share. ``F.scaled_dot_product_attention`` (in
:mod:`gradsum.nn._attention`) checks the arguments, builds the mask and composes the math
backend elsewhere.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> q = gradsum.ones(1, 2, 3, 4, requires_grad=True)
    >>> y = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    >>> y.grad_fn.name()
    'ScaledDotProductFlashAttentionForCpuBackward0'
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as ops
from gradsum._backend import silenced, xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state as _grad_state
from gradsum.autograd.grad_mode import no_grad
from gradsum.autograd.graph import Node
from gradsum.ops._core import _make, needs_grad, record
from gradsum.ops.activation import _max_along
from gradsum.ops.special.erf import _scalar_op

__all__ = ["flash_attention"]


_CAUSAL: dict[tuple[int, int, Any], Any] = {}


_ONES: dict[tuple[int, Any], Any] = {}


def _flash_cpu(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
               dropout_p: float, enable_gqa: bool) -> bool:
    """Whether torch's CPU dispatcher (``sdp_utils_cpp``) runs its flash kernel, one
    ``ScaledDotProductFlashAttentionForCpuBackward0`` node: 4-D operands with one batch size,
    equal head counts (or grouped ones with ``enable_gqa``), one non-zero head dim, non-empty
    sequences, unit last strides, no dropout and a 2-D or 4-D mask, if any, that needs no
    gradient. Otherwise torch composes its math backend, as gradsum always computes."""
    q, k, v = query._array, key._array, value._array
    if not (q.ndim == k.ndim == v.ndim == 4) or dropout_p > 0.0:
        return False
    if not (q.shape[0] == k.shape[0] == v.shape[0]) or k.shape[2] != v.shape[2]:
        return False
    e = q.shape[3]
    if e == 0 or k.shape[3] != e or v.shape[3] != e or q.shape[2] == 0 or k.shape[2] == 0:
        return False
    hq, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    if not (hq == hk == hv or (enable_gqa and hk == hv and hq % hk == 0)):
        return False
    if attn_mask is not None and (attn_mask.ndim not in (2, 4) or attn_mask.requires_grad):
        return False
    return all(a.strides[-1] == a.itemsize for a in (q, k, v))


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    """torch's fused CPU attention node (see :func:`_flash_cpu`). The forward values are the
    math backend's; the backward recomputes the attention weights ``P`` from the saved
    operands and applies the softmax-attention rule in gradsum ops (so it is itself
    differentiable): ``dV = P^T g``, ``dS = P * (g V^T - rowsum(g V^T * P))``,
    ``dQ = scale * dS K``, ``dK = scale * dS^T Q``; with grouped heads the repeated key/value
    heads' gradients are summed back."""

    __slots__ = ("mask", "scale")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        if len(self._saved or ()) > 3 and not _grad_state.enabled:  # (no graph to record)
            arrays = self.saved_arrays()
            if g._array.dtype == arrays[3].dtype:
                return _flash_backward_arrays(self, g._array, *arrays)
        saved = self.saved()
        q, k, v = saved[0], saved[1], saved[2]
        rep = q.shape[1] // k.shape[1]
        kk = ops.repeat_interleave(k, rep, dim=1) if rep > 1 else k
        vv = ops.repeat_interleave(v, rep, dim=1) if rep > 1 else v
        p = _weights(q, kk, self.mask, self.scale)
        gq = gk = gv = None
        if self.needs(2):
            gv = _group_sum(ops.matmul(ops.transpose(p, -2, -1), g), rep)
        if self.needs(0) or self.needs(1):
            dp = ops.matmul(g, ops.transpose(vv, -2, -1))
            ds = ops.mul(p, ops.sub(dp, ops.sum(ops.mul(dp, p), -1, keepdim=True)))
            if self.needs(0):
                gq = ops.mul(ops.matmul(ds, kk), self.scale)
            if self.needs(1):
                gk = _group_sum(ops.mul(ops.matmul(ops.transpose(ds, -2, -1), q), self.scale),
                                rep)
        return gq, gk, gv


@silenced
def _flash_backward_arrays(node: ScaledDotProductFlashAttentionForCpuBackward0, ga: Any,
                           q: Any, k: Any, v: Any, p: Any) -> tuple[Tensor | None, ...]:
    """The flash node's rule on arrays (its backward when no graph is recorded), from the
    attention weights ``p`` the forward saved: the same products as the recorded rule."""
    rep = q.shape[1] // k.shape[1]
    kk = xp.repeat(k, rep, axis=1) if rep > 1 else k
    vv = xp.repeat(v, rep, axis=1) if rep > 1 else v
    gq = gk = gv = None
    if node.needs(2):
        gv = _make(_group_sum_array(xp.matmul(p.swapaxes(-2, -1), ga), rep))
    if node.needs(0) or node.needs(1):
        dp = xp.matmul(ga, vv.swapaxes(-2, -1))
        dp -= _last_sums(dp * p)
        ds = xp.multiply(p, dp, out=dp)
        if node.needs(0):
            gq = xp.matmul(ds, kk)
            gq *= node.scale
            gq = _make(gq)
        if node.needs(1):
            gk = xp.matmul(ds.swapaxes(-2, -1), q)
            gk *= node.scale
            gk = _make(_group_sum_array(gk, rep))
    return gq, gk, gv


def _group_sum_array(g: Any, rep: int) -> Any:
    """:func:`_group_sum` on an array."""
    if rep == 1:
        return g
    b, h, s, e = g.shape
    return _add_reduce(g.reshape(b, h // rep, rep, s, e), 2)


_add_reduce = xp.add.reduce


def _causal_mask_array(L: int, S: int, dt: Any) -> Any:
    """The additive causal mask (0 on and below the diagonal, -inf above) as a read-only,
    cached array (a training step asks for the same one every time)."""
    key = (L, S, dt)
    m = _CAUSAL.get(key)
    if m is None:
        if len(_CAUSAL) >= 32:
            _CAUSAL.clear()
        m = _CAUSAL[key] = xp.where(xp.tril(xp.ones((L, S), dtype=bool)), 0.0,
                                    -math.inf).astype(dt)
        m.flags.writeable = False
    return m


def _last_sums(a: Any) -> Any:
    """Sums along the last axis (keepdims) of a C-contiguous float32/float64 array: for rows
    up to 128 long a matrix-vector product with ones (BLAS: several times faster than NumPy's
    reduction along short rows, and as accurate there), else NumPy's pairwise reduction."""
    n = a.shape[-1]
    if n > 128 or not a.flags.c_contiguous:
        return _add_reduce(a, -1, None, None, True)
    ones = _ONES.get((n, a.dtype))
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[(n, a.dtype)] = xp.ones(n, dtype=a.dtype)
        ones.flags.writeable = False
    return xp.matmul(a, ones)[..., None]


@silenced
def _attention_probs(q: Any, k: Any, mask: Any, scale: float) -> Any:
    """``safe_softmax(q k^T * scale + mask)`` on float32/float64 arrays, as the math
    backend computes it (both operands scaled by ``sqrt(scale)``; rows that are all
    ``-inf`` give zeros), in place in one buffer."""
    s = math.sqrt(scale)
    att = xp.matmul(q * s, (k * s).swapaxes(-2, -1))
    if mask is not None:
        if xp.broadcast_shapes(att.shape, mask.shape) == att.shape:
            att += mask
        else:
            att = att + mask
    top = _max_along(att, att.ndim - 1)
    dead = top == -math.inf
    any_dead = dead.any()
    if any_dead:
        top[dead] = 0.0
    att -= top
    xp.exp(att, out=att)
    att /= _last_sums(att)
    if any_dead:
        att[xp.broadcast_to(dead, att.shape)] = 0.0
    return att


def _group_sum(g: Tensor, rep: int) -> Tensor:
    """The gradient of ``repeat_interleave(x, rep, dim=1)`` summed back to ``x``'s heads."""
    if rep == 1:
        return g
    b, h, s, e = g.shape
    return ops.sum(ops.reshape(g, (b, h // rep, rep, s, e)), 2)


def _weights(query: Tensor, key: Tensor, mask: Tensor | None, scale: float) -> Tensor:
    """The math backend's attention weights: ``safe_softmax(q k^T * scale + mask)``, with
    both operands scaled by ``sqrt(scale)`` (torch's nodes: ``MulBackward1``, a scalar
    product from C++)."""
    s = math.sqrt(scale)
    attn = ops.matmul(_scalar_op(query, s, True),
                      _scalar_op(ops.transpose(key, -2, -1), s, True))
    if mask is not None:
        attn = ops.add(attn, mask)
    return ops.activation.safe_softmax(attn, -1)


def flash_attention(q_in: Tensor, k_in: Tensor, v_in: Tensor, query: Tensor, key: Tensor,
                    value: Tensor, mask: Tensor | None, scale_v: float) -> Tensor | None:
    """torch's CPU flash kernel, where :func:`_flash_cpu` says its dispatcher picks it: the
    math backend's values, one ``ScaledDotProductFlashAttentionForCpuBackward0`` node.
    ``q_in, k_in, v_in`` are the operands as given, ``query, key, value`` with grouped heads
    repeated, ``mask`` the additive float mask (or None), ``scale_v`` the scale. None where
    neither the arrays' fast path nor a graph applies: the caller composes the math backend."""
    qa, ka, va = q_in._array, k_in._array, v_in._array
    dt = qa.dtype
    fast = (dt.char in "fd" and ka.dtype == dt and va.dtype == dt
            and (mask is None or mask._array.dtype == dt))
    if fast or needs_grad(q_in, k_in, v_in):
        probs = None
        if fast:
            rep = qa.shape[1] // ka.shape[1]
            probs = _attention_probs(qa, xp.repeat(ka, rep, axis=1) if rep > 1 else ka,
                                     None if mask is None else mask._array, scale_v)
            out_a = xp.matmul(probs, xp.repeat(va, rep, axis=1) if rep > 1 else va)
        else:
            with no_grad():
                out_a = ops.matmul(_weights(query, key, mask, scale_v), value)._array
        if not needs_grad(q_in, k_in, v_in):
            return _make(out_a)
        node = ScaledDotProductFlashAttentionForCpuBackward0()
        node.mask = None if mask is None else mask.detach()
        node.scale = scale_v
        t = record(node, (q_in, k_in, v_in), out_a)
        if probs is None:
            node.save(q_in, k_in, v_in)
        else:  # (the weights too, released with the rest after the backward)
            node.save(q_in, k_in, v_in, _make(probs))
        return t
    return None
