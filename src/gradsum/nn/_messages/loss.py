"""The texts of the loss functions and modules."""

from __future__ import annotations

from typing import Any

from gradsum.nn._messages._format import size_str, torch_name

# -- losses ------------------------------------------------------------------------------------


def integral_pass_integer_tensor_e(name: Any, t: Any) -> str:
    return (
        f"{name} must be integral (got {t.dtype}): pass an integer "
        "tensor, e.g. lengths.long()"
    )


def ctc_loss_not_floating(log_probs: Any) -> str:
    return (
        f"\"ctc_loss_cpu\" not implemented for "
        f"'{torch_name(log_probs.dtype)}': ctc_loss takes float32 or "
        "float64 log_probs, convert them with .float()"
    )


def mse_loss_not_floating(dt: Any) -> str:
    return (
        f"\"mse_cpu\" not implemented for '{torch_name(dt)}': mse_loss takes floating "
        "point tensors, convert them with .float()"
    )


def target_size_broadcast_warning(target: Any, input: Any) -> str:
    return (
        f"Using a target size ({size_str(target.shape)}) that is different to the input "
        f"size ({size_str(input.shape)}). This will likely lead to incorrect results due "
        "to broadcasting. Please ensure they have the same size."
    )


def weight_tensor_defined_either_all(prefix: Any, c: Any, weight: Any) -> str:
    return (
        f"{prefix}weight tensor should be defined either for all {c} classes or no classes "
        f"but got weight tensor of shape: {list(weight.shape)}"
    )


def expected_1_or_more_dimensions(nd: Any) -> str:
    return f"Expected 1 or more dimensions (got {nd})"


def batch_size_mismatch(input_batch: Any, target_batch: Any) -> str:
    return (
        f"Expected input batch_size ({input_batch}) to match target batch_size "
        f"({target_batch}). Pass one target per row of the input (class scores in "
        f"dimension 1)"
    )


def expected_target_dtype_long_or(target: Any) -> str:
    return (
        f"expected target dtype to be Long or Byte, but got {torch_name(target.dtype)}: "
        "class indices must be int64 (use probabilities of the input's shape for soft "
        "targets)"
    )


def nll_multi_target(t: Any) -> str:
    return (
        "0D or 1D target tensor expected, multi-target not supported: got a target of "
        f"shape {list(t.shape)} for a 1D input"
    )


def expected_1d_input_1d_target_size(t: Any) -> str:
    return f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}"


def expected_target_size(expected: Any, t: Any) -> str:
    return f"Expected target size {list(expected)}, got {list(t.shape)}"


def nll_loss_not_floating(frame: Any, input: Any) -> str:
    return (
        f"\"{frame}\" not implemented for '{torch_name(input.dtype)}': nll_loss takes "
        "floating-point log-probabilities, convert them with .float()"
    )


def expected_scalar_type_long_found() -> str:
    return (
        "expected scalar type Long but found Byte: targets of inputs with more than 2 dims "
        "must be int64"
    )


def expected_scalar_type_found_class(input: Any, weight: Any) -> str:
    return (
        f"expected scalar type {torch_name(input.dtype)} but found "
        f"{torch_name(weight.dtype)}: the class weight must have the input's dtype"
    )


def target_out_bounds(t: Any, bad: Any, classes: int) -> str:
    return (
        f"Target {int(t[bad].reshape(-1)[0])} is out of bounds. With {classes} classes (the "
        f"input's dimension 1), targets must be class indices from 0 to {classes - 1}: "
        f"check that the model outputs one score per class, or mark targets to skip with "
        f"ignore_index"
    )


def dimension_out_range_expected_range_1() -> str:
    return (
        "Dimension out of range (expected to be in range of [-1, 0], but got 1): "
        "cross_entropy needs an input with a class dimension, (C,) or (N, C, ...)"
    )


def label_smoothing_between_0_0(label_smoothing: Any) -> str:
    return f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"


def label_smoothing_1d_input_0d_target() -> str:
    return (
        "output with shape [] doesn't match the broadcast shape [1]: with "
        "label_smoothing, give a 1D input a 0-d target"
    )


def expected_floating_point_type_target(target: Any) -> str:
    return (
        "Expected floating point type for target with class probabilities, got "
        f"{target.dtype.name}"
    )


