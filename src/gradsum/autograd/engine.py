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

from gradsum._backend import silenced
from gradsum.autograd.anomaly_mode import _anomaly, apply_checked
from gradsum.autograd.function import BackwardCFunction
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import (
    AccumulateGrad,
    GradientEdge,
    Node,
    _accumulate_grad,
    _add_to_buffer,
    _is_owned,
    _mark_shared,
    _Shared,
    _sink,
    _target_of,
)
from gradsum.autograd.graph_task import _running, _task_ids
from gradsum.autograd.hooks import run_node_post_hooks, run_node_pre_hooks, run_tensor_hooks

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

#: Objects with ``begin(roots, inputs, accumulate)`` and ``end(error_or_None)``, called around
#: the execution phase of every backward/grad (after validation). The toolkit's ledger and
#: transactional backward register here; empty by default.
backward_observers: list[Any] = []

_gc_isenabled, _gc_disable, _gc_enable = gc.isenabled, gc.disable, gc.enable
_heappush = heapq.heappush
_heappop = heapq.heappop

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
#: ``select`` of a plain backward (see _execute): nothing captured, every node runs
_PLAIN: tuple[Any, ...] = ({}, [], None, _NO_TARGETS, None, True)


def run_backward(
    roots: Sequence[Tensor],
    grad_roots: Sequence[Tensor],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
) -> list[Tensor | None]:
    """Run backward from ``roots`` seeded with ``grad_roots``: the only walk of the graph.

    With ``accumulate`` (``backward``), gradients go into ``.grad`` of the leaves reached (only
    of ``inputs`` when given). Without it (``autograd.grad``), the gradients of ``inputs`` are
    captured and returned and no ``.grad`` changes. Returns the captured gradients.

    ``loss.backward()`` (no ``inputs``, what every training step calls) takes the fast path:
    every reachable node runs, so the dependencies are counted and the nodes validated in one
    sweep (:func:`_count_all`) and :func:`_execute` skips the bookkeeping of ``inputs=``.
    """
    root = roots[0] if len(roots) == 1 and inputs is None else None
    node = root._grad_fn if root is not None and root.__class__ is not GradientEdge else None
    if node is not None and node.num_outputs == 1:
        # The fast path, ``loss.backward()``: one root with a history, every reachable node
        # runs. Count dependencies and validate in one sweep (SEMANTICS 8: a failing backward
        # writes nothing); the root runs first, with its seed, no heap to fill. (``[node]``:
        # a list display of one, as the stack of a chain's sweep, which holds one node at a
        # time, never reallocates; an appended-to list does twice per node: 2% of a chain.)
        deps = {node: 0}
        _count_all([node], deps, retain_graph)
        task = (next(_task_ids), deps, None, _NO_TARGETS, True)
        g = grad_roots[0]
        heap: list[tuple[float, int, Node]] = []
        buffers: dict[Node, list[Tensor | None]] = {}
        shared: _Shared = {id(g): g._vc}  # gradients whose buffer someone else may hold
        first, first_grads, select = node, [g], None
        tick = itertools.count().__next__
    else:
        deps, task, select, buffers, shared = _plan(roots, grad_roots, retain_graph, inputs,
                                                    accumulate)
        # Ties in the heap (the leaves' sinks share one priority) run first-ready-first: the
        # order of .grad updates and post-accumulate hooks is the same on every run.
        tick = itertools.count().__next__
        heap = []
        for node in buffers:
            if deps.get(node, 0) == 0:
                _heappush(heap, (-node._seq, tick(), node))
        first = first_grads = None

    observers = list(backward_observers) if backward_observers else None
    failed: BaseException | None = None
    # The walk runs in grad mode ``create_graph``, registered in this thread's tasks, with the
    # cyclic collector paused: the walk allocates many short-lived objects that reference
    # counting frees, and the collector would keep traversing them (and the whole heap, with
    # torch or a big model loaded), up to a fifth of a small backward (left alone if off).
    # Note "Undone on any exception": each state is read first, changed inside the ``try``
    # and put back as read (no token to lose), the tasks cut back to their depth, so an
    # exception raised at any point, a KeyboardInterrupt between two of these lines too,
    # leaves grad mode, the collector, the tasks and the observers as they were.
    prev_mode = _state.enabled
    gc_was_enabled = _gc_isenabled()
    tasks = _running.tasks
    depth = len(tasks)
    begun = 0  # the observers whose ``begin`` returned
    try:
        if observers:
            for obs in observers:
                obs.begin(roots, inputs, accumulate)
                begun += 1
        _state.enabled = create_graph
        if gc_was_enabled:
            _gc_disable()
        tasks.append(task)  # type: ignore[arg-type]
        # (note "Anomaly mode costs nothing when off" in anomaly_mode: one test per backward)
        apply = _apply if not _anomaly[0] else functools.partial(apply_checked, _apply)
        _execute_quietly(heap, buffers, deps, shared, retain_graph, create_graph, tick, apply,
                         first, first_grads, select)
    except BaseException as e:
        failed = e
        raise
    finally:
        del tasks[depth:]  # (no call before the collector's: nothing can interrupt these)
        _state.enabled = prev_mode
        if gc_was_enabled:
            _gc_enable()
        if begun:
            _end_observers(observers, begun, failed)  # type: ignore[arg-type]
    if select is None:
        return []
    targets, captured = select[0], select[1]
    if len(targets) < len(inputs):  # type: ignore[arg-type]
        for i, t in enumerate(inputs):  # type: ignore[arg-type]  # (inputs named more than
            node, nr = _target_of(t)  # once share the capture)
            if node is not None and targets.get((node, nr), i) != i:
                captured[i] = captured[targets[(node, nr)]]
    return captured


