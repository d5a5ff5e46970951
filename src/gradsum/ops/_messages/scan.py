"""The texts of the cumulative ops."""

from __future__ import annotations

from typing import Any


def diff_zero_d() -> str:
    return (
        "diff expects input to be at least one-dimensional (got a 0-d "
        "tensor). Reshape it to (1,) first."
    )


def diff_negative_order(n: Any) -> str:
    return f"order must be non-negative but got {n}. Pass n >= 0."


def diff_prepend_append_wrong_dim(nd: Any, other_ndim: Any) -> str:
    return (
        "diff expects prepend or append to be the same dimension as input: input "
        f"has {nd}, got {other_ndim}. Reshape it (prepend.reshape(...))."
    )


def diff_prepend_append_shape_mismatch(shape: Any, other_shape: Any, d: Any) -> str:
    return (
        "diff expects the shape of tensor to prepend or append to match that of input "
        f"except along the differencing dimension; input {tuple(shape)}, got "
        f"{tuple(other_shape)} (dim {d})"
    )
