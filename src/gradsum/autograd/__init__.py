"""Reverse-mode automatic differentiation: ``backward``, ``grad``, ``Function``, gradcheck.

``backward`` adds into ``.grad`` of the leaves; ``grad`` returns gradients and leaves every
``.grad`` exactly as it was.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = gradsum.autograd.grad((x ** 2).sum(), [x])
    >>> g.tolist(), x.grad is None
    ([2.0, 4.0], True)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp
from gradsum.autograd import _messages, graph
from gradsum.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from gradsum.autograd.engine import run_backward
from gradsum.autograd.function import Function, FunctionCtx, once_differentiable
from gradsum.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from gradsum.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from gradsum.autograd.graph import GradientEdge
from gradsum.autograd.variable import Variable

if TYPE_CHECKING:
    from gradsum._tensor import Tensor


def _implicit_seed(o: Tensor) -> Tensor:
    """The gradient ``backward()`` starts from for a scalar output ``o``: a one of its dtype."""
    seed = xp.empty(o._array.shape, dtype=o._array.dtype)
    seed.fill(1)
    return o._make(seed)


def make_grads(outputs: Sequence[Tensor], grads: Sequence[Any], kind: str) -> list[Tensor]:
    """Check and fill the seed gradients (implicit ones for scalar outputs): torch's
    ``torch.autograd._make_grads``, before the engine runs.

    As torch's ``_make_grads`` it runs before the roots are checked: an output that does not
    require grad gets no implicit seed here (the caller then refuses it).
    """
    from gradsum._tensor import Tensor

    out: list[Tensor] = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if not isinstance(o, Tensor) or not o.requires_grad:
                out.append(None)  # type: ignore[arg-type]
                continue
            if o._array.size != 1:
                raise RuntimeError(_messages.implicit_scalar(tuple(o.shape)))
            if o._array.dtype.kind not in "fV" and not o.dtype.is_floating_point:
                raise RuntimeError(_messages.implicit_not_real(o))
            out.append(_implicit_seed(o))
            continue
        if not isinstance(g, Tensor):
            raise TypeError(_messages.bad_grad_type(kind, i, g))
        if g._array.shape != o._array.shape:
            raise RuntimeError(
                _messages.shape_mismatch(kind, i, tuple(g.shape), tuple(o.shape))
            )
        if g._array.dtype != o._array.dtype:
            g = g.to(o.dtype)
        out.append(g)
    return out


__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def __getattr__(name: str) -> Any:
    if name == "functional":  # (imported on first use: it needs gradsum.Tensor)
        import importlib

        return importlib.import_module("gradsum.autograd.functional")
    raise AttributeError(_messages.no_module_attribute(name))


#: non-empty once ``backward(create_graph=True)`` has warned about the reference cycle
_warned_create_graph: list[bool] = []
_T: list[type] = []  # [Tensor], filled on first use (gradsum._tensor imports this package)


def _tensor_type() -> type:
    if not _T:
        from gradsum._tensor import Tensor

        _T.append(Tensor)
    return _T[0]


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (_T[0], GradientEdge)):
        return [x]
    return list(x)


def _inputs_list(inputs: Any, fn: str) -> list[Any]:
    """``inputs`` as a list: a tensor, a sequence, or (as torch) a plain ``dict`` whose values
    are the tensors (``dict(model.named_parameters())``); other mappings are refused."""
    if isinstance(inputs, (_T[0], GradientEdge)):
        return [inputs]
    if type(inputs) is dict:
        return list(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(_messages.inputs_not_dict(fn, type(inputs).__name__))
    return list(inputs)


def _make_seeds(outs: list[Any], grads: list[Any], kind: str) -> list[Tensor]:
    """``make_grads`` for tensors; a :class:`GradientEdge` output takes its gradient as given
    (gradsum's nodes keep no output shapes: an implicit one cannot be made)."""
    if not any(o.__class__ is GradientEdge for o in outs):
        return make_grads(outs, grads, kind)
    seeds: list[Any] = []
    for i, (o, g) in enumerate(zip(outs, grads)):
        if o.__class__ is not GradientEdge:
            seeds.extend(make_grads([o], [g], kind))
        elif g is None:
            raise RuntimeError(_messages.edge_implicit_grad())
        elif not isinstance(g, _T[0]):
            raise TypeError(_messages.bad_grad_type(kind, i, g))
        else:
            seeds.append(g)
    return seeds


def _check_roots(roots: list[Tensor]) -> None:
    for i, t in enumerate(roots):
        if t.__class__ is GradientEdge:
            continue
        if not isinstance(t, _T[0]):
            raise TypeError(_messages.not_tensor_at(i, t))
        if not t.requires_grad:
            raise RuntimeError(_messages.no_grad_root(i))


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | dict[str, Tensor] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into each leaf's ``.grad`` (only ``inputs``' if given).

    As in torch, every tensor named in ``inputs`` gets ``retain_grad()``: a non-leaf there
    keeps accumulating into its ``.grad`` in later backwards too. ``inputs`` may be a dict of
    tensors (its values are used).

    ``retain_graph`` defaults to ``create_graph``; without it, the graph's saved tensors are
    freed and a second backward through them raises.

    Example:
        >>> import gradsum
        >>> w = gradsum.tensor([1.0], requires_grad=True)
        >>> a, b = w * 2, w * 3
        >>> gradsum.autograd.backward([a.sum(), b.sum()])
        >>> w.grad.tolist()
        [5.0]
    """
    _tensor_type()
    in_list = None
    if inputs is not None:
        in_list = _inputs_list(inputs, "backward")
        if not in_list:
            raise RuntimeError(_messages.empty_inputs())
    roots = _as_list(tensors)
    grads = _as_list(grad_tensors) if grad_tensors is not None else [None] * len(roots)
    # torch's order of checks: the seeds, their count, the roots, then the inputs
    seeds = _make_seeds(roots, grads, "grad_output")
    if len(grads) < len(roots):  # (torch pairs them with zip: extra gradients are ignored)
        raise RuntimeError(_messages.grad_count(len(roots), len(grads), "tensors"))
    seeds = seeds[:len(roots)]
    _check_roots(roots)
    if in_list is not None:
        for t in in_list:
            if t.__class__ is GradientEdge:
                continue
            if not t.requires_grad:  # (torch calls retain_grad() on each input)
                raise RuntimeError(_messages.retain_grad_no_grad())
    if create_graph and not _warned_create_graph:
        # torch warns once per process (SEMANTICS 5: the .grad then holds a graph)
        _warned_create_graph.append(True)
        warnings.warn(_messages.create_graph_cycle(), UserWarning, stacklevel=3)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(roots, seeds, retain_graph, create_graph, inputs=in_list, accumulate=True)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor] | dict[str, Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...] | dict[str, Tensor | None]:
    """Gradients of ``outputs`` with respect to ``inputs``; accumulates into nothing.

    ``inputs`` may be a dict of tensors (``dict(model.named_parameters())``); the gradients
    then come back as a dict with the same keys.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor(3.0, requires_grad=True)
        >>> (dx,) = gradsum.autograd.grad(x ** 3, x, create_graph=True)
        >>> (d2x,) = gradsum.autograd.grad(dx, x)
        >>> dx.item(), d2x.item()
        (27.0, 18.0)
    """
    from gradsum._creation import zeros_like

    if materialize_grads and allow_unused is False:
        raise ValueError(_messages.materialize_disallow_unused())
    if allow_unused is None:
        allow_unused = materialize_grads
    _tensor_type()
    outs = _as_list(outputs)
    ins = _inputs_list(inputs, "grad")
    if not ins:
        raise RuntimeError(_messages.empty_inputs("grad"))
    gos = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outs)
    if is_grads_batched:
        if any(t.__class__ is GradientEdge for t in outs + ins):
            raise RuntimeError(_messages.edge_batched())
        return _grad_batched(outs, ins, inputs, gos, retain_graph, create_graph,
                             bool(allow_unused), materialize_grads)
    seeds = _make_seeds(outs, gos, "grad_output")  # (torch's order, as in backward)
    if len(gos) < len(outs):  # (torch pairs them with zip: extra gradients are ignored)
        raise RuntimeError(_messages.grad_count(len(outs), len(gos), "outputs"))
    seeds = seeds[:len(outs)]
    _check_roots(outs)
    for i, t in enumerate(ins):
        if t.__class__ is not GradientEdge and not t.requires_grad:
            raise RuntimeError(_messages.input_not_requiring_grad(i))
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outs, seeds, retain_graph, create_graph, inputs=ins, accumulate=False)
    final: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(ins, result)):
        if g is None:
            if materialize_grads and t.__class__ is GradientEdge:
                raise RuntimeError(_messages.edge_materialize())
            if materialize_grads:  # (torch: part of the new graph under create_graph)
                g = zeros_like(t, requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(_messages.unused_input(i))
        elif not create_graph and g.requires_grad:
            g = g.detach()
        final.append(g)
    if type(inputs) is dict:  # torch returns a dict for a dict of inputs
        return dict(zip(inputs.keys(), final))  # type: ignore[return-value]
    return tuple(final)


def _grad_batched(outs: list[Tensor], ins: list[Tensor], inputs: Any, gos: list[Any],
                  retain_graph: bool | None, create_graph: bool, allow_unused: bool,
                  materialize_grads: bool) -> tuple[Tensor | None, ...] | dict[str, Any]:
    """``grad(..., is_grads_batched=True)``: the first dimension of every grad_output is a
    batch; torch vmaps the backward over it, gradsum runs one backward per batch entry
    (keeping the graph between them) and stacks the gradients."""
    from gradsum import stack
    from gradsum._creation import zeros_like

    sizes = set()
    for i, (o, g) in enumerate(zip(outs, gos)):
        if g is None:
            if isinstance(o, _T[0]) and o.requires_grad and o._array.size == 1:
                raise ValueError(_messages.batched_implicit(i, tuple(o.shape)))
            make_grads([o], [None], "grad_output")  # (raises torch's error)
            continue
        if not isinstance(g, _T[0]):
            make_grads([o], [g], "grad_output")  # (raises torch's error)
        if g._array.ndim == 0 or g._array.shape[1:] != o._array.shape:
            raise RuntimeError(_messages.batched_shape(i, tuple(g.shape), tuple(o.shape)))
        sizes.add(g._array.shape[0])
    if len(gos) < len(outs):
        raise RuntimeError(_messages.grad_count(len(outs), len(gos), "outputs"))
    _check_roots(outs)
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(_messages.input_not_requiring_grad(i))
    if len(sizes) > 1:
        raise ValueError(_messages.batched_sizes(sorted(sizes)))
    n = sizes.pop() if sizes else 1
    if retain_graph is None:
        retain_graph = create_graph
    per: list[list[Tensor | None]] = []
    for b in range(n):
        seeds = make_grads(outs, [g[b] for g in gos[:len(outs)]], "grad_output")
        per.append(run_backward(outs, seeds, retain_graph or b < n - 1, create_graph,
                                inputs=ins, accumulate=False))
    final: list[Tensor | None] = []
    for i, t in enumerate(ins):
        gs = [p[i] for p in per]
        if any(g is None for g in gs):
            if materialize_grads:  # (torch: zeros of the input's shape, no batch dimension)
                final.append(zeros_like(t, requires_grad=create_graph))
                continue
            if not allow_unused:
                raise RuntimeError(_messages.unused_input(i))
            final.append(None)
            continue
        g = stack(gs)
        final.append(g if create_graph or not g.requires_grad else g.detach())
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), final))
    return tuple(final)
