"""The texts of indexing: subscripts, index ops, gather/scatter, masks (ops/indexing/)."""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D
from gradsum.ops._messages._format import torch_name


# -- indexing/gather_scatter.py -------------------------------------------------------------------
def gather_index_ndim_mismatch(idx: Any, x: Any) -> str:
    return (
        f"Index tensor must have the same number of dimensions as input tensor: index has "
        f"{idx.ndim}, input has {x.ndim}"
    )


def scatter_add_index_ndim_mismatch(idx: Any, x: Any, sa: Any) -> str:
    return (
        f"Index tensor must have the same number of dimensions as self tensor and src: "
        f"index {tuple(idx.shape)}, self {tuple(x.shape)}, src {tuple(sa.shape)}"
    )


def index_larger_than_self_or_src(idx: Any, x: Any, d: Any, sa: Any) -> str:
    return (
        f"Expected index {list(idx.shape)} to be no larger than self {list(x.shape)} apart "
        f"from dimension {d} and to be no larger size than src {list(sa.shape)}"
    )


def take_along_dim_index_not_long(idx: Any) -> str:
    return (
        f"torch.take_along_dim(): dtype of indices should be Long but got "
        f"{torch_name(idx.dtype)}. Convert them with .long()."
    )


def take_along_dim_ndim_mismatch(x: Any, idx: Any) -> str:
    return (
        f"torch.take_along_dim(): input and indices should have the same number of "
        f"dimensions, but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for "
        "indices"
    )


def expected_long_tensor_index(op: Any, idx: Any) -> str:
    return (
        f"{op}(): Expected a long tensor for index, but got "
        f"{torch_name(idx.dtype)}. Convert it with .long()."
    )


def take_index_out_of_range(k: Any, n: Any) -> str:
    return f"out of range: tried to access index {k} on a tensor of {n} elements."


def scatter_reduce_invalid_reduce(reduce: Any) -> str:
    return (
        f"reduce argument must be either sum, prod, mean, amax or amin, got "
        f"{reduce}"
    )


def scatter_reduce_index_not_long(idx: Any) -> str:
    return (
        f"scatter_reduce(): Expected dtype int64 for index, got "
        f"{torch_name(idx.dtype)}. Convert it with .long()."
    )


def scatter_reduce_dtype_mismatch(x: Any, s: Any) -> str:
    return (
        f"scatter_reduce(): Expected self.dtype to be equal to src.dtype "
        f"(self {torch_name(x.dtype)}, src {torch_name(s.dtype)}). Convert src."
    )


def scatter_reduce_index_ndim_mismatch(idx: Any, x: Any, s: Any) -> str:
    return (
        "Index tensor must have the same number of dimensions as self tensor "
        f"(index {idx.ndim}, self {x.ndim}, src {s.ndim})"
    )


def index_out_of_bounds_for_dim(k: Any, dim: Any, size: Any) -> str:
    valid = f"valid indices are {-size} to {size - 1}" if size else "it has no elements"
    return f"index {k} is out of bounds for dimension {dim} with size {size}: {valid}"


def scatter_src_not_slice_size(have: Any, want: Any) -> str:
    return (
        "expected src to have a size equal to the slice of self. src size = "
        f"{list(have)}, slice size = {list(want)}"
    )


def select_scatter_index_out_of_range(index: Any, shape: Any, d: Any) -> str:
    return (
        f"select(): index {index} out of range for tensor of size "
        f"{list(shape)} at dimension {d}"
    )


def slice_scatter_step_not_positive(step: Any) -> str:
    return f"slice step must be positive (got {step}). Reverse with flip()."


def put_index_not_long(i: Any) -> str:
    return (
        f"put_(): Expected a long tensor for index, but got "
        f"{torch_name(i.dtype)}"
    )


def put_dtype_mismatch(x: Any, s: Any) -> str:
    return (
        f"put_(): self and source expected to have the same dtype, but got "
        f"self.dtype = {torch_name(x.dtype)} and source.dtype = "
        f"{torch_name(s.dtype)}"
    )


def put_numel_mismatch(s: Any, i: Any) -> str:
    return (
        f"put_(): Expected source and index to have the same number of "
        f"elements, but got source.numel() = {s.size}, index.numel() = "
        f"{i.size}"
    )


