"""The texts of embedding and embedding_bag."""

from __future__ import annotations

from typing import Any

# -- embedding ---------------------------------------------------------------------------------


def embedding_bag_first_offset_not_zero(off: Any) -> str:
    return (
        "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
        f"start from position 0. However, got {int(off[0])}"
    )


def embedding_bag_last_offset_too_large(n: Any, off: Any) -> str:
    return (
        f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] "
        f"of {int(off[-1])}"
    )


def embedding_bag_offsets_non_decreasing(off: Any) -> str:
    return f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}"


def argument_order_nn_functional_embedding() -> str:
    return (
        "Argument order of nn.functional.embedding_bag was changed. Usage "
        "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
        "`embedding_bag(input, weight, ...)`."
    )


def embedding_bag_if_per_sample(per_sample_weights: Any, input: Any) -> str:
    return (
        f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
        f"None, then it must have the same shape as the input ({tuple(input.shape)})"
    )


def embedding_bag_weight_not_2d(weight: Any) -> str:
    return f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"


def if_input_2d_then_offsets(offsets: Any) -> str:
    return (
        "if input is 2D, then offsets has to be None, as input is treated is a "
        "mini-batch of fixed length sequences. However, found offsets of type "
        f"{type(offsets)}"
    )


def offsets_1d_tensor_none() -> str:
    return "offsets has to be a 1D Tensor but got None"


def offsets_1d_tensor() -> str:
    return "offsets has to be a 1D Tensor"


def input_1d_or_2d_tensor(input: Any) -> str:
    return f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"


def embedding_bag_max_no_scale_grad() -> str:
    return "max mode does not support scaling the gradient by the frequency"


def embedding_bag_max_no_sparse() -> str:
    return "max mode does not support sparse weights"


def mode_one_sum_mean_or() -> str:
    return "mode has to be one of sum, mean or max"


def embedding_bag_indices_dtype(input: Any) -> str:
    return (
        "Expected tensor for argument #1 'indices' to have one of the following scalar "
        f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
        "embedding_bag)"
    )


def embedding_bag_per_sample_weights(mode: Any) -> str:
    return (
        "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
        f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
        "GitHub."
    )


def no_sparse_embedding_bag() -> str:
    return "gradsum has no sparse gradients: use embedding_bag(..., sparse=False)"


def expected_tensor_argument_1_weight(weight: Any, per_sample_weights: Any) -> str:
    return (
        "Expected tensor for argument #1 'weight' to have the same type as tensor for "
        f"argument #1 'per_sample_weights'; but type {weight.type()} does not equal "
        f"{per_sample_weights.type()} (while checking arguments for embedding_bag)"
    )


def padding_idx_within_number_embeddings(n_emb: Any, padding_idx: Any) -> str:
    return (
        "padding_idx must be within the number of embeddings, "
        f"-{n_emb} through {n_emb - 1}, but got {padding_idx}"
    )


def embedding_bag_index_out_of_range(i: Any, v: Any, n_emb: Any) -> str:
    return (
        f"Index {i} of input takes value {v} which is not in the valid range "
        f"[0, {n_emb})"
    )


def no_sparse_embedding() -> str:
    return "gradsum has no sparse gradients: use embedding(..., sparse=False)"


def embedding_padding_idx_out_of_range(padding_idx: Any, n: Any) -> str:
    return (
        f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} for "
        f"{n} embeddings"
    )


def embedding_weight_not_2d(weight: Any) -> str:
    return f"'weight' must be 2-D, got a weight of shape {tuple(weight.shape)}"


def embedding_indices_dtype(name: Any) -> str:
    return (
        "Expected tensor for argument #1 'indices' to have one of the following scalar "
        f"types: Long, Int; but got {name} instead (while checking arguments for embedding)"
    )


def index_out_range_self_embedding(n: Any, idx: Any) -> str:
    return (
        f"index out of range in self: embedding indices must be in [0, {n - 1}], got "
        f"[{int(idx.min())}, {int(idx.max())}]"
    )


def embedding_weight_shape(_weight: Any, num_embeddings: Any, embedding_dim: Any) -> str:
    return (
        "Shape of weight does not match num_embeddings and embedding_dim: got "
        f"{list(_weight.shape)}, expected [{num_embeddings}, {embedding_dim}]"
    )


def embedding_pretrained_not_2d(embeddings: Any) -> str:
    return (
        "Embeddings parameter is expected to be 2-dimensional, got shape "
        f"{tuple(embeddings.shape)}"
    )


def padding_idx_within_num_embeddings() -> str:
    return "padding_idx must be within num_embeddings"


def embedding_bag_weight_shape() -> str:
    return "Shape of weight does not match num_embeddings and embedding_dim"


def embedding_bag_pretrained_not_2d() -> str:
    return "Embeddings parameter is expected to be 2-dimensional"
