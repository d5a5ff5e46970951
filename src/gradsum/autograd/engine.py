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

import functools
import gc
import heapq
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradsum._backend import silenced, xp
from gradsum._blas import owns_buffer as _owns_buffer
from gradsum.autograd import _messages
from gradsum.autograd.anomaly_mode import _anomaly, apply_checked
from gradsum.autograd.function import BackwardCFunction
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import (
    AccumulateGrad,
    GradientEdge,
    Node,
    accumulate_observers,
    grad_accumulator,
    run_post_acc_hooks,
)

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

#: Objects with ``begin(roots, inputs, accumulate)`` and ``end(error_or_None)``, called around
#: the execution phase of every backward/grad (after validation). The toolkit's ledger and
#: transactional backward register here; empty by default.
backward_observers: list[Any] = []

_gc_isenabled, _gc_disable, _gc_enable = gc.isenabled, gc.disable, gc.enable
_heappush = heapq.heappush
_heappop = heapq.heappop

#: the backwards running in this process, innermost last: ``(task id, deps, needed,
#: target_nodes, accumulate)``; read by :func:`current_graph_task_id` and
#: :func:`will_engine_execute_node` (multi-grad hooks). One append and one pop per backward.
_tasks: list[tuple[int, dict[Node, int], set[Node] | None, set[Node], bool]] = []
_task_ids = itertools.count()


def _target_of(t: Tensor) -> tuple[Node | None, int]:
    """The (node, slot) where the gradient of ``t`` arrives, or (None, 0) if none can."""
    if t.__class__ is GradientEdge:  # (autograd.graph.get_gradient_edge)
        return t.node, t.output_nr
    if t._grad_fn is not None:
        return t._grad_fn, t._output_nr
    if t._requires_grad:
        if t._nograd_view_version is not None:  # (a view made in no_grad mode: no sink)
            t._check_nograd_view()  # (torch refuses one whose base changed since)
            return None, 0
        return grad_accumulator(t), 0
    return None, 0


#: The gradients of a backward whose buffer someone else may hold (passed through a node
#: unchanged, given to several inputs, returned by a hook, a seed): ``id(t) -> t._vc``. The
#: version counter (a tensor's for its lifetime, kept alive by this dict) tells ``t`` from a
#: later tensor that reuses the id of a dead one (which would look shared and be copied).
_Shared = dict[int, Any]


def _is_owned(g: Tensor, shared: _Shared) -> bool:
    # See graph.AccumulateGrad, note "Taking over a gradient buffer": a gradient may be
    # taken over (or added into in place) only if no one else can hold its buffer.
    if shared.get(id(g)) is g._vc:
        return False
    a = g._array
    if a.base is not None:  # (a huge-page-aligned product is a view of its own buffer)
        return a.flags.writeable and _owns_buffer(a)
    flags = a.flags
    return flags.writeable and flags.owndata


def _discover(root_edges: list[tuple[Node | None, int]]) -> list[Node]:
    """All nodes reachable from the roots in post-order (children before parents)."""
    seen: set[Node] = set()
    add = seen.add
    order: list[Node] = []
    stack: list[tuple[Node, Any]] = []
    push, pop = stack.append, stack.pop
    for node, _ in root_edges:
        if node is None or node in seen:
            continue
        add(node)
        push((node, iter(node._next)))
        while stack:
            n, edges = stack[-1]
            for child, _ in edges:  # (resumes where this node's last visit left off)
                if child is not None and child not in seen:
                    add(child)
                    push((child, iter(child._next)))
                    break
            else:
                pop()
                order.append(n)
    return order


