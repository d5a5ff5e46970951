"""torch.autograd.graph's utilities, exposed as ``gradsum.autograd.graph.<name>``.

Saved tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``),
gradient edges (``GradientEdge``, ``get_gradient_edge``), ``increment_version`` and
``register_multi_grad_hook``.

Example:
    >>> import gradsum
    >>> from gradsum.autograd.graph import saved_tensors_hooks
    >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> seen = []
    >>> def pack(t):
    ...     seen.append(tuple(t.shape))
    ...     return t.detach().clone()   # the node keeps this copy, not ``t``
    >>> with saved_tensors_hooks(pack, lambda p: p):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> seen, x.grad.tolist()
    ([(2,), (2,)], [2.0, 4.0])
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gradsum.autograd import _messages
from gradsum.autograd.graph import Node, RemovableHandle, _handle_ids, grad_accumulator
from gradsum.autograd.saved import hooks_active, hooks_state

if TYPE_CHECKING:
    from gradsum._tensor import Tensor


# -- saved tensor hooks ----------------------------------------------------------------------
class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through ``pack_hook`` (what
    it returns is what the node keeps) and come back through ``unpack_hook`` when backward
    (or ``ctx.saved_tensors``) reads them. Nested contexts use the innermost pair; the
    pairs are per thread. As torch, no version check is made through hooks, and an
    ``unpack_hook`` result that is not a tensor raises ``TypeError``.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import saved_tensors_hooks
        >>> x = gradsum.tensor([3.0], requires_grad=True)
        >>> with saved_tensors_hooks(lambda t: t.tolist(), lambda p: gradsum.tensor(p)):
        ...     y = x ** 2
        >>> y.backward()
        >>> x.grad.tolist()
        [6.0]
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if hooks_state.disabled is not None:
            raise RuntimeError(hooks_state.disabled)
        hooks_state.stack.append((self.pack_hook, self.unpack_hook))
        hooks_active.append(None)  # (note "Saved tensor hooks on the hot path", saved.py)

    def __exit__(self, *args: object) -> None:
        if not hooks_state.stack:
            raise RuntimeError(_messages.pop_hooks_empty())
        hooks_state.stack.pop()
        hooks_active.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward.

    gradsum runs on the CPU, so as in torch for CPU tensors, nothing is copied unless
    ``pin_memory=True`` (then a copy is kept). ``device_type`` is accepted for torch's
    signature.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import save_on_cpu
        >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
        >>> with save_on_cpu(pin_memory=True):
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad.tolist()
        [2.0, 4.0]
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Generator[None, None, None]:
    """Within it, registering saved tensor hooks raises ``RuntimeError(error_message)``;
    entering it while hooks are active raises the same.

    Example:
        >>> from gradsum.autograd.graph import disable_saved_tensors_hooks, save_on_cpu
        >>> with disable_saved_tensors_hooks("no hooks here"):
        ...     try:
        ...         with save_on_cpu():
        ...             pass
        ...     except RuntimeError as e:
        ...         print(e)
        no hooks here
    """
    prev = hooks_state.disabled
    try:
        hooks_state.disabled = error_message
        if hooks_state.stack:  # (torch refuses to disable hooks that are already active)
            raise RuntimeError(error_message)
        yield
    finally:
        hooks_state.disabled = prev


# -- gradient edges ------------------------------------------------------------------------------
class GradientEdge(NamedTuple):
    """Where the gradient of a tensor arrives in the graph: ``(node, output_nr)``. Accepted
    wherever torch accepts one: ``inputs=`` of ``autograd.grad`` and ``backward``, and the
    outputs of ``autograd.grad``/``backward`` (with an explicit gradient).

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import get_gradient_edge
        >>> x = gradsum.tensor([2.0], requires_grad=True)
        >>> h = x * 3
        >>> y = (h * h).sum()
        >>> (gh,) = gradsum.autograd.grad(y, get_gradient_edge(h))
        >>> gh.tolist()
        [12.0]
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def _node_of(t: Tensor | GradientEdge) -> Node:
    """torch's ``_get_grad_fn_or_grad_acc``: the grad_fn, or a leaf's sink (created)."""
    if isinstance(t, GradientEdge):
        return t.node
    node = t._grad_fn
    if node is None and t._requires_grad:
        node = grad_accumulator(t)
    if node is None:
        raise AssertionError(_messages.node_expected())
    return node


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The :class:`GradientEdge` where ``tensor``'s gradient is computed.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import get_gradient_edge
        >>> x = gradsum.ones(2, requires_grad=True)
        >>> get_gradient_edge(x).node.name(), get_gradient_edge(x * 2).node.name()
        ('AccumulateGrad', 'MulBackward0')
    """
    if not tensor.requires_grad:
        raise RuntimeError(_messages.gradient_edge_no_grad())
    return GradientEdge(_node_of(tensor), tensor._output_nr)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), for an
    in-place change autograd did not see: backward then refuses saved copies of it.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import increment_version
        >>> x = gradsum.ones(2)
        >>> increment_version(x); x._version
        1
    """
    from gradsum._tensor import Tensor
    from gradsum.ops._core import stale_views

    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        vc = t._vc
        vc[0] += 1
        if len(vc) > 1:  # (views guarded by this counter: as every in-place op, ops._core)
            stale_views(vc)


