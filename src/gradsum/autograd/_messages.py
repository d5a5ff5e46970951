"""Every autograd error text in one place.

Each message starts with PyTorch's phrase (so a search for the error finds the explanation),
then gives the values involved and the fix.
"""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D


def _shape(shape: tuple[int, ...]) -> str:
    return f"({', '.join(str(s) for s in shape)}{',' if len(shape) == 1 else ''})"


def describe(t: Any) -> str:
    """``[float32 tensor of shape (2, 3)]`` for a tensor."""
    return f"[{t.dtype.name} tensor of shape {_shape(tuple(t.shape))}]"


def implicit_scalar(shape: tuple[int, ...]) -> str:
    return (
        "grad can be implicitly created only for scalar outputs: backward() was called "
        f"without `gradient` on a tensor of shape {_shape(shape)}. Pass gradient= a tensor "
        "of that shape (for example ones_like(out)), or reduce the output first (out.sum())."
    )


def no_grad_root(index: int) -> str:
    return (
        f"element {index} of tensors does not require grad and does not have a grad_fn: "
        "nothing that produced it was recorded for autograd. Create the inputs with "
        "requires_grad=True (or call requires_grad_()), and do not compute the output "
        "under no_grad()."
    )


def freed_graph(node_name: str) -> str:
    return (
        "Trying to backward through the graph a second time (or directly access saved "
        "tensors after they have already been freed). Saved intermediate values of the graph "
        "are freed when you call .backward() or autograd.grad(); node "
        f"{node_name} has already released them. Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors "
        "after calling backward."
    )


def gradcheck_overlapping_input(i: int) -> str:
    return (
        f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
        "are non-overlapping to be able to compute the numerical gradients correctly. You "
        "should call .contiguous on the input before passing it to gradcheck."
    )


def saved_detached_inplace(t: Any, node: str) -> str:
    return (
        "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
        f"This is not supported, please use out-of-place `.detach()` instead. {node} saved a "
        f"tensor of shape {list(t.shape)} that had a grad_fn then and was detached in place "
        "since. Fix: call .detach() (out of place) on it, or run backward before detaching."
    )


def modified_inplace(t: Any, producer: str, saved_version: int, now: int, node: str) -> str:
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {describe(t)}, which is {producer}, is at version {now}; "
        f"expected version {saved_version} instead. It was saved by {node}. Fix: use the "
        "out-of-place op (x = x.add(1) instead of x.add_(1)) or clone() the tensor before "
        "modifying it."
    )


def shape_mismatch(kind: str, i: int, got: tuple[int, ...], want: tuple[int, ...]) -> str:
    return (
        f"Mismatch in shape: {kind}[{i}] has a shape of {_shape(got)} and output[{i}] has a "
        f"shape of {_shape(want)}. Pass a {kind} with the same shape as the output."
    )


def bad_grad_type(kind: str, i: int, got: Any) -> str:
    return (
        f"gradients can be either Tensors or None, but got {type(got).__name__}: {kind}[{i}]. "
        "Wrap it with gradsum.tensor(...)."
    )


def grad_count(n_tensors: int, n_grads: int, what: str) -> str:
    return (
        f"got {n_tensors} tensors and {n_grads} gradients: pass one gradient (or None) per "
        f"tensor in {what}."
    )


def empty_inputs(fn: str = "backward") -> str:
    if fn == "grad":
        return (
            "`inputs` argument to `grad()` cannot be empty. Pass the tensors to "
            "differentiate with respect to."
        )
    return (
        "`inputs` argument to `backward()` cannot be empty. Pass the tensors whose .grad "
        "should be filled, or leave inputs=None to accumulate into every leaf."
    )


def inputs_not_dict(fn: str, type_name: str) -> str:
    return (
        f"`inputs` argument to `{fn}()` must be a dict, not {type_name}. Other Mapping types "
        "are not supported: pass dict(inputs) or a list of tensors."
    )


def retain_grad_no_grad() -> str:
    return (
        "can't retain_grad on Tensor that has requires_grad=False. Compute it from tensors "
        "that require grad first (backward(inputs=...) calls retain_grad() on each input, so "
        "every input must require grad)."
    )