def _count_all(stack: list[Node], deps: dict[Node, int], retain_graph: bool) -> None:
    """Count the dependencies of every node reachable from ``stack`` (whose nodes are already
    in ``deps``) and validate each (freed or modified saved tensors) in the same sweep, before
    anything runs (SEMANTICS 8: a failing backward writes nothing)."""
    bad: list[tuple[int, RuntimeError]] = []
    pop, push, count = stack.pop, stack.append, deps.get
    while stack:
        n = pop()
        saved = n._saved
        if saved:
            for s in saved:  # Node._check_saved, inlined
                ver = s._vc
                if ver is not None and (ver[0] != s._version_at_save or (
                        s._output_nr < 0 and s._tensor._grad_fn is None)):
                    _note_failure(bad, n)  # (modified, or a non-leaf detached in place)
                    break
        elif saved is None:
            _note_failure(bad, n)
        for child, _ in n._next:
            if child is not None:
                c = count(child)
                if c is None:
                    deps[child] = 1
                    push(child)
                else:
                    deps[child] = c + 1
    if bad:
        seq, err = max(bad, key=lambda b: b[0])
        if not retain_graph:  # (torch ran, and freed, every node it runs before that one)
            for n in deps:
                if n._seq > seq and n._saved:
                    n._release()
        raise err


def _note_failure(bad: list[tuple[int, RuntimeError]], n: Node) -> None:
    """Note "Which error a backward raises": torch runs the nodes in decreasing sequence
    number and raises at the first that cannot unpack a saved tensor (modified in place, or
    freed), having run and freed the nodes before it; gradsum checks every node before
    running any (SEMANTICS 8), so it collects the failures of the sweep and raises the one of
    the node torch would run first."""
    try:
        n._check_saved()
    except RuntimeError as e:
        bad.append((n._seq, e))


_NO_TARGETS: frozenset[Node] = frozenset()


def backward_plain(root: Tensor, seed: Tensor, retain_graph: bool) -> None:
    """``run_backward([root], [seed], retain_graph, False)`` for the call every training step
    makes (``loss.backward()``: one non-leaf root, nothing captured, no graph recorded),
    without the general path's bookkeeping; the same checks, order and effects. With an
    engine observer (DDP, the toolkit's ledger) or anomaly mode on, it takes the general path.
    """
    if backward_observers or _anomaly[0]:
        run_backward([root], [seed], retain_graph, False)
        return
    node = root._grad_fn
    deps = {node: 0}
    _count_all([node], deps, retain_graph)
    nr = root._output_nr
    if nr == 0 and node.num_outputs == 1:
        buffers: dict[Node, list[Tensor | None]] = {}
        first: list[Tensor | None] | None = [seed]
    else:
        buffers = {node: [None] * node.num_outputs}
        buffers[node][nr] = seed
        first = None
    opened = _open_walk((next(_task_ids), deps, None, _NO_TARGETS, True), False)
    try:
        _run_all_quietly([], buffers, deps, {id(seed): seed._vc}, retain_graph, False, True,
                         itertools.count().__next__, node, first)
    finally:
        _close_walk(opened)


def _open_walk(task: tuple[Any, ...], create_graph: bool) -> tuple[bool, bool]:
    """Enter the execution of a backward: grad mode set to ``create_graph``, the cyclic
    collector paused, ``task`` registered in ``_tasks``; returns what :func:`_close_walk`
    restores.

    The walk allocates many short-lived objects that reference counting frees; Python's
    cyclic collector would otherwise keep traversing them (and the whole heap, with torch or
    a big model loaded), which costs up to a fifth of a small backward. Paused for the walk
    only (and left alone if the caller had disabled it)."""
    prev_mode = _state.enabled
    _state.enabled = create_graph
    gc_was_enabled = _gc_isenabled()
    if gc_was_enabled:
        _gc_disable()
    _tasks.append(task)  # type: ignore[arg-type]
    return prev_mode, gc_was_enabled