# -- multi-grad hooks ---------------------------------------------------------------------------
class _MultiHandle(RemovableHandle):
    """The handle of :func:`register_multi_grad_hook`: ``remove()`` removes every part."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles
        self.id = next(_handle_ids)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[..., None], *,
                             mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward, as torch's:

    * ``mode="all"``: after the gradients of every tensor of ``tensors`` that this backward
      computes are known, with the list of them (``None`` for a tensor the backward does not
      reach or, under ``inputs=``, does not need);
    * ``mode="any"``: with the first of those gradients computed.

    Example:
        >>> import gradsum
        >>> from gradsum.autograd.graph import register_multi_grad_hook
        >>> a = gradsum.ones(2, requires_grad=True)
        >>> b = gradsum.ones(2, requires_grad=True)
        >>> c, d = a * b, a * b
        >>> h = register_multi_grad_hook((a, b, c, d),
        ...                              lambda gs: print([g is not None for g in gs]))
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
        >>> c.sum().backward(inputs=(a,))
        [True, False, True, False]
        >>> h.remove()
    """
    from gradsum.autograd.engine import current_graph_task_id, will_engine_execute_node

    lock = threading.Lock()
    if mode not in ("all", "any"):
        raise ValueError(_messages.multi_grad_mode(mode))
    if mode == "all":
        count: dict[int, int] = {}
        nb_calls: list[int] = [0]
        buffer: dict[int, list[Tensor | None]] = {}
        grad_fns = [_node_of(t) for t in tensors]  # (held: a leaf's sink stays the same)
        n = len(tensors)

        def get_inner_hook(idx: int) -> Callable[[Tensor], None]:
            def inner_hook(grad: Tensor) -> None:
                task = current_graph_task_id()
                if task == -1:
                    raise AssertionError(_messages.hook_outside_backward())
                count.setdefault(task, 0)
                buffer.setdefault(task, [None] * n)
                with lock:
                    curr, count[task] = count[task], count[task] + 1
                    if curr == 0:  # (first call: how many of the hooks this backward runs)
                        nb_calls[0] = sum(map(will_engine_execute_node, grad_fns))
                buffer[task][idx] = grad
                if curr == nb_calls[0] - 1:
                    fn(buffer[task])
                    del count[task]
                    del buffer[task]

            return inner_hook

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        ran_hook: dict[int, bool] = defaultdict(bool)

        @functools.wraps(fn)
        def wrapped_fn(grad: Tensor) -> None:
            task = current_graph_task_id()
            if task == -1:
                raise AssertionError(_messages.hook_outside_backward())
            with lock:
                prev, ran_hook[task] = ran_hook[task], True
            if prev:
                return
            fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