def unused_input(index: int) -> str:
    return (
        f"The differentiated Tensor at index {index} appears to not have been used in the "
        "graph: the outputs do not depend on it. Set allow_unused=True if this is the "
        "desired behavior (its gradient is then None, or zeros with materialize_grads=True)."
    )


def input_not_requiring_grad(index: int) -> str:
    return (
        "One of the differentiated Tensors does not require grad: input at index "
        f"{index} has requires_grad=False. Create it with requires_grad=True or drop it "
        "from inputs."
    )


def leaf_inplace(op: str) -> str:
    return (
        "a leaf Variable that requires grad is being used in an in-place operation "
        f"({op}). Wrap the update in `with gradsum.no_grad():` (as optimizers do), or use "
        "the out-of-place op."
    )


def nograd_view_inplace(op: str) -> str:
    return (
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        f"enabled ({op}). Given that this use case is ambiguous and error-prone, it is "
        "forbidden. Create the view with grad mode enabled, or clone() it first."
    )


def multi_view_inplace(op: str, node: str, i: int) -> str:
    return (
        f"Output {i} of {node} is a view and is being modified inplace ({op}). This view is "
        "the output of a function that returns multiple views. Such functions do not allow "
        "the output views to be modified inplace. You should replace the inplace operation "
        "by an out-of-place one (or clone() the view first)."
    )


def nograd_view_base_modified() -> str:
    return (
        "A view was created in no_grad mode and its base or another view of its base has been "
        "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
        "error-prone, it is forbidden. Create the view with grad mode enabled, or clone() it "
        "after the in-place change."
    )


def view_base_modified(kind: str, node: str | None, i: int) -> str:
    """torch's error for using a view whose history it cannot regenerate after its base (or
    another view of it) was modified in place: ``kind`` is "multi" (an output of
    split/chunk/unbind, or a view of one), "nograd" (a view made in no_grad mode) or
    "nograd_of" (a view, made in grad mode, of a view made in no_grad mode)."""
    if kind == "multi":
        return (
            f"Output {i} of {node} is a view and its base or another view of its base has "
            "been modified inplace. This view is the output of a function that returns "
            "multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one (or "
            "clone() the views before the in-place change)."
        )
    if kind == "nograd_of":
        return (
            f"Output {i} of {node} is a view of a view which was created in no_grad mode and "
            "its base or another view of its base has been modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
            "Create the views with grad mode enabled, or clone() them after the in-place "
            "change."
        )
    return nograd_view_base_modified()


def view_of_leaf_inplace(op: str) -> str:
    return (
        "a view of a leaf Variable that requires grad is being used in an in-place "
        f"operation ({op}). Wrap the update in `with gradsum.no_grad():`, or clone() first."
    )


def nonleaf_requires_grad() -> str:
    return (
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    )


#: torch's phrase, by where requires_grad was asked for
_INT_GRAD_PHRASES = {
    "method": "only Tensors of floating point dtype can require gradients",
    "attribute": "only Tensors of floating point and complex dtype can require gradients",
    "factory": "Only Tensors of floating point and complex dtype can require gradients",
}


def int_requires_grad(dtype_name: str, entry: str = "factory") -> str:
    """``entry``: ``"method"`` (``requires_grad_()``), ``"attribute"`` (``t.requires_grad =``)
    or ``"factory"`` (``requires_grad=True`` of a creation function)."""
    return (
        f"{_INT_GRAD_PHRASES[entry]} (this tensor is {dtype_name}). Convert first, e.g. "
        "t.float().requires_grad_()."
    )


def grad_assign_type(value: Any) -> str:
    return (
        f"assigned grad expected to be a Tensor or None but got grad of type "
        f"{type(value).__name__}"
    )


def grad_assign_shape(got: tuple[int, ...], want: tuple[int, ...]) -> str:
    return (
        f"attempting to assign a gradient of size '{list(got)}' to a tensor of size "
        f"'{list(want)}'. Please ensure that the gradient and the tensor are the same size."
    )


def grad_assign_dtype(got: str, want: str) -> str:
    return (
        f"attempting to assign a gradient with dtype '{got}' to a tensor with dtype "
        f"'{want}'. The gradient must match the tensor's dtype: convert it with .to({want})."
    )


