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
from gradsum import _creation
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.backends.cuda import _sdp as _sdp_switches
from gradsum.nn import _messages
from gradsum.nn import functional as F
from gradsum.ops import attention as _attention
from gradsum.ops._core import _make

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


def _float_mask(mask: Tensor, dtype: Any) -> Tensor:
    """A bool mask (True = keep) as an additive float mask (0 / -inf); a float one as is."""
    if mask.dtype == D.bool_:
        return _make(xp.where(mask._array, 0.0, -math.inf).astype(_np_dtype(dtype)))
    if not mask.dtype.is_floating_point:
        raise RuntimeError(_messages.expected_attn_mask_dtype_bool(mask, dtype))
    return mask


def _np_dtype(dtype: Any) -> Any:
    return _creation.empty((0,), dtype=dtype)._array.dtype


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims.

    ``attn_mask`` is a bool mask (True = take part) or an additive float mask broadcast to
    ``(..., L, S)``; ``is_causal`` (without a mask) keeps the lower triangle; rows
    with nothing to attend give zeros, like torch's math backend. ``enable_gqa`` repeats the
    heads (dim -3) of ``key`` and ``value`` to match ``query``'s. Where torch's CPU dispatcher
    picks its flash kernel the result has its single node
    (:func:`gradsum.ops.attention.flash_attention`); elsewhere
    the graph is the math backend's.
    """
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(_messages.scaled_dot_product_attention_query(query, key, value))
    L, E = query.shape[-2], query.shape[-1]
    S = key.shape[-2]
    scale_v = 1.0 / math.sqrt(E) if scale is None else float(scale)
    q_in, k_in, v_in = query, key, value
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(_messages.number_heads_key_value_divide(hq, hk, hv))
        if hk != hq:
            key = ops.repeat_interleave(key, hq // hk, dim=-3)
        if hv != hq:
            value = ops.repeat_interleave(value, hq // hv, dim=-3)
    mask = None
    if attn_mask is not None:
        mask = _float_mask(attn_mask, query.dtype)
    if is_causal:
        if attn_mask is not None:  # (torch's math backend; its flash CPU kernel combines them)
            raise RuntimeError(_messages.scaled_dot_product_attention_explicit())
        if query._array.dtype.char in "fd":  # (the cached one)
            mask = _make(_attention._causal_mask_array(L, S, query._array.dtype))
        else:
            mask = _float_mask(_make(xp.tril(xp.ones((L, S), dtype=bool))), query.dtype)
    # the kernel switches (backends.cuda.enable_*_sdp, nn.attention.sdpa_kernel): torch's
    # CPU has its math and flash kernels; with both unusable it finds no backend
    flash = (_sdp_switches["flash"]
             and _attention._flash_cpu(q_in, k_in, v_in, attn_mask, dropout_p, enable_gqa))
    if not flash and not _sdp_switches["math"]:
        if not _sdp_switches["flash"]:
            raise RuntimeError(_messages.no_viable_backend_scaled_dot())
        raise RuntimeError(_messages.no_available_kernel_aborting_execution())
    if flash:
        out = _attention.flash_attention(q_in, k_in, v_in, query, key, value, mask, scale_v)
        if out is not None:
            return out
    attn = _attention._weights(query, key, mask, scale_v)
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
        raise F._ArgAssertionError(_messages.only_bool_floating_types_supported(name))
    return mask


def _check_shapes(query: Tensor, key: Tensor, value: Tensor, kpm: Tensor | None,
                  attn_mask: Tensor | None, num_heads: int) -> bool:
    """torch's ``_mha_shape_check``: True for batched (3-D) input."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise F._ArgAssertionError(_messages.batched_3_d_query_expected_key_value(key, value))
        if kpm is not None and kpm.ndim != 2:
            raise F._ArgAssertionError(_messages.batched_3_d_query_expected_key_padding(kpm))
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise F._ArgAssertionError(_messages.batched_3_d_query_expected_attn(attn_mask))
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise F._ArgAssertionError(_messages.unbatched_2_d_query_expected_key_value(key, value))
        if kpm is not None and kpm.ndim != 1:
            raise F._ArgAssertionError(_messages.unbatched_2_d_query_expected_key_padding(kpm))
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise F._ArgAssertionError(_messages.unbatched_2_d_query_expected_attn(attn_mask))
            if attn_mask.ndim == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise F._ArgAssertionError(
                        _messages.expected_attn_mask_shape(expected, attn_mask)
                    )
        return False
    raise F._ArgAssertionError(_messages.query_unbatched_2d_or_batched(query))


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
        warnings.warn(
            _messages.mismatched_masks_deprecated("key_padding_mask", "attn_mask"), stacklevel=3
        )
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(_messages.need_attn_mask_if_specifying())
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise F._ArgAssertionError(
            _messages.expecting_embedding_dimension(embed_dim_to_check, embed_dim)
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise F._ArgAssertionError(_messages.embed_dim_not_divisible(embed_dim, num_heads))
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise F._ArgAssertionError(_messages.key_value_dims_mismatch(key, value))
    elif tuple(key.shape) != tuple(value.shape):
        raise F._ArgAssertionError(_messages.key_value_shape_mismatch(key, value))
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
                raise RuntimeError(_messages.attn_mask_shape(2, attn_mask, (tgt_len, src_len)))
            attn_mask = ops.unsqueeze(attn_mask, 0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(
                _messages.attn_mask_shape(3, attn_mask, (bsz * num_heads, tgt_len, src_len))
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
                _messages.expecting_key_padding_mask_shape(bsz, src_len, key_padding_mask)
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
