"""The texts of nn.functional's shared argument checks (reduction=, input ranks), linear,
activations and dropout (the distances' texts, and the floating-input one F's activations
share with ops, are ops': ``gradsum/ops/_messages/``)."""

from __future__ import annotations

from typing import Any

from gradsum.nn._messages._format import torch_name
from gradsum.ops._messages import kernel_not_floating_input  # noqa: F401  (layer_norm's)

# -- argument checks shared by F functions -----------------------------------------------------


def size_average_reduce_args_deprecated() -> str:
    return (
        "size_average and reduce args will be deprecated, please use reduction='mean' (or "
        "'sum'/'none') instead."
    )


def elementwise_mean_deprecated() -> str:
    return (
        "reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
        "instead."
    )


def reduction_not_valid(reduction: Any) -> str:
    return reduction + " is not valid"


def expected_lo_or_hi_dims_input(lo: Any, hi: Any, input: Any) -> str:
    return f"expected {lo}D or {hi}D input (got {input.ndim}D input)"


def expected_dims_input(nd: Any, input: Any) -> str:
    return f"expected {nd}D input (got {input.ndim}D input)"


def expected_at_least_2d_input(input: Any) -> str:
    return f"expected at least 2D input (got {input.ndim}D input)"


def not_differentiable_pass_detached(fn: Any, arg: Any, end: Any) -> str:
    return (
        f"The function '{fn}' is not differentiable with respect to argument '{arg}'. "
        f"This input cannot have requires_grad True{end} (pass {arg}.detach() instead)"
    )


def implicit_dimension_choice_been_deprecated(name: Any) -> str:
    return (
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument."
    )


def expected_int_or_pair(name: Any, v: Any) -> str:
    return f"expected {name} to be a single integer or a pair, got {v}"


def not_differentiable(fn: Any, arg: Any) -> str:
    return (
        f"The function '{fn}' is not differentiable with respect to argument '{arg}'. "
        "This input cannot have requires_grad True."
    )


# -- linear, distances and other F functions ---------------------------------------------------


def linear_weight_more_than_2d(weight: Any) -> str:
    return (
        f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D: linear "
        "takes a weight of shape (out_features, in_features) or (in_features,)"
    )


def linear_1d_weight_with_bias() -> str:
    return (
        "mat2 must be a matrix, got 1-D tensor: linear with a bias takes a 2-D weight "
        "(out_features, in_features)"
    )


def linear_bias_broadcast_shape(out_shape: Any, full: Any, bias: Any) -> str:
    return (
        f"output with shape {list(out_shape)} doesn't match the broadcast shape "
        f"{list(full) if full is not None else list(bias.shape)}: linear's bias of shape "
        f"{list(bias.shape)} must broadcast to the output's shape"
    )


def one_hot_cannot_infer_num_classes() -> str:
    return "Can not infer total number of classes from empty tensor: pass num_classes"


def bilinear_weight_three_dimensional_d(weight: Any) -> str:
    return (
        f"bilinear(): weight must be three-dimensional, but got "
        f"{weight.ndim}-D weight"
    )


def bilinear_batch_dims_mismatch(input1: Any, input2: Any) -> str:
    return (
        "bilinear(): input batch dimensions do not match: got "
        f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}"
    )


def bilinear_input_sizes_mismatch(input1: Any, input2: Any, weight: Any) -> str:
    return (
        f"bilinear(): input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match "
        f"weight's {weight.shape[1]} and {weight.shape[2]}"
    )


def pdist_only_supports_2d_tensors(input: Any) -> str:
    return (
        f"pdist only supports 2D tensors, got: {input.dim()}D. Pass an "
        "(N, M) matrix of N row vectors."
    )


def pdist_only_supports_floating_point(input: Any) -> str:
    return (
        f"pdist only supports floating-point dtypes (got {input.dtype}). "
        "Convert with .float()."
    )