def invalid_gradient(node: str, i: int, got: tuple[int, ...], want: tuple[int, ...]) -> str:
    return (
        f"Function {node} returned an invalid gradient at index {i} - got {list(got)} but "
        f"expected shape compatible with {list(want)}. Its backward must return one gradient "
        "per input, each of that input's shape."
    )


def leaf_moved_into_interior(t: Any, node: str) -> str:
    return (
        f"leaf variable has been moved into the graph interior: a gradient reached the leaf "
        f"{describe(t)} whose AccumulateGrad was made before an in-place op gave it a history "
        f"({node}) (after detach_() or requires_grad_(False)). Run that in-place op on a "
        "clone(), or under no_grad(), or build the graph again from the leaf."
    )


def changed_shape_gradient(node: str, nr: int, got: tuple[int, ...],
                           want: tuple[int, ...]) -> str:
    return (
        f"Function returned an invalid gradient for output {nr} of {node} - got {list(got)} "
        f"but expected shape compatible with {list(want)}: the tensor {node} made changed "
        "shape in place under no_grad (unsqueeze_, transpose_, ...) after it was used. "
        "Change the shape out of place (x = x.unsqueeze(0)) or in grad mode."
    )


def wrong_grad_count(node: str, got: int, want: int) -> str:
    return (
        f"function {node} returned an incorrect number of gradients (expected {want}, got "
        f"{got}). Return one gradient (or None) per argument of forward()."
    )


def broadcast_mismatch(a: tuple[int, ...], b: tuple[int, ...], dim: int) -> str:
    sa = a[len(a) - 1 - dim] if dim < len(a) else 1
    sb = b[len(b) - 1 - dim] if dim < len(b) else 1
    return (
        f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
        f"non-singleton dimension {max(len(a), len(b)) - 1 - dim}: shapes {_shape(a)} and "
        f"{_shape(b)} cannot be broadcast together. Reshape or unsqueeze one operand."
    )


def cast_inplace(result: str, out: str, op: str) -> str:
    """``result``, ``out``: dtype names, NumPy's (``float32``) or torch's (``Float``)."""
    names = {v: k for k, v in D._TORCH_SCALAR_NAMES.items()}
    res_t, out_t = D._TORCH_SCALAR_NAMES.get(result, result), D._TORCH_SCALAR_NAMES.get(out, out)
    res_np = names.get(res_t, result)
    return (
        f"result type {res_t} can't be cast to the desired output type {out_t} (in {op}): "
        f"an in-place op keeps its tensor's dtype. Use the out-of-place op, or convert the "
        f"tensor first (.to(gradsum.{res_np}))."
    )


def non_leaf_post_hook() -> str:
    return (
        "post accumulate grad hooks cannot be registered on non-leaf tensors: they run after "
        "a leaf's .grad is updated. Use register_hook() on a non-leaf tensor instead."
    )


def no_hook_without_grad(shape: Any = None) -> str:
    of = "" if shape is None else f" (a tensor of shape {tuple(shape)} with requires_grad=False)"
    return (
        f"cannot register a hook on a tensor that doesn't require gradient{of}. Call "
        "requires_grad_() first, or compute it from tensors that require grad."
    )


def detach_view_inplace(base_shape: tuple[int, ...]) -> str:
    return (
        "Can't detach views in-place. Use detach() instead: this tensor is a view of a tensor "
        f"of shape {_shape(base_shape)}. x = x.detach() gives a tensor outside the graph "
        "that shares the buffer."
    )


def hook_not_tensor(name: str, got: Any) -> str:
    return (
        f"expected Variable, but hook returned '{type(got).__name__}': hook '{name}' must "
        "return a Tensor (the replacement gradient) or None."
    )


def hook_changed_size(name: str, was: tuple[int, ...], got: tuple[int, ...]) -> str:
    return (
        f"hook '{name}' has changed the size of value: the gradient has shape {_shape(was)} "
        f"but the hook returned shape {_shape(got)}. Return a tensor of the gradient's shape."
    )


