"""Every gradsum.nn error and warning text in one place.

One function per error, named for it, taking the values the text names and returning the
text; a raise site reads ``raise ValueError(_messages.dropout_probability(p))``. The texts
are PyTorch's phrases (the tests compare many of them with torch's word for word), most
followed by the values involved and the fix. A text written at several sites, or with
different numbers at several sites (``expected {lo}D or {hi}D input``), is one function.

Sections, in order: modules and state_dict; parameters and buffers; hooks; argument checks
shared by F functions (reduction=, input ranks); linear, distances and other F functions;
activations; losses; conv, pool and pad; normalization; dropout; embedding; interpolate,
grid_sample and affine_grid; rnn; transformer and attention; parallel; utils (clip_grad,
fusion, parametrize, rnn packing, spectral/weight norm, stateless); init. ``torch_name``,
``size_str`` and ``typename`` print dtypes, sizes and types the way torch's texts do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_TORCH_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def torch_name(dtype: Any) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long", ...), as its messages print it."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)


def size_str(shape: Sequence[int]) -> str:
    return f"gradsum.Size({list(shape)})"


def typename(obj: object) -> str:
    """``gradsum.Tensor`` for a tensor, else the object's type's qualified name."""
    from gradsum._tensor import Tensor

    if isinstance(obj, Tensor):
        return f"gradsum.{type(obj).__name__}"
    return type(obj).__qualname__


# -- modules and state_dict --------------------------------------------------------------------


def container_index_out_range(i: Any) -> str:
    return f"index {i} is out of range"


def add_operator_supports_only_objects(other: Any) -> str:
    return (
        "add operator supports only objects of Sequential class, but "
        f"{type(other)} is given."
    )


def unsupported_operand_type(module: Any, other: Any) -> str:
    return f"unsupported operand type(s) for *: {type(module)} and {type(other)}"


def non_positive_multiplication_factor(other: Any, module: Any) -> str:
    return f"Non-positive multiplication factor {other} for {type(module)}"


def sequential_index_out_range(index: Any) -> str:
    return f"Index out of range: {index}"


def modulelist_extend_called_iterable(modules: Any) -> str:
    return (
        "ModuleList.extend should be called with an iterable, but got "
        + type(modules).__name__
    )


def moduledict_update_called_iterable_key(modules: Any) -> str:
    return (
        "ModuleDict.update should be called with an iterable of key/value pairs, but "
        "got " + type(modules).__name__
    )


def moduledict_update_sequence_element_iterable(j: Any, m: Any) -> str:
    return (
        "ModuleDict update sequence element #" + str(j) + " should be Iterable; is"
        + type(m).__name__
    )


def moduledict_update_sequence_element_length(j: Any, m: Any) -> str:
    return (
        "ModuleDict update sequence element #" + str(j) + " has length "
        + str(len(m)) + "; 2 is required"
    )


def parameterlist_extend_called_iterable(values: Any) -> str:
    return (
        "ParameterList.extend should be called with an iterable, but got "
        + type(values).__name__
    )


def parameterlist_not_callable() -> str:
    return "ParameterList should not be called."


def index_given_parameterdict_cannot_used(key: Any) -> str:
    return (
        "Index given to ParameterDict cannot be used as a key as it is not a string "
        f"(type is '{type(key).__name__}'). Open an issue on github if you need "
        "non-string keys."
    )


def parametersdict_update_called_iterable_key(parameters: Any) -> str:
    return (
        "ParametersDict.update should be called with an iterable of key/value pairs, "
        "but got " + type(parameters).__name__
    )


def parameterdict_update_sequence_element_iterable(j: Any, p: Any) -> str:
    return (
        "ParameterDict update sequence element #" + str(j)
        + " should be Iterable; is" + type(p).__name__
    )


def parameterdict_update_sequence_element_length(j: Any, p: Any) -> str:
    return (
        "ParameterDict update sequence element #" + str(j) + " has length "
        + str(len(p)) + "; 2 is required"
    )


def parameterdict_not_callable() -> str:
    return "ParameterDict should not be called."


def nn_container_deprecated_all_its() -> str:
    return (
        "`nn.Container` is deprecated. All of its functionality is now implemented in "
        "`nn.Module`. Subclass that instead."
    )


def unflattened_size_tuple_ints_found_type(unflattened_size: Any) -> str:
    return (
        "unflattened_size must be a tuple of ints, but found type "
        f"{type(unflattened_size).__name__}"
    )


def unflattened_size_tuple_ints_found_element(elem: Any, idx: Any) -> str:
    return (
        "unflattened_size must be tuple of ints, but found element of type "
        f"{type(elem).__name__} at pos {idx}"
    )


def initialize_parameters_not_implemented(module: Any) -> str:
    return f"initialize_parameters is not implemented for {module.__class__.__name__}"


def module_not_fully_initialized(module: Any) -> str:
    return (
        f"module {module._get_name()} has not been fully "
        "initialized"
    )


def uninitialized_parameters_with_data_parallel() -> str:
    return (
        "Modules with uninitialized parameters can't be used with `DataParallel`. "
        "Run a dummy forward pass to correctly initialize the modules"
    )


def module_init_unexpected_arguments(module: Any, args: Any, kwargs: Any) -> str:
    return (
        f"{type(module).__name__}.__init__() got unexpected arguments {args} {kwargs}: "
        "Module.__init__ takes none"
    )


def module_missing_required_forward_function(module: Any) -> str:
    return f'Module [{type(module).__name__}] is missing the required "forward" function'


def not_a_module_subclass(module: Any) -> str:
    return f"{typename(module)} is not a Module subclass"


def module_name_string(name: Any) -> str:
    return f"module name should be a string. Got {typename(name)}"


def module_name_contains_dot(name: Any) -> str:
    return f'module name can\'t contain ".", got: {name}'


def module_name_empty() -> str:
    return 'module name can\'t be empty string ""'


def object_no_attribute(module: Any, name: Any) -> str:
    return f"'{type(module).__name__}' object has no attribute '{name}'"


def cannot_assign_parameters_before_module() -> str:
    return "cannot assign parameters before Module.__init__() call"


def cannot_assign_parameter_gradsum_nn(value: Any, name: Any) -> str:
    return (
        f"cannot assign '{typename(value)}' as parameter '{name}' "
        "(gradsum.nn.Parameter or None expected)"
    )


def cannot_assign_module_before_module() -> str:
    return "cannot assign module before Module.__init__() call"


def cannot_assign_child_module_gradsum(value: Any, name: Any) -> str:
    return (
        f"cannot assign '{typename(value)}' as child module '{name}' "
        "(gradsum.nn.Module or None expected)"
    )


def cannot_assign_buffer_gradsum_tensor(value: Any, name: Any) -> str:
    return (
        f"cannot assign '{typename(value)}' as buffer '{name}' "
        "(gradsum Tensor or None expected)"
    )


def training_mode_expected_boolean() -> str:
    return "training mode is expected to be boolean"


def unexpected_keyword_arguments(kwargs: Any) -> str:
    return f"to() got unexpected keyword arguments {sorted(kwargs)}"


def nn_module_only_accepts_floating(dtype: Any) -> str:
    return (
        "nn.Module.to only accepts floating point or complex dtypes, but got desired "
        f"dtype={dtype}"
    )


def get_extra_state_not_overridden() -> str:
    return (
        "Reached a code path in Module.get_extra_state() that should never be called: "
        "override get_extra_state() (and set_extra_state()) in the subclass"
    )


def set_extra_state_not_overridden() -> str:
    return (
        "Reached a code path in Module.set_extra_state() that should never be called: "
        "override set_extra_state() (and get_extra_state()) in the subclass"
    )


def positional_args_being_deprecated_use() -> str:
    return (
        "Positional args are being deprecated, use kwargs instead. Refer to "
        "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
        "#torch.nn.Module.state_dict for details."
    )


def expected_state_dict_dict_like(state_dict: Any) -> str:
    return f"Expected state_dict to be dict-like, got {type(state_dict)}."


def load_state_dict_errors(module: Any, errors: Any) -> str:
    return "Error(s) in loading state_dict for {}:\n\t{}".format(
        type(module).__name__, "\n\t".join(errors)
    )


def input_dimension_at_least(out_size: Any) -> str:
    return f"Input dimension should be at least {len(out_size) + 1}"


def sequential_insert_not_module(module_class: Any) -> str:
    return f"module should be of type: {module_class}"


def state_dict_value_not_tensor(key: Any, value: Any) -> str:
    return (
        f'While copying the parameter named "{key}", expected gradsum Tensor or '
        f"Tensor-like object from checkpoint but received {type(value)}"
    )


def state_dict_size_mismatch(key: Any, value: Any, target: Any) -> str:
    return (
        f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} "
        f"from checkpoint, the shape in current model is {tuple(target.shape)}."
    )


def state_dict_unexpected_keys(unexpected: Any) -> str:
    return "Unexpected key(s) in state_dict: {}. ".format(
        ", ".join(f'"{k}"' for k in unexpected))


def state_dict_missing_keys(missing: Any) -> str:
    return "Missing key(s) in state_dict: {}. ".format(
        ", ".join(f'"{k}"' for k in missing))


# -- parameters and buffers --------------------------------------------------------------------


def cannot_assign_buffer_before_module() -> str:
    return "cannot assign buffer before Module.__init__() call"


def buffer_name_string(name: Any) -> str:
    return f"buffer name should be a string. Got {typename(name)}"


def buffer_name_contains_dot() -> str:
    return 'buffer name can\'t contain "."'


def buffer_name_empty() -> str:
    return 'buffer name can\'t be empty string ""'


def attribute_already_exists(name: Any) -> str:
    return f"attribute '{name}' already exists"


def cannot_assign_object_buffer_gradsum(tensor: Any, name: Any) -> str:
    return (
        f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
        "(gradsum Tensor or None required)"
    )


def cannot_assign_parameter_before_module() -> str:
    return "cannot assign parameter before Module.__init__() call"


def parameter_name_string(name: Any) -> str:
    return f"parameter name should be a string. Got {typename(name)}"


def parameter_name_contains_dot() -> str:
    return 'parameter name can\'t contain "."'


def parameter_name_empty() -> str:
    return 'parameter name can\'t be empty string ""'


def cannot_assign_object_parameter_gradsum(param: Any, name: Any) -> str:
    return (
        f"cannot assign '{typename(param)}' object to parameter '{name}' "
        "(gradsum.nn.Parameter or None required)"
    )


def cannot_assign_non_leaf_tensor(name: Any) -> str:
    return (
        f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
        f"created explicitly. To express '{name}' as a function of another Tensor, "
        "compute the value in the forward() method."
    )


def not_a_module(item: Any) -> str:
    return f"`{item}` is not an nn.Module"


def no_attribute(mod: Any, name: Any) -> str:
    return f"{mod._get_name()} has no attribute `{name}`"


def not_a_parameter(name: Any) -> str:
    return f"`{name}` is not an nn.Parameter"


def not_a_buffer(name: Any) -> str:
    return f"`{name}` is not a buffer"


def parameter_data_expected_gradsum_tensor(data: Any) -> str:
    return (
        f"Parameter(data): expected a gradsum Tensor or None, got {type(data).__name__}. "
        "Wrap the values with gradsum.tensor(...) first."
    )


def attempted_use_uninitialized_parameter_operation(module: Any) -> str:
    return (
        "Attempted to use an uninitialized parameter in an operation. This error happens "
        "when you are using a `LazyModule` or explicitly manipulating "
        f"`gradsum.nn.parameter.{type(module).__name__}` objects. When using LazyModules "
        "Call `forward` with a dummy batch to initialize the parameters before calling "
        "gradsum functions"
    )


def variable_data_tensor(value: Any) -> str:
    return f"Variable data has to be a tensor, but got {type(value).__name__}"


def cannot_share_uninitialized() -> str:
    return (
        "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
        "initialize the parameters before calling `module.share_memory()`."
    )


# -- hooks -------------------------------------------------------------------------------------


def backward_hook_returned_invalid_number(out: Any, res: Any) -> str:
    return (
        "Backward hook returned an invalid number of grad_input, got "
        f"{len(out)}, but expected {len(res)}"
    )


def backward_pre_hook_returned_invalid(new: Any, expected: Any) -> str:
    return (
        "Backward pre hook returned an invalid number of grad_output, got "
        f"{len(new)}, but expected {expected}"
    )


def backward_hook_modules_where_no() -> str:
    return (
        "Backward hook for Modules where no input requires gradient should "
        "always return None or None for all gradients."
    )


def forward_pre_hook_return_none(res: Any) -> str:
    return (
        "forward pre-hook must return None or a tuple of (new_args, "
        f"new_kwargs), but got {res}."
    )


def backward_hooks_called_module_output(result: Any) -> str:
    return (
        "For backward hooks to be called, module output should be a Tensor or "
        f"a tuple of Tensors but received {type(result)}"
    )


def global_module_forward_hook_always(e: Any) -> str:
    return (
        "global module forward hook with ``always_call=True`` raised an "
        "exception that was silenced as another error was raised in forward: "
        f"{e}"
    )


def module_forward_hook_always_call(e: Any) -> str:
    return (
        "module forward hook with ``always_call=True`` raised an exception "
        f"that was silenced as another error was raised in forward: {e}"
    )


# -- argument checks shared by F functions -----------------------------------------------------


def kernel_not_floating_input(kernel: Any, input: Any) -> str:
    return (
        f"\"{kernel}\" not implemented for '{torch_name(input.dtype)}': "
        "convert the input with .float()"
    )


def dim_out_of_range(lo: Any, hi: Any, dim: Any) -> str:
    return (
        f"Dimension out of range (expected to be in range of [{lo}, {hi}], but "
        f"got {dim})"
    )


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


def invalid_reduction(reduction: Any) -> str:
    return f"{reduction} is not a valid value for reduction"


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
        f"({target_batch})."
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


def target_out_bounds(t: Any, bad: Any) -> str:
    return f"Target {int(t[bad].reshape(-1)[0])} is out of bounds."


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


# -- conv, pool and pad ------------------------------------------------------------------------


def using_padding_same_even_kernel() -> str:
    return (
        "Using padding='same' with even kernel lengths and odd dilation may require a "
        "zero-padded copy of the input be created"
    )


def input_error_only_3d_or(input: Any) -> str:
    return (
        f"Input Error: Only 3D or 4D input Tensors are supported (got "
        f"{input.ndim}D)"
    )


def input_error_only_unbatched_2d(input: Any) -> str:
    return (
        f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
        f"supported (got {input.ndim}D)"
    )


def expected_size_input_dimension_1(cols: Any, kh: Any, kw: Any) -> str:
    return (
        f"Expected size of input's dimension 1 to be divisible by the product of "
        f"kernel_size, but got input.size(1)={cols.shape[1]} and kernel_size=({kh}, {kw})"
    )


def given_output_size_kernel_size(h: Any, w: Any, kh: Any, kw: Any, geo: Any, cols: Any) -> str:
    return (
        f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), expected size of input's "
        f"dimension 2 to match the calculated number of sliding blocks "
        f"{geo.out_hw[0]} * {geo.out_hw[1]} = {geo.out_hw[0] * geo.out_hw[1]}, but got "
        f"input.size(2)={cols.shape[2]}."
    )


def groups_positive_integer() -> str:
    return "groups must be a positive integer"


def channels_divisible_by_groups() -> str:
    return "in_channels must be divisible by groups"


def out_channels_divisible_by_groups() -> str:
    return "out_channels must be divisible by groups"


def invalid_padding_string_one_valid(padding: Any) -> str:
    return f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"


def padding_same_with_stride() -> str:
    return "padding='same' is not supported for strided convolutions"


def only_zeros_padding_mode_supported(module: Any) -> str:
    return f'Only "zeros" padding mode is supported for {type(module).__name__}'


def convtranspose_d_d_input_output(nd: Any, input: Any, lead: Any, size: Any) -> str:
    return (
        f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
        f"{lead + nd} elements (got {len(size)})"
    )


def requested_output_size_valid_sizes(size: Any, lo: Any, hi: Any, input: Any, lead: Any) -> str:
    return (
        f"requested an output size of {size}, but valid sizes range from {lo} to "
        f"{hi} (for an input of {list(input.shape[lead:])})"
    )


def conv_transpose_d_argument_padding(module: Any) -> str:
    return (
        f"conv_transpose{module._nd}d(): argument 'padding' must be tuple of ints, not "
        "str"
    )


def padding_mode_not_one_of(modes: Any, padding_mode: Any) -> str:
    return (
        f"padding_mode must be one of {modes}, but got "
        f"padding_mode='{padding_mode}'"
    )


def conv_input_dims(no_batch: Any, module: Any, size: Any) -> str:
    return (
        f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
        f"{type(module).__name__}, but got input of size: {size}"
    )


# -- normalization -----------------------------------------------------------------------------


def layer_norm_argument_normalized_shape(normalized_shape: Any) -> str:
    return (
        "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
        f"int: pass ({normalized_shape},)"
    )


def layer_norm_input_shape(ns: Any, input: Any) -> str:
    return (
        f"Given normalized_shape={list(ns)}, expected input with shape "
        f"[*, {', '.join(str(s) for s in ns)}], but got input of size{list(input.shape)}"
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


# -- dropout -----------------------------------------------------------------------------------


def dropout_probability(p: Any) -> str:
    return f"dropout probability has to be between 0 and 1, but got {p}"


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


# -- embedding ---------------------------------------------------------------------------------


def embedding_bag_first_offset_not_zero(off: Any) -> str:
    return (
        "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
        f"start from position 0. However, got {int(off[0])}"
    )


def embedding_bag_last_offset_too_large(n: Any, off: Any) -> str:
    return (
        f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] "
        f"of {int(off[-1])}"
    )


def embedding_bag_offsets_non_decreasing(off: Any) -> str:
    return f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}"


def argument_order_nn_functional_embedding() -> str:
    return (
        "Argument order of nn.functional.embedding_bag was changed. Usage "
        "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
        "`embedding_bag(input, weight, ...)`."
    )


def embedding_bag_if_per_sample(per_sample_weights: Any, input: Any) -> str:
    return (
        f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
        f"None, then it must have the same shape as the input ({tuple(input.shape)})"
    )


def embedding_bag_weight_not_2d(weight: Any) -> str:
    return f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"


def if_input_2d_then_offsets(offsets: Any) -> str:
    return (
        "if input is 2D, then offsets has to be None, as input is treated is a "
        "mini-batch of fixed length sequences. However, found offsets of type "
        f"{type(offsets)}"
    )


def offsets_1d_tensor_none() -> str:
    return "offsets has to be a 1D Tensor but got None"


def offsets_1d_tensor() -> str:
    return "offsets has to be a 1D Tensor"


def input_1d_or_2d_tensor(input: Any) -> str:
    return f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"


def embedding_bag_max_no_scale_grad() -> str:
    return "max mode does not support scaling the gradient by the frequency"


def embedding_bag_max_no_sparse() -> str:
    return "max mode does not support sparse weights"


def mode_one_sum_mean_or() -> str:
    return "mode has to be one of sum, mean or max"


def embedding_bag_indices_dtype(input: Any) -> str:
    return (
        "Expected tensor for argument #1 'indices' to have one of the following scalar "
        f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
        "embedding_bag)"
    )


def embedding_bag_per_sample_weights(mode: Any) -> str:
    return (
        "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
        f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
        "GitHub."
    )


def no_sparse_embedding_bag() -> str:
    return "gradsum has no sparse gradients: use embedding_bag(..., sparse=False)"


def expected_tensor_argument_1_weight(weight: Any, per_sample_weights: Any) -> str:
    return (
        "Expected tensor for argument #1 'weight' to have the same type as tensor for "
        f"argument #1 'per_sample_weights'; but type {weight.type()} does not equal "
        f"{per_sample_weights.type()} (while checking arguments for embedding_bag)"
    )


def padding_idx_within_number_embeddings(n_emb: Any, padding_idx: Any) -> str:
    return (
        "padding_idx must be within the number of embeddings, "
        f"-{n_emb} through {n_emb - 1}, but got {padding_idx}"
    )


def embedding_bag_index_out_of_range(i: Any, v: Any, n_emb: Any) -> str:
    return (
        f"Index {i} of input takes value {v} which is not in the valid range "
        f"[0, {n_emb})"
    )


def no_sparse_embedding() -> str:
    return "gradsum has no sparse gradients: use embedding(..., sparse=False)"


def embedding_padding_idx_out_of_range(padding_idx: Any, n: Any) -> str:
    return (
        f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} for "
        f"{n} embeddings"
    )


def embedding_weight_not_2d(weight: Any) -> str:
    return f"'weight' must be 2-D, got a weight of shape {tuple(weight.shape)}"


def embedding_indices_dtype(name: Any) -> str:
    return (
        "Expected tensor for argument #1 'indices' to have one of the following scalar "
        f"types: Long, Int; but got {name} instead (while checking arguments for embedding)"
    )


def index_out_range_self_embedding(n: Any, idx: Any) -> str:
    return (
        f"index out of range in self: embedding indices must be in [0, {n - 1}], got "
        f"[{int(idx.min())}, {int(idx.max())}]"
    )


def embedding_weight_shape(_weight: Any, num_embeddings: Any, embedding_dim: Any) -> str:
    return (
        "Shape of weight does not match num_embeddings and embedding_dim: got "
        f"{list(_weight.shape)}, expected [{num_embeddings}, {embedding_dim}]"
    )


def embedding_pretrained_not_2d(embeddings: Any) -> str:
    return (
        "Embeddings parameter is expected to be 2-dimensional, got shape "
        f"{tuple(embeddings.shape)}"
    )


def padding_idx_within_num_embeddings() -> str:
    return "padding_idx must be within num_embeddings"


def embedding_bag_weight_shape() -> str:
    return "Shape of weight does not match num_embeddings and embedding_dim"


def embedding_bag_pretrained_not_2d() -> str:
    return "Embeddings parameter is expected to be 2-dimensional"


# -- interpolate, grid_sample and affine_grid --------------------------------------------------


def default_grid_sample_affine_grid() -> str:
    return (
        "Default grid_sample and affine_grid behavior has changed to align_corners=False "
        "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
        "See the documentation of grid_sample for details."
    )


def expected_theta_floating_point_type(theta: Any) -> str:
    return f"Expected theta to have floating point type, but got {theta.dtype}"


def affine_theta_shape(d: Any, size: Any, theta: Any) -> str:
    return (
        f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} for size "
        f"{size}. Got {tuple(theta.shape)}."
    )


def affine_grid_only_supports_4d(size: Any) -> str:
    return (
        "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
        f"respectively. Got size {size}."
    )


def since_version_1_3_0() -> str:
    return (
        "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
        "align_corners=True. This is not an intended use case of affine_grid. See the "
        "documentation of affine_grid for details."
    )


def expected_non_zero_positive_output(size: Any) -> str:
    return f"Expected non-zero, positive output size. Got {size}"


def nn_functional_grid_sample_expected_mode(mode: Any) -> str:
    return (
        "nn.functional.grid_sample(): expected mode to be 'bilinear', "
        f"'nearest' or 'bicubic', but got: '{mode}'"
    )


def nn_functional_grid_sample_expected_padding(padding_mode: Any) -> str:
    return (
        "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
        f"'border', or 'reflection', but got: '{padding_mode}'"
    )


def grid_sampler_expected_grid_input(in_shape: Any, grid_shape: Any) -> str:
    return (
        "grid_sampler(): expected grid and input to have same batch size, "
        f"but got input with sizes {in_shape} and grid with sizes "
        f"{grid_shape}"
    )


def grid_sampler_expected_grid_size(input: Any, grid_shape: Any) -> str:
    return (
        f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
        f"last dimension, but got grid with sizes {grid_shape}"
    )


def grid_sampler_expected_input_non(in_shape: Any, i: Any) -> str:
    return (
        "grid_sampler(): expected input to have non-empty spatial "
        f"dimensions, but input has sizes {in_shape} with dimension "
        f"{i} being empty"
    )


def grid_sampler_expected_d_input(input: Any, in_shape: Any, grid_shape: Any) -> str:
    return (
        f"grid_sampler(): expected {input.dim()}D input and grid with same "
        f"number of dimensions, but got input with sizes {in_shape} and "
        f"grid with sizes {grid_shape}"
    )


def grid_sampler_bicubic_interpolation_only() -> str:
    return "grid_sampler(): bicubic interpolation only supports 4D input"


def upsample_deprecated(name: Any) -> str:
    return f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead."


def grid_sampler_not_floating(dims: Any, dtype_name: Any) -> str:
    return (
        f'"grid_sampler_{dims}d_cpu" not implemented for '
        f"'{dtype_name}'"
    )


def grid_sampler_dtype_mismatch(input_name: Any, grid_name: Any) -> str:
    return (
        f"expected scalar type {input_name} but found "
        f"{grid_name}"
    )


# -- rnn ---------------------------------------------------------------------------------------


def expected_gradsum_packedsequence_pack_sequences(name: Any, input: Any) -> str:
    return (
        f"{name}: expected a gradsum PackedSequence, got {type(input).__module__}."
        f"{type(input).__name__}: pack the sequences with "
        "gradsum.nn.utils.rnn.pack_padded_sequence / pack_sequence"
    )


def expected_input_tensor(name: Any, input: Any) -> str:
    return f"{name}: expected input to be a Tensor, got {type(input).__name__}"


def input_inconsistent_input_size_expected(input: Any, module: Any) -> str:
    return (
        f"input has inconsistent input_size: got {input.shape[1]} expected "
        f"{module.input_size}"
    )


def rnn_cell_dtype_mismatch(input: Any, w_dt: Any) -> str:
    return (
        f"mat1 and mat2 must have the same dtype, but got {torch_name(input.dtype)} "
        f"and {torch_name(w_dt)}: convert the input with .to({w_dt}) or the cell "
        f"with .to({input.dtype})"
    )


def rnn_hidden_batch_mismatch(input: Any, k: Any, hx: Any) -> str:
    return (
        f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size "
        f"{hx.shape[0]}"
    )


def hidden_inconsistent_hidden_size_expected(k: Any, got: Any, module: Any) -> str:
    return (
        f"hidden{k} has inconsistent hidden_size: got {got}, expected "
        f"{module.hidden_size}"
    )


def expected_input_1d_or_2d(name: Any, input: Any) -> str:
    return f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead"


def expected_1d_or_2d_d(name: Any, what: Any, value: Any) -> str:
    return f"{name}: Expected {what} to be 1D or 2D, got {value.dim()}D instead"


def unknown_nonlinearity(module: Any) -> str:
    return f"Unknown nonlinearity: {module.nonlinearity}"


def dropout_number_range_0_1(dropout: Any) -> str:
    return (
        "dropout should be a number in range [0, 1] representing the probability of "
        f"an element being zeroed (got {dropout!r})"
    )


def dropout_option_adds_dropout_after(dropout: Any, num_layers: Any) -> str:
    return (
        "dropout option adds dropout after all but last recurrent layer, so non-zero "
        "dropout expects num_layers greater than 1, but got "
        f"dropout={dropout} and num_layers={num_layers}"
    )


def rnn_arg_type(name: Any, kind: Any, value: Any) -> str:
    return f"{name} should be of type {kind}, got: {type(value).__name__}"


def rnn_arg_not_positive(name: Any, value: Any) -> str:
    return f"{name} must be greater than zero (got {value})"


def proj_size_positive_integer_or(proj_size: Any) -> str:
    return (
        "proj_size should be a positive integer or zero to disable projections "
        f"(got {proj_size})"
    )


def proj_size_smaller_hidden_size(proj_size: Any, hidden_size: Any) -> str:
    return (
        f"proj_size has to be smaller than hidden_size (got proj_size={proj_size}, "
        f"hidden_size={hidden_size})"
    )


def unrecognized_rnn_mode(mode: Any) -> str:
    return "Unrecognized RNN mode: " + mode


def rnn_input_dtype_mismatch(input: Any, w_dt: Any) -> str:
    return (
        f"RNN input dtype ({input.dtype}) does not match weight dtype ({w_dt}). "
        f"Convert input: input.to({w_dt}), or convert model: model.to({input.dtype})"
    )


def input_dimensions(expected_input_dim: Any, input: Any) -> str:
    return f"input must have {expected_input_dim} dimensions, got {input.dim()}"


def input_size_1_equal_input(module: Any, input: Any) -> str:
    return (
        "input.size(-1) must be equal to input_size. Expected "
        f"{module.input_size}, got {input.shape[-1]}"
    )


def expected_sequence_length_larger_0(input: Any) -> str:
    return (
        "Expected sequence length to be larger than 0 in RNN (got an input with "
        f"shape {tuple(input.shape)})"
    )


def rnn_module_dtype_mismatch(data: Any, w_dt: Any) -> str:
    return (
        f"mat1 and mat2 must have the same dtype, but got {torch_name(data.dtype)} "
        f"and {torch_name(w_dt)}: convert the input with .to({w_dt}) or the module "
        f"with .to({data.dtype})"
    )


def expected_input_2d_or_3d(name: Any, input: Any, dims_msg: Any) -> str:
    return (
        f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
        + dims_msg
    )


def unbatched_2_d_input_hx(hx: Any) -> str:
    return (
        "For unbatched 2-D input, hx should also be 2-D but got "
        f"{hx.dim()}-D tensor"
    )


def batched_3_d_input_hx(hx: Any) -> str:
    return f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"


def proj_size_argument_only_supported() -> str:
    return "proj_size argument is only supported for LSTM, not RNN or GRU"


def unknown_nonlinearity_select_from_tanh(module: Any) -> str:
    return f"Unknown nonlinearity '{module.nonlinearity}'. Select from 'tanh' or 'relu'."


def input_hx_cx_also_d(kind: Any, want: Any, hx: Any) -> str:
    return (
        f"For {kind} input, hx and cx should also be {want}-D but got "
        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
    )


# -- transformer and attention -----------------------------------------------------------------


def expected_attn_mask_dtype_bool(mask: Any, dtype: Any) -> str:
    return (
        "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
        f"attn_mask.dtype: {mask.dtype.name} and query.dtype: {dtype.name} instead."
    )


def scaled_dot_product_attention_query(query: Any, key: Any, value: Any) -> str:
    return (
        "scaled_dot_product_attention: query, key and value must be at least 2-D, got "
        f"{query.ndim}-D, {key.ndim}-D and {value.ndim}-D"
    )


def number_heads_key_value_divide(hq: Any, hk: Any, hv: Any) -> str:
    return (
        "Number of heads in key and value must divide the number of heads in query, "
        f"got {hq} query heads, {hk} key heads and {hv} value heads"
    )


def scaled_dot_product_attention_explicit() -> str:
    return (
        "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
        "is_causal=True: pass a mask that includes the causal triangle instead"
    )


def no_viable_backend_scaled_dot() -> str:
    return (
        "No viable backend for scaled_dot_product_attention was found. This is likely "
        "due to turning off both the math kernel and the fused kernels: enable the "
        "math kernel (e.g. sdpa_kernel([SDPBackend.MATH, ...]))."
    )


def no_available_kernel_aborting_execution() -> str:
    return (
        "No available kernel.  Aborting execution. The flash kernel, the only one enabled, "
        "does not take these inputs (it needs 4-D query/key/value and no dropout): enable "
        "the math kernel too (sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]))."
    )


def only_bool_floating_types_supported(name: Any) -> str:
    return f"only bool and floating types of {name} are supported"


def batched_3_d_query_expected_key_value(key: Any, value: Any) -> str:
    return (
        "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
        f"{key.ndim}-D and {value.ndim}-D tensors respectively"
    )


def batched_3_d_query_expected_key_padding(kpm: Any) -> str:
    return (
        "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
        f"but found {kpm.ndim}-D tensor instead"
    )


def batched_3_d_query_expected_attn(attn_mask: Any) -> str:
    return (
        "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
        f"found {attn_mask.ndim}-D tensor instead"
    )


def unbatched_2_d_query_expected_key_value(key: Any, value: Any) -> str:
    return (
        "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
        f"{key.ndim}-D and {value.ndim}-D tensors respectively"
    )


def unbatched_2_d_query_expected_key_padding(kpm: Any) -> str:
    return (
        "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
        f"but found {kpm.ndim}-D tensor instead"
    )


def unbatched_2_d_query_expected_attn(attn_mask: Any) -> str:
    return (
        "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
        f"but found {attn_mask.ndim}-D tensor instead"
    )


def expected_attn_mask_shape(expected: Any, attn_mask: Any) -> str:
    return (
        f"Expected `attn_mask` shape to be {expected} but got "
        f"{tuple(attn_mask.shape)}"
    )


def query_unbatched_2d_or_batched(query: Any) -> str:
    return (
        f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
        "tensor"
    )


def mismatched_masks_deprecated(mask_name: Any, other_name: Any) -> str:
    return (
        f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
        "same type for both instead."
    )


def need_attn_mask_if_specifying() -> str:
    return (
        "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
        "module method `generate_square_subsequent_mask` to create this mask."
    )


def expecting_embedding_dimension(embed_dim_to_check: Any, embed_dim: Any) -> str:
    return f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"


def embed_dim_not_divisible(embed_dim: Any, num_heads: Any) -> str:
    return f"embed_dim {embed_dim} not divisible by num_heads {num_heads}"


def key_value_dims_mismatch(key: Any, value: Any) -> str:
    return (
        f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
        f"{tuple(value.shape[:2])}"
    )


def key_value_shape_mismatch(key: Any, value: Any) -> str:
    return f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"


def attn_mask_shape(d: Any, attn_mask: Any, expected: Any) -> str:
    return (
        f"The shape of the {d}D attn_mask is {tuple(attn_mask.shape)}, but should be "
        f"{expected}."
    )


def expecting_key_padding_mask_shape(bsz: Any, src_len: Any, key_padding_mask: Any) -> str:
    return (
        f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
        f"{tuple(key_padding_mask.shape)}"
    )


def backend_instance_sdpbackend_or_list(backends: Any) -> str:
    return (
        "Backend must be an instance of SDPBackend or a list of "
        f"SDPBackend instances, got {type(backends).__name__}"
    )


def embed_dim_num_heads_greater(embed_dim: Any, num_heads: Any) -> str:
    return (
        f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
        f"num_heads={num_heads} instead"
    )


def embed_dim_not_divisible_by_num_heads() -> str:
    return "embed_dim must be divisible by num_heads"


def activation_relu_gelu(activation: Any) -> str:
    return f"activation should be relu/gelu, not {activation}"


def input_none_or_dtype_none() -> str:
    return "input to _none_or_dtype() must be None or gradsum.Tensor"


def mask_type_1_mask_shape(n: Any, length: Any, key_padding_mask: Any) -> str:
    return (
        "For mask_type == 1 mask shape should be (B, L): "
        f"expected src_key_padding_mask of shape {(n, length)}, got "
        f"{tuple(key_padding_mask.shape)}"
    )


def attn_mask_heads_mismatch(am: Any, heads: Any) -> str:
    return (
        f"The size of tensor a ({am.shape[1]}) must match the size of tensor b "
        f"({heads}) at non-singleton dimension 1"
    )


def mask_type_2_mask_shape(n: Any, heads: Any, length: Any) -> str:
    return (
        "For mask_type == 2 mask shape should match input shape: "
        f"expected a src_mask of shape {(n * heads, length, length)}"
    )


def enable_nested_tensor_true_self(why_not: Any) -> str:
    return (
        f"enable_nested_tensor is True, but self.use_nested_tensor is False "
        f"because {why_not}"
    )


def mask_size_match_input_size(keep: Any, n: Any, s: Any) -> str:
    return (
        f"Mask size should match input size: src_key_padding_mask has shape "
        f"{tuple(keep.shape)}, expected {(n, s)}"
    )


def transformer_batch_mismatch(src: Any, tgt: Any) -> str:
    return (
        "the batch number of src and tgt must be equal: src has "
        f"{src.shape[1]} and tgt {tgt.shape[1]} along dim 1 (batch_first=False)"
    )


def transformer_batch_mismatch_batch_first(src: Any, tgt: Any) -> str:
    return (
        "the batch number of src and tgt must be equal: src has "
        f"{src.shape[0]} and tgt {tgt.shape[0]} along dim 0 (batch_first=True)"
    )


def feature_number_src_tgt_equal(src: Any, tgt: Any, module: Any) -> str:
    return (
        "the feature number of src and tgt must be equal to d_model: got "
        f"{src.shape[-1]} and {tgt.shape[-1]} features, d_model={module.d_model}"
    )


def transformer_mask_shape_invalid(shape: Any, size: Any) -> str:
    return (
        f"shape '{list(shape)}' is invalid for input of size {size}: the mask does not fit the "
        "input; pass a (L, L) or (N * nhead, L, L) src_mask and an (N, L) src_key_padding_mask"
    )


# -- parallel ----------------------------------------------------------------------------------


def ddp_both_buffer_flags() -> str:
    return (
        "Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
        "`broadcast_buffers` is deprecated and its value is ignored when "
        "`forward_sync_buffers` is provided."
    )


def ddp_broadcast_buffers_deprecated() -> str:
    return (
        "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. "
        "IMPORTANT: unlike `broadcast_buffers=False`, `forward_sync_buffers=False` "
        "still syncs buffers at init. If you rely on buffers NOT being synced at init "
        "(e.g. rank-local buffers), keep using `broadcast_buffers=False`."
    )


def delay_all_reduce_named_params() -> str:
    return (
        "delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at "
        "the same time."
    )


def ddp_option_not_supported(name: Any) -> str:
    return (
        f"DistributedDataParallel({name}=...) is not supported by gradsum: it "
        f"would change what the replicas compute. Leave {name}=None."
    )


def ddp_module_without_named_parameters(module: Any) -> str:
    return (
        f"'{type(module).__name__}' object has no attribute 'named_parameters': "
        f"DistributedDataParallel wraps a gradsum.nn.Module, got "
        f"{type(module).__name__}"
    )


def ddp_no_parameter_requires_grad(module: Any) -> str:
    return (
        "DistributedDataParallel is not needed when a module doesn't have any parameter "
        f"that requires a gradient ({type(module).__name__} has "
        f"{len(list(module.parameters()))} parameter(s), none requiring grad). Wrap a "
        "module with trainable parameters, or call the module directly."
    )


def ddp_device_ids_one_element(device_ids: Any) -> str:
    return (
        f"device_ids can only be None or contain a single element (got {device_ids}); "
        "gradsum modules are on the CPU: leave device_ids None."
    )


def ddp_device_ids_single_device(device_ids: Any, output_device: Any) -> str:
    return (
        "DistributedDataParallel device_ids and output_device arguments only work with "
        "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
        f"{device_ids}, output_device {output_device}, and module parameters on cpu. "
        "gradsum runs on the CPU: leave both None."
    )


def ddp_check_reduction_deprecated() -> str:
    return (
        "The `check_reduction` argument in `DistributedDataParallel` module is "
        "deprecated. Please avoid using it."
    )


def ddp_cannot_be_pickled() -> str:
    return "DistributedDataParallel cannot be pickled; save ddp.module instead"


def ddp_model_count_mismatch(r: Any, n_other: Any, kind: Any, n_ref: Any) -> str:
    return (
        f"DDP expects same model across all ranks, but Rank {r} has "
        f"{n_other} {kind}, while rank 0 has inconsistent "
        f"{n_ref} {kind}"
    )


def ddp_model_differs(r: Any) -> str:
    return f"DDP expects same model across all ranks, but rank {r} differs"


def ddp_model_mismatch(head: Any, difference: Any, rank: Any) -> str:
    return (
        f"{head}: {difference} (this is rank "
        f"{rank}). Build the same model on every rank before wrapping it."
    )


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
