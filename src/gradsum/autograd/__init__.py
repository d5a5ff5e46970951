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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradsum.autograd import _messages, graph
from gradsum.autograd.engine import make_grads, run_backward
from gradsum.autograd.function import Function, FunctionCtx, once_differentiable
from gradsum.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from gradsum.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]


_T: list[type] = []  # [Tensor], filled on first use (gradsum._tensor imports this package)


def _tensor_type() -> type:
    if not _T:
        from gradsum._tensor import Tensor

        _T.append(Tensor)
    return _T[0]


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, _T[0]):
        return [x]
    return list(x)


def _check_roots(roots: list[Tensor]) -> None:
    for i, t in enumerate(roots):
        if not isinstance(t, _T[0]):
            raise TypeError(f"expected a Tensor at position {i}, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(_messages.no_grad_root(i))


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into each leaf's ``.grad`` (only ``inputs``' if given).

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
    roots = _as_list(tensors)
    grads = _as_list(grad_tensors) if grad_tensors is not None else [None] * len(roots)
    if len(grads) != len(roots):
        raise RuntimeError(
            f"grad_tensors should have the same length as tensors: got {len(grads)} and "
            f"{len(roots)}"
        )
    in_list = None
    if inputs is not None:
        in_list = _as_list(inputs)
        if not in_list:
            raise RuntimeError(_messages.empty_inputs())
        for i, t in enumerate(in_list):
            if not t.requires_grad:
                raise RuntimeError(_messages.input_not_requiring_grad(i))
    _check_roots(roots)
    seeds = make_grads(roots, grads, "grad_output")
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(roots, seeds, retain_graph, create_graph, inputs=in_list, accumulate=True)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs``; accumulates into nothing.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor(3.0, requires_grad=True)
        >>> (dx,) = gradsum.autograd.grad(x ** 3, x, create_graph=True)
        >>> (d2x,) = gradsum.autograd.grad(dx, x)
        >>> dx.item(), d2x.item()
        (27.0, 18.0)
    """
    from gradsum._creation import zeros_like

    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True needs vmap, which gradsum lacks")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but "
            "got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    _tensor_type()
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if not ins:
        raise RuntimeError("grad requires at least one input tensor: inputs is empty")
    gos = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outs)
    if len(gos) != len(outs):
        raise RuntimeError(
            f"grad_outputs should have the same length as outputs: got {len(gos)} and "
            f"{len(outs)}"
        )
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(_messages.input_not_requiring_grad(i))
    _check_roots(outs)
    seeds = make_grads(outs, gos, "grad_output")
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outs, seeds, retain_graph, create_graph, inputs=ins, accumulate=False)
    final: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(ins, result)):
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(_messages.unused_input(i))
        elif not create_graph and g.requires_grad:
            g = g.detach()
        final.append(g)
    return tuple(final)
