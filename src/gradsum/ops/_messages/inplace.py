"""The texts of the in-place twins and copy_."""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp


# -- inplace.py -----------------------------------------------------------------------------------
def unsupported_operation_more_one(name: Any) -> str:
    return (
        "unsupported operation: more than one element of the written-to tensor refers to a "
        f"single memory location (an expanded tensor) in {name}. Please clone() the tensor "
        "before performing the operation."
    )


def unsupported_operation_some_elements(name: Any) -> str:
    return (
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        f"refer to a single memory location ({name}). Please clone() the tensor before "
        "performing the operation."
    )


def view_was_created_no_grad(name: Any) -> str:
    return (
        f"A view was created in no_grad mode and is being modified inplace with grad mode "
        f"enabled ({name}). Given that this use case is ambiguous and error-prone, it is "
        "forbidden. Create the view with grad mode enabled, or clone() it first."
    )


def fill_only_supports_dimension(value: Any) -> str:
    return (
        f"fill_ only supports 0-dimension value tensor but got tensor with "
        f"{value._array.ndim} dimensions (shape {tuple(value.shape)}). Use copy_ instead."
    )


def t_expects_tensor_dimensions(nd: Any, tensor: Any) -> str:
    return (
        f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D (shape "
        f"{tuple(tensor.shape)}). Use transpose_(dim0, dim1) for more dimensions."
    )


def call_on_variable_requiring_grad(name: Any) -> str:
    return (
        f"Can't call {name}() on Variable that requires grad. Use "
        f"var.detach().{name}() instead."
    )


def cannot_resize_variables_require() -> str:
    return "cannot resize variables that require grad"


def dimensions_larger_d_tensor(shp: Any) -> str:
    return (
        f"dimensions must larger than 1 (got a {len(shp)}-d tensor). Use "
        "a matrix, or copy_ for a vector."
    )


def all_dimensions_input_equal(shp: Any) -> str:
    return (
        f"all dimensions of input must be of equal length (got shape "
        f"{tuple(shp)})"
    )


def inplace_output_shape_mismatch(dst_shape: Any, bshape: Any, name: Any) -> str:
    return (
        f"output with shape {list(dst_shape)} doesn't match the broadcast shape "
        f"{list(bshape)} in {name}. In-place ops cannot grow the tensor; use the "
        "out-of-place op."
    )


def copy_size_mismatch(x: Any, src: Any) -> str:
    return (
        f"The size of tensor a ({x.shape}) must match the size of tensor b "
        f"({tuple(src.shape)}): copy_ needs a source broadcastable to the destination"
    )


def index_put_value_tensor_shape_mismatch(v: Any, arr: Any, kk: Any, e: Any) -> str:
    return (
        f"shape mismatch: value tensor of shape {list(xp.shape(v))} cannot be broadcast to "
        f"indexing result of shape {list(arr[kk].shape)} ({e})"
    )


def setitem_value_shape_mismatch(v: Any, arr: Any, kk: Any, e: Any) -> str:
    return (
        f"shape mismatch: value of shape {list(xp.shape(v))} cannot be broadcast to "
        f"indexing result of shape {list(arr[kk].shape)} ({e})"
    )


def trying_create_tensor_negative(s: Any, shape: Any) -> str:
    return (
        f"Trying to create tensor with negative dimension {s}: "
        f"{list(shape)}"
    )


def fill_diagonal_argument_fill_value_position() -> str:
    return (
        "fill_diagonal_(): argument 'fill_value' (position 1) must be "
        "Number, not Tensor. Pass fill_value.item()."
    )

