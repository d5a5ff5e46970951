"""Attention: ``scaled_dot_product_attention`` (torch's math backend: both matmuls scaled by
``sqrt(scale)``, a "safe" softmax whose fully masked rows are zeros, dropout) and
``MultiheadAttention`` / ``multi_head_attention_forward`` with torch's parameters, masks and
shapes. Everything is composed from gradsum ops, so every order of derivative works.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> q = k = v = gradsum.ones(1, 2, 3, 4)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    (1, 2, 3, 4)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import gradsum.ops as ops
from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum._backend import silenced, xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state as _grad_state
from gradsum.autograd.grad_mode import is_grad_enabled, no_grad
from gradsum.autograd.graph import Node
from gradsum.backends import mha as _mha_switch
from gradsum.backends.cuda import _sdp as _sdp_switches
from gradsum.nn import functional as F
from gradsum.nn import init
from gradsum.nn.layers import Linear
from gradsum.nn.module import Module
from gradsum.nn.parameter import Parameter
from gradsum.ops._core import _make, needs_grad, record
from gradsum.ops.activation import _max_along
from gradsum.ops.special.erf import _scalar_op

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear",
           "multi_head_attention_forward", "scaled_dot_product_attention"]


def _float_mask(mask: Tensor, dtype: Any) -> Tensor:
    """A bool mask (True = keep) as an additive float mask (0 / -inf); a float one as is."""
    if mask.dtype == D.bool_:
        return _make(xp.where(mask._array, 0.0, -math.inf).astype(_np_dtype(dtype)))
    if not mask.dtype.is_floating_point:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {mask.dtype.name} and query.dtype: {dtype.name} instead."
        )
    return mask


def _np_dtype(dtype: Any) -> Any:
    return _creation.empty((0,), dtype=dtype)._array.dtype


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
_CAUSAL: dict[tuple[int, int, Any], Any] = {}


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


_ONES: dict[tuple[int, Any], Any] = {}


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


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims.

    ``attn_mask`` is a bool mask (True = take part) or an additive float mask broadcast to
    ``(..., L, S)``; ``is_causal`` (without a mask) keeps the lower triangle; rows
    with nothing to attend give zeros, like torch's math backend. ``enable_gqa`` repeats the
    heads (dim -3) of ``key`` and ``value`` to match ``query``'s. Where torch's CPU dispatcher
    picks its flash kernel the result has its single node (:func:`_flash_cpu`); elsewhere
    the graph is the math backend's.
    """
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: query, key and value must be at least 2-D, got "
            f"{query.ndim}-D, {key.ndim}-D and {value.ndim}-D"
        )
    L, E = query.shape[-2], query.shape[-1]
    S = key.shape[-2]
    scale_v = 1.0 / math.sqrt(E) if scale is None else float(scale)
    q_in, k_in, v_in = query, key, value
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in query, "
                f"got {hq} query heads, {hk} key heads and {hv} value heads"
            )
        if hk != hq:
            key = ops.repeat_interleave(key, hq // hk, dim=-3)
        if hv != hq:
            value = ops.repeat_interleave(value, hq // hv, dim=-3)
    mask = None
    if attn_mask is not None:
        mask = _float_mask(attn_mask, query.dtype)
    if is_causal:
        if attn_mask is not None:  # (torch's math backend; its flash CPU kernel combines them)
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True: pass a mask that includes the causal triangle instead"
            )
        if query._array.dtype.char in "fd":  # (the cached one)
            mask = _make(_causal_mask_array(L, S, query._array.dtype))
        else:
            mask = _float_mask(_make(xp.tril(xp.ones((L, S), dtype=bool))), query.dtype)
    # the kernel switches (backends.cuda.enable_*_sdp, nn.attention.sdpa_kernel): torch's
    # CPU has its math and flash kernels; with both unusable it finds no backend
    flash = (_sdp_switches["flash"]
             and _flash_cpu(q_in, k_in, v_in, attn_mask, dropout_p, enable_gqa))
    if not flash and not _sdp_switches["math"]:
        if not _sdp_switches["flash"]:
            raise RuntimeError(
                "No viable backend for scaled_dot_product_attention was found. This is likely "
                "due to turning off both the math kernel and the fused kernels: enable the "
                "math kernel (e.g. sdpa_kernel([SDPBackend.MATH, ...]))."
            )
        raise RuntimeError(
            "No available kernel.  Aborting execution. The flash kernel, the only one enabled, "
            "does not take these inputs (it needs 4-D query/key/value and no dropout): enable "
            "the math kernel too (sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]))."
        )
    if flash:
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
    attn = _weights(query, key, mask, scale_v)
    if dropout_p > 0.0:
        attn = F.dropout(attn, dropout_p, training=True)
    return ops.matmul(attn, value)


# -- multi-head attention ------------------------------------------------------------------------
def _canonical_mask(mask: Tensor | None, name: str, dtype: Any) -> Tensor | None:
    """torch's ``_canonical_mask``: a bool mask (True = masked out) as 0 / -inf floats."""
    if mask is None:
        return None
    if mask.dtype == D.bool_:
        return _make(xp.where(mask._array, -math.inf, 0.0).astype(_np_dtype(dtype)))
    if not mask.dtype.is_floating_point:
        raise F._ArgAssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, kpm: Tensor | None,
                  attn_mask: Tensor | None, num_heads: int) -> bool:
    """torch's ``_mha_shape_check``: True for batched (3-D) input."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise F._ArgAssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        if kpm is not None and kpm.ndim != 2:
            raise F._ArgAssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                f"but found {kpm.ndim}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise F._ArgAssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.ndim}-D tensor instead"
            )
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise F._ArgAssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.ndim}-D and {value.ndim}-D tensors respectively"
            )
        if kpm is not None and kpm.ndim != 1:
            raise F._ArgAssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {kpm.ndim}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise F._ArgAssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.ndim}-D tensor instead"
                )
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise F._ArgAssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got "
                        f"{tuple(attn_mask.shape)}"
                    )
        return False
    raise F._ArgAssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
        "tensor"
    )


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """torch's ``_in_projection_packed``: self-attention (one tensor for all three) projects
    once with the packed weight and takes the three parts of one contiguous copy; attention
    whose key is its value projects the query and the key/value pair; otherwise the weight
    is chunked into three projections."""
    e = q.shape[-1]
    if k is v:
        if q is k:
            proj = F.linear(q, w, b)
            proj = ops.contiguous(ops.squeeze(ops.transpose(ops.unsqueeze(
                ops.unflatten(proj, -1, (3, e)), 0), 0, -2), -2))
            return proj[0], proj[1], proj[2]
        w_q, w_kv = ops.split(w, [e, e * 2])
        b_q = b_kv = None
        if b is not None:
            b_q, b_kv = ops.split(b, [e, e * 2])
        q_proj = F.linear(q, w_q, b_q)
        kv = F.linear(k, w_kv, b_kv)
        kv = ops.contiguous(ops.squeeze(ops.transpose(ops.unsqueeze(
            ops.unflatten(kv, -1, (2, e)), 0), 0, -2), -2))
        return q_proj, kv[0], kv[1]
    w_q, w_k, w_v = ops.chunk(w, 3)
    b_q = b_k = b_v = None
    if b is not None:
        b_q, b_k, b_v = ops.chunk(b, 3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
    bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
    out_proj_bias: Tensor | None, training: bool = True, key_padding_mask: Tensor | None = None,
    need_weights: bool = True, attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None, static_v: Tensor | None = None,
    average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """torch's ``F.multi_head_attention_forward`` (sequence-first ``(L, N, E)`` or unbatched
    ``(L, E)`` inputs)."""
    is_batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = (ops.unsqueeze(t, 1) for t in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = ops.unsqueeze(key_padding_mask, 0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if (key_padding_mask is not None and attn_mask is not None
            and key_padding_mask.dtype != attn_mask.dtype):
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise F._ArgAssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise F._ArgAssertionError(
            f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"
        )
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise F._ArgAssertionError(
                f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                f"{tuple(value.shape[:2])}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise F._ArgAssertionError(
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
        )
    # input projections
    if not use_separate_proj_weight:
        assert in_proj_weight is not None
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        assert q_proj_weight is not None and k_proj_weight is not None
        assert v_proj_weight is not None
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq = in_proj_bias[:embed_dim]
            bk = in_proj_bias[embed_dim:2 * embed_dim]
            bv = in_proj_bias[2 * embed_dim:]
        q = F.linear(query, wq, bq)
        k = F.linear(key, wk, bk)
        v = F.linear(value, wv, bv)
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = ops.unsqueeze(attn_mask, 0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                f"{(bsz * num_heads, tgt_len, src_len)}."
            )
    if bias_k is not None and bias_v is not None:
        k = ops.cat([k, ops.repeat(bias_k, (1, bsz, 1))])
        v = ops.cat([v, ops.repeat(bias_v, (1, bsz, 1))])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    q = ops.transpose(ops.reshape(q, (tgt_len, bsz * num_heads, head_dim)), 0, 1)
    if static_k is None:
        k = ops.transpose(ops.reshape(k, (k.shape[0], bsz * num_heads, head_dim)), 0, 1)
    else:
        k = static_k
    if static_v is None:
        v = ops.transpose(ops.reshape(v, (v.shape[0], bsz * num_heads, head_dim)), 0, 1)
    else:
        v = static_v
    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = ops.cat([k, _creation.zeros(zshape, dtype=k.dtype)], 1)
        v = ops.cat([v, _creation.zeros(zshape, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise F._ArgAssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = ops.reshape(ops.expand(ops.reshape(key_padding_mask, (bsz, 1, 1, src_len)),
                                     (bsz, num_heads, 1, src_len)),
                          (bsz * num_heads, 1, src_len))
        attn_mask = kpm if attn_mask is None else ops.add(attn_mask, kpm)
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = ops.mul(q, math.sqrt(1.0 / head_dim))
        kt = ops.transpose(k, -2, -1)
        if attn_mask is not None:
            w = ops.baddbmm(attn_mask, q_scaled, kt)
        else:
            w = ops.bmm(q_scaled, kt)
        w = ops.softmax(w, -1)
        if dropout_p > 0.0:
            w = F.dropout(w, p=dropout_p)
        out = ops.bmm(w, v)
        out = ops.reshape(ops.transpose(out, 0, 1), (tgt_len * bsz, embed_dim))
        out = F.linear(out, out_proj_weight, out_proj_bias)
        out = ops.reshape(out, (tgt_len, bsz, out.shape[1]))
        w = ops.reshape(w, (bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            w = ops.mean(w, 1)
        if not is_batched:
            out, w = ops.squeeze(out, 1), ops.squeeze(w, 0)
        return out, w
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = ops.unsqueeze(attn_mask, 0)
        else:
            attn_mask = ops.reshape(attn_mask, (bsz, num_heads, -1, src_len))
    q = ops.reshape(q, (bsz, num_heads, tgt_len, head_dim))
    k = ops.reshape(k, (bsz, num_heads, src_len, head_dim))
    v = ops.reshape(v, (bsz, num_heads, src_len, head_dim))
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = ops.reshape(ops.permute(out, (2, 0, 1, 3)), (bsz * tgt_len, embed_dim))
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = ops.reshape(out, (tgt_len, bsz, out.shape[1]))
    if not is_batched:
        out = ops.squeeze(out, 1)
    return out, None


class NonDynamicallyQuantizableLinear(Linear):
    """torch's ``Linear`` subclass used as ``MultiheadAttention.out_proj``."""