def hook_changed_type(name: str, was: str, got: str) -> str:
    return (
        f"hook '{name}' has changed the type of value (was {was} got {got}). Return a "
        f"gradient of the same dtype (convert it with .to({was}))."
    )


def hook_not_tuple(name: str, got: Any) -> str:
    return (
        f"expected tuple, but hook returned '{type(got).__name__}': node hook '{name}' must "
        "return a tuple of gradients (or None)."
    )


def hook_wrong_count(name: str, got: int, want: int) -> str:
    return (
        f"hook '{name}' has returned an incorrect number of values (got {got}, but expected "
        f"{want}). Return one gradient (or None) per slot of the tuple it received."
    )


def hook_replaced_none(name: str, index: int) -> str:
    return (
        f"can't replace a None gradient with a non-None value: hook '{name}' returned a "
        f"tensor at index {index}, where the gradient was None. Return None there."
    )


def post_acc_hook_result(name: str) -> str:
    return (
        f"Tensor post accumulate grad hooks should return None: hook '{name}' returned a "
        "value. Modify tensor.grad inside the hook instead."
    )


def save_non_tensor(index: int, got: Any) -> str:
    return (
        f"save_for_backward can only save variables, but argument {index} is of type "
        f"{type(got).__name__}. Keep non-tensors as attributes of ctx instead (ctx.k = k)."
    )


def function_grad_not_tensor(node: str, index: int, got: Any) -> str:
    return (
        f"expected Variable or None (got {type(got).__name__}): {node}.backward returned it "
        f"at index {index}. Return a tuple with one Tensor (or None) per input of forward()."
    )


def legacy_function_call(name: str) -> str:
    return (
        "Legacy autograd function with non-static forward method is deprecated. Please use "
        f"new-style autograd function with static forward method: call {name}.apply(...) "
        "instead of an instance."
    )


def grad_for_non_tensor(node: str, index: int) -> str:
    return (
        f"function {node} returned a gradient different than None at position {index + 1}, "
        "but the corresponding forward input was not a Variable. Return None for arguments "
        "of forward() that are not tensors."
    )


def not_one_element(shape: tuple[int, ...]) -> str:
    return (
        f"only one element tensors can be converted to Python scalars: this tensor has shape "
        f"{_shape(shape)}. Reduce it first (e.g. .sum()) or index one element."
    )


def grad_overlaps(shape: tuple[int, ...]) -> str:
    return (
        "unsupported operation: more than one element of the written-to tensor refers to a "
        f"single memory location: the .grad of shape {_shape(shape)} is an expanded tensor "
        "and backward adds into it in place. Please clone() the tensor before performing the "
        "operation (p.grad = p.grad.clone())."
    )


def create_graph_cycle() -> str:
    return (
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this "
        "function, make sure to reset the .grad fields of your parameters to None after use "
        "to break the cycle and avoid the leak."
    )


def custom_view_inplace(op: str, fn: str, i: int) -> str:
    return (
        f"Output {i} of {fn} is a view and is being modified inplace ({op}). This view was "
        "created inside a custom Function (or because an input was returned as-is) and the "
        "autograd logic to handle view+inplace would override the custom backward associated "
        "with the custom Function, leading to incorrect gradients. This behavior is "
        "forbidden. You can fix this by cloning the output of the custom Function."
    )


def dirty_not_returned(fn: str, n: int) -> str:
    return (
        "Some elements marked as dirty during the forward method were not returned as output. "
        f"The inputs that are modified inplace must all be outputs of the Function ({fn}: "
        f"{n} tensor(s) passed to ctx.mark_dirty() are missing from what forward returned). "
        "Return every tensor you modify in place, or do not mark it dirty."
    )


def dirty_view_many_outputs(fn: str, n: int) -> str:
    return (
        "If your Function modifies inplace an input that is a view of another Tensor, your "
        f"Function cannot return more than one Tensor ({fn} returns {n}). This is not "
        "supported by the current autograd engine. You should either make sure the input is "
        "not a view (using .clone() for example) or make your Function only return one Tensor."
    )


