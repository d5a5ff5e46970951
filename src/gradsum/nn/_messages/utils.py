"""The texts of nn.utils: clip_grad, fusion, parametrize and parametrizations, rnn packing,
spectral/weight norm, stateless."""

from __future__ import annotations

from typing import Any

# -- utils -------------------------------------------------------------------------------------


def foreach_norm_cannot_compute_infinity() -> str:
    return (
        "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
        "operation does not have an identity: give the empty parameter no .grad (None) "
        "or use a finite norm_type"
    )


def total_norm_order_gradients_from(norm_type: Any) -> str:
    return (
        f"The total norm of order {norm_type} for gradients from `parameters` is "
        "non-finite, so it cannot be clipped. To disable this error and scale the "
        "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
    )


def parameters_empty_generator_no_gradient() -> str:
    return "`parameters` is an empty generator, no gradient clipping will occur."


def clip_grad_norm_deprecated() -> str:
    return (
        "`gradsum.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`gradsum.nn.utils.clip_grad_norm_`."
    )


def expected_gradsum_tensor(vec: Any) -> str:
    return f"expected gradsum.Tensor, but got: {type(vec).__name__}"


def fusion_only_for_eval() -> str:
    return "Fusion only for eval!"


def fuse_bn_without_running_stats() -> str:
    return "bn.running_mean and bn.running_var must not be None"


def fuse_linear_out_features_bn(linear: Any, bn: Any) -> str:
    return (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
        f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}"
    )


def householder_not_complex() -> str:
    return "The householder parametrization does not support complex tensors."


def expected_matrix_or_batch_matrices_shape(module: Any, Q: Any) -> str:
    return (
        f"Expected a matrix or batch of matrices of shape {module.shape}. Got a tensor "
        f"of shape {tuple(Q.shape)}."
    )


def cannot_assign_orthogonal_map() -> str:
    return (
        "It is not possible to assign to the matrix exponential or the Cayley "
        "parametrizations when use_trivialization=False."
    )


def module_no_parameter_or_buffer(module: Any, name: Any) -> str:
    return f"Module '{module}' has no parameter or buffer with name '{name}'"


def expected_matrix_or_batch_matrices_tensor(weight: Any) -> str:
    return f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."


def orthogonal_map_one_matrix_exp(orthogonal_map: Any) -> str:
    return (
        'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
        f"Got: {orthogonal_map}"
    )


def dimension_out_range_expected_range(ndim: Any, dim: Any) -> str:
    return (
        "Dimension out of range (expected to be in range of "
        f"[-{ndim}, {ndim - 1}] but got {dim})"
    )


def expected_n_power_iterations_positive(n_power_iterations: Any) -> str:
    return (
        "Expected n_power_iterations to be positive, but got "
        f"n_power_iterations={n_power_iterations}"
    )


def parametrizationlist_requires_one_or_more() -> str:
    return "ParametrizationList requires one or more modules."


def right_inverse_not_tensors(new: Any) -> str:
    return (
        "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
        f"tuple...). Got {type(new).__name__}"
    )


def when_right_inverse_outputs_one(original: Any, new: Any) -> str:
    return (
        "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
        f"original.dtype: {original.dtype}\n"
        f"right_inverse(original).dtype: {new.dtype}"
    )


def right_inverse_bad_element(i: Any, originali: Any) -> str:
    return (
        "'right_inverse' must return a Tensor or a Sequence of tensors "
        f"(list, tuple...). Got element {i} of the sequence with type "
        f"{type(originali).__name__}."
    )


def parametrization_return_tensor(Z: Any) -> str:
    return (
        f"A parametrization must return a tensor. Got "
        f"{type(Z).__name__}."
    )


def parametrization_changes_dtype(original_dtype: Any, Z: Any) -> str:
    return (
        "Registering a parametrization may not change the dtype of the tensor, "
        "unless `unsafe` flag is enabled.\n"
        f"unparametrized dtype: {original_dtype}\n"
        f"parametrized dtype: {Z.dtype}"
    )


