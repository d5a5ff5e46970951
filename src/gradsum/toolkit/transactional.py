"""Transactional backward: a backward that raises part way leaves every ``.grad`` as it was.

Outside this mode gradsum keeps PyTorch's behaviour: everything that can be checked before the
walk (a freed graph, a saved tensor modified in place, a ``gradient`` of the wrong shape) is
checked before any ``.grad`` changes, but an error raised *during* the walk (a hook that raises,
``MemoryError``, a bug in a custom ``Function``) leaves the leaves the walk already reached
updated and the others not: a half-applied gradient. Inside ``transactional()`` the toolkit
snapshots, when the walk begins, the ``.grad`` object and buffer (and version counter) of every
tensor the backward can write, and the saved tensors of every node it can free; if the backward
raises, all of it is put back (same objects, same bytes), then the error propagates. A training
loop can therefore skip a failed micro-batch and keep the window's earlier contributions, or
fix the cause and call ``backward()`` on the same graph again.

Cost: one walk of the graph and one copy of each touched ``.grad`` per backward, only inside
the mode.

Example:
    >>> import gradsum
    >>> from gradsum.toolkit import transactional
    >>> a = gradsum.ones(2, requires_grad=True)
    >>> b = gradsum.ones(2, requires_grad=True)
    >>> (a * 2 + b).sum().backward()
    >>> def boom(g):
    ...     raise ValueError("hook failed")
    >>> y = (a * 3) + (b * 5)
    >>> _ = y.grad_fn.next_functions[0][0].register_prehook(lambda g: boom(g))
    >>> with transactional():
    ...     try:
    ...         y.sum().backward()
    ...     except ValueError:
    ...         pass
    >>> a.grad.tolist(), b.grad.tolist()     # as before the failed call
    ([2.0, 2.0], [1.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from gradsum.autograd.graph import AccumulateGrad, _set_grad
from gradsum.toolkit._hub import HUB, iter_nodes, node_retains

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["take_snapshot", "restore_snapshot", "transactional", "transactional_backward"]


@contextmanager
def transactional() -> Iterator[None]:
    """Make every backward inside the block all-or-nothing for ``.grad``.

    Nested blocks are fine. Side effects of user hooks (prints, an optimizer stepped in a
    post-accumulate hook) cannot be undone.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import transactional
        >>> w = gradsum.ones(3, requires_grad=True)
        >>> with transactional():
        ...     (w * 2).sum().backward()
        >>> w.grad.tolist()
        [2.0, 2.0, 2.0]
    """
    HUB.transactional += 1
    HUB.refresh()
    try:
        yield
    finally:
        HUB.transactional -= 1
        HUB.refresh()


def transactional_backward(tensor: Tensor, *args: Any, **kwargs: Any) -> None:
    """``tensor.backward(*args, **kwargs)`` inside :func:`transactional`.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import transactional_backward
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> transactional_backward((w * w).sum())
        >>> w.grad.tolist()
        [2.0, 2.0]
    """
    with transactional():
        tensor.backward(*args, **kwargs)


class _Snapshot:
    __slots__ = ("grads", "saved", "seen", "seen_nodes")

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.seen_nodes: set[int] = set()
        # (tensor, grad object, copy of its buffer or None, its version)
        self.grads: list[tuple[Tensor, Tensor | None, Any, int]] = []
        # (node, its _saved tuple, [(saved, _tensor, _array)])
        self.saved: list[tuple[Any, bool, list[tuple[Any, Any, Any]]]] = []


    def merge(self, inner: _Snapshot) -> None:
        """Adopt what a nested backward (run from a hook) recorded, so that the outer call's
        rollback also undoes the inner call's effects on tensors outside the outer graph."""
        for entry in inner.grads:
            if id(entry[0]) not in self.seen:
                self.seen.add(id(entry[0]))
                self.grads.append(entry)
        for entry in inner.saved:
            if id(entry[0]) not in self.seen_nodes:
                self.seen_nodes.add(id(entry[0]))
                self.saved.append(entry)


def _grab(snap: _Snapshot, seen: set[int], t: Tensor) -> None:
    if id(t) in seen:
        return
    seen.add(id(t))
    g = t._grad
    if g is None:
        snap.grads.append((t, None, None, 0))
    else:
        snap.grads.append((t, g, g._array.copy(), g._vc[0]))


def take_snapshot(
    roots: Sequence[Tensor], inputs: Sequence[Tensor] | None, accumulate: bool
) -> _Snapshot:
    """Record what the coming backward may change: ``.grad`` state and saved tensors."""
    snap = _Snapshot()
    seen = snap.seen
    for n in iter_nodes(t._grad_fn for t in roots):
        if isinstance(n, AccumulateGrad):
            if accumulate:
                _grab(snap, seen, n.variable)
            continue
        for ref in node_retains(n).values():
            t = ref()
            if t is not None:
                _grab(snap, seen, t)
        saved = n._saved
        if saved:
            snap.seen_nodes.add(id(n))
            snap.saved.append((n, saved, [(s, s._tensor, s._array) for s in saved]))
    for t in roots:  # a leaf root's own sink
        if t._grad_fn is None and accumulate:
            _grab(snap, seen, t)
    if accumulate and inputs is not None:
        for t in inputs:
            _grab(snap, seen, t)
    return snap


def restore_snapshot(snap: _Snapshot) -> None:
    """Put every recorded ``.grad`` (object, contents, version) and saved tensor back."""
    for t, g, arr, ver in snap.grads:
        _set_grad(t, g)
        if g is not None:
            if g._array.flags.writeable:
                g._array[...] = arr
            g._vc[0] = ver
    for node, saved_tuple, saved in snap.saved:
        node._saved = saved_tuple  # ``None`` marks a released node (graph.Node)
        for s, tensor, array in saved:
            s._tensor = tensor
            s._array = array
