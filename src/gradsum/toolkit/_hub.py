"""The toolkit's single connection to the engine, and helpers shared by the toolkit's parts.

Every toolkit feature that watches backward (ledgers, sanitizers, transactional scopes) goes
through one observer, :data:`HUB`. It is put into ``engine.backward_observers`` (and its
accumulate callback into ``graph.accumulate_observers``) only while some feature is active, and
taken out when the last one stops, so with the toolkit off the engine's lists are empty and
backward costs exactly what it costs without the toolkit.

The hub also fixes the order in which features see the end of a failed backward: transactional
restores first, then ledgers reconcile, so a ledger sees the rolled-back state (see
:meth:`_Hub.end`).

Example:
    >>> import gradsum
    >>> from gradsum.autograd import engine, graph, graph_task
    >>> from gradsum.toolkit._hub import HUB
    >>> engine.backward_observers, graph.accumulate_observers   # toolkit off: nothing registered
    ([], [])
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradsum.autograd import engine, graph, graph_task
from gradsum.autograd.saved import saved_array

if TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.autograd.graph import Node

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: modules inside the package that are user programs (their frames are call sites)
_USER_CODE_IN_PKG = (os.sep + "demo.py",)
_CONTEXTLIB = os.sep + "contextlib.py"


def call_site(skip: int = 1) -> str:
    """``file:line`` of the innermost frame outside gradsum (the user's ``.backward()`` call).

    Example:
        >>> from gradsum.toolkit._hub import call_site
        >>> call_site().startswith("<doctest")
        True
    """
    f: Any = sys._getframe(skip)
    while f is not None:
        fn = f.f_code.co_filename
        library = fn.startswith(_PKG_DIR) and not fn.endswith(_USER_CODE_IN_PKG)
        if not library and not fn.endswith(_CONTEXTLIB):
            return f"{os.path.basename(fn) if fn.startswith('<') else _short(fn)}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


def _short(path: str) -> str:
    """How a call site's file is shown: a file of the package as ``gradsum/demo.py`` (where
    gradsum is installed says nothing about the call), a user's file relative to the current
    directory when it is below it or one level up, else its full path."""
    if path.startswith(_PKG_DIR):
        return os.path.join("gradsum", path[len(_PKG_DIR):])
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(".." + os.sep + "..") else rel


@dataclass
class BackwardCall:
    """One ``backward()`` seen by the toolkit.

    Attributes:
        seq: sequence number, counted over every accumulating backward while the toolkit is on.
        site: ``file:line`` of the user's ``.backward()`` call.
        label: the user's label (``ledger.label(...)``), or ``None``.
        status: ``'running'``, ``'ok'``, ``'failed'`` (raised; contributions that landed stay)
            or ``'rolled back'`` (raised inside ``transactional()``: nothing landed).
    """

    seq: int
    site: str
    label: str | None = None
    status: str = "running"


@dataclass
class _Frame:
    seq: int
    site: str
    accumulate: bool
    depth: int = 0  # the engine's task depth in this thread when the backward began
    snapshot: Any = None  # transactional snapshot, or None
    calls: dict[int, BackwardCall] = field(default_factory=dict)  # id(ledger) -> call


class _Frames(threading.local):
    def __init__(self) -> None:
        self.frames: list[_Frame] = []


class _Hub:
    """The one backward observer of the toolkit; dispatches to active ledgers and scopes."""

    def __init__(self) -> None:
        self.ledgers: list[Any] = []
        self.transactional = 0
        self.graph_watchers: list[Any] = []  # sanitizers that track root graphs
        self._frames = _Frames()
        self.seq = 0
        self._installed = False
        self._acc = self.on_accumulate  # one bound-method object, so `is` finds it again

    @property
    def stack(self) -> list[_Frame]:
        """The frames of the backwards running in this thread, innermost last (per thread, as
        the engine's tasks: two threads' backwards do not interleave their frames)."""
        return self._frames.frames

    # -- (un)installation: the engine lists stay empty while nothing is active ----------------
    def _active(self) -> bool:
        return bool(self.ledgers or self.transactional or self.graph_watchers)

    def refresh(self) -> None:
        want = self._active()
        if want and not self._installed:
            engine.backward_observers.append(self)
            self._installed = True
        elif not want and self._installed:
            _remove(engine.backward_observers, self)
            self._installed = False
        acc = bool(self.ledgers)
        has_acc = any(o is self._acc for o in graph.accumulate_observers)
        if acc and not has_acc:
            graph.accumulate_observers.append(self._acc)
        elif not acc and has_acc:
            _remove(graph.accumulate_observers, self._acc)

    def add_ledger(self, ledger: Any) -> None:
        if not any(x is ledger for x in self.ledgers):
            self.ledgers.append(ledger)
        self.refresh()

    def remove_ledger(self, ledger: Any) -> None:
        _remove(self.ledgers, ledger)
        self.refresh()

    # -- engine protocol ------------------------------------------------------------------------
    def begin(self, roots: Sequence[Tensor], inputs: Sequence[Tensor] | None,
              accumulate: bool) -> None:
        from gradsum.toolkit.transactional import take_snapshot

        depth = graph_task.running_depth()
        # A frame of this depth or deeper is left by a backward that ended without its
        # ``end`` (an interrupt between its last line and the engine's call): it is closed
        # as failed, so the next backward does not run on a stale frame. (Its snapshot is
        # not restored: the .grad may have been changed since, by zero_grad for one.)
        while self.stack and self.stack[-1].depth >= depth:
            self._close(self.stack.pop(), _INTERRUPTED, restore=False)
        site = call_site(2)
        if accumulate:
            self.seq += 1
        frame = _Frame(self.seq if accumulate else 0, site, accumulate, depth)
        if self.transactional:
            frame.snapshot = take_snapshot(roots, inputs, accumulate)
        self.stack.append(frame)
        try:
            if accumulate:
                for led in self.ledgers:
                    frame.calls[id(led)] = led._begin(frame)
            for w in self.graph_watchers:
                w._saw_roots(roots, frame)
        except BaseException as e:  # (the engine calls ``end`` only after ``begin`` returns)
            self.end(e)
            raise

    def end(self, error: BaseException | None) -> None:
        self._close(self.stack.pop(), error)

    def _close(self, frame: _Frame, error: BaseException | None, restore: bool = True) -> None:
        from gradsum.toolkit.transactional import restore_snapshot

        rolled_back = False
        if frame.snapshot is not None and restore:
            if error is not None:
                restore_snapshot(frame.snapshot)
                rolled_back = True
            elif self.stack and self.stack[-1].snapshot is not None:
                self.stack[-1].snapshot.merge(frame.snapshot)  # nested call, from a hook
        if frame.accumulate:
            for led in self.ledgers:
                call = frame.calls.get(id(led))
                if call is not None:
                    led._end(call, error, rolled_back)

    def on_accumulate(self, leaf: Tensor, grad: Tensor) -> None:
        frame = self.stack[-1] if self.stack else None
        for led in self.ledgers:
            led._on_accumulate(leaf, grad, frame)


def _remove(lst: list[Any], obj: Any) -> None:
    for i, x in enumerate(lst):
        if x is obj:
            del lst[i]
            return


HUB = _Hub()
#: the error a frame is closed with when its backward ended without calling ``end``
_INTERRUPTED = KeyboardInterrupt("the backward ended without closing its toolkit frame")


# -- naming parameters ------------------------------------------------------------------------
def named_params(params: Any) -> list[tuple[str, Tensor]]:
    """Normalise what users pass for "the parameters" into ``[(name, tensor), ...]``.

    Accepts a module (anything with ``named_parameters()``), an optimizer (``param_groups``),
    a dict ``{name: tensor}``, an iterable of ``(name, tensor)`` pairs (``named_parameters()``),
    or an iterable of tensors (named ``param[i]``).

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit._hub import named_params
        >>> w = gradsum.zeros(2, requires_grad=True)
        >>> [n for n, _ in named_params([w])], [n for n, _ in named_params({"w": w})]
        (['param[0]'], ['w'])
    """
    from gradsum._tensor import Tensor

    if params is None:
        return []
    if isinstance(params, Tensor):
        return [("param[0]", params)]
    if hasattr(params, "named_parameters") and callable(params.named_parameters):
        return [(str(n), p) for n, p in params.named_parameters()]
    if hasattr(params, "param_groups"):
        out = []
        for gi, g in enumerate(params.param_groups):
            for i, p in enumerate(g["params"]):
                out.append((f"param_groups[{gi}]['params'][{i}]", p))
        return out
    if isinstance(params, dict):
        return [(str(n), p) for n, p in params.items()]
    out = []
    for i, item in enumerate(params):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Tensor):
            out.append((str(item[0]), item[1]))
        elif isinstance(item, Tensor):
            out.append((f"param[{i}]", item))
        elif isinstance(item, dict) and "params" in item:  # a param group
            for j, p in enumerate(item["params"]):
                out.append((f"group[{i}][{j}]", p))
        else:
            raise TypeError(
                f"expected tensors or (name, tensor) pairs, got {type(item).__name__} at "
                f"position {i}. Pass model.parameters(), model.named_parameters() or a module."
            )
    return out


def optimizer_params(optimizer: Any) -> list[Tensor]:
    """Every parameter of an optimizer's ``param_groups`` (deduplicated, in order)."""
    seen: set[int] = set()
    out = []
    for g in optimizer.param_groups:
        for p in g["params"]:
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
    return out


