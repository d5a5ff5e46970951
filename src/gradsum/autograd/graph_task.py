"""The backwards running in each thread (torch's "graph task"): which one is innermost, what
it will execute. The engine pushes a task as its walk starts and cuts the stack back when it
ends; multi-grad hooks, checkpointing and the toolkit read it.

Example:
    >>> import gradsum
    >>> from gradsum.autograd import graph_task
    >>> x = gradsum.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> seen = []
    >>> _ = y.register_hook(lambda g: seen.append(graph_task.running_depth()))
    >>> y.sum().backward()
    >>> seen, graph_task.running_depth()
    ([1], 0)
"""

from __future__ import annotations

import itertools
import threading

from gradsum.autograd import _messages
from gradsum.autograd.graph import AccumulateGrad, Node

#: ``(task id, deps, needed, target_nodes, accumulate)``: ``needed`` is None for a plain
#: backward (every reachable node runs)
_Task = tuple[int, dict[Node, int], "set[Node] | None", "set[Node]", bool]


class _Running(threading.local):
    """The backwards running in this thread, innermost last: ``(task id, deps, needed,
    target_nodes, accumulate)``; read by :func:`current_graph_task_id`,
    :func:`will_engine_execute_node` (multi-grad hooks) and :func:`current_task`. Per
    thread, as torch's current graph task: backwards in two threads are two stacks."""

    def __init__(self) -> None:
        self.tasks: list[_Task] = []


_running = _Running()
#: the ids of graph tasks, in the order their backwards start
_task_ids = itertools.count()


def current_task() -> _Task | None:
    """The innermost backward running in this thread, or None."""
    tasks = _running.tasks
    return tasks[-1] if tasks else None


def running_depth() -> int:
    """How many backwards are running in this thread (nested ones from hooks included)."""
    return len(_running.tasks)



def current_graph_task_id() -> int:
    """An id of the innermost backward running now, -1 outside backward (torch's
    ``torch._C._current_graph_task_id``)."""
    tasks = _running.tasks
    return tasks[-1][0] if tasks else -1


def will_engine_execute_node(node: Node) -> bool:
    """Whether the innermost running backward executes ``node`` (reaches it and, under
    ``inputs=``, needs it), as torch's ``torch._C._will_engine_execute_node``."""
    task = current_task()
    if task is None:
        raise RuntimeError(_messages.hook_outside_backward())
    _, deps, needed, target_nodes, accumulate = task
    if not accumulate and node.__class__ is AccumulateGrad:
        raise RuntimeError(_messages.will_execute_leaf())
    if needed is None:
        return node in deps
    return node in needed or node in target_nodes
