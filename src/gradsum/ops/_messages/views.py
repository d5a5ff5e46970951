"""The texts of the views (outputs that share storage)."""

from __future__ import annotations

from typing import Any


def expand_too_few_sizes(shape: Any, x: Any) -> str:
    return (
        f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to "
        f"the number of dimensions in the tensor ({x.ndim})"
    )


def expand_minus_one_in_new_leading_dim(shape: Any, x: Any) -> str:
    return (
        f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
        f"dimension {shape.index(-1)}: cannot expand shape {tuple(x.shape)} to {shape}. "
        "Give the size of each new leading dimension."
    )


def expand_size_mismatch(x: Any, target: Any) -> str:
    shape, want = tuple(x.shape), list(target)
    lead = len(want) - len(shape)
    i = next(i for i in range(len(want) - 1, lead - 1, -1)
             if shape[i - lead] not in (1, want[i]))
    return (
        f"The expanded size of the tensor ({want[i]}) must match the existing size "
        f"({shape[i - lead]}) at non-singleton dimension {i}.  Target sizes: {want}.  Tensor "
        f"sizes: {list(shape)}. Only a size of 1 expands: pass -1 (or {shape[i - lead]}) "
        f"there, or repeat() the tensor"
    )


def view_only_one_inferred_dim() -> str:
    return "only one dimension can be inferred"


def view_invalid_shape_dimension(s: Any) -> str:
    return f"invalid shape dimension {s}"


def view_shape_invalid_for_size(shape: Any, numel: Any) -> str:
    known = 1
    for s in shape:
        known *= s if s != -1 else 1
    why = (f"{numel} elements do not divide into rows of {known}" if -1 in shape
           else f"the sizes multiply to {known}, not {numel}")
    return (f"shape '{list(shape)}' is invalid for input of size {numel}: {why}; pass sizes "
            f"whose product is {numel}, with -1 for at most one size to infer it")


def view_size_not_compatible(x: Any, requested: Any) -> str:
    return (
        f"view size is not compatible with input tensor's size and stride (at least "
        f"one dimension spans across two contiguous subspaces): input shape "
        f"{tuple(x.shape)}, requested {requested}. Use .reshape(...) instead."
    )


def view_dtype_unsupported() -> str:
    return "view(dtype) is not supported by gradsum; use .to(dtype)"


def flatten_start_after_end() -> str:
    return "flatten() has invalid args: start_dim cannot come after end_dim"


def unflatten_sizes_mismatch(sizes: Any, dim: Any, n: Any, shp: Any) -> str:
    return (
        f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
        f"{dim} ({n}) in the input tensor of shape {tuple(shp)}. Pass sizes whose product "
        f"is {n} (at most one -1)."
    )


def permute_dims_mismatch(x: Any, dims: Any) -> str:
    return (
        f"permute(sparse_coo): number of dimensions in the tensor input does not match "
        f"the length of the desired ordering of dimensions i.e. input.dim() = {x.ndim} "
        f"is not equal to len(dims) = {len(dims)}: pass one entry per dimension of the "
        f"shape {tuple(x.shape)}, an ordering of 0 to {x.ndim - 1}"
    )


def t_expects_at_most_2d(nd: Any, a: Any) -> str:
    return (
        f"t() expects a tensor with <= 2 dimensions, but self is {nd}D (shape "
        f"{tuple(a.shape)}). Use transpose(dim0, dim1) or permute for more dimensions."
    )


def contiguous_preserve_format_unsupported() -> str:
    return (
        "preserve memory format is unsupported by the contiguous operator; "
        "pass contiguous_format or channels_last."
    )


def narrow_zero_dim() -> str:
    return "narrow() cannot be applied to a 0-dim tensor. Unsqueeze it first."


def narrow_negative_length(length: Any) -> str:
    return f"narrow(): length must be non-negative. Got length={length}."


def narrow_start_out_of_range(n: Any, start: Any, d: Any, a: Any) -> str:
    return (
        f"start out of range (expected to be in range of [{-n}, {n}], but got {start}) "
        f"for dim {d} of shape {tuple(a.shape)}"
    )


def narrow_exceeds_dimension(start: Any, length: Any, n: Any, d: Any, a: Any) -> str:
    return (
        f"start ({start}) + length ({length}) exceeds dimension size ({n}). Pass a "
        f"start and length within dim {d} of shape {tuple(a.shape)}."
    )


def split_expects_at_least_1d(name: Any) -> str:
    return (
        f"{name} expects at least a 1-dimensional tensor, got a 0-d tensor. Unsqueeze it "
        "first (t.unsqueeze(0)) or use it whole."
    )


def split_size_zero(step: Any, n: int) -> str:
    if step < 0:
        return (f"split expects split_size be non-negative, but got split_size={step}: pass "
                f"the size of each piece (or a list of sizes summing to {n})")
    return (f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}: "
            f"pass the size of each piece (or a list of sizes summing to {n})")


def split_sizes_sum_mismatch(n: Any, d: Any, sizes: Any) -> str:
    return (
        f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
        f"size at dimension {d}), but got split_sizes={sizes}"
    )


def chunk_not_positive(chunks: Any) -> str:
    return (f"chunk expects `chunks` to be greater than 0, got: {chunks}. Pass the number of "
            f"pieces, 1 or more")