def _end_observers(observers: list[Any], begun: int, failed: BaseException | None) -> None:
    """``end(failed)`` of the first ``begun`` observers, innermost first; each is ended even
    if one before it raises (the first exception is raised after)."""
    error: BaseException | None = None
    for obs in reversed(observers[:begun]):
        try:
            obs.end(failed)
        except BaseException as e:
            if error is None:
                error = e
    if error is not None:
        raise error


def _plan(roots: Sequence[Tensor], grad_roots: Sequence[Tensor], retain_graph: bool,
          inputs: Sequence[Tensor] | None, accumulate: bool) -> tuple[Any, ...]:
    """What :func:`run_backward` runs, besides its fast path: the dependency counts of the
    nodes that will run (each validated before anything runs, SEMANTICS 8), the task entry,
    ``select`` (see :func:`_execute`), the seeds summed into input buffers, the shared set."""
    root_edges = [_target_of(t) for t in roots]
    deps: dict[Node, int] = {}
    select = None
    if inputs is None:
        stack = []
        for node, _ in root_edges:
            if node is not None and node not in deps:
                deps[node] = 0
                stack.append(node)
        _count_all(stack, deps, retain_graph)
        task = (next(_task_ids), deps, None, _NO_TARGETS, True)
    else:
        # (node, slot) -> the index of that input in ``inputs`` (the first one: an input
        # named twice gets the same gradient, copied at the end of run_backward)
        targets: dict[tuple[Node, int], int] = {}
        target_nodes: set[Node] = set()
        for i, t in enumerate(inputs):
            node, nr = _target_of(t)
            if node is not None:
                targets.setdefault((node, nr), i)
                target_nodes.add(node)
        needed = _count_needed(root_edges, deps, target_nodes, accumulate)
        if accumulate:
            # torch's backward(inputs=) calls retain_grad() on every input (after the checks
            # above, so a refused call changes nothing): a named non-leaf gets its .grad from
            # the retain hook, out of place, in this backward and in every later one.
            for t in inputs:
                if t.__class__ is not GradientEdge and t._grad_fn is not None:
                    t.retain_grad()
        captured: list[Tensor | None] = [None] * len(inputs)
        select = (targets, captured, needed, target_nodes, needed | target_nodes, accumulate)
        task = (next(_task_ids), deps, needed, target_nodes, accumulate)
    buffers: dict[Node, list[Tensor | None]] = {}
    shared: _Shared = {}  # gradients whose buffer someone else may hold (see graph._Shared)
    for (node, nr), g in zip(root_edges, grad_roots):
        if node is None:
            continue
        shared[id(g)] = g._vc
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    return deps, task, select, buffers, shared


def _count_needed(root_edges: list[tuple[Node | None, int]], deps: dict[Node, int],
                  target_nodes: set[Node], accumulate: bool) -> set[Node]:
    """Under ``inputs=``: the nodes that must run, with the dependencies among them counted
    into ``deps`` and each validated before anything runs (SEMANTICS 8).

    A node runs if a target is reachable from it; a target node that leads nowhere else
    only has its gradient captured under autograd.grad. Under backward(inputs=) every
    target node runs (torch marks the inputs' nodes needed: a non-leaf's grad_fn runs,
    with its hooks, unpacking, then freeing, its saved tensors; its sink accumulates).
    One sweep, children first: whether a node is needed is known once its children
    were seen, so its validation and its children's dependency counts follow at once."""
    reach: set[Node] = set()
    needed: set[Node] = set()
    bad: list[tuple[int, RuntimeError]] = []
    count = deps.get
    for n in _discover(root_edges):
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
    return needed