def _close_walk(opened: tuple[bool, bool]) -> None:
    _tasks.pop()
    prev_mode, gc_was_enabled = opened
    if gc_was_enabled:
        _gc_enable()
    _state.enabled = prev_mode


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
    root_edges = [_target_of(t) for t in roots]
    deps: dict[Node, int] = {}
    # (node, slot) -> the index of that input in ``inputs`` (the first one: an input named
    # twice gets the same gradient, copied at the end of run_backward)
    targets: dict[tuple[Node, int], int] = {}
    target_nodes: set[Node] = set()
    needed: set[Node] | None = None

    if inputs is None:
        # Fast path (plain backward): every reachable node runs. Count dependencies and
        # validate in one sweep (SEMANTICS 8: a failing backward writes nothing).
        stack = []
        for node, _ in root_edges:
            if node is not None and node not in deps:
                deps[node] = 0
                stack.append(node)
        _count_all(stack, deps, retain_graph)
    else:
        for i, t in enumerate(inputs):
            node, nr = _target_of(t)
            if node is not None:
                targets.setdefault((node, nr), i)
                target_nodes.add(node)
        order = _discover(root_edges)
        # A node runs if a target is reachable from it; a target node that leads nowhere else
        # only has its gradient captured under autograd.grad. Under backward(inputs=) every
        # target node runs (torch marks the inputs' nodes needed: a non-leaf's grad_fn runs,
        # with its hooks, unpacking, then freeing, its saved tensors; its sink accumulates).
        # One sweep, children first: whether a node is needed is known once its children
        # were seen, so its validation and its children's dependency counts follow at once.
        reach: set[Node] = set()
        needed = set()
        bad: list[tuple[int, RuntimeError]] = []
        count = deps.get
        for n in order:
            nxt = n._next
            leads = False
            for c, _ in nxt:
                if c in reach:  # (None never is)
                    leads = True
                    break
            if leads or n in target_nodes:
                reach.add(n)
            if leads or (accumulate and n in target_nodes):
                needed.add(n)
                saved = n._saved
                if saved:
                    for s in saved:  # Node._check_saved, inlined (see _count_all)
                        ver = s._vc
                        if ver is not None and (ver[0] != s._version_at_save or (
                                s._output_nr < 0 and s._tensor._grad_fn is None)):
                            _note_failure(bad, n)
                            break
                elif saved is None:
                    _note_failure(bad, n)
                for c, _ in nxt:
                    if c is not None:
                        deps[c] = count(c, 0) + 1
        if bad:
            raise max(bad, key=lambda b: b[0])[1]
        if accumulate:
            # torch's backward(inputs=) calls retain_grad() on every input (after the checks
            # above, so a refused call changes nothing): a named non-leaf gets its .grad from
            # the retain hook, out of place, in this backward and in every later one.
            for t in inputs:
                if t.__class__ is not GradientEdge and t._grad_fn is not None:
                    t.retain_grad()

    def wanted(n: Node) -> bool:
        return needed is None or n in needed or n in target_nodes

    # the nodes that get gradients under ``inputs=`` (``wanted``, as a set for the loop)
    run_set = None if needed is None else needed | target_nodes

    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)
    buffers: dict[Node, list[Tensor | None]] = {}
    shared: _Shared = {}  # gradients whose buffer someone else may hold (see _Shared)
    heap: list[tuple[int, int, Node]] = []
    for (node, nr), g in zip(root_edges, grad_roots):
        if node is None:
            continue
        shared[id(g)] = g._vc
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    # Ties in the heap (the leaves' sinks share one priority) run first-ready-first: the
    # order of .grad updates and post-accumulate hooks is the same on every run.
    tick = itertools.count().__next__
    for node in buffers:
        if deps.get(node, 0) == 0:
            _heappush(heap, (-node._seq, tick(), node))

    observers = list(backward_observers)
    for obs in observers:
        obs.begin(roots, inputs, accumulate)
    failed: BaseException | None = None
    opened = _open_walk((next(_task_ids), deps, needed, target_nodes, accumulate),
                        create_graph)
    # torch's kernels raise no floating-point warnings (x / 0, log(0), inf - inf in a
    # backward rule give inf or nan silently); NumPy's are silenced for the walk only.
    fp_state = xp.errstate(divide="ignore", invalid="ignore", over="ignore")
    fp_state.__enter__()
    # (note "Anomaly mode costs nothing when off" in anomaly_mode: one test per backward)
    apply = _apply if not _anomaly[0] else functools.partial(apply_checked, _apply)
    try:
        if needed is None and not targets and apply is _apply:
            _run_all(heap, buffers, deps, shared, retain_graph, create_graph, accumulate, tick)
        while heap:
            node = _heappop(heap)[2]
            grads = buffers.pop(node, None) or [None] * node.num_outputs
            hooks = node._hooks
            early = None
            if hooks is not None:
                if (not accumulate and needed is not None and node in needed
                        and node in target_nodes and node.__class__ is not AccumulateGrad):
                    # torch's autograd.grad captures the gradient of a non-leaf input whose
                    # node must run anyway (it leads to another input) before its tensor
                    # hooks, which run with the node; otherwise after them
                    early = list(grads)
                grads = _run_tensor_hooks(node, hooks, grads, shared)
            if node.__class__ is AccumulateGrad:
                _sink(node, grads[0], targets, captured, needed, accumulate, create_graph,
                      shared)
                continue
            if targets and node in target_nodes:
                src = grads if early is None else early
                for nr in range(node.num_outputs):
                    idx = targets.get((node, nr))
                    if idx is not None:
                        g = captured[idx] = src[nr]
                        if g is not None:  # (handed to the caller, and maybe on as well)
                            shared[id(g)] = g._vc
            if needed is not None and node not in needed:
                continue  # (with no input reachable, e.g. a view made in no_grad mode)
            g0 = grads[0] if len(grads) == 1 else None
            if g0 is not None and hooks is None and apply is _apply:
                # _apply, inlined for the common node: one gradient in, no hooks (a user
                # Function's node takes that gradient the same way)
                outs = node.backward(g0)
                if outs.__class__ is not tuple:
                    outs = (outs,)
                if not retain_graph and node._saved:
                    node._release()
                _mark_shared(node._user_backward, outs, grads, shared)
            else:
                outs = apply(node, hooks, grads, shared, retain_graph,
                             wanted if needed is not None else None)
            for (child, cnr), g in zip(node._next, outs):
                if child is None:
                    continue
                want = run_set is None or child in run_set
                if g is not None and want:
                    if child.num_outputs == 1 and child not in buffers:
                        buffers[child] = [g]  # (_add_to_buffer's first case)
                    else:
                        _add_to_buffer(buffers, child, cnr, g, create_graph, shared)
                d = deps[child] - 1
                deps[child] = d
                if d == 0 and want:
                    _heappush(heap, (-child._seq, tick(), child))
    except BaseException as e:
        failed = e
        raise
    finally:
        fp_state.__exit__(None, None, None)
        _close_walk(opened)
        for obs in reversed(observers):
            obs.end(failed)
    if inputs is not None and len(targets) < len(inputs):
        for i, t in enumerate(inputs):  # inputs named more than once share the capture
            node, nr = _target_of(t)
            if node is not None and targets.get((node, nr), i) != i:
                captured[i] = captured[targets[(node, nr)]]
    return captured