def apply_kwarg_unexpected(name: str) -> str:
    return (
        f"forward() got an unexpected keyword argument '{name}' (Function.apply passes keyword "
        "arguments to forward's positional parameters by name; keyword-only and **kwargs "
        "parameters cannot receive them). Pass it by position or rename it."
    )


def apply_kwarg_twice(name: str) -> str:
    return (
        f"forward() got multiple values for argument '{name}' (given by position and by "
        "keyword to Function.apply). Pass it once."
    )


def apply_kwarg_missing(name: str, pos: int) -> str:
    return (
        f"forward() missing required argument: '{name}' (position {pos}): Function.apply "
        "filled a later parameter by keyword, and every parameter before it must be given "
        "too (defaults are not filled in). Pass it by position or keyword."
    )


def batched_shape(i: int, got: tuple[int, ...], out: tuple[int, ...]) -> str:
    return (
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
        "the batch dimension. The sizes of the remaining dimensions are expected to match the "
        f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
        f"shape of {_shape(got)} and output[{i}] has a shape of {_shape(out)}. Give it a "
        "leading batch dimension."
    )


def batched_implicit(i: int, out: tuple[int, ...]) -> str:
    return (
        f"vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for grad_output {i}, but the "
        f"implicit grad_output of output {i} (shape {_shape(out)}) has no batch dimension. "
        "With is_grads_batched=True pass every grad_output, with a leading batch dimension."
    )


def batched_sizes(sizes: list[int]) -> str:
    return (
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
        f"{sizes} for the first dimension of the grad_outputs (is_grads_batched=True). Give "
        "every grad_output the same batch size."
    )


# -- saved tensor hooks, graph utilities, anomaly mode, checkpoint ------------------------------
def unpack_not_tensor(obj: object) -> str:
    return (
        "Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
        f"{type(obj).__name__}. Make unpack_hook return a Tensor rebuilt from what pack_hook "
        "returned."
    )


def pack_modified_input() -> str:
    return (
        "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
        "to pack hook cannot be modified by in-place operations as this can lead to "
        "unexpected side-effects. Please open an issue if you need to perform in-place "
        "operations on the input to a pack hook."
    )


def pop_hooks_empty() -> str:
    return (
        "saved_tensors_hooks: there is no pair of saved tensor hooks to pop in this thread "
        "(is_initialized && !tls.stack.empty()). Leave each saved_tensors_hooks context only "
        "once, in the thread that entered it."
    )


def gradient_edge_no_grad() -> str:
    return (
        "It is not possible to get the gradient edge for a Tensor that does not require "
        "gradients"
    )


def multi_grad_mode(mode: object) -> str:
    return f"Expects mode to be one of ('all', 'any') but got {mode}"


def hook_outside_backward() -> str:
    return "expected this hook to be called inside a backward call"


def edge_implicit_grad() -> str:
    return (
        "grad can be implicitly created only for scalar outputs: a GradientEdge output "
        "carries no shape in gradsum, so pass its gradient explicitly in grad_outputs."
    )


def edge_materialize() -> str:
    return "materialize_grads cannot be used when the given input is a GradientEdge"


def edge_batched() -> str:
    return "Batched grads are not supported with GradientEdge"


def anomaly_enabled_warning() -> str:
    return (
        "Anomaly Detection has been enabled. This mode will increase the runtime and should "
        "only be enabled for debugging."
    )


def anomaly_nan(node_name: str, i: int) -> str:
    return f"Function '{node_name}' returned nan values in its {i}th output."


def anomaly_traceback(node_name: str, stack: str) -> str:
    return (
        f"Error detected in {node_name}. Traceback of forward call that caused the error:\n"
        f"{stack}"
    )


def anomaly_no_traceback(node_name: str) -> str:
    return (
        f"Error detected in {node_name}. No forward pass information available. Enable "
        "detect anomaly during forward pass for more information."
    )


def anomaly_parent(node_name: str, stack: str) -> str:
    return (
        f"\n\nPrevious calculation was induced by {node_name}. Traceback of forward call "
        f"that induced the previous calculation:\n{stack}"
    )


def variable_data_not_tensor(obj: object) -> str:
    return f"Variable data has to be a tensor, but got {type(obj).__name__}"


