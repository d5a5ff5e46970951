"""The texts of the reductions."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


def reduction_dim_repeated_0d(dim: Any) -> str:
    return (
        f"dim 0 appears multiple times in the list of dims: {tuple(dim)} for a 0-d "
        "tensor. Pass each dim once."
    )


def autograd_not_support_dtype(dtype: Any, name: Any) -> str:
    return (
        f"Autograd not support dtype: {torch_name(dtype)} ({name}() of a tensor that requires "
        "grad). Pass a floating dtype, or reduce a detached tensor (t.detach())."
    )


def could_not_infer_output_dtype(name: Any, dtype: Any) -> str:
    return (
        f"{name}(): could not infer output dtype. Input dtype must be either a floating "
        f"point or complex dtype. Got: {dtype.name}. Convert with .float() first."
    )


def var_std_unbiased_and_correction() -> str:
    return "var/std: pass either unbiased or correction, not both"


def extreme_empty_needs_dim(name: Any) -> str:
    return (
        f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
        "Specify the reduction dim with the 'dim' argument."
    )


def extreme_dim_empty(name: Any, dim: Any) -> str:
    return (
        f"{name}(): Expected reduction dim {dim} to have non-zero size. "
        "Reduce over non-empty dims only, or check the input's shape."
    )


def max_min_dim_empty(is_max: Any, d: Any) -> str:
    return f"{'max' if is_max else 'min'}(): Expected reduction dim {d} to have non-zero size."


def arg_extreme_bool_input(name: Any) -> str:
    return f"{name}(): does not support bool input. Convert with .long() first."


def arg_extreme_empty_needs_dim(name: Any) -> str:
    return (
        f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
        "Pass dim, or check the input's shape."
    )


def arg_extreme_dim_empty(name: Any, d: Any) -> str:
    return (
        f"{name}(): Expected reduction dim {d} to have non-zero size. Reduce over a "
        "non-empty dim, or check the input's shape."
    )


def logsumexp_all_dims_broadcast(dim: Any, shape: Any) -> str:
    ndim = len(shape)
    return (
        f"output with shape [] doesn't match the broadcast shape {[1] * ndim}: "
        f"logsumexp(dim={dim!r}) of shape {tuple(shape)}. Name the dims instead "
        f"(dim={tuple(range(ndim))}) or pass keepdim=True."
    )


def prod_dim_not_int(dim: Any) -> str:
    return (
        f"prod(): argument 'dim' (position 2) must be int, not {type(dim).__name__}. "
        "Reduce one dim at a time."
    )


def matrix_norm_dim_not_pair(dims: Any, p: Any) -> str:
    return (
        f"linalg.matrix_norm: dim must be a 2-tuple. Got "
        f"{' '.join(str(d) for d in dims)} (norm with p={p!r}). Pass two dims, "
        "or a number p for a vector norm over more dims."
    )


def norm_unsupported_p(p: Any) -> str:
    return f"norm: unsupported p={p!r}; use a number, 'fro' or inf"


def vector_norm_inf_of_empty(name: Any, shape: Any) -> str:
    return (
        f"linalg.vector_norm cannot compute the {name} norm on an empty tensor because "
        f"the operation does not have an identity (shape {tuple(shape)}). Use a "
        "finite p or a non-empty tensor."
    )


def vector_norm_inf_over_empty_dim(name: Any, d: Any, shape: Any) -> str:
    return (
        f"linalg.vector_norm cannot compute the {name} norm on the dimension {d}"
        f"because this dimension is empty and the operation does not have an "
        f"identity (shape {tuple(shape)}). Reduce over non-empty dims only."
    )


def sum_to_invalid_gradient(got: Any, shape: Any) -> str:
    return (
        f"Function returned an invalid gradient - got {list(got)} but expected shape "
        f"compatible with {list(shape)}: the gradient must be {list(shape)} or "
        "broadcast from it."
    )


def var_std_not_floating(name: Any, dtype: Any) -> str:
    return (
        f"{name} only support floating point and complex dtypes (got "
        f"{torch_name(dtype)}); convert the input with .float()"
    )


def aminmax_of_empty(shape: Any) -> str:
    return (
        "aminmax(): cannot compute aminmax over an empty dimension as the "
        f"operation has no identity (input shape {tuple(shape)})."
    )


def aminmax_dim_empty(d: Any, shape: Any) -> str:
    return (
        f"aminmax: Expected reduction dim {d} to have non-zero size (input "
        f"shape {tuple(shape)}). Reduce over a non-empty dim."
    )


def bincount_negative_minlength(minlength: Any) -> str:
    return f"minlength should be >= 0 (got {minlength})"


def bincount_input_not_1d_nonnegative(shape: Any) -> str:
    return (
        "bincount only supports 1-d non-negative integral inputs. (got shape "
        f"{tuple(shape)}{', with negative values' if len(shape) == 1 else ''})"
    )


def bincount_weights_mismatch(shape: Any, w_shape: Any) -> str:
    return (
        "weights should be 1-d and have the same length as input (input "
        f"{tuple(shape)}, weights {tuple(w_shape)})"
    )


def histc_bins_not_positive(bins: Any) -> str:
    return f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0"


def histc_max_below_min(min: Any, max: Any) -> str:
    return f"torch.histc: max must be larger than min (min={min}, max={max})"


def nanmean_not_floating(dtype: Any) -> str:
    return (
        "nanmean(): expected input to have floating point or complex dtype "
        f"but got {torch_name(dtype)}. Convert it with .float()."
    )


def dist_not_floating(dtype: Any) -> str:
    return (
        "norm(): input dtype should be either floating point or complex. Got "
        f"{torch_name(dtype)} instead. Convert the inputs with .float()."
    )


def cov_corrcoef_too_many_dims(name: Any, ndim: Any) -> str:
    return (
        f"{name}(): expected input to have two or fewer dimensions but got an "
        f"input with {ndim} dimensions"
    )


def cov_bool_input() -> str:
    return "cov(): bool dtype is not supported for input"


def cov_weights_too_many_dims(which: Any, ndim: Any) -> str:
    return (
        f"cov(): expected {which} to have one or fewer dimensions but "
        f"got {which} with {ndim} dimensions"
    )


def cov_weights_wrong_dtype(which: Any, kind: Any, dtype: Any) -> str:
    return (
        f"cov(): expected {which} to have {kind} dtype but got "
        f"{which} with {torch_name(dtype)} dtype"
    )


def cov_weights_numel_mismatch(which: Any, numel: Any, n_obs: Any) -> str:
    return (
        f"cov(): expected {which} to have the same numel as there are "
        f"observations in the input but got {numel} != {n_obs}"
    )


def cov_weights_negative(which: Any) -> str:
    return f"cov(): {which} cannot be negative"


def cov_weights_sum_zero() -> str:
    return "cov(): weights sum to zero, can't be normalized"


def cov_degrees_of_freedom() -> str:
    return (
        "cov(): degrees of freedom is <= 0. Correction should be strictly less "
        "than the number of observations."
    )


def histogram_bins_tensor_not_1d(ndim: Any) -> str:
    return (
        f"torch.histogramdd(): bins tensor should have one dimension, "
        f"but got {ndim} dimensions in the bin tensor"
    )


def histogram_bins_not_positive(bins: Any) -> str:
    return (
        f"torch.histogramdd(): number of bins in dimension 0 should "
        f"be greater than 0, but got {bins}"
    )


def histogram_weight_shape_mismatch(shape: Any, w_shape: Any) -> str:
    return (
        "torch.histogramdd(): if weight tensor is provided it should have "
        "the same shape as the input tensor excluding its innermost "
        f"dimension, but got input with shape {list(shape)} and weight "
        f"with shape {list(w_shape)}"
    )


def histogram_range_reversed(lo: Any, hi: Any) -> str:
    return (
        f"torch.histogramdd(): for dimension 0, left edge ({lo}) must "
        f"be <= right edge ({hi})"
    )


def sum_to_size_not_expandable(shape: Any, xs: Any) -> str:
    return (
        f"size {{{list(shape)}}} is not expandable to size {{{list(xs)}}}. Each size must "
        "be 1 or match the tensor's size at that (right-aligned) dimension."
    )
