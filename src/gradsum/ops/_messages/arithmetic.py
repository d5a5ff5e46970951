"""The texts of add, sub, mul, div and the other arithmetic ops."""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D
from gradsum.ops._messages._format import torch_name
from gradsum.ops._messages.core import derivative_not_implemented


def scalar_overflows_type(ctype: Any, v: Any) -> str:
    return (
        f"value cannot be converted to type {ctype} without "
        f"overflow (value {v}). Use a wider dtype or a smaller number."
    )


# -- add / sub / neg / positive ----------------------------------------------------------------
def sub_two_bool_tensors() -> str:
    return (
        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
        "`^` or `logical_xor()` operator instead."
    )


def sub_bool_tensor() -> str:
    return (
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
        "trying to invert a mask, use the `~` or `logical_not()` operator instead."
    )


def boolean_alpha_only_for_boolean_results() -> str:
    return "Boolean alpha only supported for Boolean results. Pass an int or a float alpha."


def integral_alpha_not_floating(alpha: Any) -> str:
    return (
        f"For integral input tensors, argument alpha must not be a floating "
        f"point number (got alpha={alpha}). Convert the tensors first."
    )


def neg_bool_tensor() -> str:
    return (
        "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
        "to invert a mask, use the `~` or `logical_not()` operator instead."
    )


def positive_bool_tensor() -> str:
    return (
        "The `+` operator, on a bool tensor is not supported. Convert the "
        "tensor to an integer dtype first."
    )


# -- division, remainders, pow -----------------------------------------------------------------
def integer_division_by_zero(name: Any, zeros: Any) -> str:
    return (
        f"ZeroDivisionError: integer {name} by zero ({zeros} zero divisor(s)). Convert to "
        "a floating dtype (t.float()) or mask the zero divisors out first."
    )


def fmod_zero_division() -> str:
    return "ZeroDivisionError"


def div_invalid_rounding_mode(rounding_mode: Any) -> str:
    return (
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def pow_bool_base_no_derivative() -> str:
    return (
        "pow(bool, tensor) has no derivative: torch fails here with an internal assert "
        "('unknown ivalue tag 4'). Pass the base as an int or a float (1 ** t)."
    )


def integers_to_negative_integer_powers() -> str:
    return "Integers to negative integer powers are not allowed. Use a float base (t.float() ** p)."


def arithmetic_derivative_not_implemented(op: Any, what: Any) -> str:
    return (
        f"{derivative_not_implemented(op)}: {what} has no gradient rule. "
        "Detach the tensor operand first, or write the expression with differentiable ops."
    )


def float_power_needs_a_tensor(input: Any, exponent: Any) -> str:
    return (
        "float_power() received an invalid combination of arguments - got "
        f"({type(input).__name__}, {type(exponent).__name__}): at least one "
        "of input and exponent must be a Tensor."
    )


def float_power_inplace_base_not_double(dt: Any) -> str:
    return (
        f"the base given to float_power_ has dtype {torch_name(dt)}"
        " but the operation's result requires dtype Double. Convert it "
        "with .double() first."
    )


# -- bit ops, lerp, addcdiv, integer ops, frexp ------------------------------------------------
def invert_only_integer_and_boolean() -> str:
    return (
        "~ (operator.invert) is only implemented on integer and Boolean-type "
        "tensors. Use logical_not() or 1 - t."
    )


def lerp_dtype_mismatch(ref: Any, other: Any, what: Any) -> str:
    return (
        f"expected dtype {D.from_numpy_dtype(ref).name} for `{what}` but got dtype "
        f"{D.from_numpy_dtype(other).name}. Convert it with .to(input.dtype)."
    )


def addcdiv_integer_division() -> str:
    return (
        "Integer division with addcdiv is no longer supported, and in a future release "
        "addcdiv will perform a true division of tensor1 and tensor2. Use "
        "(input + value * tensor1 / tensor2) with floating tensors instead."
    )


def integer_op_expected_a_tensor(name: Any) -> str:
    return f"{name}(): expected at least one Tensor argument. Wrap one with gradsum.tensor()."


def frexp_only_floating(dt: Any) -> str:
    return (
        "torch.frexp() only supports floating-point dtypes (got "
        f"{torch_name(dt)}). Convert the input with .float() first."
    )