def current_graph_task_id() -> int:
    """An id of the innermost backward running now, -1 outside backward (torch's
    ``torch._C._current_graph_task_id``)."""
    return _tasks[-1][0] if _tasks else -1


def will_engine_execute_node(node: Node) -> bool:
    """Whether the innermost running backward executes ``node`` (reaches it and, under
    ``inputs=``, needs it), as torch's ``torch._C._will_engine_execute_node``."""
    if not _tasks:
        raise RuntimeError(_messages.hook_outside_backward())
    _, deps, needed, target_nodes, accumulate = _tasks[-1]
    if not accumulate and node.__class__ is AccumulateGrad:
        raise RuntimeError(_messages.will_execute_leaf())
    if needed is None:
        return node in deps
    return node in needed or node in target_nodes


def _run_all(heap: list[tuple[int, int, Node]], buffers: dict[Node, list[Tensor | None]],
             deps: dict[Node, int], shared: _Shared, retain_graph: bool, create_graph: bool,
             accumulate: bool, tick: Any, nxt: Node | None = None,
             nxt_grads: list[Tensor | None] | None = None) -> None:
    """The execution loop of a plain backward (every node runs, nothing is captured).

    Same steps as the general loop in :func:`run_backward`, specialised because this is the
    path every training step takes. ``nxt``/``nxt_grads``: a node to run first (with its
    gradients, else from ``buffers``), ahead of the heap.
    """
    pop, push = _heappop, _heappush
    acc_cls = AccumulateGrad
    # ``nxt``: a ready node known to come before everything in the heap (the next to run),
    # kept out of the heap; in a chain every node hands over to its input this way, with its
    # gradients in ``nxt_grads`` when they never went through ``buffers`` (a node with one
    # output whose only gradient came from the node just run).
    while True:
        if nxt is not None:
            node, nxt = nxt, None
            if nxt_grads is not None:
                grads, nxt_grads = nxt_grads, None
            else:
                grads = buffers.pop(node, None) or [None] * node.num_outputs
        elif heap:
            node = pop(heap)[2]
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node.num_outputs
        else:
            break
        hooks = node._hooks
        if hooks is not None:
            grads = _run_tensor_hooks(node, hooks, grads, shared)
        if node.__class__ is acc_cls:
            g0 = grads[0]
            var = node.variable  # _sink, inlined for a leaf without hooks
            if (g0 is not None and accumulate and not var._hooks and hooks is None
                    and g0._array.dtype == var._array.dtype and var._requires_grad):
                node.accumulate(g0, _is_owned(g0, shared), create_graph)
            else:
                _sink(node, g0, {}, [], None, accumulate, create_graph, shared)
            continue
        if hooks is None and len(grads) == 1 and grads[0] is not None:
            # The common node: one gradient in, no hooks (inlined _apply).
            g0 = grads[0]
            outs = node.backward(g0)
            if outs.__class__ is not tuple:
                outs = (outs,)
            if not retain_graph:
                saved = node._saved
                if saved:  # Node._release, inlined
                    node._saved = None
                    for s in saved:
                        s._tensor = None
                        s._array = None
            n_out = len(outs)
            one = None  # the input edge's node, when only one edge leads somewhere
            if n_out == 1:
                o0 = outs[0]
                if o0 is g0 and node._user_backward:
                    shared[id(g0)] = g0._vc
                one = node._next[0][0]
            elif n_out == 2:  # _mark_shared, inlined
                o0, o1 = outs
                if o0 is not None and (o0 is o1 or (o0 is g0 and node._user_backward)):
                    shared[id(o0)] = o0._vc
                if o1 is not None and o1 is g0 and node._user_backward:
                    shared[id(o1)] = o1._vc
                if node._next[1][0] is None:  # (x * w with a constant w)
                    one = node._next[0][0]
            else:
                _mark_shared(node._user_backward, outs, grads, shared)
            if (one is not None and o0 is not None and one.num_outputs == 1
                    and deps[one] == 1 and one.__class__ is not acc_cls
                    and one not in buffers and not (heap and -heap[0][0] >= one._seq)):
                # The edge loop below for a link of a chain: its input's node gets its only
                # gradient, is ready, and comes before everything in the heap.
                deps[one] = 0
                nxt, nxt_grads = one, [o0]
                continue
        else:
            outs = _apply(node, hooks, grads, shared, retain_graph)
        ready: Node | None = None
        ready_grads: list[Tensor | None] | None = None  # ``ready``'s, when not in buffers
        first = None  # the tick of the first sibling pushed to the heap in this loop
        for (child, cnr), g in zip(node._next, outs):
            if child is None:
                continue
            d = deps[child] - 1
            deps[child] = d
            if g is not None:
                if child.num_outputs == 1 and child not in buffers:
                    if d == 0:
                        if child.__class__ is acc_cls and child._hooks is None:
                            # Note "A ready sink runs at once": a leaf's sink has the
                            # highest sequence number, so the heap would hand it out next
                            # (ties in the order they became ready, which is edge order).
                            var = child.variable
                            if (not var._hooks and g._array.dtype == var._array.dtype
                                    and var._requires_grad and accumulate):
                                owned = _is_owned(g, shared)
                                if (owned and var._grad is None and not create_graph
                                        and g._grad_fn is None and not var._post_acc_hooks
                                        and not accumulate_observers):
                                    var._grad = g  # (AccumulateGrad.accumulate's first case)
                                else:
                                    child.accumulate(g, owned, create_graph)
                                continue
                        if ready is None:  # its only gradient: hand it over directly
                            ready, ready_grads = child, [g]
                            continue
                    buffers[child] = [g]
                else:
                    _add_to_buffer(buffers, child, cnr, g, create_graph, shared)
            if d == 0:
                if ready is None:
                    ready = child
                else:
                    t = tick()
                    if first is None:
                        first = t
                    push(heap, (-child._seq, t, child))
        if ready is not None:
            if heap and -heap[0][0] >= ready._seq:
                # (ties run first ready, first run: ``ready`` came before the siblings pushed
                # in this loop, so it takes a tick just ahead of the first of them)
                if ready_grads is not None:
                    buffers[ready] = ready_grads
                push(heap, (-ready._seq, tick() if first is None else first - 0.5, ready))
            else:
                nxt, nxt_grads = ready, ready_grads