def parametrization_changes_shape(original_shape: Any, Z: Any) -> str:
    return (
        "Registering a parametrization may not change the shape of the tensor, "
        "unless `unsafe` flag is enabled.\n"
        f"unparametrized shape: {original_shape}\n"
        f"parametrized shape: {tuple(Z.shape)}"
    )


def right_inverse_not_implemented(module: Any) -> str:
    return (
        f"parametrization {type(module).__name__} does not implement "
        "right_inverse."
    )


def right_inverse_return_tensor(value: Any) -> str:
    return f"`right_inverse` should return a tensor. Got {type(value).__name__}"


def right_inverse_dtype_mismatch(value: Any, module: Any) -> str:
    return (
        f"The tensor returned by `right_inverse` has dtype {value.dtype} "
        f"while `original` has dtype {module.original.dtype}"
    )


def right_inverse_return_sequence_tensors(value: Any) -> str:
    return (
        "'right_inverse' must return a sequence of tensors. "
        f"Got {type(value).__name__}."
    )


def right_inverse_wrong_length(module: Any, value: Any) -> str:
    return (
        "'right_inverse' must return a sequence of tensors of length "
        f"{module.ntensors}. Got a sequence of length {len(value)}."
    )


def right_inverse_return_sequence_tensors_or(i: Any, tensor: Any) -> str:
    return (
        "'right_inverse' must return a sequence of tensors or "
        f"reference-type opaques. Got element {i} of type "
        f"{type(tensor).__name__}."
    )


def right_inverse_dtype_mismatch_at(i: Any, tensor: Any, original_i: Any) -> str:
    return (
        f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
        f"while `original{i}` has dtype {original_i.dtype}"
    )


def serialization_parametrized_modules_only_supported() -> str:
    return (
        "Serialization of parametrized modules is only supported through state_dict(). "
        "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
    )


def module_already_attribute_named(tensor_name: Any) -> str:
    return f"Module already has an attribute named '{tensor_name}'"


def parametrization_output_changes_dtype(tensor_name: Any, Y: Any, X: Any) -> str:
    return (
        "Registering a parametrization may not change the dtype of the tensor, "
        "unless the `unsafe` flag is enabled.\n"
        f"module.{tensor_name}.dtype: {Y.dtype}\n"
        f"parametrization(module.{tensor_name}).dtype: {X.dtype}"
    )


def parametrization_output_changes_shape(tensor_name: Any, Y: Any, X: Any) -> str:
    return (
        "Registering a parametrization may not change the shape of the tensor, "
        "unless the `unsafe` flag is enabled.\n"
        f"module.{tensor_name}.shape: {tuple(Y.shape)}\n"
        f"parametrization(module.{tensor_name}).shape: {tuple(X.shape)}"
    )


def parametrization_right_inverse_return_tensor(Z: Any) -> str:
    return (
        "parametrization.right_inverse must return a tensor. Got: "
        f"{type(Z).__name__}"
    )


def right_inverse_changes_dtype(tensor_name: Any, Y: Any, Z: Any) -> str:
    return (
        "The tensor returned by parametrization.right_inverse must have "
        f"the same dtype as module.{tensor_name}, unless the `unsafe` "
        f"flag is enabled.\nmodule.{tensor_name}.dtype: {Y.dtype}\n"
        f"returned dtype: {Z.dtype}"
    )


def right_inverse_changes_shape(tensor_name: Any, Y: Any, Z: Any) -> str:
    return (
        "The tensor returned by parametrization.right_inverse must have "
        f"the same shape as module.{tensor_name}, unless the `unsafe` "
        f"flag is enabled.\nmodule.{tensor_name}.shape: "
        f"{tuple(Y.shape)}\nreturned shape: {tuple(Z.shape)}"
    )


def no_tensor_to_parametrize(module: Any, tensor_name: Any) -> str:
    return (
        f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
        f"element with name '{tensor_name}'"
    )


def no_parametrization_on(module: Any, tensor_name: Any) -> str:
    return f"Module {module} does not have a parametrization on {tensor_name}"


def cannot_leave_unparametrized_leave_parametrized() -> str:
    return (
        "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
        "parametrized in terms of a sequence of tensors."
    )


def expected_data_list_or_tuple() -> str:
    return "Expected data to be a list or tuple of length 2"


