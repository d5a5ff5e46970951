"""The texts of nn.init."""

from __future__ import annotations

from typing import Any

from gradsum.nn._messages._format import torch_name

# -- init --------------------------------------------------------------------------------------


def negative_slope_not_a_number(param: Any) -> str:
    return f"negative_slope {param} not a valid number"


def unsupported_nonlinearity(nonlinearity: Any) -> str:
    return f"Unsupported nonlinearity {nonlinearity}"


def fan_in_fan_out_fewer_than_2_dims() -> str:
    return "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"


def unsupported_fan_mode(mode: Any, valid: Any) -> str:
    return f"Mode {mode} not supported, please use one of {valid}"


def trunc_normal_not_floating(tensor: Any) -> str:
    return (
        f"\"normal_kernel_cpu\" not implemented for '{torch_name(tensor.dtype)}': "
        "trunc_normal_ fills floating-point tensors only"
    )


def mean_more_2_std_from() -> str:
    return (
        "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
        "values may be incorrect."
    )


def initializing_zero_element_tensors_no() -> str:
    return "Initializing zero-element tensors is a no-op"


def only_tensors_2_dimensions_supported() -> str:
    return "Only tensors with 2 dimensions are supported"


def only_tensors_3_4_or() -> str:
    return "Only tensors with 3, 4, or 5 dimensions are supported"


def dim_0_divisible_by_groups() -> str:
    return "dim 0 must be divisible by groups"


def only_tensors_2_or_more() -> str:
    return "Only tensors with 2 or more dimensions are supported"


def init_function_deprecated(old_name: Any, new_name: Any) -> str:
    return f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`."


def expected_module(module_cls: Any) -> str:
    return f"Expected a Module; got {module_cls}"


def module_support_device_arg_skip() -> str:
    return "Module must support a 'device' arg to skip initialization"
