"""The texts of nn.Module, the containers, lazy modules, parameters, buffers and module hooks."""

from __future__ import annotations

from typing import Any

from gradsum.nn._messages._format import typename

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
    fixes = []
    if any(e.startswith(("Missing", "Unexpected")) for e in errors):
        fixes.append("the checkpoint's keys differ from the model's: load it into the model "
                     "it was saved from (a prefix such as 'module.' from DataParallel must be "
                     "stripped first), or pass strict=False to load the keys both have")
    if any(e.startswith("size mismatch") for e in errors):
        fixes.append("build the model with the checkpoint's sizes (its shapes are the first "
                     "ones above), or leave these keys out of the state_dict and pass "
                     "strict=False")
    return "Error(s) in loading state_dict for {}:\n\t{}{}".format(
        type(module).__name__, "\n\t".join(errors),
        "".join(f"\nFix: {f}." for f in fixes))


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