def pdist_only_supports_non_negative(p: Any) -> str:
    return f"pdist only supports non-negative p values (got p={p})"


def in_features_mismatch(input: Any, module: Any) -> str:
    return (
        f"The in_features inferred from input: {input.shape[-1]} is not equal to "
        f"in_features from self.weight: {module.weight.shape[-1]}"
    )


# -- activations -------------------------------------------------------------------------------


def celu_zero_alpha() -> str:
    return (
        "ZeroDivisionError: alpha cannot be 0 for CELU (celu divides the input by alpha: "
        "pass a non-zero alpha)"
    )


def hardtanh_min_greater_than_max(min_val: Any, max_val: Any) -> str:
    return (
        f"min_val cannot be greater than max_val (got min_val={min_val}, "
        f"max_val={max_val}): swap them"
    )


def softshrink_negative_lambda(input: Any, lambd: Any) -> str:
    return (
        f"lambda must be in range [0, 3.40282e+38] for input dtype "
        f"{torch_name(input.dtype)}, but found {lambd:g}: pass lambd >= 0"
    )


def glu_scalar() -> str:
    return (
        "glu does not support scalars because halving size must be even (give it a tensor "
        "with at least one dimension)"
    )


def glu_odd_halving_dim(d: Any, size: Any) -> str:
    return (
        f"Halving dimension must be even, but dimension {d} is size {size}: glu splits "
        "that dimension into two halves"
    )


def rrelu_bounds(lower: Any, upper: Any) -> str:
    return (
        f"Lower bound should be less than or equal to the upper bound (got lower={lower}, "
        f"upper={upper})"
    )


def eps_parameter_deprecated_no_effect() -> str:
    return "`eps` parameter is deprecated and has no effect."


def max_val_greater_min_val(module: Any) -> str:
    return f"max_val ({module.max_val}) must be greater than min_val ({module.min_val})"


def softmax2d_expected_input_3d_or(input: Any) -> str:
    return f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead"


# -- dropout -----------------------------------------------------------------------------------


def dropout_probability(p: Any) -> str:
    return (f"dropout probability has to be between 0 and 1, but got {p}: p is the "
            f"probability of zeroing an element (p=0.1 zeroes about 10%)")


def dropout_argument_train_position_3(training: Any) -> str:
    return (
        f"dropout(): argument 'train' (position 3) must be bool, not "
        f"{type(training).__name__}: pass training=True or training=False"
    )


def dropout_cannot_cast_to_integer(input: Any) -> str:
    return (
        f"result type Float can't be cast to the desired output type "
        f"{torch_name(input.dtype)}: dropout with 0 < p < 1 needs a floating point input "
        "(convert with .float())"
    )


def feature_dropout_requires_at_least(arr: Any) -> str:
    return (
        "Feature dropout requires at least 2 dimensions in the input (got a "
        f"{arr.ndim}-D input of shape {list(arr.shape)}): give it a channel dimension"
    )


def dropout1d_expected_2d_or_3d(inp_dim: Any) -> str:
    return (
        f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. Note that "
        "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
        "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
        "inputs)."
    )


def dropout_nd_deprecated_input(n: Any, inp_dim: Any) -> str:
    return (
        f"dropout{n}d: Received a {inp_dim}-D input to dropout{n}d, which is deprecated and "
        "will result in an error in a future release. To retain the behavior and silence "
        f"this warning, please use dropout instead. Note that dropout{n}d exists to provide "
        f"channel-wise dropout on inputs with {n} spatial dimensions, a channel dimension, "
        f"and an optional batch dimension (i.e. {n + 1}D or {n + 2}D inputs)."
    )


def dropout2d_received_3d_input_dropout2d() -> str:
    return (
        "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
        "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
        "the channel dim. This behavior will change in a future release to interpret the "
        "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
        "channel-wise dropout behavior, please switch to using dropout1d instead."
    )