class MultiheadAttention(Module):
    """Multi-head attention with torch's parameters, initialisation, masks and shapes.

    Parameters: ``in_proj_weight`` ``(3E, E)`` (or ``q_proj_weight``, ``k_proj_weight``,
    ``v_proj_weight`` when ``kdim`` / ``vdim`` differ from ``embed_dim``), ``in_proj_bias``,
    ``out_proj`` and, with ``add_bias_kv``, ``bias_k`` / ``bias_v``. ``forward`` returns
    ``(attn_output, attn_weights)``; ``key_padding_mask`` True (bool) marks keys to ignore.

    Example:
        >>> import gradsum
        >>> _ = gradsum.manual_seed(0)
        >>> mha = gradsum.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = gradsum.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        ((3, 5, 8), (3, 5, 5))
        >>> mha
        MultiheadAttention(
          (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
        )
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise F._ArgAssertionError("embed_dim must be divisible by num_heads")

        def empty(*shape: int) -> Tensor:
            return _creation.empty(shape, dtype=dtype)

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim))
            self.bias_v = Parameter(empty(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """``(attn_output, attn_weights)``: ``attn_output`` shaped like ``query`` (with
        ``embed_dim`` features); ``attn_weights`` ``(N, L, S)`` (averaged over heads) or
        ``(N, num_heads, L, S)``, None when ``need_weights=False``."""
        is_batched = query.ndim == 3
        if self._fast_path(query, key, value, attn_mask, key_padding_mask):
            return self._native_forward(query, attn_mask, key_padding_mask, need_weights,
                                        average_attn_weights)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = ops.transpose(query, 1, 0)
                else:
                    query, key = (ops.transpose(x, 1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (ops.transpose(x, 1, 0) for x in (query, key, value))
        out, w = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            return ops.transpose(out, 1, 0), w
        return out, w

    def _fast_path(self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None) -> bool:
        """Whether torch takes its fused inference path (``_native_multi_head_attention``),
        whose results differ from the composed one: rows with every key masked give nan,
        and ``is_causal`` is ignored. torch's conditions, in its order."""
        if not _mha_switch.get_fastpath_enabled():  # (torch.backends.mha's switch, first)
            return False
        floating = [m is not None and m.dtype.is_floating_point
                    for m in (attn_mask, key_padding_mask)]
        if any(floating):  # (torch: floating-point masks are not supported for fast path)
            return False
        if query.ndim != 3 or query is not key or key is not value:
            return False
        w, b = self.in_proj_weight, self.in_proj_bias
        if w is None or b is None or query.dtype != w.dtype or query.dtype != b.dtype:
            return False
        if (self.training or self.num_heads % 2 or not self.batch_first
                or self.bias_k is not None or self.bias_v is not None or self.add_zero_attn
                or not self._qkv_same_embed_dim):
            return False
        args = (query, w, b, self.out_proj.weight, self.out_proj.bias)
        return not (is_grad_enabled() and any(t is not None and t.requires_grad for t in args))

    def _native_forward(self, x: Tensor, attn_mask: Tensor | None,
                        key_padding_mask: Tensor | None, need_weights: bool,
                        average_attn_weights: bool) -> tuple[Tensor, Tensor | None]:
        """torch's ``_native_multi_head_attention`` on ``(N, L, E)`` self-attention (nothing
        recorded: it runs only when no gradient is needed). The masks are merged as torch's
        ``merge_masks`` does; a row whose keys are all masked gives nan (in the output and
        the weights), as torch's masked softmax does."""
        if key_padding_mask is not None and attn_mask is not None \
                and key_padding_mask.dtype != attn_mask.dtype:
            warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                          "Use same type for both instead.", stacklevel=3)
        kpm = _canonical_mask(key_padding_mask, "key_padding_mask", x.dtype)
        am = _canonical_mask(attn_mask, "attn_mask", x.dtype)
        xa = x._array
        n, seq, e = xa.shape
        h = self.num_heads
        d = e // h
        qkv = xa @ self.in_proj_weight._array.T + self.in_proj_bias._array
        q, k, v = (t.reshape(n, seq, h, d).transpose(0, 2, 1, 3)
                   for t in xp.split(qkv, 3, axis=-1))
        scores = (q / math.sqrt(d)) @ k.transpose(0, 1, 3, 2)  # (N, H, L, L)
        if am is not None:
            scores = scores + am._array.reshape((n, -1, seq, seq) if am.ndim == 3
                                                else (1, 1, seq, seq))
        if kpm is not None:
            scores = scores + kpm._array.reshape(n, 1, 1, seq)
        with xp.errstate(invalid="ignore"):
            top = scores.max(axis=-1, keepdims=True)
            ex = xp.exp(scores - top)  # (a row of -inf only: -inf - -inf = nan, as torch)
            p = ex / ex.sum(axis=-1, keepdims=True)
        out = (p @ v).transpose(0, 2, 1, 3).reshape(n, seq, e)
        out = out @ self.out_proj.weight._array.T
        if self.out_proj.bias is not None:
            out = out + self.out_proj.bias._array
        out_t = _make(xp.asarray(out, dtype=xa.dtype))
        if not need_weights:
            return out_t, None
        weights = p.mean(axis=1) if average_attn_weights else p
        return out_t, _make(xp.asarray(weights, dtype=xa.dtype))
