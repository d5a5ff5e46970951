"""The texts of the copies that move elements (cat, stack, flip, ...)."""

from __future__ import annotations

from typing import Any


def cat_empty_list() -> str:
    return "torch.cat(): expected a non-empty list of Tensors, got an empty sequence"


def cat_zero_dim() -> str:
    return "zero-dimensional tensor (at position 0) cannot be concatenated"


def cat_sizes_mismatch(d: Any, arrays: Any, arr: Any, i: Any) -> str:
    first = tuple(arrays[0].shape)
    got = tuple(arr.shape)
    k = next((k for k in range(len(first)) if k != d and first[k] != got[k]), 0)
    return (
        f"Sizes of tensors must match except in dimension {d}. Expected size {first[k]} but "
        f"got size {got[k]} for tensor number {i} in the list. Shapes {first} and {got} "
        f"differ in dimension {k}: make every size but dimension {d}'s agree, or "
        f"concatenate along the dimension in which they differ"
    )


def stack_empty_list() -> str:
    return "stack expects a non-empty TensorList"


def stack_sizes_mismatch(shp: Any, t: Any, i: Any) -> str:
    return (
        f"stack expects each tensor to be equal size, but got {list(shp)} at entry 0 "
        f"and {list(t.shape)} at entry {i}: stack adds a dimension, so every shape must be "
        f"equal; pad or crop them first, or use cat() to join along an existing dimension"
    )


def tri_needs_2d(name: Any, x: Any) -> str:
    return (
        f"{name}: input tensor must have at least 2 dimensions, got shape {tuple(x.shape)}. "
        "Reshape it to a matrix first."
    )


def roll_shifts_without_dims(sh: Any) -> str:
    return (
        f"shifts and dimensions must align. shifts: {len(sh)}, dims:0 "
        "(pass one dim per shift, or a single shift without dims)"
    )


def roll_shifts_required() -> str:
    return "`shifts` required: pass at least one shift"


def roll_shifts_dims_mismatch(sh: Any, dm: Any) -> str:
    return (
        f"shifts and dimensions must align. shifts: {len(sh)}, dims:"
        f"{len(dm)} (pass one shift per dim)"
    )


def roll_dim_of_0d(dm: Any) -> str:
    return (
        f"Dimension specified as {dm[0]} but tensor has no dimensions. "
        "Roll a 0-d tensor without dims."
    )


def rot90_dims_not_two(dm: Any) -> str:
    return (
        f"expected total rotation dims == 2, but got dims = {len(dm)}. "
        "Pass two dims, e.g. dims=(0, 1)."
    )


def rot90_needs_2d(x: Any) -> str:
    return (
        f"expected total dims >= 2, but got total dims = {x.ndim} (shape "
        f"{tuple(x.shape)})"
    )


def rot90_dims_identical(d0: Any, d1: Any) -> str:
    return (
        f"expected rotation dims to be different, but got dim0 = {d0} and "
        f"dim1 = {d1}"
    )


def fliplr_needs_2d(input: Any) -> str:
    return f"Input must be >= 2-d (got shape {tuple(input.shape)})."


def flipud_needs_1d() -> str:
    return "Input must be >= 1-d (got a 0-d tensor)."


