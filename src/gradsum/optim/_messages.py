"""Every gradsum.optim error and warning text in one place.

One function per error, named for it, taking the values the text names and returning the
text; a raise site reads ``raise ValueError(_messages.invalid_learning_rate(lr))``. The texts
are PyTorch's phrases (the tests compare many of them with torch's word for word), some
followed by the values involved and the fix. A text written at several sites (the
hyper-parameter checks every optimizer shares: ``Invalid learning rate: {lr}``), or with
different numbers at several sites, is one function.
"""

from __future__ import annotations

from typing import Any


def swapin_state_not_dict(name: Any, state: Any) -> str:
    return (
        f"{name} requires swapin_optim_state['state'] to be a dict mapping packed "
        f"parameter ids to per-param state dicts, got {type(state).__name__}."
    )


def swapin_state_not_packed(name: Any) -> str:
    return (
        f"{name} requires optimizer.state_dict()-style state keyed by packed parameter "
        "ids."
    )


def swapin_param_state_not_dict(name: Any) -> str:
    return f"{name} requires per-parameter optimizer state entries to be dictionaries."


def swapin_groups_not_list(name: Any, groups: Any) -> str:
    return (
        f"{name} requires swapin_optim_state['param_groups'] to be a list of param-group "
        f"dicts, got {type(groups).__name__}."
    )


def swapin_group_count(groups: Any, optimizer: Any) -> str:
    return (
        "swapin_optim_state has a different number of parameter groups than the live "
        f"optimizer ({len(groups)} given, {len(optimizer.param_groups)} live)."
    )


def swapin_group_not_dict(name: Any) -> str:
    return f"{name} requires each optimizer param group to be a dictionary."


def swapin_params_not_packed(name: Any) -> str:
    return (
        f"{name} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
        "keyed by packed parameter ids."
    )


def swapin_param_count(idx: Any) -> str:
    return (
        f"swapin_optim_state param group {idx} has a different number of params than the "
        "live optimizer param group."
    )


def swapin_group_keys(name: Any, idx: Any, swapin_only: Any, live_only: Any) -> str:
    return (
        f"{name} requires optimizer.state_dict()-style param group keys to exactly match "
        f"the live optimizer group keys for group {idx}. Keys only in swap-in: "
        f"{swapin_only}. Keys only in live: {live_only}."
    )


def swapin_state_uninitialized(name: Any) -> str:
    return f"{name} requires initialized optimizer state."


def swapin_dcp_style(name: Any) -> str:
    return f"{name} requires a DCP-style optimizer state_dict."


def swapin_extra_keys(name: Any, extra: Any) -> str:
    return (
        f"{name} requires swapin_optim_state['state'] to be keyed only by packed "
        f"parameter ids from param_groups[*]['params']; got extra keys {extra!r}."
    )


def swapin_param_order(name: Any) -> str:
    return (
        f"{name} requires the explicit parameter state to match "
        "optimizer.param_groups ordering."
    )


def invalid_rho_value(rho: Any) -> str:
    return f"Invalid rho value: {rho}"


def tensor_lr_one_element() -> str:
    return "Tensor lr must be 1-element"


def lr_negative(lr: Any) -> str:
    return f"Learning rate should be >= 0 but is: {lr}"


def beta2_decay_positive(beta2_decay: Any) -> str:
    return f"beta2_decay should be <= 0 but is: {beta2_decay}"


def epsilon_negative(k: Any, value: Any) -> str:
    """Adafactor's check of ``eps[k - 1]`` (epsilon1, epsilon2)."""
    return f"epsilon{k} should be >= 0 but is: {value}"



def clipping_threshold_below_one(d: Any) -> str:
    return f"Clipping threshold d should be >= 1 but is: {d}"


def weight_decay_negative(weight_decay: Any) -> str:
    return f"weight_decay should be >= 0 but is: {weight_decay}"