def cannot_pack_empty_tensors() -> str:
    return "Cannot pack empty tensors."


def expected_len_lengths_equal_batch(lens: Any, batch_size: Any) -> str:
    return (
        f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
        f"(batch_size={batch_size})"
    )


def length_all_samples_greater_0() -> str:
    return (
        "Length of all samples has to be greater than 0, but found an element in "
        "'lengths' that is <= 0"
    )


def lengths_array_sorted_decreasing_order() -> str:
    return (
        "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
        "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
        "pack_sequence to sidestep this requirement if you do not need ONNX "
        "exportability."
    )


def expected_longest_length_at_most(lens: Any, input: Any) -> str:
    return (
        f"Expected the longest length ({lens[0]}) to be at most the padded sequence "
        f"length {input.shape[0]}: pass lengths that fit the input"
    )


def expected_total_length_at_least(total_length: Any, max_seq_length: Any) -> str:
    return (
        "Expected total_length to be at least the length of the longest sequence in "
        f"input, but got total_length={total_length} and max sequence length being "
        f"{max_seq_length}"
    )


def pad_sequence_expected_iterable_input(sequences: Any) -> str:
    return (
        "pad_sequence: Expected iterable for input sequences, but got arg of type: "
        f"{type(sequences)}"
    )


def expected_padding_side_one_left(padding_side: Any) -> str:
    return f"Expected padding_side to be one of left or right, but got {padding_side}."


def received_empty_list_sequences() -> str:
    return "received an empty list of sequences"


def arrayref_invalid_slice_n_1() -> str:
    return "ArrayRef: invalid slice, N = 1; size = 0"


def size_mismatch_at_dim(a: Any, b: Any, shape: Any, k: Any) -> str:
    return (
        f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
        f"non-singleton dimension {len(shape) - k}"
    )


def cannot_register_two_spectral_norm(name: Any) -> str:
    return f"Cannot register two spectral_norm hooks on the same parameter {name}"


def spectralnorm_cannot_applied_parameter_none(name: Any) -> str:
    return f"`SpectralNorm` cannot be applied as parameter `{name}` is None"


def spectral_norm_not_found(name: Any, module: Any) -> str:
    return f"spectral_norm of '{name}' not found in {module}"


def functional_call_multiple_values_keys(tied_names: Any) -> str:
    return (
        f"functional_call got multiple values for keys {sorted(tied_names)}, which "
        "are tied. Consider using tie_weights=False"
    )


def submodule_not_a_module(name: Any, sub: Any) -> str:
    return f"submodule `{name}`: {sub} is not an instance of gradsum.nn.Module"


def not_a_tensor(tensor: Any) -> str:
    return f"{tensor} is not an instance of gradsum.Tensor"


def tensor_name_empty() -> str:
    return 'tensor name can\'t be empty string ""'


def attribute_not_a_tensor(attr: Any, orig: Any) -> str:
    return f"attribute `{attr}`: {orig} is not an instance of gradsum.Tensor"


def reparametrize_errors(module: Any, error_msgs: Any) -> str:
    return "Error(s) in reparametrizing for {}:\n\t{}".format(
        module._get_name(), "\n\t".join(error_msgs)
    )


def stateless_functional_call_deprecated() -> str:
    return (
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
        "be removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement."
    )


def weight_norm_deprecated() -> str:
    return (
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`."
    )


def cannot_register_two_weight_norm(name: Any) -> str:
    return f"Cannot register two weight_norm hooks on the same parameter {name}"


def weight_norm_not_found(name: Any, module: Any) -> str:
    return f"weight_norm of '{name}' not found in {module}"


def pack_lengths_not_1d(lengths: Any, type_name: Any) -> str:
    return (
        "'lengths' argument should be a 1D CPU int64 tensor, but got "
        f"{lengths.dim()}D cpu {type_name} tensor"
    )


def functional_call_unexpected_keys(unexpected: Any) -> str:
    return f"Unexpected key(s): {', '.join(map(repr, unexpected))}."


def functional_call_missing_keys(missing: Any) -> str:
    return f"Missing key(s): {', '.join(map(repr, missing))}."
