"""The texts of the transformer modules and attention."""

from __future__ import annotations

from typing import Any

# -- transformer and attention -----------------------------------------------------------------


def expected_attn_mask_dtype_bool(mask: Any, dtype: Any) -> str:
    return (
        "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
        f"attn_mask.dtype: {mask.dtype.name} and query.dtype: {dtype.name} instead."
    )


def scaled_dot_product_attention_query(query: Any, key: Any, value: Any) -> str:
    return (
        "scaled_dot_product_attention: query, key and value must be at least 2-D, got "
        f"{query.ndim}-D, {key.ndim}-D and {value.ndim}-D"
    )


def number_heads_key_value_divide(hq: Any, hk: Any, hv: Any) -> str:
    return (
        "Number of heads in key and value must divide the number of heads in query, "
        f"got {hq} query heads, {hk} key heads and {hv} value heads"
    )


def scaled_dot_product_attention_explicit() -> str:
    return (
        "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
        "is_causal=True: pass a mask that includes the causal triangle instead"
    )


def no_viable_backend_scaled_dot() -> str:
    return (
        "No viable backend for scaled_dot_product_attention was found. This is likely "
        "due to turning off both the math kernel and the fused kernels: enable the "
        "math kernel (e.g. sdpa_kernel([SDPBackend.MATH, ...]))."
    )


def no_available_kernel_aborting_execution() -> str:
    return (
        "No available kernel.  Aborting execution. The flash kernel, the only one enabled, "
        "does not take these inputs (it needs 4-D query/key/value and no dropout): enable "
        "the math kernel too (sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]))."
    )


def only_bool_floating_types_supported(name: Any) -> str:
    return f"only bool and floating types of {name} are supported"


def batched_3_d_query_expected_key_value(key: Any, value: Any) -> str:
    return (
        "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
        f"{key.ndim}-D and {value.ndim}-D tensors respectively"
    )


def batched_3_d_query_expected_key_padding(kpm: Any) -> str:
    return (
        "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
        f"but found {kpm.ndim}-D tensor instead"
    )


def batched_3_d_query_expected_attn(attn_mask: Any) -> str:
    return (
        "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
        f"found {attn_mask.ndim}-D tensor instead"
    )


def unbatched_2_d_query_expected_key_value(key: Any, value: Any) -> str:
    return (
        "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
        f"{key.ndim}-D and {value.ndim}-D tensors respectively"
    )


def unbatched_2_d_query_expected_key_padding(kpm: Any) -> str:
    return (
        "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
        f"but found {kpm.ndim}-D tensor instead"
    )


def unbatched_2_d_query_expected_attn(attn_mask: Any) -> str:
    return (
        "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
        f"but found {attn_mask.ndim}-D tensor instead"
    )


def expected_attn_mask_shape(expected: Any, attn_mask: Any) -> str:
    return (
        f"Expected `attn_mask` shape to be {expected} but got "
        f"{tuple(attn_mask.shape)}"
    )


def query_unbatched_2d_or_batched(query: Any) -> str:
    return (
        f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
        "tensor"
    )


def mismatched_masks_deprecated(mask_name: Any, other_name: Any) -> str:
    return (
        f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
        "same type for both instead."
    )


def need_attn_mask_if_specifying() -> str:
    return (
        "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
        "module method `generate_square_subsequent_mask` to create this mask."
    )


def expecting_embedding_dimension(embed_dim_to_check: Any, embed_dim: Any) -> str:
    return f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"


def embed_dim_not_divisible(embed_dim: Any, num_heads: Any) -> str:
    return f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"


def key_value_dims_mismatch(key: Any, value: Any) -> str:
    return (
        f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
        f"{tuple(value.shape[:2])}"
    )


def key_value_shape_mismatch(key: Any, value: Any) -> str:
    return f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"


def attn_mask_shape(d: Any, attn_mask: Any, expected: Any) -> str:
    return (
        f"The shape of the {d}D attn_mask is {tuple(attn_mask.shape)}, but should be "
        f"{expected}."
    )


def expecting_key_padding_mask_shape(bsz: Any, src_len: Any, key_padding_mask: Any) -> str:
    return (
        f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
        f"{tuple(key_padding_mask.shape)}"
    )


def backend_instance_sdpbackend_or_list(backends: Any) -> str:
    return (
        "Backend must be an instance of SDPBackend or a list of "
        f"SDPBackend instances, got {type(backends).__name__}"
    )


def embed_dim_num_heads_greater(embed_dim: Any, num_heads: Any) -> str:
    return (
        f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
        f"num_heads={num_heads} instead"
    )


def embed_dim_not_divisible_by_num_heads() -> str:
    return "embed_dim must be divisible by num_heads"


def activation_relu_gelu(activation: Any) -> str:
    return f"activation should be relu/gelu, not {activation}"


def input_none_or_dtype_none() -> str:
    return "input to _none_or_dtype() must be None or gradsum.Tensor"


def mask_type_1_mask_shape(n: Any, length: Any, key_padding_mask: Any) -> str:
    return (
        "For mask_type == 1 mask shape should be (B, L): "
        f"expected src_key_padding_mask of shape {(n, length)}, got "
        f"{tuple(key_padding_mask.shape)}"
    )


def attn_mask_heads_mismatch(am: Any, heads: Any) -> str:
    return (
        f"The size of tensor a ({am.shape[1]}) must match the size of tensor b "
        f"({heads}) at non-singleton dimension 1"
    )


def mask_type_2_mask_shape(n: Any, heads: Any, length: Any) -> str:
    return (
        "For mask_type == 2 mask shape should match input shape: "
        f"expected a src_mask of shape {(n * heads, length, length)}"
    )


def enable_nested_tensor_true_self(why_not: Any) -> str:
    return (
        f"enable_nested_tensor is True, but self.use_nested_tensor is False "
        f"because {why_not}"
    )


def mask_size_match_input_size(keep: Any, n: Any, s: Any) -> str:
    return (
        f"Mask size should match input size: src_key_padding_mask has shape "
        f"{tuple(keep.shape)}, expected {(n, s)}"
    )


def transformer_batch_mismatch(src: Any, tgt: Any) -> str:
    return (
        "the batch number of src and tgt must be equal: src has "
        f"{src.shape[1]} and tgt {tgt.shape[1]} along dim 1 (batch_first=False)"
    )


def transformer_batch_mismatch_batch_first(src: Any, tgt: Any) -> str:
    return (
        "the batch number of src and tgt must be equal: src has "
        f"{src.shape[0]} and tgt {tgt.shape[0]} along dim 0 (batch_first=True)"
    )


def feature_number_src_tgt_equal(src: Any, tgt: Any, module: Any) -> str:
    return (
        "the feature number of src and tgt must be equal to d_model: got "
        f"{src.shape[-1]} and {tgt.shape[-1]} features, d_model={module.d_model}"
    )


def transformer_mask_shape_invalid(shape: Any, size: Any) -> str:
    return (
        f"shape '{list(shape)}' is invalid for input of size {size}: the mask does not fit the "
        "input; pass a (L, L) or (N * nhead, L, L) src_mask and an (N, L) src_key_padding_mask"
    )