def ignore_index_with_probabilities() -> str:
    return "ignore_index is not supported for floating point target"


def dimension_specified_1_tensor_no() -> str:
    return (
        "Dimension specified as 1 but tensor has no dimensions: cross_entropy needs an "
        "input with a class dimension, (C,) or (N, C, ...)"
    )


def loss_weight_not_broadcastable(arg: Any, weight: Any, shape: Any) -> str:
    return (
        f"{arg} of shape {list(weight.shape)} is not broadcastable to the input's shape "
        f"{list(shape)}: give it the input's shape, or one that broadcasts to it"
    )


def loss_weight_broadcast_shape(shape: Any, full: Any, arg: Any, weight: Any) -> str:
    return (
        f"output with shape {list(shape)} doesn't match the broadcast shape {list(full)}: "
        f"{arg} of shape {list(weight.shape)} must broadcast to the input's shape"
    )


def bce_target_size_deprecated(target: Any, input: Any) -> str:
    return (
        f"Using a target size ({size_str(target.shape)}) that is different to the input "
        f"size ({size_str(input.shape)}) is deprecated. Please ensure they have the same "
        "size."
    )


def found_dtype_expected_binary_cross(target: Any, input: Any) -> str:
    return (
        f"Found dtype {torch_name(target.dtype)} but expected {torch_name(input.dtype)}: "
        "binary_cross_entropy needs a target of the input's dtype"
    )


def binary_cross_entropy_not_floating(input: Any) -> str:
    return (
        f"\"binary_cross_entropy\" not implemented for '{torch_name(input.dtype)}': it "
        "takes floating point probabilities, convert them with .float()"
    )


def all_elements_input_between_0() -> str:
    return (
        "all elements of input should be between 0 and 1 (binary_cross_entropy takes "
        "probabilities; for logits use binary_cross_entropy_with_logits)"
    )


def all_elements_target_between_0() -> str:
    return (
        "all elements of target should be between 0 and 1 (binary_cross_entropy takes "
        "target probabilities)"
    )


def target_size_same_input_size(target: Any, input: Any) -> str:
    return (
        f"Target size ({size_str(target.shape)}) must be the same as input size "
        f"({size_str(input.shape)})"
    )


def bool_subtraction_not_supported() -> str:
    return (
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
        "trying to invert a mask, use the `~` or `logical_not()` operator instead. "
        "(binary_cross_entropy_with_logits computes 1 - target: give a float target)"
    )


def bce_with_logits_cannot_cast(input: Any, target: Any) -> str:
    return (
        f"result type {torch_name(input.dtype)} can't be cast to the desired output type "
        f"{torch_name(target.dtype)}: binary_cross_entropy_with_logits needs a float target"
    )


def kernel_not_floating(kernel: Any, dt: Any) -> str:
    return (
        f"\"{kernel}\" not implemented for '{torch_name(dt)}': convert the tensors with "
        ".float()"
    )


def smooth_l1_negative_beta(beta: Any) -> str:
    return f"smooth_l1_loss does not support negative values for beta (got beta={beta})."


def huber_non_positive_delta(delta: Any) -> str:
    return f"huber_loss does not support non-positive values for delta (got delta={delta})."


def weights_input_same_size_weight(weight: Any, input: Any) -> str:
    return (
        f"Weights and input must have the same size. (weight {list(weight.shape)}, "
        f"input {list(input.shape)})"
    )


def reduction_mean_divides_total_loss() -> str:
    return (
        "reduction: 'mean' divides the total loss by both the batch size and the "
        "support size.'batchmean' divides only by the batch size, and aligns with the "
        "KL div math definition.'mean' will be changed to behave the same as "
        "'batchmean' in the next major release."
    )


def margin_ranking_loss_all_input(input1: Any, input2: Any, target: Any) -> str:
    return (
        "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
        f"input1: {size_str(input1.shape)}, input2: {size_str(input2.shape)}, target: "
        f"{size_str(target.shape)} "
    )


def cosine_embedding_multi_target(target: Any) -> str:
    return (
        "0D or 1D target tensor expected, multi-target not supported (got a target of shape "
        f"{list(target.shape)})"
    )