def factored_variance_undefined() -> str:
    return "row_var and col_var should be defined when grad is multidimensional"


def vector_variance_undefined() -> str:
    return "variance should be defined when grad is a vector"


def tensor_lr_foreach() -> str:
    return "lr as a Tensor is not supported for capturable=False and foreach=True"


def betas_mixed_types(betas: Any) -> str:
    return (
        "betas must be either both floats or both Tensors: got "
        f"({type(betas[0]).__name__}, {type(betas[1]).__name__}), write 0.9, not 0.9 "
        "as an int or a mix"
    )


def tensor_lr_foreach_fix() -> str:
    return (
        "lr as a Tensor is not supported for capturable=False and foreach=True: "
        "set the group's lr to a float, or its foreach to None"
    )


def tensor_betas_foreach(i: Any) -> str:
    return (
        f"betas[{i}] as a Tensor is not supported for capturable=False and "
        "foreach=True"
    )


def tensor_betas_one_element(i: Any) -> str:
    return f"Tensor betas[{i}] must be 1-element"


def lbfgs_param_groups() -> str:
    return "LBFGS doesn't support per-parameter options (parameter groups)"


def lbfgs_one_group(n_param_groups: Any) -> str:
    return f"Expected exactly one param_group, but got {n_param_groups}"


def line_search_unsupported() -> str:
    return "only 'strong_wolfe' is supported"


def cycle_momentum_unsupported() -> str:
    return "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"


def lr_lambda_count(optimizer: Any, lr_lambda: Any) -> str:
    return f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"


def unknown_anneal_func(anneal_func_type: Any) -> str:
    return f"Unknown _anneal_func_type: {anneal_func_type}"


def per_group_length(name: Any, param: Any, optimizer: Any) -> str:
    return (
        f"{name} must have the same length as optimizer.param_groups. {name} has "
        f"{len(param)} values, param_groups has {len(optimizer.param_groups)}."
    )


def not_an_optimizer(optimizer: Any) -> str:
    return f"{type(optimizer).__name__} is not an Optimizer"


def use_get_last_lr() -> str:
    return (
        "To get the last learning rate computed by the scheduler, please use "
        "`get_last_lr()`."
    )


def start_factor_range() -> str:
    return (
        "Starting multiplicative factor expected to be greater than 0 and less or "
        "equal to 1."
    )


def end_factor_range() -> str:
    return "Ending multiplicative factor expected to be between 0 and 1."


def scheduler_without_optimizer(name: Any, i: Any) -> str:
    return f"{name} at index {i} should have `optimizer` as its attribute."


def plateau_in_composite(name: Any, i: Any, plateau_hint: Any) -> str:
    return (
        f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
        "additional kwargs to be specified when calling `step`, but got one at index "
        f"{i} in the given schedulers sequence.{plateau_hint}"
    )


def schedulers_different_optimizers(name: Any, s: Any, i: Any, optimizer: Any) -> str:
    return (
        f"{name} expects all schedulers to belong to the same optimizer, but got "
        f"scheduler {type(s).__name__} at index {i} has {s.optimizer}, which is "
        f"different from {type(optimizer).__name__}."
    )


def no_schedulers(name: Any) -> str:
    return f"{name} expects at least one scheduler, but got no scheduler."


def sequential_milestone_count(schedulers: Any, milestones: Any) -> str:
    return (
        "Sequential Schedulers expects number of schedulers provided to be one more "
        "than the number of milestone points, but got number of schedulers "
        f"{len(schedulers)} and the number of milestones to be equal to "
        f"{len(milestones)}"
    )


def constant_factor_range() -> str:
    return "Constant multiplicative factor expected to be between 0 and 1."


def no_chained_schedulers(name: Any) -> str:
    return f"{name} expects at least one scheduler to be chained, but got no scheduler."


def not_positive_integer(name: Any, value: Any) -> str:
    return f"Expected positive integer {name}, but got {value}"


