"""Higher-level autograd on functions (torch's ``torch.autograd.functional``): ``vjp``,
``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp``.

Each takes a function of tensors and the point (a tensor or a tuple of tensors) and returns
results nested like torch's: a tensor where torch gives a tensor, a tuple where the function's
inputs or outputs are a tuple. ``jvp`` and ``hvp`` use the double-backward trick (what torch
does by default; gradsum has no forward-mode AD). With ``strict=False`` a result that does not
depend on an input is zeros; ``strict=True`` raises instead. Without ``create_graph`` the
results are detached; with it they are part of a graph (higher derivatives).

Example:
    >>> import gradsum
    >>> from gradsum.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, gradsum.tensor([1.0, 3.0]))
    tensor([[2., 0.],
            [0., 6.]])
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from gradsum._tensor import Tensor
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

Tensors = Tensor | tuple[Tensor, ...]


# -- helpers (torch's, same names and checks) -------------------------------------------------
def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(_messages.not_tensor_at_index(arg_name, fn_name, i, el))
            raise TypeError(_messages.not_tensor_or_tuple(arg_name, fn_name, el))
    return is_inp_tuple, inp


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool,
                     need_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensors to differentiate with respect to: a view (so the graph reaches the
    original) under ``create_graph``, otherwise detached copies of the references."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(_messages.v_length(other, v))
        raise RuntimeError(_messages.v_not_single_tensor())
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(_messages.v_size(prepend, el_other, el_v))


# strict mode's error for a result that does not require grad, by what it is (else: an output)
_NO_GRAD_TEXTS = {
    "hessian": _messages.strict_hessian_independent,
    "jacobian": _messages.strict_jacobian_independent,
    "grad_inputs": _messages.strict_grad_independent,
}
# strict mode's error for a gradient that does not reach, by stage (else: "double_back_trick")
_UNUSED_TEXTS = {
    "back": partial(_messages.strict_independent, "output"),
    "back_trick": _messages.strict_double_backward,
    "double_back": partial(_messages.strict_independent, "jacobian"),
}


def _check_requires_grad(inputs: tuple[Tensor | None, ...], input_type: str,
                         strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(_messages.strict_independent("output", i))
        if not inp.requires_grad:
            text = _NO_GRAD_TEXTS.get(input_type, _messages.strict_output_no_grad)
            raise RuntimeError(text(i))


def _autograd_grad(outputs: tuple[Any, ...], inputs: tuple[Tensor, ...],
                   grad_outputs: tuple[Any, ...] | None = None, create_graph: bool = False,
                   retain_graph: bool | None = None) -> tuple[Tensor | None, ...]:
    """``autograd.grad`` over the outputs that require grad (None for every input when none
    does), with ``allow_unused=True``."""
    from gradsum.autograd import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs: list[Tensor] = []
    new_grad_outputs: list[Any] = []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    return grad(new_outputs, inputs, new_grad_outputs, allow_unused=True,  # type: ignore[return-value]
                create_graph=create_graph, retain_graph=retain_graph)


def _fill_in_zeros(grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...], strict: bool,
                   create_graph: bool, stage: str) -> tuple[Tensor, ...]:
    from gradsum._creation import zeros_like

    res: list[Tensor] = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                text = _UNUSED_TEXTS.get(stage, _messages.strict_hessian_grad_jacobian)
                raise RuntimeError(text(i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(_messages.strict_independent(what, i, create_graph=True))
        res.append(grads_i)
    return tuple(res)


def _v_or_scalar(v: Any, ref: tuple[Tensor, ...], is_ref_tuple: bool, create_graph: bool,
                 fn_name: str, what: str) -> tuple[Tensor, ...] | None:
    if v is not None:
        _, vt = _as_tuple(v, "v", fn_name)
        vt = _grad_preprocess(vt, create_graph=create_graph, need_graph=False)
        _validate_v(vt, ref, is_ref_tuple)
        return vt
    if len(ref) != 1 or ref[0].nelement() != 1:
        raise RuntimeError(_messages.v_none_not_scalar(what))
    return None


_V_INPUT = "the input to the user-provided function is"


def _prepared_inputs(inputs: Tensors, fn_name: str,
                     create_graph: bool) -> tuple[bool, tuple[Tensor, ...]]:
    """The inputs as a tuple (and whether they were one), ready to differentiate."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", fn_name)
    return is_inputs_tuple, _grad_preprocess(ins, create_graph=create_graph, need_graph=True)


