"""The texts of the pointwise math ops."""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D


# -- clamp -------------------------------------------------------------------------------------
def clamp_needs_min_or_max() -> str:
    return "torch.clamp: At least one of 'min' or 'max' must not be None"


def clamp_min_max_mixed(min: Any, max: Any) -> str:
    return (
        "clamp() received an invalid combination of arguments: min and max must both "
        f"be Tensors or both numbers, got {type(min).__name__} and "
        f"{type(max).__name__}. Wrap the number with tensor()."
    )


def clamp_bound_none(name: Any, is_min: Any) -> str:
    return (
        f"{name}() received an invalid combination of arguments - got "
        f"(Tensor, NoneType): expected a Tensor or a Number for "
        f"{'min' if is_min else 'max'}. Pass a bound."
    )


# -- heaviside, factories, non-differentiable nodes --------------------------------------------
def heaviside_dtype_mismatch(x: Any, v: Any) -> str:
    return (
        "heaviside is not yet implemented for tensors with different "
        f"dtypes (got {D.from_numpy_dtype(x).name} and "
        f"{D.from_numpy_dtype(v).name}). Convert one of them."
    )


def logspace_negative_steps(steps: Any) -> str:
    return f"number of steps must be non-negative (got {steps})"


def scalar_tensor_given_tensor() -> str:
    return "scalar_tensor(): argument 's' (position 1) must be Number, not Tensor. Pass s.item()."
