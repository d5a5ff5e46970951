"""The texts of the in-place twins and copy_."""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp


# -- inplace.py -----------------------------------------------------------------------------------
def write_to_expanded_tensor(name: Any) -> str:
    return (
        "unsupported operation: more than one element of the written-to tensor refers to a "
        f"single memory location (an expanded tensor) in {name}. Please clone() the tensor "
        "before performing the operation."
    )


def write_overlaps_input(name: Any) -> str:
    return (
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        f"refer to a single memory location ({name}). Please clone() the tensor before "
        "performing the operation."
    )


def fill_value_not_0d(value: Any) -> str:
    return (
        f"fill_ only supports 0-dimension value tensor but got tensor with "
        f"{value._array.ndim} dimensions (shape {tuple(value.shape)}). Use copy_ instead."
    )


def t_too_many_dims(nd: Any, tensor: Any) -> str:
    return (
        f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D (shape "
        f"{tuple(tensor.shape)}). Use transpose_(dim0, dim1) for more dimensions."
    )


def call_on_variable_requiring_grad(name: Any) -> str:
    return (
        f"Can't call {name}() on Variable that requires grad. Use "
        f"var.detach().{name}() instead."
    )


def resize_requires_grad() -> str:
    return "cannot resize variables that require grad"


def fill_diagonal_too_few_dims(shp: Any) -> str:
    return (
        f"dimensions must larger than 1 (got a {len(shp)}-d tensor). Use "
        "a matrix, or copy_ for a vector."
    )


def fill_diagonal_unequal_dims(shp: Any) -> str:
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


def resize_negative_dimension(s: Any, shape: Any) -> str:
    return (
        f"Trying to create tensor with negative dimension {s}: "
        f"{list(shape)}"
    )


def fill_diagonal_value_is_tensor() -> str:
    return (
        "fill_diagonal_(): argument 'fill_value' (position 1) must be "
        "Number, not Tensor. Pass fill_value.item()."
    )