def t_mult_invalid(t_mult: Any) -> str:
    return f"Expected integer T_mult >= 1, but got {t_mult}"


def eta_min_not_number(eta_min: Any) -> str:
    return f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"


def cyclic_mode_invalid() -> str:
    return "mode is invalid and scale_fn is None"


def pct_start_range(pct_start: Any) -> str:
    return f"Expected float between 0 and 1 pct_start, but got {pct_start}"


def anneal_strategy_invalid(anneal_strategy: Any) -> str:
    return (
        "anneal_strategy must be one of 'cos' or 'linear', instead got "
        f"{anneal_strategy}"
    )


def onecycle_too_many_steps(step_num: Any, total_steps: Any) -> str:
    return (
        f"Tried to step {step_num} times. The specified number of total steps is "
        f"{total_steps}"
    )


def plateau_factor_range() -> str:
    return "Factor should be < 1.0."


def optimizer_step_overridden() -> str:
    return (
        "Seems like `optimizer.step()` has been overridden after learning rate "
        "scheduler initialization. Please, make sure to call `optimizer.step()` "
        "before `lr_scheduler.step()`."
    )


def lr_lambda_not_callable(fn: Any) -> str:
    return f"lr_lambda should be a function, but got {type(fn).__name__}"


def negative_epoch(epoch: Any) -> str:
    return f"Expected non-negative epoch, but got {epoch}"



def onecycle_steps_undefined() -> str:
    return "You must define either total_steps OR (epochs AND steps_per_epoch)"


def min_lr_count(optimizer: Any, min_lr: Any) -> str:
    return f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"


def plateau_group_count_changed(n_param_groups: Any, n_min_lrs: Any) -> str:
    return (
        f"The number of param groups in the `optimizer` "
        f"({n_param_groups}) differs from when "
        f"`ReduceLROnPlateau` was initialized ({n_min_lrs}), usually due "
        "to a new param group being added to the optimizer. Please modify the "
        "`min_lrs` field to match the length of the `optimizer` param groups."
    )


def initial_lr_missing(i: Any) -> str:
    return (
        f"param 'initial_lr' is not specified in param_groups[{i}] when "
        "resuming scheduler with last_epoch >= 0.\nLoad the optimizer's "
        "state first, or construct the scheduler with last_epoch=-1."
    )


def scheduler_step_before_optimizer() -> str:
    return (
        "Detected call of `lr_scheduler.step()` before `optimizer.step()`. You "
        "should call them in the opposite order: `optimizer.step()` before "
        "`lr_scheduler.step()`. Failure to do this will result in skipping the "
        "first value of the learning rate schedule."
    )




def newton_schulz_too_many_steps() -> str:
    return "Number of steps must be less than 100 for computational efficiency"


def newton_schulz_not_2d() -> str:
    return "Input tensor gradient must be a 2D matrix"


def newton_schulz_coefficients() -> str:
    return "Coefficients must be a tuple of exactly 3 values"


def momentum_negative(momentum: Any) -> str:
    return f"momentum should be >= 0 but is: {momentum}"


def muon_weight_decay_negative(weight_decay: Any) -> str:
    return f"weight decay should be >= 0 but is: {weight_decay}"


def adjust_lr_fn_unsupported(adjust_lr_fn: Any) -> str:
    return f"Adjust learning rate function {adjust_lr_fn} is not supported"


def muon_grad_not_2d() -> str:
    return "Param gradient must be a 2D matrix"


def muon_param_not_2d(p: Any) -> str:
    return (
        "Muon only supports 2D parameters whereas we found a parameter with "
        f"size: {p.size()}. Optimize the others (biases, embeddings) with "
        "another optimizer, such as AdamW."
    )


def state_shape_mismatch(name: Any, text: Any) -> str:
    return (
        f"{name}.step(): a state tensor's shape does not match its parameter's ({text}). "
        "Was the optimizer's state dict saved with other parameters? Load one saved with "
        "parameters of these shapes, in the same order."
    )