def index_put_indices_not_tuple(indices: Any) -> str:
    return (
        f"index_put(): argument 'indices' (position 1) must be tuple of "
        f"Tensors, not {type(indices).__name__}. Pass (index,)."
    )


def index_put_values_not_tensor(values: Any) -> str:
    return (
        f"index_put(): argument 'values' (position 2) must be Tensor, not "
        f"{type(values).__name__}. Wrap it with gradsum.tensor()."
    )


def index_put_dtype_mismatch(input: Any, values: Any) -> str:
    return (
        f"Index put requires the source and destination dtypes match, got "
        f"{torch_name(input._array.dtype)} for the destination and "
        f"{torch_name(values._array.dtype)} for the source."
    )


def index_argument_not_tensor(name: Any, index: Any) -> str:
    return (
        f"{name}(): argument 'index' (position 2) must be Tensor, not "
        f"{type(index).__name__}. Wrap it with gradsum.tensor(...)."
    )


def scatter_reduce_arg_unsupported(reduce: Any) -> str:
    return (
        f"scatter(reduce={reduce!r}) is not supported by gradsum. Use scatter_add for "
        "'add' (or scatter_reduce in torch)."
    )


def scatter_index_not_integer(idx: Any) -> str:
    return (
        f"scatter(): Expected dtype int32/int64 for index, got "
        f"{torch_name(idx.dtype)}. Convert it with .long()."
    )


def scatter_dtype_mismatch(x: Any, src: Any) -> str:
    return (
        f"scatter(): Expected self.dtype to be equal to src.dtype (self "
        f"{torch_name(x.dtype)}, src {torch_name(src._array.dtype)}). Convert src."
    )


def scatter_index_self_ndim_mismatch(idx: Any, x: Any) -> str:
    return (
        "Index tensor must have the same number of dimensions as self tensor "
        f"(index {idx.ndim}, self {x.ndim})"
    )


def scatter_index_src_ndim_mismatch(idx: Any, src: Any) -> str:
    return (
        "Index tensor must have the same number of dimensions as src tensor "
        f"(index {idx.ndim}, src {src._array.ndim})"
    )


def index_larger_than_self(idx: Any, x: Any, d: Any, tail: Any) -> str:
    return (
        f"Expected index {list(idx.shape)} to be no larger than self "
        f"{list(x.shape)} apart from dimension {d}{tail}"
    )


def index_out_of_bounds_not_wrapped(bad: Any, d: Any, size: Any) -> str:
    return (
        f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} "
        f"with size {size} (negative indices are not wrapped)"
    )


def gather_index_size_mismatch(i: Any, idx: Any, x: Any, d: Any) -> str:
    return (
        f"Size does not match at dimension {i} expected index {tuple(idx.shape)} to be "
        f"no larger than self {tuple(x.shape)} apart from dimension {d}"
    )


def scatter_reduce_backward_invalid_reduce(red: Any) -> str:
    return (
        f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
        f"'amin' but got {red}."
    )


def index_put_value_shape_mismatch(v: Any, e: Any) -> str:
    return (
        f"shape mismatch: value tensor of shape {list(v.shape)} cannot be "
        f"broadcast to indexing result ({e})"
    )


# -- indexing/index.py ----------------------------------------------------------------------------
def index_op_index_not_int64(name: Any, arr: Any) -> str:
    return (
        f"{name}(): Expected dtype int64 for index, got {D.from_numpy_dtype(arr.dtype).name}"
        ". Convert the index with .long()."
    )


def index_not_a_vector(op: Any) -> str:
    return f"{op}(): Index is supposed to be a vector"


def index_select_scalar_many_indices(idx: Any) -> str:
    return (
        f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s). "
        "A 0-d tensor has one entry: pass one index (0)."
    )


def index_add_0d_source_many_indices(idx: Any) -> str:
    return (
        f"Dimension specified as 0 but tensor has no dimensions: index_add_() got "
        f"{idx.size} indices for a 0-d source. Pass one index per source entry along dim."
    )


def index_add_count_mismatch(idx: Any, src_n: Any, d: Any, x: Any, src: Any) -> str:
    return (
        f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
        f"({src_n}), for dim: {d}; self has shape {tuple(x.shape)}, source "
        f"{tuple(src.shape)}. The source must match self except along dim."
    )


