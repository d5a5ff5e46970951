"""The texts of sort, topk and their kin."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


def sorting_dim_empty(name: Any, d: Any, shape: Any) -> str:
    return (
        f"{name}(): Expected reduction dim {d} to have non-zero size. Reduce "
        f"over a non-empty dim (input shape {tuple(shape)})."
    )


def median_empty_integer() -> str:
    return (
        "median() input tensor cannot be empty (an integer tensor has no "
        "nan to return). Pass a non-empty tensor."
    )


def kthvalue_k_out_of_range(d: Any, k: Any, n: Any) -> str:
    return (
        f"kthvalue(): selected number k out of range for dimension {d} "
        f"(k={k}, size {n}): pass 1 <= k <= {n}"
    )


def quantile_input_empty(name: Any, shape: Any) -> str:
    return f"{name}() input tensor must be non-empty (got shape {tuple(shape)})"


def quantile_q_not_1d(name: Any, shape: Any) -> str:
    return f"{name}() q must be a scalar or 1D tensor (got shape {tuple(shape)})"


def quantile_input_not_float(name: Any, dtype: Any) -> str:
    return (
        f"{name}() input tensor must be either float or double dtype (got "
        f"{torch_name(dtype)}); convert it with .float()"
    )


def quantile_q_dtype_mismatch(name: Any, q_dtype: Any, dtype: Any) -> str:
    return (
        f"{name}() q tensor must be same dtype as the input tensor (q "
        f"{torch_name(q_dtype)}, input {torch_name(dtype)})"
    )


def quantile_bad_interpolation(name: Any, interpolation: Any) -> str:
    return (
        f"{name}() interpolation must be one of linear, lower, higher, "
        f"midpoint or nearest, but got {interpolation}"
    )


def quantile_q_out_of_range(name: Any, q: Any) -> str:
    return f"{name}() q must be in the range [0, 1] but got {float(q):g}"


def quantile_q_values_out_of_range(name: Any) -> str:
    return f"{name}() q values must be in the range [0, 1]"


def unique_many_zero_sized_dims(shape: Any, d: Any) -> str:
    return (
        f"Number of zero sized dimensions is more than one, so unique cannot "
        f"be applied here (shape {tuple(shape)}, dim {d})"
    )


def searchsorted_bad_side(side: Any) -> str:
    return f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"


def searchsorted_side_right_opposite() -> str:
    return (
        "torch.searchsorted(): side and right can't be set to opposites, "
        "got side of left while right was True"
    )


def searchsorted_boundaries_0d() -> str:
    return (
        "torch.searchsorted(): boundaries tensor should have positive "
        "dimension, but got 0 dimension"
    )


def searchsorted_shape_mismatch(seq_shape: Any, vals_shape: Any) -> str:
    return (
        "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
        "dimensions of boundaries tensor and input value tensor must match, but we got "
        f"boundaries tensor {list(seq_shape)} and input value tensor {list(vals_shape)}"
    )


def searchsorted_sorter_size_mismatch(seq_shape: Any, sorter_shape: Any) -> str:
    return (
        "torch.searchsorted(): boundary and sorter must have the same "
        f"size, but got boundary tensor {list(seq_shape)}and got sorter "
        f"tensor {list(sorter_shape)}"
    )


def searchsorted_sorter_not_long(dtype: Any) -> str:
    return (
        "torch.searchsorted(): sorter must be a tensor of long dtype but got "
        f"dtype {torch_name(dtype)}"
    )


def bucketize_boundaries_not_1d(ndim: Any) -> str:
    return f"boundaries tensor must be 1 dimension, but got dim({ndim})"


def topk_k_out_of_range(k: Any, n: Any) -> str:
    return (
        f"selected index k out of range: k={k} for a dimension of size {n}. Use a k "
        "between 0 and the size of the dimension."
    )