def no_step_implemented(type_name: Any) -> str:
    return f"{type_name} implements neither step() nor _options() and _update()"


def no_update_implemented(type_name: Any) -> str:
    return f"{type_name} implements no _update()"


def invalid_learning_rate(lr: Any) -> str:
    return (
        f"Invalid learning rate: {lr}: the learning rate must be a number >= 0 (a step moves "
        "the parameters by -lr times the update). Pass a positive lr, e.g. lr=1e-3; to ascend "
        "instead, pass maximize=True."
    )


def capturable_devices(capturable_devices: Any) -> str:
    return (
        "If capturable=True, params and state_steps must be on supported devices: "
        f"{capturable_devices}. gradsum's tensors are on the CPU: use capturable=False"
    )


def differentiable_unsupported() -> str:
    return (
        "gradsum optimizers do not support differentiable=True (updates run under "
        "no_grad); use the default differentiable=False"
    )


def hyperparameter_not_one_element(v: Any) -> str:
    return (
        "an optimizer hyper-parameter given as a tensor must have one element, but got "
        f"one of shape {tuple(v.shape)}. Use a number or a one-element tensor."
    )


def params_not_iterable(typename: Any) -> str:
    return (
        "params argument given to the optimizer should be an iterable of Tensors or "
        f"dicts, but got {typename}"
    )


def empty_parameter_list() -> str:
    return ("optimizer got an empty parameter list: pass the tensors to optimize (e.g. "
            "model.parameters() of a model that has parameters; a generator that was "
            "consumed already yields nothing)")


def param_group_not_dict(param_group: Any) -> str:
    return f"param_group must be a dict, but got {type(param_group)}"


def duplicate_params_in_group() -> str:
    return (
        "optimizer contains a parameter group with duplicate parameters; in future, "
        "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
        "information"
    )


def params_in_several_groups() -> str:
    return "some parameters appear in more than one parameter group"


def loaded_group_count(saved_groups: Any, groups: Any) -> str:
    return (
        "loaded state dict has a different number of parameter groups: "
        f"{len(saved_groups)} saved, {len(groups)} in this optimizer"
    )


def invalid_value(label: Any, value: Any) -> str:
    return (
        f"Invalid {label} value: {value}: {label} must be a number >= 0. Pass a non-negative "
        f"value (or leave {label} at its default)."
    )


def invalid_beta(i: Any, betas: Any) -> str:
    return (
        f"Invalid beta parameter at index {i}: {betas[i]}: each of betas={tuple(betas)!r} must "
        "be in [0, 1) (the decay rates of the moving averages). Pass e.g. betas=(0.9, 0.999), "
        "the default."
    )


def fused_differentiable() -> str:
    return "`fused` does not support `differentiable`"


def fused_and_foreach() -> str:
    return (
        "`fused` and `foreach` cannot be `True` together. (gradsum ignores both: "
        "leave them at None)"
    )


def params_as_set() -> str:
    return (
        "optimizer parameters need to be organized in ordered collections, but the "
        "ordering of tensors in sets will change between runs. Please use a list instead."
    )


def params_names_mixed() -> str:
    return (
        "all optimizer params should be with/without names. Some param names are "
        "missing"
    )


def non_leaf_param(p: Any = None) -> str:
    where = "" if p is None else (
        f": a tensor of shape {tuple(p.shape)} computed by {p.grad_fn.name()}"
        if p.grad_fn is not None else "")
    return (
        f"can't optimize a non-leaf Tensor{where} (its .grad is not kept, and a step could "
        "not update it in place). Optimize the leaf it was computed from, or make it a leaf: "
        "p = x.detach().requires_grad_() (or wrap it in nn.Parameter)."
    )


def missing_group_option(name: Any) -> str:
    return (
        "parameter group didn't specify a value of required optimization "
        f"parameter {name}"
    )