def index_add_dtype_mismatch(self_dt: Any, src_dt: Any) -> str:
    return (
        f"index_add_(): self ({torch_name(self_dt)}) and source ({torch_name(src_dt)}) must "
        f"have the same scalar type: convert the source first (source.to(gradsum."
        f"{getattr(self_dt, 'name', self_dt)}))"
    )


def index_add_index_out_of_range(d: Any, size: Any, idx: Any) -> str:
    return (
        f"index out of range in self: index_add on dimension {d} of size {size} with "
        f"indices in [{int(idx.min())}, {int(idx.max())}]; valid indices are 0 to "
        f"{size - 1} (negative indices are not wrapped)"
    )


def one_hot_not_long() -> str:
    return "one_hot is only applicable to index tensor of type LongTensor."


def one_hot_negative_class() -> str:
    return "Class values must be non-negative."


def one_hot_class_too_large() -> str:
    return ("Class values must be smaller than num_classes. Pass num_classes greater than "
            "the largest class value (or leave it -1 to infer it)")


def integer_kernel_not_implemented(name: Any, npdt: Any) -> str:
    return (
        f"\"{name}\" not implemented for '{torch_name(npdt)}': pass an integer "
        "dtype"
    )


def index_copy_index_ndim(idx: Any) -> str:
    return (
        f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim}). "
        "Flatten it first."
    )


def index_copy_scalar_source_many_indices(idx: Any) -> str:
    return (
        "index_copy_(): When source is scalar, index should have one element "
        f"(got {idx.size})"
    )


def index_copy_ndim_mismatch(s: Any, x: Any) -> str:
    return (
        "index_copy_(): When source and destination are not scalars, their dimensionality "
        f"must match. Source dimensionality ({s.ndim}), destination dimensionality "
        f"({x.ndim})"
    )


def index_copy_dtype_mismatch(x: Any, s: Any) -> str:
    return (
        "index_copy_(): self and source expected to have the same dtype, but got (self) "
        f"{torch_name(x.dtype)} and (source) {torch_name(s.dtype)}. Convert the source "
        "with .to(self.dtype)."
    )


def index_copy_slice_shape_mismatch(x: Any, s: Any, d: Any) -> str:
    return (
        "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
        f"shape {tuple(x.shape)}, source shape {tuple(s.shape)} (dim {d})."
    )


def index_copy_count_mismatch(idx: Any, s: Any, d: Any) -> str:
    return (
        f"index_copy_(): Number of indices ({idx.size}) should be equal to "
        f"source.size(dim) ({s.shape[d]})"
    )


def index_copy_index_out_of_bounds(bad: Any, d: Any, size: Any) -> str:
    return (
        f"index_copy_(): index {int(bad[0])} is out of bounds for "
        f"dimension {d} with size {size} (negative indices are not wrapped)"
    )


def index_fill_index_not_long(idx: Any) -> str:
    return (
        f"index_fill_(): Expected dtype int64 for index. Got {torch_name(idx.dtype)}; "
        "convert it with .long()."
    )


def index_fill_index_not_vector(idx: Any) -> str:
    return (
        f"Index has to be a vector/scalar (got shape {tuple(idx.shape)}). "
        "Flatten it first."
    )


def index_fill_value_not_0d(v_t: Any) -> str:
    return (
        "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
        f"{v_t._array.ndim} dimension(s). Pass a number or a 0-d tensor."
    )


def index_fill_index_out_of_bounds(bad: Any, d: Any, size: Any) -> str:
    return (
        f"index {int(bad[0])} is out of bounds for dimension {d} with size "
        f"{size}: indices must lie in [{-size}, {size - 1}]"
    )


def unravel_index_not_integer(arr: Any) -> str:
    return (
        f"expected 'indices' to be integer dtype, but got gradsum."
        f"{arr.dtype.name}. Convert them with .long()."
    )


def unravel_index_negative_shape(dims: Any) -> str:
    return f"'shape' cannot have negative values, but got {tuple(dims)}"


def index_reduce_invalid_reduce(reduce: Any) -> str:
    return (
        f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
        f"amin but got {reduce}."
    )


def index_reduce_index_not_integer(idx: Any) -> str:
    return (
        f"index_reduce_(): Expected dtype int32/int64 for index but got: "
        f"{torch_name(idx.dtype)}"
    )


def index_reduce_dtype_mismatch(x: Any, s: Any) -> str:
    return (
        f"index_reduce_(): self ({torch_name(x.dtype)}) and source "
        f"({torch_name(s.dtype)}) must have the same scalar type"
    )