def checkpoint_use_reentrant(fn: str) -> str:
    if fn == "checkpoint":
        return (
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants."
        )
    return (
        "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
        "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
        "passed. use_reentrant=False is recommended, but if you need to preserve the current "
        "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
        "the differences between the two variants."
    )


def checkpoint_kwargs(names: list[str]) -> str:
    return "Unexpected keyword arguments: " + ",".join(names)


def checkpoint_reentrant_options() -> str:
    return "Passing `context_fn` or `debug` is only supported when use_reentrant=False."


def checkpoint_reentrant_grad() -> str:
    return (
        "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
        "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
        "set use_reentrant=False, or call .backward() without passing the `inputs` argument."
    )


def checkpoint_reentrant_no_grad_output() -> str:
    return (
        "none of output has requires_grad=True, this checkpoint() is not necessary"
    )


def checkpoint_twice() -> str:
    return (
        "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
        "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do so "
        "only once. Otherwise please open an issue with details on your use case."
    )


def checkpoint_recompute_mismatch(n_fwd: int, n_re: int) -> str:
    return (
        "torch.utils.checkpoint: A different number of tensors was saved during the original "
        f"forward and recomputation.\nNumber of tensors saved during forward: {n_fwd}\n"
        f"Number of tensors saved during recomputation: {n_re}. Make the checkpointed "
        "function deterministic (same ops on the same inputs), or pass "
        "determinism_check='none'."
    )


def checkpoint_metadata_mismatch(i: int, fwd: object, re: object) -> str:
    return (
        "torch.utils.checkpoint: Recomputed values for the following tensors have different "
        f"metadata than during the forward pass.\ntensor at position {i}:\nsaved metadata: "
        f"{fwd}\nrecomputed metadata: {re}\n Make the checkpointed function deterministic, or "
        "pass determinism_check='none'."
    )


def checkpoint_determinism_value(value: object) -> str:
    return (
        "determinism_check should be one of ['default', 'none'], but got "
        f"{value}"
    )



def node_expected() -> str:
    return (
        "Expected gradient function to be set: the tensor does not require grad, so it has "
        "no place in the graph. Register multi-grad hooks on tensors that require grad."
    )


def noop_saver_backward() -> str:
    return (
        "Did not expect to backward on this graph: the node that keeps a checkpoint's inputs "
        "is never differentiated."
    )


def will_execute_leaf() -> str:
    return (
        "A leaf node was passed to _will_engine_execute_node but we are currently running "
        "autograd.grad(). This is currently not supported. (register_multi_grad_hook in "
        "mode='all' on a leaf works with backward(), not with autograd.grad().)"
    )


def no_module_attribute(name: Any) -> str:
    return f"module 'gradsum.autograd' has no attribute {name!r}"


def materialize_disallow_unused() -> str:
    return (
        "Expected allow_unused to be True or not passed when materialize_grads=True, but "
        "got: allow_unused=False."
    )


def not_tensor_at(i: Any, t: Any) -> str:
    return f"expected a Tensor at position {i}, got {type(t).__name__}"


def implicit_not_real(o: Any) -> str:
    return (
        f"grad can be implicitly created only for real scalar outputs but got "
        f"{o.dtype.name}. Compute the output in a floating dtype."
    )


def forward_not_implemented() -> str:
    return "subclasses of Function must implement forward"


def backward_not_implemented() -> str:
    return "subclasses of Function must implement backward"


def setup_context_missing() -> str:
    return "setup_context is not overridden"


def v_not_single_tensor() -> str:
    return "The given v should contain a single Tensor."


def v_none_not_scalar(what: Any) -> str:
    return (
        f"The vector v can only be None if {what} a single Tensor with a "
        "single element."
    )


def jacobian_strategy_invalid() -> str:
    return (
        'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
        'function has more outputs than inputs, "forward-mode" tends to be more '
        'performant. Otherwise, prefer to use "reverse-mode".'
    )


def jacobian_forward_vectorize() -> str:
    return (
        'jacobian(strategy="forward-mode", vectorize=True) needs forward-mode AD and vmap, '
        'which gradsum lacks: use strategy="reverse-mode".'
    )