#: ``_run_all`` with NumPy's floating-point warnings off (see run_backward)
_run_all_quietly = silenced(_run_all)


def _apply(node: Node, hooks: Any, grads: list[Tensor | None], shared: _Shared,
           retain_graph: bool, wanted: Any = None) -> tuple[Tensor | None, ...]:
    """Run one node's backward with its pre/post hooks; free its saved tensors.

    ``wanted(child)``: under ``inputs=``, whether a gradient for that edge is needed; post
    hooks see None for the others (torch does not compute them)."""
    if hooks is not None and hooks.pre:
        for hook in list(hooks.pre):
            r = hook(tuple(grads))
            if r is not None:
                grads = list(_checked_node_hook_result(hook, tuple(grads), r, shared))
    if isinstance(node, BackwardCFunction):
        # torch runs a user Function's backward even when no gradient arrived (it
        # materializes zeros itself, see BackwardCFunction.backward)
        outs = node.backward(*grads)
    elif len(grads) == 1:
        g0 = grads[0]
        outs = node.backward(g0) if g0 is not None else (None,) * len(node._next)
    elif all(g is None for g in grads):
        outs = (None,) * len(node._next)
    elif any(g is None for g in grads):  # (post hooks still see the None entries, as torch)
        outs = node.backward(*node._materialize(grads))  # type: ignore[attr-defined]
    else:
        outs = node.backward(*grads)
    if outs.__class__ is not tuple:
        outs = (outs,)
    if hooks is not None and hooks.post:
        if wanted is not None:
            outs = tuple(o if c is not None and wanted(c) else None
                         for o, (c, _) in zip(outs, node._next))
        for hook in list(hooks.post):
            r = hook(tuple(outs), tuple(grads))
            if r is not None:
                outs = _checked_node_hook_result(hook, tuple(outs), r, shared)
    if not retain_graph and node._saved:
        node._release()
    _mark_shared(node._user_backward or hooks is not None, outs, grads, shared)
    return outs