def group_names_mixed(txt: Any) -> str:
    return (
        "all optimizer param groups should be with/without names. cannot add param "
        f"group {txt} to the optimizer"
    )


def loaded_group_size(s: Any, g: Any) -> str:
    return (
        "loaded state dict contains a parameter group that doesn't match the size "
        f"of optimizer's group ({len(s['params'])} saved, {len(g['params'])} here)"
    )


def pre_hook_result(step: Any, result: Any) -> str:
    return (
        f"{step} must return None or a tuple of (new_args, new_kwargs), but "
        f"got {result}."
    )


def invalid_etas(etas: Any) -> str:
    return f"Invalid eta values: {etas[0]}, {etas[1]}"


def nesterov_requires_momentum() -> str:
    return "Nesterov momentum requires a momentum and zero dampening"


def invalid_ema_decay(decay: Any) -> str:
    return f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."


def avg_fn_and_multi_avg_fn() -> str:
    return "Only one of avg_fn and multi_avg_fn should be provided"


def negative_anneal_epochs(anneal_epochs: Any) -> str:
    return f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}"


def param_not_tensor(typename: Any) -> str:
    return "optimizer can only optimize Tensors, but one of the params is " + typename


def unknown_plateau_mode(mode: Any) -> str:
    return "mode " + mode + " is unknown!"


def unknown_threshold_mode(threshold_mode: Any) -> str:
    return "threshold mode " + threshold_mode + " is unknown!"


# -- a step checked before it moves anything -----------------------------------------------------
def option_not_a_number(index: int, key: str, value: Any) -> str:
    return (
        f"must be Number, not {type(value).__name__}: param_groups[{index}][{key!r}] is "
        f"{value!r}, and the update reads it as a number (torch raises a TypeError part way "
        "through the update; no parameter has moved here). Set it to a number, e.g. "
        f"optimizer.param_groups[{index}][{key!r}] = {_example(value)}."
    )


def option_not_numbers(index: int, key: str, value: Any, default: Any) -> str:
    return (
        f"must be a tuple of {len(default)} numbers: param_groups[{index}][{key!r}] is "
        f"{value!r} (no parameter has moved). Set it to a tuple of numbers, e.g. the default: "
        f"optimizer.param_groups[{index}][{key!r}] = {default!r}."
    )


def _example(value: Any) -> str:
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return "0.001"


def state_not_param_shaped(index: int, pos: int, key: str, got: Any, want: Any) -> str:
    a, b = _first_diff(want, got)
    return (
        f"The size of tensor a ({a}) must match the size of tensor b "
        f"({b}): optimizer.state of param_groups[{index}]['params'][{pos}] "
        f"holds {key!r} of shape {tuple(got)}, the parameter has shape {tuple(want)} (a state "
        "loaded from another model's checkpoint?). No parameter has moved. Load the optimizer "
        "state that was saved with this model, or drop this parameter's state "
        "(optimizer.state[p] = {}) to start it afresh."
    )


def _first_diff(want: Any, got: Any) -> tuple[Any, Any]:
    for a, b in zip(reversed(tuple(want)), reversed(tuple(got))):
        if a != b:
            return a, b
    return tuple(want), tuple(got)


def state_dtype_mismatch(index: int, pos: int, key: str, got: Any, want: Any) -> str:
    from gradsum.ops._messages._format import torch_name

    return (
        f"expected dtype {torch_name(want)} for the state but got dtype {torch_name(got)}: "
        f"optimizer.state of param_groups[{index}]['params'][{pos}] holds {key!r} as "
        f"{torch_name(got)}, the parameter is {torch_name(want)}. No parameter has moved. Cast "
        f"the state to the parameter's dtype (state[{key!r}] = state[{key!r}].to(p.dtype)), or "
        "load it through optimizer.load_state_dict, which casts it."
    )