def diag_needs_1d_or_2d(x: Any) -> str:
    return (
        f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D (shape "
        f"{tuple(x.shape)}). Use diagonal() or diag_embed() otherwise."
    )


def repeats_bad_ndim(reps: Any) -> str:
    return (
        f"repeats must be 0-dim or 1-dim tensor (got shape "
        f"{tuple(reps.shape)})"
    )


def repeats_negative(reps: Any) -> str:
    return f"repeats can not be negative (got {reps.tolist()})"


def repeats_size_mismatch(reps: Any, d: Any, n: Any) -> str:
    return (
        f"repeats must have the same size as input along dim, but got repeats.size(0) "
        f"= {reps.size} and input.size({d}) = {n}"
    )


def repeat_interleave_output_size_mismatch(output_size: Any, idx: Any) -> str:
    return (
        f"allocated size does not match required size: output_size="
        f"{output_size}, sum(repeats)={idx.size}"
    )


def repeat_interleave_negative_repeat(r: Any) -> str:
    return f"Repeats must be non-negative (got {r})"


def repeat_interleave_scalar_output_size_mismatch(output_size: Any, r: Any, n: Any) -> str:
    return (
        f"allocated size does not match required size: output_size="
        f"{output_size}, repeats * size = {r * n}"
    )


def meshgrid_indexing_warning() -> str:
    return (
        "torch.meshgrid: in an upcoming release, it will be required to pass the "
        "indexing argument."
    )


def meshgrid_invalid_indexing(indexing: Any) -> str:
    return (
        f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
        f"received: {indexing}"
    )


def meshgrid_empty_list() -> str:
    return "torch.meshgrid expects a non-empty TensorList"


def meshgrid_bad_ndim(t: Any) -> str:
    return (
        f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
        f"got a tensor of shape {tuple(t.shape)}"
    )


def meshgrid_dtype_mismatch(first: Any, other: Any) -> str:
    return (
        "meshgrid expects all tensors to have the same dtype (got "
        f"{first} and {other})"
    )


def tensor_list_not_sequence(name: Any, tensors: Any) -> str:
    return (
        f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
        f"not {type(tensors).__name__}. Pass a list, e.g. {name}([a, b])."
    )


def tensor_list_element_not_tensor(name: Any, t: Any, i: Any) -> str:
    return (
        f"{name}(): argument 'tensors' (position 1) must be tuple of "
        f"Tensors, but found element of type {type(t).__name__} at pos {i}"
    )


def tensor_list_empty(name: Any) -> str:
    return (
        f"{name} expects a non-empty TensorList (got an empty sequence). "
        "Pass at least one tensor."
    )


def block_diag_element_not_tensor(t: Any, i: Any) -> str:
    return (
        f"block_diag(): argument 'tensors' must be Tensors, but found "
        f"element of type {type(t).__name__} at pos {i}"
    )


def block_diag_too_many_dims(i: Any, t: Any) -> str:
    return (
        "torch.block_diag: Input tensors must have 2 or fewer "
        f"dimensions. Input {i} has {t._array.ndim} dimensions"
    )


def expected_tensors_got(name: Any, t: Any) -> str:
    return (
        f"{name}(): expected Tensors, got {type(t).__name__}. Wrap it with "
        "gradsum.tensor()."
    )


def expect_1d_vector(t: Any) -> str:
    return (
        f"Expect a 1D vector, but got shape {list(t._array.shape)}. "
        "Flatten it first."
    )


def cartesian_prod_empty() -> str:
    return (
        "meshgrid expects a non-empty TensorList (cartesian_prod got no "
        "tensors). Pass at least one 1-D tensor."
    )


def cartesian_prod_dtype_mismatch(dtype_names: Any) -> str:
    return (
        "meshgrid expects all tensors to have the same dtype (got "
        f"{', '.join(dtype_names)}). Convert "
        "them first."
    )


def combinations_negative_r(r: Any) -> str:
    return f"Expect a non-negative number, but got {r}"


def expects_at_least_3d(name: Any, input: Any) -> str:
    return (
        f"{name} expects input to have at least 3 dimensions, but got input with "
        f"{input.ndim} dimension(s)"
    )


def pixel_shuffle_factor_not_positive(r: Any) -> str:
    return f"pixel_shuffle expects a positive upscale_factor, but got {r}"


def pixel_shuffle_channels_not_divisible(c: Any, r: Any) -> str:
    return (
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
        f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
    )


def pixel_unshuffle_factor_not_positive(r: Any) -> str:
    return f"pixel_unshuffle expects a positive downscale_factor, but got {r}"


def pixel_unshuffle_not_divisible(dim: Any, size: Any, r: Any) -> str:
    return (
        f"pixel_unshuffle expects {dim} to be divisible by downscale_factor, but "
        f"input.size({-2 if dim == 'height' else -1})={size} is not divisible by {r}"
    )


def channel_shuffle_groups_not_positive(g: Any) -> str:
    return (
        f"Number of groups to divide channels in must be positive. Value of "
        f"groups:{g}"
    )


def channel_shuffle_channels_not_divisible(c: Any, g: Any) -> str:
    return (
        f"Number of channels must be divisible by groups. Got {c} channels "
        f"and {g} groups."
    )


def repeat_missing_repeats() -> str:
    return (
        "repeat(): argument 'repeats' is required: pass the number of copies per "
        "dimension, e.g. t.repeat(2, 1)."
    )


def repeat_too_few_dims(reps: Any, a: Any) -> str:
    return (
        f"Number of dimensions of repeat dims can not be smaller than number of dimensions "
        f"of tensor: repeat{reps} for a tensor of shape {tuple(a.shape)}. Pass one count "
        "per dimension."
    )