def diagonal_dims_identical(dim1: Any, dim2: Any) -> str:
    return (
        f"diagonal dimensions cannot be identical {dim1}, {dim2}. Pass two "
        "different dims."
    )


def movedim_length_mismatch(src: Any, dst: Any) -> str:
    return (
        f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
        f"contain the same number of dims as destination ({list(dst)} dims)"
    )


def movedim_repeated_dim(what: Any, given: Any) -> str:
    return (
        f"movedim: repeated dim in `{what}` ({list(given)}). Each dim "
        "may appear once."
    )


def broadcast_negative_length(s: Any) -> str:
    return (
        f"Attempting to broadcast a dimension with negative length! "
        f"(shape {s}). Sizes must be >= 0."
    )


def broadcast_shapes_mismatch(v: Any, j: Any, s: Any, i: Any, result: Any) -> str:
    return (
        f"Attempting to broadcast a dimension of length {v} at {j - len(s)}! "
        f"Mismatching argument at index {i} had {s}; but expected shape should be "
        f"broadcastable to {result}"
    )


def broadcast_tensors_not_tensor(i: Any, t: Any) -> str:
    return (
        f"broadcast_tensors(): expected Tensor as element {i} in argument "
        f"0, but got {type(t).__name__}. Wrap it with gradsum.tensor()."
    )


def atleast_invalid_argument(name: Any, t: Any) -> str:
    return (
        f"{name}() received an invalid combination of arguments - got "
        f"({type(t).__name__}): expected a Tensor or a tuple of Tensors. "
        "Wrap it with gradsum.tensor()."
    )


def tensor_split_missing_argument() -> str:
    return (
        "tensor_split() missing required argument 'indices_or_sections': pass "
        "a number of sections or a list of split indices."
    )


def tensor_split_zero_dim() -> str:
    return (
        "tensor_split expected at least a 1-dimensional tensor, but got a "
        "tensor with 0 dims. Reshape it to (1,) first."
    )


def tensor_split_indices_not_long(dtype_name: Any) -> str:
    return (
        "tensor_split expected tensor_indices_or_sections to have dtype "
        f"of long, but got {dtype_name}. Convert it with .long()."
    )


def tensor_split_indices_bad_ndim(arr: Any) -> str:
    return (
        "tensor_split expected tensor_indices_or_sections to be a "
        "zero-dimensional or one-dimensional tensor, but got a tensor "
        f"with {arr.ndim} dims"
    )


def tensor_split_sections_not_positive(n: Any) -> str:
    return f"number of sections must be larger than 0, got {n}"


def dim_split_too_few_dims(name: Any, min_dim: Any, nd: Any) -> str:
    return (
        f"torch.{name} requires a tensor with at least {min_dim} dimension"
        f", but got a tensor with {nd} "
        "dimensions!"
    )


def dim_split_not_divisible(name: Any, d: Any, size: Any, n: Any) -> str:
    return (
        f"torch.{name} attempted to split along dimension {d}, but the "
        f"size of the dimension {size} is not divisible by the "
        f"split_size {n}!"
    )


def adjoint_not_matrix(input: Any) -> str:
    return (
        "tensor.adjoint() is only supported on matrices or batches of "
        f"matrices. Got {input._array.ndim}-D tensor."
    )


def unfold_size_too_large(d: Any, n: Any, size: Any) -> str:
    return (
        f"maximum size for tensor at dimension {d} is {n} but size is "
        f"{size}: the window (size) must fit in the dimension; pass a size of at most {n}"
    )


def unfold_step_not_positive(step: Any) -> str:
    return f"step is {step} but must be > 0"


def unfold_size_negative(size: Any) -> str:
    return f"size is {size} but must be >= 0"


def split_with_sizes_int_argument() -> str:
    return (
        "split_with_sizes(): argument 'split_sizes' (position 1) must be tuple "
        "of ints, not int. Use split(input, size) for equal pieces."
    )


def int_list_argument_not_tuple(name: Any, arg: Any, pos: Any, v: Any) -> str:
    return (
        f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, "
        f"not {type(v).__name__}"
    )


def as_strided_length_mismatch() -> str:
    return "mismatch in length of strides and shape"


def as_strided_negative_strides(stride: Any) -> str:
    return (
        f"as_strided: Negative strides are not supported at the moment, "
        f"got strides: [{', '.join(map(str, stride))}]"
    )


def as_strided_storage_overflow(size: Any, stride: Any) -> str:
    return (
        f"Storage size calculation overflowed with sizes="
        f"[{', '.join(map(str, size))}] and strides="
        f"[{', '.join(map(str, stride))}]"
    )


def as_strided_invalid_offset(off: Any) -> str:
    return f"Tensor: invalid storage offset {off}"


def as_strided_storage_too_small(
    size: Any, stride: Any, off: Any, item: Any, need: Any, storage_bytes: Any,
) -> str:
    return (
        f"setStorage: sizes [{', '.join(map(str, size))}], strides "
        f"[{', '.join(map(str, stride))}], storage offset {off}, and "
        f"itemsize {item} requiring a storage size of {need} are out of "
        f"bounds for storage of size {storage_bytes}"
    )