def _mark_shared(user: bool, outs: tuple[Tensor | None, ...], grads: list[Tensor | None],
                 shared: _Shared) -> None:
    """A gradient handed to several inputs, or passed through unchanged where user code saw
    it (``user``: a Function's backward, :attr:`Node._user_backward`, or the node's hooks),
    has a shared buffer: record it so that nobody takes it over or adds into it in place."""
    if not user:
        grads = []  # (a built-in pass-through: the gradient stays as owned as it came)
    n = len(outs)
    if n == 1 or n == 2:  # (the same marks as the loop below, without its set)
        o0 = outs[0]
        if o0 is not None:
            for x in grads:
                if o0 is x:
                    shared[id(o0)] = o0._vc
                    break
        if n == 2:
            o1 = outs[1]
            if o1 is not None:
                if o1 is o0:
                    shared[id(o1)] = o1._vc
                else:
                    for x in grads:
                        if o1 is x:
                            shared[id(o1)] = o1._vc
                            break
        return
    seen_ids: set[int] = set()
    for o in outs:
        if o is not None:
            if id(o) in seen_ids:
                shared[id(o)] = o._vc
            else:
                for x in grads:
                    if o is x:
                        shared[id(o)] = o._vc
            seen_ids.add(id(o))


def _add_to_buffer(buffers: dict[Node, list[Tensor | None]], child: Node, cnr: int,
                   g: Tensor, create_graph: bool, shared: _Shared) -> None:
    """Sum ``g`` into the input buffer of ``child`` (in place only into an owned buffer)."""
    buf = buffers.get(child)
    if buf is None:
        buf = buffers[child] = [None] * child.num_outputs
    old = buf[cnr]
    if old is None:
        buf[cnr] = g
    elif create_graph:
        if old._array.shape != g._array.shape and child._hooks is not None:
            old, g = _changed_shape_pair(child, cnr, old, g)
        buf[cnr] = old + g
    elif _is_owned(old, shared) and old._array.shape == g._array.shape:
        old._array += g._array
    elif (_is_owned(g, shared) and old._array.shape == g._array.shape
          and old._array.dtype == g._array.dtype):
        g._array += old._array  # (addition commutes: the same bits as old + g)
        buf[cnr] = g
    else:
        if old._array.shape != g._array.shape and child._hooks is not None:
            old, g = _changed_shape_pair(child, cnr, old, g)
        buf[cnr] = old + g