def shape_str(t: Tensor) -> str:
    """``'(2, 3)'``: a tensor's shape as a tuple literal."""
    return str(tuple(t._array.shape))


def live(ref: weakref.ref[Any] | None) -> Any:
    return None if ref is None else ref()


def iter_nodes(roots: Iterable[Node | None], limit: int | None = None) -> list[Node]:
    """Nodes reachable from ``roots`` (iterative DFS, each once), parents before children."""
    seen: set[int] = set()
    out: list[Node] = []
    stack = [r for r in roots if r is not None]
    for r in stack:
        seen.add(id(r))
    while stack:
        n = stack.pop()
        out.append(n)
        if limit is not None and len(out) >= limit:
            break
        for c, _ in reversed(n._next):
            if c is not None and id(c) not in seen:
                seen.add(id(c))
                stack.append(c)
    return out


def node_retains(node: Node) -> dict[int, Any]:
    """``{output_nr: weakref to the tensor}`` of outputs that called ``retain_grad()``."""
    hooks = getattr(node, "_hooks", None)
    if hooks is not None:
        return hooks.retains
    return getattr(node, "_retains", None) or {}


def is_released(node: Node) -> bool:
    """True once a backward without ``retain_graph`` freed the node's saved tensors."""
    return bool(node._released)


def saved_bytes(node: Node) -> int:
    """Bytes held by a node's saved tensors that are not freed yet."""
    total = 0
    for s in node._saved or ():
        arr = saved_array(s)
        if arr is not None:
            total += int(arr.nbytes)
    return total