def target_dims_expect_input_dims(target_dim: Any, input_dim: Any, input1: Any, input2: Any) -> str:
    return (
        f"{target_dim}D target tensor expects {input_dim}D input tensors, but found inputs with "
        f"sizes {list(input1.shape)} and {list(input2.shape)}."
    )


def var_negative_entry_entries() -> str:
    return "var has negative entry/entries"


def var_incorrect_size_var_input(var: Any, input: Any) -> str:
    return (
        f"var is of incorrect size (var {list(var.shape)}, input {list(input.shape)}: "
        "give it the input's shape, the input's shape without the last dim, or one "
        "size-1 dim where the input's differs)"
    )


def margin_greater_0(margin: Any) -> str:
    return f"margin must be greater than 0, got {margin}"


def triplet_dims_mismatch(a_dim: Any, p_dim: Any, n_dim: Any) -> str:
    return (
        "The anchor, positive, and negative tensors are expected to have the same number "
        f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
        f"{n_dim}D inputs"
    )


def expected_non_empty_vector_or(input: Any, fn: Any) -> str:
    return (
        f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
        f"{list(input.shape)} ({fn} takes (C,) or (N, C) inputs)"
    )


def only_p_1_p_2() -> str:
    return "only p == 1 and p == 2 supported"


def weight_one_dimensional() -> str:
    return "weight must be one-dimensional"


def inconsistent_target_size_expected(n: Any, target: Any) -> str:
    return f"inconsistent target size, expected {n} but got {list(target.shape)}"


def target_out_range_targets_0(c: Any) -> str:
    return f"target out of range: targets must be in [0, {c - 1}]"


def inconsistent_weight_size_expected(c: Any, weight: Any) -> str:
    return f"inconsistent weight size, expected {c} but got {list(weight.shape)}"


def inconsistent_target_size_input_size(target: Any, input: Any) -> str:
    return (
        f"inconsistent target size: {list(target.shape)} for input of size: "
        f"{list(input.shape)}"
    )


def target_out_range_targets_0_or(c: Any) -> str:
    return f"target out of range: targets must be in [0, {c - 1}] or -1"


def cutoffs_sequence_length_larger_0() -> str:
    return "cutoffs should be a sequence of length larger than 0"


def cutoffs_sequence_unique_positive_integers() -> str:
    return (
        "cutoffs should be a sequence of unique, positive integers sorted "
        "in an increasing order, where each value is between 1 and "
        "n_classes-1"
    )


def input_target_same_size_batch() -> str:
    return (
        "Input and target should have the same size in the batch "
        "dimension."
    )


def adaptive_target_dims_expect_input_dims(target_dim: Any, input_dim: Any, input_: Any) -> str:
    return (
        f"{target_dim}D target tensor expects {input_dim}D input tensors, but found inputs "
        f"with size {input_.size()}"
    )


def adaptive_multi_target() -> str:
    return "0D or 1D target tensor expected, multi-target not supported"


def target_values_0_values_range(module: Any, target: Any) -> str:
    return (
        f"Target values should be in [0, {module.n_classes - 1}], but "
        f"values in range [{target.min().item()}, "
        f"{target.max().item()}] were found. "
    )


def tripletmarginloss_expected_margin_greater_0(margin: Any) -> str:
    return f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"


def multimarginloss_expected_weight_none_or(weight: Any) -> str:
    return (
        f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D "
        "instead"
    )


def nllloss2d_been_deprecated_please_use() -> str:
    return (
        "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
        "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
        "more details."
    )


def triplet_distance_module_margin(margin: Any) -> str:
    return (
        "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
        f"{margin} instead"
    )


def ctc_loss_invalid_arguments(input_lengths: Any, target_lengths: Any) -> str:
    """torch's overload-resolution error: lengths are both tensors or both int sequences."""
    def kind(v: Any) -> str:
        return type(v).__name__
    return (
        f"ctc_loss() received an invalid combination of arguments - got (Tensor, Tensor, "
        f"{kind(input_lengths)}, {kind(target_lengths)}, int, int, bool), but expected one of:"
        "\n * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
        "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
        "zero_infinity = False)\n * (Tensor log_probs, Tensor targets, Tensor input_lengths, "
        "Tensor target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool "
        "zero_infinity = False)\nPass both lengths as integer tensors or both as tuples of ints."
    )