def hessian_strategy_invalid() -> str:
    return 'Expected strategy to be either "forward-mode" or "reverse-mode".'


def fn_not_single_tensor(fn_name: Any) -> str:
    return f"The function given to {fn_name} should return a single Tensor"


def fn_not_scalar(fn_name: Any) -> str:
    return (
        f"The Tensor returned by the function given to {fn_name} should contain a single "
        "element"
    )


def not_tensor_or_tuple(arg_name: Any, fn_name: Any, el: Any) -> str:
    return (
        f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
        f"Tensors but the given {arg_name} has type {type(el)}."
    )


def v_length(other: Any, v: Any) -> str:
    return f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."


def v_size(prepend: Any, el_other: Any, el_v: Any) -> str:
    return (
        f"{prepend}v has invalid size: should be {el_other.size()} but got "
        f"{el_v.size()}."
    )



def strict_output_no_grad(i: Any) -> str:
    return (
        f"Output {i} of the user-provided function does not require gradients. The "
        "outputs must be computed in a differentiable manner from the input when "
        "running in strict mode."
    )


def jacobian_forward_create_graph() -> str:
    return (
        "torch.autograd.functional.jacobian: `create_graph=True` and "
        '`strategy="forward-mode"` are not supported together (yet). Please either '
        'set `create_graph=False` or `strategy="reverse-mode"`.'
    )


def jacobian_forward_strict() -> str:
    return (
        "torch.autograd.functional.jacobian: `strict=True` and "
        '`strategy="forward-mode"` are not supported together (yet). Please either '
        'set `strict=False` or `strategy="reverse-mode"`.'
    )


def forward_ad_needs_vectorize() -> str:
    return (
        "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
        "only implemented for `vectorize=True`."
    )




def not_tensor_at_index(arg_name: Any, fn_name: Any, i: Any, el: Any) -> str:
    return (
        f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
        f"Tensors but the value at index {i} has type {type(el)}."
    )


def strict_hessian_independent(i: Any) -> str:
    return (
        f"The hessian of the user-provided function with respect to input {i} is "
        "independent of the input. This is not allowed in strict mode. You should "
        "ensure that your function is thrice differentiable and that the hessian "
        "depends on the inputs."
    )


def strict_jacobian_independent(i: Any) -> str:
    return (
        "While computing the hessian, found that the jacobian of the user-provided "
        f"function with respect to input {i} is independent of the input. This is "
        "not allowed in strict mode. You should ensure that your function is twice "
        "differentiable and that the jacobian depends on the inputs (this would be "
        "violated by a linear function for example)."
    )


def strict_grad_independent(i: Any) -> str:
    return (
        f"The gradient with respect to input {i} is independent of the inputs of "
        "the user-provided function. This is not allowed in strict mode."
    )


def strict_hessian_grad_jacobian(i: Any) -> str:
    return (
        "The hessian of the user-provided function is independent of entry "
        f"{i} in the grad_jacobian. This is not allowed in strict mode as it "
        "prevents from using the double backward trick to replace forward mode AD."
    )


def strict_independent(what: Any, i: Any, create_graph: bool = False) -> str:
    """strict mode's error for a result (``what``: "output", "jacobian", "hessian") that does
    not depend on input ``i``."""
    return (
        f"The {what} of the user-provided function is independent of input {i}. "
        "This is not allowed in strict mode"
        + (" when create_graph=True." if create_graph else ".")
    )


def jacobian_strict_vectorize() -> str:
    return (
        "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
        "are not supported together. Please either set `strict=False` or "
        "`vectorize=False`."
    )


def strict_double_backward(i: Any) -> str:
    return (
        f"The gradient with respect to the input is independent of entry {i} "
        "in the grad_outputs when using the double backward trick to compute "
        "forward mode gradients. This is not allowed in strict mode."
    )




def strict_output_input(i: Any, el_idx: Any) -> str:
    return (
        f"Output {i} of the user-provided function is independent of "
        f"input {el_idx}. This is not allowed in strict mode."
    )


def gradcheck_no_input_requires_grad() -> str:
    return "gradcheck expects at least one input tensor to require gradient"


def no_backward_rule(name: Any) -> str:
    return f"{name} has no backward rule"