def _func_outputs(func: Callable[..., Any], ins: tuple[Tensor, ...], fn_name: str,
                  strict: bool) -> tuple[bool, tuple[Tensor, ...]]:
    """``func(*ins)`` as a tuple (and whether it was one), checked under ``strict``."""
    is_outputs_tuple, outputs = _as_tuple(func(*ins), "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def _second_pass(outs: tuple[Any, ...], wrt: tuple[Tensor, ...], vt: tuple[Tensor, ...] | None,
                 refs: tuple[Tensor, ...], strict: bool, create_graph: bool,
                 stage: str) -> tuple[Tensor, ...]:
    """The product's backward pass (``vt`` into ``outs``, with respect to ``wrt``), a zero
    like ``refs[i]`` for each gradient that does not reach (``strict``: torch's error)."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outs, wrt, vt, create_graph=create_graph)
        return _fill_in_zeros(grad_res, refs, strict, create_graph, stage)


def _results(outputs: tuple[Tensor, ...], is_outputs_tuple: bool, res: tuple[Tensor, ...],
             is_res_tuple: bool, create_graph: bool) -> tuple[Any, Any]:
    """``(func(inputs), product)``, detached unless ``create_graph``, nested like torch's."""
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_res_tuple))


# -- the public functions ---------------------------------------------------------------------
def vjp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    ``v`` has the shape of the outputs (it may be None for a one-element output).

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.functional import vjp
        >>> out, g = vjp(lambda x: x ** 2, gradsum.tensor([1.0, 2.0]), gradsum.ones(2))
        >>> g
        tensor([2., 4.])
    """
    with enable_grad():
        is_inputs_tuple, ins = _prepared_inputs(inputs, "vjp", create_graph)
        is_outputs_tuple, outputs = _func_outputs(func, ins, "vjp", strict)
        vt = _v_or_scalar(v, outputs, is_outputs_tuple, create_graph, "vjp",
                          "the user-provided function returns")
    res = _second_pass(outputs, ins, vt, ins, strict, create_graph, "back")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def jvp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``, computed with the
    double-backward trick (as torch's default). ``v`` has the shape of the inputs.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.functional import jvp
        >>> out, jv = jvp(lambda x: x ** 3, gradsum.tensor([1.0, 2.0]), gradsum.ones(2))
        >>> jv
        tensor([ 3., 12.])
    """
    from gradsum._creation import zeros_like

    with enable_grad():
        is_inputs_tuple, ins = _prepared_inputs(inputs, "jvp", create_graph)
        vt = _v_or_scalar(v, ins, is_inputs_tuple, create_graph, "jvp", _V_INPUT)
        is_outputs_tuple, outputs = _func_outputs(func, ins, "jvp", strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, ins, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    res = _second_pass(grad_inputs, grad_outputs, vt, outputs, strict, create_graph,
                       "back_trick")
    return _results(outputs, is_outputs_tuple, res, is_outputs_tuple, create_graph)


def _basis_rows(outputs: tuple[Tensor, ...], numels: tuple[int, ...]) -> tuple[Tensor, ...]:
    """torch's ``_construct_standard_basis_for``: per output, a (total, numel) block of the
    identity."""
    total = sum(numels)
    chunks = tuple(o.new_zeros(total, n) for o, n in zip(outputs, numels))
    start = 0
    for chunk, n in zip(chunks, numels):
        chunk.diagonal(start).fill_(1)
        start -= n
    return chunks


def jacobian(func: Callable[..., Any], inputs: Tensors, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``, one reverse pass per output element.

    Entry ``[i][j]`` (for tuple outputs and inputs; a tensor where torch gives one) has shape
    ``outputs[i].shape + inputs[j].shape``. An output independent of an input gives zeros
    (``strict=True``: an error). ``vectorize=True`` gives the same values (gradsum loops
    instead of using vmap); ``strategy="forward-mode"`` is refused (no forward-mode AD).

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.functional import jacobian
        >>> def f(x, y):
        ...     return x * y, x.sum()
        >>> (jx, jy), (sx, sy) = jacobian(f, (gradsum.tensor([1.0, 2.0]),
        ...                                   gradsum.tensor([3.0, 4.0])))
        >>> jx
        tensor([[3., 0.],
                [0., 4.]])
        >>> sx, sy  # (x.sum() does not depend on y: zeros)
        (tensor([1., 1.]), tensor([0., 0.]))
    """
    from gradsum._creation import zeros_like
    from gradsum.ops import stack

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_messages.jacobian_strategy_invalid())
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(_messages.jacobian_forward_create_graph())
        if strict:
            raise RuntimeError(_messages.jacobian_forward_strict())
        _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError(_messages.forward_ad_needs_vectorize())
        raise NotImplementedError(_messages.jacobian_forward_vectorize())

    with enable_grad():
        is_inputs_tuple, ins = _prepared_inputs(inputs, "jacobian", create_graph)
        is_outputs_tuple, outputs = _func_outputs(func, ins, "jacobian", strict)

        if vectorize:
            if strict:
                raise RuntimeError(_messages.jacobian_strict_vectorize())
            numels = tuple(o.numel() for o in outputs)
            basis = _basis_rows(outputs, numels)
            flat = tuple(o.reshape(-1) for o in outputs)
            rows: list[list[Tensor]] = [[] for _ in ins]
            for r in range(sum(numels)):  # (torch: one batched grad; here one per row)
                vj = _autograd_grad(flat, ins, tuple(b[r] for b in basis),
                                    create_graph=create_graph, retain_graph=True)
                for k, (g, inp) in enumerate(zip(vj, ins)):
                    rows[k].append(g if g is not None else zeros_like(inp))
            per_input = []
            for k, inp in enumerate(ins):
                jac = stack(rows[k], 0)
                parts, start = [], 0
                for o, n in zip(outputs, numels):
                    parts.append(jac[start:start + n].view(tuple(o.shape) + tuple(inp.shape)))
                    start += n
                per_input.append(parts)
            jac_oi = _grad_postprocess(tuple(zip(*per_input)), create_graph)
            return _tuple_postprocess(jac_oi, (is_outputs_tuple, is_inputs_tuple))

        result: list[tuple[Tensor, ...]] = []
        for i, out in enumerate(outputs):
            jac_i: tuple[list[Tensor], ...] = tuple([] for _ in ins)
            flat_out = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat_out[j],), ins, retain_graph=True,
                                    create_graph=create_graph)
                for el_idx, (jac_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, ins)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                _messages.strict_independent("jacobian", i, create_graph=True)
                            )
                        jac_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(_messages.strict_output_input(i, el_idx))
                        jac_el.append(zeros_like(inp_el))
            result.append(tuple(
                stack(jac_el, 0).view(tuple(out.shape) + tuple(ins[k].shape))
                for k, jac_el in enumerate(jac_i)
            ))
        jac_t = _grad_postprocess(tuple(result), create_graph)
        return _tuple_postprocess(jac_t, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable[..., Any], inputs: Tensors, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of the scalar function ``func`` at ``inputs`` (the Jacobian of its
    gradient). For a tuple of inputs, entry ``[i][j]`` has shape
    ``inputs[i].shape + inputs[j].shape``.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.functional import hessian
        >>> hessian(lambda x: (x ** 3).sum(), gradsum.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_messages.hessian_strategy_invalid())

    def ensure_single_output_function(*inp: Tensor) -> Tensor:
        return _scalar_output(func, inp, strict, "hessian")[1][0].squeeze()

    def jac_func(*inp: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func: Callable[..., Any], ins: tuple[Tensor, ...], strict: bool,
                   fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    is_outputs_tuple, outputs = _func_outputs(func, ins, fn_name, strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(_messages.fn_not_single_tensor(fn_name))
    if outputs[0].nelement() != 1:
        raise RuntimeError(_messages.fn_not_scalar(fn_name))
    return is_outputs_tuple, outputs


def _scalar_gradient(func: Callable[..., Any], inputs: Tensors, v: Tensors | None,
                     create_graph: bool, strict: bool, fn_name: str) -> tuple[Any, ...]:
    """vhp's and hvp's first steps: the inputs, ``v``, the scalar output and its gradient
    (with its graph): ``(is_inputs_tuple, ins, vt, is_outputs_tuple, outputs, jac)``."""
    with enable_grad():
        is_inputs_tuple, ins = _prepared_inputs(inputs, fn_name, create_graph)
        vt = _v_or_scalar(v, ins, is_inputs_tuple, create_graph, fn_name, _V_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, ins, strict, fn_name)
        jac = _autograd_grad(outputs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, ins, vt, is_outputs_tuple, outputs, jac


def vhp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar function ``func``.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.functional import vhp
        >>> _, r = vhp(lambda x: (x ** 3).sum(), gradsum.tensor([1.0, 2.0]), gradsum.ones(2))
        >>> r
        tensor([ 6., 12.])
    """
    is_inputs_tuple, ins, vt, is_outputs_tuple, outputs, jac = _scalar_gradient(
        func, inputs, v, create_graph, strict, "vhp")
    res = _second_pass(jac, ins, vt, ins, strict, create_graph, "double_back")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def hvp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar function ``func``, with the double-backward trick
    (as torch).

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.functional import hvp
        >>> _, r = hvp(lambda x: (x ** 3).sum(), gradsum.tensor([1.0, 2.0]), gradsum.ones(2))
        >>> r
        tensor([ 6., 12.])
    """
    from gradsum._creation import zeros_like

    is_inputs_tuple, ins, vt, is_outputs_tuple, outputs, jac = _scalar_gradient(
        func, inputs, v, create_graph, strict, "hvp")
    with enable_grad():
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in ins)
        double_back = _autograd_grad(jac, ins, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    res = _second_pass(double_back, grad_jac, vt, ins, strict, create_graph,
                       "double_back_trick")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)
