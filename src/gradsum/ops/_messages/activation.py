"""The texts of the activations (and of what nn.functional shares with them: the distances)."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


# -- activations -------------------------------------------------------------------------------
def kernel_not_floating_input(kernel: Any, input: Any) -> str:
    return (
        f"\"{kernel}\" not implemented for '{torch_name(input.dtype)}': "
        "convert the input with .float()"
    )


# -- distances ---------------------------------------------------------------------------------
def expected_common_dtype_floating_point(dt: Any) -> str:
    return (
        f"expected common dtype to be floating point, yet common dtype is {torch_name(dt)}"
        ": convert the inputs with .float()"
    )


def size_tensor_match_size_tensor_b_cosine(x1: Any, x2: Any) -> str:
    return (
        f"The size of tensor a ({x1.shape[-1] if x1.ndim else 1}) must match the size of "
        f"tensor b ({x2.shape[-1] if x2.ndim else 1}): cosine_similarity broadcasts "
        f"x1 {list(x1.shape)} and x2 {list(x2.shape)}"
    )


# -- relu, gelu, prelu, leaky_relu -------------------------------------------------------------
def relu_boolean_input() -> str:
    return "Boolean inputs not supported for relu. Convert the mask with .float() first."


def gelu_invalid_approximate(approximate: Any) -> str:
    return f"approximate argument must be either none or tanh, got {approximate!r}"


def prelu_type_promoting(input_name: Any, weight_name: Any) -> str:
    return (
        f"prelu: Type promoting not supported. Got "
        f"{input_name} and {weight_name} "
        "(give the weight the input's dtype)"
    )


def prelu_zero_dim_input() -> str:
    return "Not allow zero-dim input tensor."


def prelu_channel_mismatch(n_params: Any, channels: Any) -> str:
    return (
        "Mismatch of parameter numbers and input channel size. Found parameter numbers "
        f"= {n_params} and channel size = {channels}."
    )


def prelu_weight_not_scalar_or_1d(ndim: Any) -> str:
    return f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {ndim}"


def leaky_relu_inplace_negative_slope_backward() -> str:
    return (
        "In-place leakyReLu backward calculation is triggered with a negative slope "
        "which is not supported. This is caused by calling in-place forward function "
        "with a negative slope, please call out-of-place version instead. File an "
        "issue at https://github.com/pytorch/pytorch if you do require supporting "
        "in-place leakRelu backward calculation with negative slope"
    )


def activation_double_backward_not_implemented(kernel: Any) -> str:
    return (
        f"derivative for aten::{kernel}_backward is not "
        "implemented: this activation supports first-order gradients only"
    )
