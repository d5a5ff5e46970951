"""The backward engine: the only place the graph is walked.

The walk counts dependencies first (an iterative DFS, no recursion, so a 100,000-op chain is
fine), validates every node it will run (freed saved tensors, in-place modifications) before
any ``.grad`` changes, then runs each node once, in decreasing creation order, when all the
gradients flowing into it have arrived. Gradients arriving at the same slot are summed.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * x + x          # two paths into x
    >>> y.sum().backward()
    >>> x.grad.tolist()        # 2x + 1
    [3.0, 5.0]
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import AccumulateGrad, Node, grad_accumulator

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

#: Objects with ``begin(roots, inputs, accumulate)`` and ``end(error_or_None)``, called around
#: the execution phase of every backward/grad (after validation). The toolkit's ledger and
#: transactional backward register here; empty by default.
backward_observers: list[Any] = []


def _target_of(t: Tensor) -> tuple[Node | None, int]:
    """The (node, slot) where the gradient of ``t`` arrives, or (None, 0) if none can."""
    if t._grad_fn is not None:
        return t._grad_fn, t._output_nr
    if t._requires_grad:
        return grad_accumulator(t), 0
    return None, 0


def _is_owned(g: Tensor, shared: set[int]) -> bool:
    # See graph.AccumulateGrad, note "Taking over a gradient buffer".
    a = g._array
    return id(g) not in shared and a.base is None and a.flags.writeable and a.flags.owndata


def _add(a: Tensor, b: Tensor, in_place: bool) -> Tensor:
    if in_place:
        a._array += b._array
        return a
    return a + b


def run_backward(
    roots: Sequence[Tensor],
    grad_roots: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
) -> list[Tensor | None]:
    """Run backward from ``roots`` seeded with ``grad_roots``.

    With ``accumulate`` (``backward``), gradients go into ``.grad`` of the leaves reached (only
    of ``inputs`` when given). Without it (``autograd.grad``), the gradients of ``inputs`` are
    captured and returned and no ``.grad`` changes. Returns the captured gradients.
    """
    # 1. Roots and capture targets.
    root_edges = [_target_of(t) for t in roots]
    targets: dict[tuple[int, int], int] = {}  # (id(node), slot) -> index in inputs
    target_nodes: dict[int, Node] = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            node, nr = _target_of(t)
            if node is None:
                continue
            targets.setdefault((id(node), nr), i)
            target_nodes[id(node)] = node

    # 2. Discover the graph (iterative DFS; post-order puts children before parents).
    seen: set[int] = set()
    order: list[Node] = []
    stack: list[tuple[Node, int]] = []
    for node, _ in root_edges:
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.append((node, 0))
            while stack:
                n, i = stack[-1]
                nxt = n._next
                if i < len(nxt):
                    stack[-1] = (n, i + 1)
                    child = nxt[i][0]
                    if child is not None and id(child) not in seen:
                        seen.add(id(child))
                        stack.append((child, 0))
                else:
                    stack.pop()
                    order.append(n)

    # 3. Which nodes run. Without inputs: all (sinks only when accumulating). With inputs: the
    # nodes from which a target is reachable; a target node itself runs only if it also leads
    # to another target, or it is a sink we accumulate into. Targets that do not run still
    # receive their gradient, which is captured.
    needed: set[int] | None = None
    if inputs is not None:
        reach: set[int] = set()
        needed = set()
        for n in order:
            leads = any(c is not None and id(c) in reach for c, _ in n._next)
            if leads or id(n) in target_nodes:
                reach.add(id(n))
            if leads or (accumulate and isinstance(n, AccumulateGrad) and id(n) in target_nodes):
                needed.add(id(n))

    def runs(n: Node) -> bool:
        if needed is not None:
            return id(n) in needed
        return accumulate or not isinstance(n, AccumulateGrad)

    def wanted(n: Node) -> bool:
        return needed is None or id(n) in needed or id(n) in target_nodes

    deps: dict[Node, int] = {}
    for n in order:
        if runs(n):
            for c, _ in n._next:
                if c is not None:
                    deps[c] = deps.get(c, 0) + 1

    # 4. Validate before anything is written (SEMANTICS 8: a failed backward changes nothing).
    for n in order:
        if runs(n):
            n._check_saved()

    # 5. Execute.
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)
    buffers: dict[Node, list[Tensor | None]] = {}
    shared: set[int] = set()  # ids of gradients whose buffer someone else may hold
    heap: list[tuple[int, int, Node]] = []
    for (node, nr), g in zip(root_edges, grad_roots):
        if node is None:
            continue
        shared.add(id(g))
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else _add(buf[nr], g, False)
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(heap, (-node._seq, id(node), node))

    observers = list(backward_observers)
    for obs in observers:
        obs.begin(roots, inputs, accumulate)
    failed: BaseException | None = None
    prev_mode = _state.enabled
    _state.enabled = create_graph
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = buffers.pop(node, None) or [None] * node.num_outputs
            nid = id(node)
            # Tensor hooks of the tensors this node produced, then retain_grad (always last).
            th = node._tensor_hooks
            if th:
                for nr, hooks in th.items():
                    g = grads[nr]
                    if g is None:
                        continue
                    for hook in list(hooks):
                        r = hook(g)
                        if r is not None:
                            g = r
                            shared.add(id(g))
                    grads[nr] = g
            if isinstance(node, AccumulateGrad):
                var = node.variable
                g = grads[0]
                if g is not None:
                    for hook in list(var._hooks or ()):
                        r = hook(g)
                        if r is not None:
                            g = r
                            shared.add(id(g))
                    if g._array.dtype != var._array.dtype:
                        g = g.to(var.dtype)
                if (nid, 0) in targets:
                    captured[targets[(nid, 0)]] = g
                if g is not None and runs(node):
                    node.accumulate(g, _is_owned(g, shared), create_graph)
                continue
            if node._retains:
                for nr, ref in list(node._retains.items()):
                    t = ref()
                    if t is not None and grads[nr] is not None:
                        t._accumulate_retained(grads[nr])
            if targets:
                for nr in range(node.num_outputs):
                    idx = targets.get((nid, nr))
                    if idx is not None:
                        captured[idx] = grads[nr]
                        if accumulate and grads[nr] is not None:
                            _accumulate_nonleaf(inputs[idx], grads[nr], create_graph)  # type: ignore[index]
            if not runs(node):
                continue
            if node._pre_hooks:
                for hook in list(node._pre_hooks):
                    r = hook(tuple(grads))
                    if r is not None:
                        grads = list(r)
            if all(g is None for g in grads):
                outs: Sequence[Tensor | None] = [None] * len(node._next)
            else:
                outs = _call(node, grads)
            if node._post_hooks:
                for hook in list(node._post_hooks):
                    r = hook(tuple(outs), tuple(grads))
                    if r is not None:
                        outs = list(r)
            if not retain_graph:
                node._release()
            seen_out: set[int] = set()
            for (child, cnr), g in zip(node._next, outs):
                if child is None:
                    continue
                if g is not None:
                    gid = id(g)
                    if gid in seen_out or any(g is x for x in grads):
                        shared.add(gid)
                    seen_out.add(gid)
                if wanted(child):
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child.num_outputs
                    old = buf[cnr]
                    if g is None:
                        pass
                    elif old is None:
                        buf[cnr] = g
                    else:
                        in_place = (not create_graph) and _is_owned(old, shared) and (
                            old._array.shape == g._array.shape
                        )
                        buf[cnr] = _add(old, g, in_place)
                d = deps[child] - 1
                deps[child] = d
                if d == 0 and wanted(child):
                    heapq.heappush(heap, (-child._seq, id(child), child))
    except BaseException as e:
        failed = e
        raise
    finally:
        _state.enabled = prev_mode
        for obs in reversed(observers):
            obs.end(failed)
    return captured


def _call(node: Node, grads: list[Tensor | None]) -> Sequence[Tensor | None]:
    if node.num_outputs > 1 and any(g is None for g in grads):
        grads = node._materialize(grads)  # type: ignore[attr-defined]
    out = node.backward(*grads)
    if not isinstance(out, tuple):
        out = (out,)
    return out


def _accumulate_nonleaf(t: Tensor, g: Tensor, create_graph: bool) -> None:
    # backward(inputs=[non_leaf]): the named non-leaf accumulates like a leaf would.
    if t._grad is None:
        t._grad = g if create_graph else g.detach().clone()
    elif create_graph:
        t._grad = t._grad + g
    else:
        t._grad._array += g._array
        t._grad._version[0] += 1


def make_grads(outputs: Sequence[Tensor], grads: Sequence[Any], kind: str) -> list[Tensor]:
    """Check and fill the seed gradients (implicit ones for scalar outputs)."""
    from gradsum._tensor import Tensor

    out: list[Tensor] = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o._array.size != 1:
                raise RuntimeError(_messages.implicit_scalar(tuple(o.shape)))
            if not o.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got "
                    f"{o.dtype.name}. Compute the output in a floating dtype."
                )
            out.append(Tensor._make(o._xp.ones(o._array.shape, dtype=o._array.dtype)))
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