def _run_tensor_hooks(node: Node, hooks: Any, grads: list[Tensor | None], shared: _Shared
                      ) -> list[Tensor | None]:
    """Hooks of the tensors this node produced, then retain_grad (always last, as torch)."""
    if hooks.shapes:
        _check_changed_shapes(node, hooks.shapes, grads)
    for nr, fns in hooks.tensor.items():
        g = grads[nr]  # (None too: torch calls the hooks of a running node with None)
        for fn in list(fns):
            r = fn(g)
            if r is not None:
                g = _checked_hook_result(fn, g, r)
                shared[id(g)] = g._vc
        grads[nr] = g
    for nr, ref in list(hooks.retains.items()):
        t = ref()
        if t is not None and grads[nr] is not None:
            t._accumulate_retained(grads[nr])
    return grads


def _check_changed_shapes(node: Node, shapes: dict[int, tuple[int, ...]],
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


def _changed_shape_pair(child: Node, cnr: int, old: Tensor, g: Tensor
                        ) -> tuple[Tensor, Tensor]:
    """Two gradients of different shapes for an output whose tensor changed shape in place
    under no_grad: each is checked (and summed back) on its own before they add up, as
    torch validates every edge's gradient before its input buffer sums them."""
    shapes = child._hooks.shapes  # type: ignore[union-attr]
    if cnr not in shapes:
        return old, g
    want = {0: shapes[cnr]}
    a, b = [old], [g]
    _check_changed_shapes(child, want, a)
    _check_changed_shapes(child, want, b)
    return a[0], b[0]  # type: ignore[return-value]


def _into_changed_leaf(var: Tensor, g: Tensor) -> Tensor:
    """The gradient for a leaf whose shape changed in place under no_grad since its sink was
    made: torch copies it into a new ``.grad`` of the leaf's shape, or adds it into the
    existing ``.grad`` in place, broadcasting either way (and refusing what does not)."""
    old = var._grad
    want = var._array.shape if old is None else old._array.shape
    try:
        shape = xp.broadcast_shapes(want, g._array.shape)
    except ValueError:
        shape = None
    if shape != want:
        from gradsum.ops._core import broadcast_error

        raise broadcast_error(var if old is None else old, g)
    if old is not None:
        return g
    return g.expand(*want).clone()


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def _checked_hook_result(hook: Any, g: Tensor | None, r: Any) -> Tensor:
    """A tensor hook may replace the gradient, but not with another size, dtype or a
    non-tensor (torch's checks and exception types)."""
    from gradsum._tensor import Tensor

    if g is None:
        raise RuntimeError(_messages.hook_replaced_none(_hook_name(hook), 0))
    if not isinstance(r, Tensor):
        raise TypeError(_messages.hook_not_tensor(_hook_name(hook), r))
    if r._array.shape != g._array.shape:
        raise RuntimeError(
            _messages.hook_changed_size(_hook_name(hook), tuple(g.shape), tuple(r.shape))
        )
    if r._array.dtype != g._array.dtype:
        raise RuntimeError(
            _messages.hook_changed_type(_hook_name(hook), g.dtype.name, r.dtype.name)
        )
    return r


def _checked_node_hook_result(hook: Any, old: tuple[Tensor | None, ...], r: Any,
                              shared: _Shared) -> tuple[Tensor | None, ...]:
    """What a node pre/post hook returned, checked like torch: a tuple of the same length,
    each entry None (drop that gradient) or a tensor in place of one of the same size."""
    if r.__class__ is not tuple:
        raise TypeError(_messages.hook_not_tuple(_hook_name(hook), r))
    if len(r) != len(old):
        raise RuntimeError(_messages.hook_wrong_count(_hook_name(hook), len(r), len(old)))
    for i, (o, n) in enumerate(zip(old, r)):
        if n is None:
            continue
        if o is None:
            raise RuntimeError(_messages.hook_replaced_none(_hook_name(hook), i))
        _checked_hook_result(hook, o, n)
        shared[id(n)] = n._vc  # (a replacement may be held by the hook's owner)
    return r


def _sink(node: AccumulateGrad, g: Tensor | None, targets: dict[tuple[Node, int], int],
          captured: list[Tensor | None], needed: set[Node] | None, accumulate: bool,
          create_graph: bool, shared: _Shared) -> None:
    """A leaf's gradient arrives: leaf hooks, then capture (grad) and/or accumulate with the
    sink's own pre/post hooks. As in torch, the hooks run with None when the gradient is
    None (the node runs all the same)."""
    var = node.variable
    hooks = var._hooks
    if hooks:
        for hook in list(hooks):
            r = hook(g)
            if r is not None:
                g = _checked_hook_result(hook, g, r)
                shared[id(g)] = g._vc
    if g is not None and g._array.dtype != var._array.dtype:
        g = g.to(var.dtype)
    if targets:
        idx = targets.get((node, 0))
        if idx is not None:
            captured[idx] = g
    if not (node in needed if needed is not None else accumulate):
        return  # (only captured: autograd.grad runs no sink)
    nh = node._hooks
    if nh is not None and nh.pre:
        for hook in list(nh.pre):
            r = hook((g,))
            if r is not None:
                g = _checked_node_hook_result(hook, (g,), r, shared)[0]
    if g is not None and var._requires_grad:
        if nh is not None and nh.shapes and g._array.shape != var._array.shape:
            g = _into_changed_leaf(var, g)
        node.accumulate(g, _is_owned(g, shared), create_graph)
    elif g is not None and var._grad_fn is not None:
        # torch's AccumulateGrad refuses a leaf that an in-place op gave a history since
        # (after detach_() or requires_grad_(False)); its .grad stays as it was
        raise RuntimeError(_messages.leaf_moved_into_interior(var, var._grad_fn.name()))
    elif var._post_acc_hooks:  # (no gradient, or detach_() after the graph was built:
        run_post_acc_hooks(var)  # torch's sink skips the update, not the hooks)
    if nh is not None and nh.post:
        for hook in list(nh.post):
            r = hook((), (g,))
            if r is not None:
                _checked_node_hook_result(hook, (), r, shared)


def implicit_seed(o: Tensor) -> Tensor:
    """The gradient ``backward()`` starts from for a scalar output ``o``: a one of its dtype."""
    seed = xp.empty(o._array.shape, dtype=o._array.dtype)
    seed.fill(1)
    return o._make(seed)


def make_grads(outputs: Sequence[Tensor], grads: Sequence[Any], kind: str) -> list[Tensor]:
    """Check and fill the seed gradients (implicit ones for scalar outputs).

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
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got "
                    f"{o.dtype.name}. Compute the output in a floating dtype."
                )
            out.append(implicit_seed(o))
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