def index_reduce_count_mismatch(idx: Any, s: Any, d: Any, x: Any) -> str:
    return (
        f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
        f"source.size(dim) ({s.shape[d] if s.ndim else 1}), and source "
        f"{list(s.shape)} should have the same number of dimensions as self "
        f"{list(x.shape)}"
    )


def index_reduce_shape_mismatch(s: Any, x: Any, d: Any) -> str:
    return (
        f"index_reduce_(): source {list(s.shape)} and self {list(x.shape)} "
        f"must match in every dimension but {d}"
    )


def index_reduce_index_out_of_range(bad: Any, d: Any, size: Any) -> str:
    return (
        f"index out of range in self: index {int(bad[0])} for dimension {d} "
        f"with size {size}"
    )


def index_out_of_bounds_valid_range(bad: Any, dim: Any, size: Any) -> str:
    return (
        f"index {bad} is out of bounds for dimension {dim} with size {size}: "
        f"indices must lie in [0, {size - 1}] (negative indices are not wrapped)"
    )


def tri_indices_negative(what: Any, v: Any) -> str:
    return f"{what} must be non-negative, got{v}"


# -- indexing/masked.py ---------------------------------------------------------------------------
def where_condition_not_bool(cond: Any) -> str:
    return (
        f"where expected condition to be a boolean tensor, but got a tensor with dtype "
        f"{D.from_numpy_dtype(cond.dtype).name}. Compare first (e.g. mask = t > 0)."
    )


def masked_fill_mask_not_bool(m: Any) -> str:
    return (
        f"masked_fill_ only supports boolean masks, but got mask with dtype "
        f"{D.from_numpy_dtype(m.dtype).name}"
    )


def masked_fill_value_not_0d(v_t: Any) -> str:
    return (
        f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
        f"{v_t.ndim} dimension(s)."
    )


def masked_select_mask_not_bool(mask: Any) -> str:
    return (
        f"masked_select: expected BoolTensor for mask, got {mask.dtype.name}. Compare first "
        "(mask = t > 0)."
    )


def masked_scatter_mask_not_bool(m: Any) -> str:
    return (
        "masked_scatter_ only supports boolean masks, but got mask with dtype "
        f"{torch_name(m.dtype)}. Compare first (mask = t > 0)."
    )


def masked_scatter_dtype_mismatch(a: Any, source: Any) -> str:
    return (
        "masked_scatter: expected self and source to have same dtypes but got "
        f"{torch_name(a._array.dtype)} and {torch_name(source._array.dtype)}. Convert the "
        "source with .to(self.dtype)."
    )


def masked_scatter_source_too_small(source: Any, n: Any) -> str:
    return (
        f"Number of elements of source < number of ones in mask "
        f"({source._array.size} < {n}). Pass a larger source."
    )


def masked_select_size_mismatch(x: Any, m: Any) -> str:
    return (
        f"The size of tensor a ({x.shape}) must match the size of tensor b "
        f"({m.shape}): masked_select broadcasts the input and the mask to one shape."
    )


# -- indexing/subscript.py ------------------------------------------------------------------------
def too_many_indices(shape: Any, used: Any) -> str:
    return f"too many indices for tensor of dimension {len(shape)} (got {used})"


def index_tensor_bad_dtype(k: Any) -> str:
    return (
        "tensors used as indices must be long, int, byte or bool tensors, got "
        f"{k.dtype.name}"
    )


def index_out_of_bounds_empty_result() -> str:
    return "an index is out of bounds (the indexing result is empty)"


def index_error_with_shape(e: Any, x: Any) -> str:
    return f"{e} (tensor of shape {tuple(x.shape)})"


def index_str_invalid_type(k: Any) -> str:
    return (
        f"new(): invalid data type 'str': index {k!r}. Index with "
        "ints, slices, None, ... or int/bool tensors."
    )


def index_invalid_type(k: Any) -> str:
    return (
        f"new(): invalid data type '{type(k).__name__}': index {k!r}. "
        "Index with ints, slices, None, ... or int/bool tensors."
    )


def slice_step_not_positive(k: Any) -> str:
    return (
        f"step must be greater than zero (got slice step {k.step}): gradsum, like "
        "torch, has no negative strides. Use flip() to reverse."
    )
