"""The texts of the normalizations."""

from __future__ import annotations

from typing import Any


def _torch_name(dtype: Any) -> str:
    """The integer and bool ScalarType names (a normalisation refuses those inputs); other
    dtypes print as NumPy names them."""
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(dtype.name, dtype.name)


def _size(size: Any) -> str:
    return f"torch.Size({list(size)})" if isinstance(size, tuple) else str(list(size))


def norm_mixed_dtype(input: Any, other: Any) -> str:
    return (
        f"mixed dtype (CPU): all inputs must share same datatype. Got input "
        f"{input.dtype.name} and a parameter or running statistic of {other[0].name}; "
        "convert them to the input's dtype"
    )


def norm_mixed_dtype_parameter_not_float(bad: Any, other: Any, input: Any) -> str:
    return (
        "mixed dtype (CPU): expect parameter to have scalar type of Float: got "
        f"{(bad or other)[0].name} with an input of {input.dtype.name}; convert the "
        "parameters and running statistics with .float()"
    )


def norm_kernel_not_floating_input(kernel: Any, input: Any) -> str:
    return (
        f"\"{kernel}\" not implemented for '{_torch_name(input.dtype)}': convert the input "
        "with .float()"
    )


def norm_one_value_per_channel(size: Any) -> str:
    return f"Expected more than 1 value per channel when training, got input size {_size(size)}"


def norm_feature_count_mismatch(name: Any, c: Any, t: Any) -> str:
    return (f"{name} should contain {c} elements not {t.numel()}: the input has {c} "
            f"channels (dimension 1) and the layer {t.numel()} features; build the layer with "
            f"num_features={c}, or pass an input with {t.numel()} channels")


def batch_norm_momentum_not_float(momentum: Any) -> str:
    return (
        "batch_norm(): argument 'momentum' (position 7) must be float, not "
        f"{type(momentum).__name__}: pass a number (the module's momentum=None means a "
        "cumulative average, computed by the module)"
    )


def batch_norm_input_without_channels() -> str:
    return "list index out of range: batch_norm needs an (N, C, ...) input"


def batch_norm_eps_not_positive_training(eps: Any) -> str:
    return f"batch_norm eps must be positive during training, but got {eps}"


def batch_norm_eps_negative(eps: Any) -> str:
    return f"batch_norm eps must be non-negative, but got {eps}"


def batch_norm_running_stat_missing(name: Any) -> str:
    return (
        f"{name} must be defined in evaluation mode: pass the running statistics or "
        "training=True"
    )


def batch_norm_running_stats_one_none() -> str:
    return "running_mean and running_var must either both be None or neither be None"


def batch_norm_input_without_channel_dim(size: Any) -> str:
    return (
        f"Dimension out of range (expected to be in range of [-1, 0], but got 1): "
        f"batch_norm needs an (N, C, ...) input, got shape {list(size)}"
    )


def group_norm_input_wrong_rank(input: Any) -> str:
    return f"Expected at least 2 dimensions for input tensor but received {input.ndim}"


def group_norm_zero_groups() -> str:
    return "integer division or modulo by zero: num_groups must be > 0"


def group_norm_groups_not_positive(num_groups: Any) -> str:
    return f"Expected num groups to be greater than 0, got {num_groups}"


def group_norm_channels_not_divisible(size: Any, num_groups: Any) -> str:
    return (
        "Expected number of channels in input to be divisible by num_groups, but got input "
        f"of shape {list(size)} and num_groups={num_groups}"
    )


def group_norm_parameter_size_mismatch(name: Any, t: Any, size: Any) -> str:
    return (
        f"Expected {name} to be a vector of size equal to the number of channels in "
        f"input, but got {name} of shape {list(t.shape)} and input of shape {list(size)}"
    )


def instance_norm_one_spatial_element(size: Any) -> str:
    return (
        f"Expected more than 1 spatial element when training, got input size "
        f"{_size(size)}"
    )


def instance_norm_running_stats_missing() -> str:
    return "Expected running_mean and running_var to be defined when use_input_stats is false"