def _execute(heap: list[tuple[float, int, Node]], buffers: dict[Node, list[Tensor | None]],
             deps: dict[Node, int], shared: _Shared, retain_graph: bool, create_graph: bool,
             tick: Any, apply: Any, nxt: Node | None, nxt_grads: list[Tensor | None] | None,
             select: tuple[Any, ...] | None) -> None:
    """The execution loop of :func:`run_backward`: each node runs once, in decreasing
    sequence number, when all its gradients have arrived.

    ``select`` (under ``inputs=``; None for a plain backward): ``(targets, captured, needed,
    target_nodes, run_set, accumulate)``: only the nodes of ``run_set`` get gradients, only
    those of ``needed`` run, and the gradients of the inputs (``targets``: (node, slot) ->
    index) are captured into ``captured``. The common cases (a node with one gradient and no
    hooks, a link of a chain, a leaf's sink without hooks) are handled inline, in the same
    order and with the same effects as the general steps.
    """
    pop, push = _heappop, _heappush
    acc_cls = AccumulateGrad
    plain = select is None
    targets, captured, needed, target_nodes, run_set, accumulate = select or _PLAIN
    inline = apply is _apply  # (not under anomaly mode)
    fast = plain and inline  # (a ready leaf's sink runs at once, below)
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
            # torch's autograd.grad captures the gradient of a non-leaf input whose node must
            # run anyway (it leads to another input) before its tensor hooks, which run with
            # the node; otherwise after them
            early = None if plain or accumulate or node not in needed or (
                node not in target_nodes or node.__class__ is acc_cls) else list(grads)
            grads = run_tensor_hooks(node, hooks, grads, shared)
        if node.__class__ is acc_cls:
            g0 = grads[0]
            var = node.variable  # _sink, inlined for a leaf without hooks
            if (g0 is not None and plain and not var._hooks and hooks is None
                    and g0._array.dtype == var._array.dtype and var._requires_grad):
                _accumulate_grad(var, g0, _is_owned(g0, shared), create_graph)
            else:
                _sink(node, g0, targets, captured, needed, accumulate, create_graph, shared)
            continue
        if not plain:
            if targets and node in target_nodes:
                src = early if hooks is not None and early is not None else grads
                for nr in range(node.num_outputs):
                    idx = targets.get((node, nr))
                    if idx is not None:
                        g = captured[idx] = src[nr]
                        if g is not None:  # (handed to the caller, and maybe on as well)
                            shared[id(g)] = g._vc
            if node not in needed:
                continue  # (with no input reachable, e.g. a view made in no_grad mode)
        if hooks is None and len(grads) == 1 and grads[0] is not None and inline:
            # The common node: one gradient in, no hooks (_apply, inlined; a user Function's
            # node takes that gradient the same way).
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
                    and one not in buffers and not (heap and -heap[0][0] >= one._seq)
                    and (plain or one in run_set)):
                # The edge loop below for a link of a chain: its input's node gets its only
                # gradient, is ready, and comes before everything in the heap.
                deps[one] = 0
                nxt, nxt_grads = one, [o0]
                continue
        else:
            outs = apply(node, hooks, grads, shared, retain_graph, run_set)
        ready: Node | None = None
        ready_grads: list[Tensor | None] | None = None  # ``ready``'s, when not in buffers
        first = None  # the tick of the first sibling pushed to the heap in this loop
        for (child, cnr), g in zip(node._next, outs):
            if child is None:
                continue
            d = deps[child] - 1
            deps[child] = d
            if not plain and child not in run_set:
                continue  # (under inputs=: leads to no input)
            if g is not None:
                if child.num_outputs == 1 and child not in buffers:
                    if d == 0:
                        if fast and child.__class__ is acc_cls and child._hooks is None:
                            # Note "A ready sink runs at once": a leaf's sink has the
                            # highest sequence number, so the heap would hand it out next
                            # (ties in the order they became ready, which is edge order).
                            var = child.variable
                            if (not var._hooks and g._array.dtype == var._array.dtype
                                    and var._requires_grad):
                                _accumulate_grad(var, g, _is_owned(g, shared), create_graph)
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


#: ``_execute`` with NumPy's floating-point warnings off: torch's kernels raise none (x / 0,
#: log(0), inf - inf in a backward rule give inf or nan silently)
_execute_quietly = silenced(_execute)


def _apply(node: Node, hooks: Any, grads: list[Tensor | None], shared: _Shared,
           retain_graph: bool, run_set: set[Node] | None = None) -> tuple[Tensor | None, ...]:
    """Run one node's backward with its pre/post hooks; free its saved tensors.

    ``run_set``: under ``inputs=``, the nodes whose gradients are needed; post hooks see None
    for the other edges (torch does not compute them)."""
    if hooks is not None and hooks.pre:
        grads = run_node_pre_hooks(hooks, grads, shared)
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
        if run_set is not None:
            outs = tuple(o if c is not None and c in run_set else None
                         for o, (c, _) in zip(outs, node._next))
        outs = run_node_post_hooks(hooks, outs, grads, shared)
    if not retain_graph and node._saved:
        node._release()
    _mark_shared(node._user_backward or hooks is not None, outs, grads, shared)
    return outs
