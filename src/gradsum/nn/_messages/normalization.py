"""The texts of the normalization functions and modules."""

from __future__ import annotations

from typing import Any

from gradsum.nn._messages._format import torch_name

# -- normalization -----------------------------------------------------------------------------


def layer_norm_argument_normalized_shape(normalized_shape: Any) -> str:
    return (
        "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
        f"int: pass ({normalized_shape},)"
    )


def layer_norm_input_shape(ns: Any, input: Any) -> str:
    return (
        f"Given normalized_shape={list(ns)}, expected input with shape "
        f"[*, {', '.join(str(s) for s in ns)}], but got input of size{list(input.shape)}: "
        f"normalized_shape must be the input's last {len(ns)} size(s)"
    )


def rms_norm_argument_normalized_shape(normalized_shape: Any) -> str:
    return (
        "rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
        f"int: pass ({normalized_shape},)"
    )


def rms_norm_input_shape(ns: Any, input: Any) -> str:
    return (
        f"Given normalized_shape={list(ns)}, expected input with shape "
        f"[*{', '.join(str(s) for s in ns)}], but got input of size{list(input.shape)}"
    )


def expected_weight_same_shape_normalized(weight: Any, ns: Any) -> str:
    return (
        "Expected weight to be of same shape as normalized_shape, but got weight of shape "
        f"{list(weight.shape)} and normalized_shape = {list(ns)}"
    )


def mismatch_dtype_between_input_weight(input: Any, weight: Any) -> str:
    return (
        "Mismatch dtype between input and weight: input dtype = "
        f"{torch_name(input.dtype).lower()}, weight dtype = "
        f"{torch_name(weight.dtype).lower()}, Cannot dispatch to fused implementation."
    )


def expected_3d_or_higher_dimensionality(dim: Any) -> str:
    return (
        f"Expected 3D or higher dimensionality                          input (got {dim} "
        "dimensions)"
    )


def syncbatchnorm_number_input_channels_non() -> str:
    return "SyncBatchNorm number of input channels should be non-zero"


def syncbatchnorm_expected_input_tensor_gpu() -> str:
    return "SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone"


def expected_input_size_at_dim(feature_dim: Any, module: Any, input: Any) -> str:
    return (
        f"expected input's size at dim={feature_dim} to match num_features "
        f"({module.num_features}), but got: {input.shape[feature_dim]}."
    )


def batch_norm_size_mismatch_warning(feature_dim: Any) -> str:
    return (
        f"input's size at dim={feature_dim} does not match num_features. You can "
        "silence this warning by not passing in num_features, which is not used "
        "because affine=False"
    )


def num_channels_divisible_by_num(num_channels: Any, num_groups: Any) -> str:
    return f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"


def unexpected_running_stats(keys: Any, klass: Any) -> str:
    return (
        "Unexpected running stats buffer(s) {names} for {klass} with "
        "track_running_stats=False. If state_dict is a checkpoint saved before "
        "0.4.0, this may be expected because {klass} does not track running stats "
        "by default since 0.4.0. Please remove these keys from state_dict. If the "
        "running stats are actually needed, instead set track_running_stats=True "
        "in {klass} to enable them. See the documentation of {klass} for "
        "details.".format(names=" and ".join(f'"{k}"' for k in keys), klass=klass)
    )
