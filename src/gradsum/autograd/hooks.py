"""Running backward hooks and checking what they return, as torch does.

The engine calls :func:`run_tensor_hooks` for a node that has hooks (``Tensor.register_hook``
on its outputs, ``retain_grad``), and the leaf sink (:mod:`gradsum.autograd.graph`) checks the
results of a leaf's hooks with the same functions. A hook may replace a gradient, but only by
a tensor of the same size and dtype; a node pre/post hook returns a tuple of the same length.
A replacement may be held by the hook's owner, so it is marked shared (the engine's ``shared``:
nobody takes it over or adds into it in place).

Example:
    >>> import gradsum
    >>> x = gradsum.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> _ = y.register_hook(lambda g: g * 10)
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [20.0, 20.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradsum.autograd import _messages

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.autograd.graph import Node


def run_tensor_hooks(node: Node, hooks: Any, grads: list[Tensor | None], shared: dict[int, Any]
                     ) -> list[Tensor | None]:
    """Hooks of the tensors this node produced, then retain_grad (always last, as torch)."""
    if hooks.shapes:
        check_changed_shapes(node, hooks.shapes, grads)
    for nr, fns in hooks.tensor.items():
        g = grads[nr]  # (None too: torch calls the hooks of a running node with None)
        for fn in list(fns):
            r = fn(g)
            if r is not None:
                g = checked_hook_result(fn, g, r)
                shared[id(g)] = g._vc
        grads[nr] = g
    if hooks.retains:
        from gradsum.autograd.graph import _accumulate_grad  # (the sink imports this module)

        for nr, ref in list(hooks.retains.items()):
            t = ref()
            if t is not None and grads[nr] is not None:
                _accumulate_grad(t, grads[nr], retained=True)
    return grads


def check_changed_shapes(node: Node, shapes: dict[int, tuple[int, ...]],
                         grads: list[Tensor | None]) -> None:
    """torch's validate_outputs for an output of ``node`` whose tensor changed shape in place
    under no_grad since (``shapes``: its shape when ``node`` was made): a gradient of the new
    shape is summed back to the old one when the old one expands to it, else refused."""
    for nr, want in shapes.items():
        g = grads[nr]
        if g is None or g._array.shape == want:
            continue
        got = g._array.shape
        n = len(got) - len(want)
        if n < 0 or any(w != s and w != 1 for w, s in zip(want, got[n:])):
            raise RuntimeError(_messages.changed_shape_gradient(node.name(), nr, got, want))
        from gradsum.ops.reduction import sum_to

        grads[nr] = sum_to(g, want)


def changed_shape_pair(child: Node, cnr: int, old: Tensor, g: Tensor
                       ) -> tuple[Tensor, Tensor]:
    """Two gradients of different shapes for an output whose tensor changed shape in place
    under no_grad: each is checked (and summed back) on its own before they add up, as
    torch validates every edge's gradient before its input buffer sums them."""
    shapes = child._hooks.shapes  # type: ignore[union-attr]
    if cnr not in shapes:
        return old, g
    want = {0: shapes[cnr]}
    a, b = [old], [g]
    check_changed_shapes(child, want, a)
    check_changed_shapes(child, want, b)
    return a[0], b[0]  # type: ignore[return-value]


def hook_name(hook: Any) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def checked_hook_result(hook: Any, g: Tensor | None, r: Any) -> Tensor:
    """A tensor hook may replace the gradient, but not with another size, dtype or a
    non-tensor (torch's checks and exception types)."""
    from gradsum._tensor import Tensor

    if g is None:
        raise RuntimeError(_messages.hook_replaced_none(hook_name(hook), 0))
    if not isinstance(r, Tensor):
        raise TypeError(_messages.hook_not_tensor(hook_name(hook), r))
    if r._array.shape != g._array.shape:
        raise RuntimeError(
            _messages.hook_changed_size(hook_name(hook), tuple(g.shape), tuple(r.shape))
        )
    if r._array.dtype != g._array.dtype:
        raise RuntimeError(
            _messages.hook_changed_type(hook_name(hook), g.dtype.name, r.dtype.name)
        )
    return r


def checked_node_hook_result(hook: Any, old: tuple[Tensor | None, ...], r: Any,
                             shared: dict[int, Any]) -> tuple[Tensor | None, ...]:
    """What a node pre/post hook returned, checked like torch: a tuple of the same length,
    each entry None (drop that gradient) or a tensor in place of one of the same size."""
    if r.__class__ is not tuple:
        raise TypeError(_messages.hook_not_tuple(hook_name(hook), r))
    if len(r) != len(old):
        raise RuntimeError(_messages.hook_wrong_count(hook_name(hook), len(r), len(old)))
    for i, (o, n) in enumerate(zip(old, r)):
        if n is None:
            continue
        if o is None:
            raise RuntimeError(_messages.hook_replaced_none(hook_name(hook), i))
        checked_hook_result(hook, o, n)
        shared[id(n)] = n._vc  # (a replacement may be held by the hook's owner)
    return r


def run_node_pre_hooks(hooks: Any, grads: list[Tensor | None], shared: dict[int, Any]
                       ) -> list[Tensor | None]:
    """A node's pre hooks, ``fn(grad_outputs)``, in order; each may replace the gradients."""
    for hook in list(hooks.pre):
        r = hook(tuple(grads))
        if r is not None:
            grads = list(checked_node_hook_result(hook, tuple(grads), r, shared))
    return grads


def run_node_post_hooks(hooks: Any, outs: tuple[Tensor | None, ...],
                        grads: tuple[Tensor | None, ...] | list[Tensor | None],
                        shared: dict[int, Any]) -> tuple[Tensor | None, ...]:
    """A node's post hooks, ``fn(grad_inputs, grad_outputs)``, in order; each may replace
    the gradients it hands on (``grad_inputs``)."""
    for hook in list(hooks.post):
        r = hook(tuple(outs), tuple(grads))
        if r is not None:
            outs = checked_node_hook_result(hook, tuple(outs), r, shared)
    return outs
