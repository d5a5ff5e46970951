"""Strict mode: checks at ``optimizer.step()`` that turn silent accumulation bugs into errors.

At every step of a watched optimizer the sanitizer looks at what ``.grad`` is made of (it keeps
a :class:`~gradsum.toolkit.Ledger` without norms) and:

- raises :class:`StaleGradientError` when a ``.grad`` still holds contributions from before
  the previous step: ``zero_grad()`` was forgotten and old gradients would be applied again;
- with a declared accumulation window (``sanitizer.accumulate(k)`` or ``strict(opt,
  accumulate=k)``) warns (:class:`AccumulationWindowWarning`) when a step is fed by a number
  of backward passes other than ``k`` (a short last window is a warning, not an error);
- raises :class:`GradGraphError` when a ``.grad`` carries a graph into the step (produced by
  ``backward(create_graph=True)``): the update would be recorded and memory held;
- warns (:class:`GraphLeakWarning`) about graphs that stay alive across steps (a loss kept in a
  list, ``total += loss``, meta-learning fast weights): graphs backpropagated before the
  previous step that something still references;
- reports, per step, which parameters were skipped (``.grad is None``) and which had an
  all-zero gradient and still moved (momentum, weight decay), in ``last_report``; the latter
  also as a :class:`NoneVsZeroWarning`, once per parameter.

Turn it on with ``strict(optimizer)`` / :class:`StrictOptimizer` (one optimizer), ``with
strict():`` (every optimizer stepped inside), or the environment variable ``GRADSUM_STRICT=1``
(every optimizer, for the whole process).

Example:
    >>> import gradsum
    >>> from gradsum.toolkit import strict, StaleGradientError
    >>> from gradsum.optim import SGD
    >>> w = gradsum.ones(2, requires_grad=True)
    >>> opt = SGD([w], lr=0.1)
    >>> with strict(opt, params={"w": w}):
    ...     (w * 2).sum().backward(); opt.step()        # step 1
    ...     (w * 2).sum().backward()                    # zero_grad() forgotten
    ...     try:
    ...         opt.step()
    ...     except StaleGradientError as e:
    ...         print(str(e).splitlines()[0])
    optimizer step 2: the .grad of 'w' still holds gradients from before step 1 ...
"""

from __future__ import annotations

import functools
import os
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp
from gradsum.autograd.saved import saved_array
from gradsum.toolkit import _optim_hooks
from gradsum.toolkit._hub import HUB, _Frame, iter_nodes, named_params
from gradsum.toolkit.ledger import Contribution, Ledger

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "AccumulationWindowWarning",
    "GradGraphError",
    "GraphLeakWarning",
    "NoneVsZeroWarning",
    "Sanitizer",
    "StaleGradientError",
    "StepReport",
    "StrictOptimizer",
    "strict",
]


class StaleGradientError(RuntimeError):
    """A ``.grad`` holds contributions from before the previous optimizer step."""


class GradGraphError(RuntimeError):
    """A ``.grad`` carries an autograd graph (``create_graph=True``) into ``optimizer.step()``."""


class AccumulationWindowWarning(UserWarning):
    """A step was fed by a number of backward passes other than the declared window."""


class GraphLeakWarning(UserWarning):
    """A graph backpropagated before the previous step is still alive."""


class NoneVsZeroWarning(UserWarning):
    """A parameter with an all-zero (not ``None``) gradient was still updated."""


@dataclass
class StepReport:
    """What one optimizer step did, parameter by parameter.

    Attributes:
        step: the step number (1 for the first watched step).
        backward_calls: backward passes that fed this step (since the previous step).
        window: the declared accumulation window, or ``None``.
        updated: parameters with a gradient (``.grad`` not ``None``).
        skipped: parameters whose ``.grad`` was ``None``: the optimizer skipped them entirely.
        zero_grad_moved: all-zero gradient, yet the value changed (momentum, weight decay).
        zero_grad_still: all-zero gradient and the value did not change.
        moved_without_grad: ``.grad`` was ``None`` yet the value changed (not the optimizer).
        alive_graphs: descriptions of graphs from earlier steps still alive.
        messages: the warnings issued for this step.
    """

    step: int
    backward_calls: int
    window: int | None
    updated: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    zero_grad_moved: list[str] = field(default_factory=list)
    zero_grad_still: list[str] = field(default_factory=list)
    moved_without_grad: list[str] = field(default_factory=list)
    alive_graphs: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        win = "" if self.window is None else f" (window {self.window})"
        out = [f"step {self.step}: {self.backward_calls} backward pass(es){win}, "
               f"{len(self.updated)} parameter(s) updated"]

        def row(title: str, names: list[str]) -> None:
            if names:
                out.append(f"  {title}: {', '.join(names)}")

        row("skipped (.grad is None: no update, no momentum, no weight decay)", self.skipped)
        row("zero gradient but moved (momentum / weight decay)", self.zero_grad_moved)
        row("zero gradient, unchanged", self.zero_grad_still)
        row("changed without a gradient", self.moved_without_grad)
        for g in self.alive_graphs:
            out.append(f"  alive graph: {g}")
        return "\n".join(out)


@dataclass
class _GraphRef:
    refs: list[weakref.ref[Any]]  # the root and some nodes holding saved tensors
    seq: int
    site: str
    step: int  # steps taken when it was backpropagated (it fed step + 1)
    what: str
    reported: bool = False

    def alive(self) -> Any:
        for r in self.refs:
            n = r()
            if n is not None:
                return n
        return None


_SAMPLE = 16  # nodes with saved tensors watched per graph (one alive is enough to report)


def _graph_ref(root: Any, seq: int, site: str, step: int, what: str) -> _GraphRef:
    refs = [weakref.ref(root)]
    for n in iter_nodes([root], limit=4 * _SAMPLE)[1:]:
        if n._saved:
            refs.append(weakref.ref(n))
            if len(refs) > _SAMPLE:
                break
    return _GraphRef(refs, seq, site, step, what)


def _names(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(repr(n) for n in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


class Sanitizer:
    """Strict-mode checks for one optimizer (see the module docstring).

    Args:
        optimizer: any torch-style optimizer (``param_groups``, ``step``, ``zero_grad``).
        params: where to take parameter names from: a module, ``named_parameters()`` or a
            ``{name: tensor}`` dict (names default to ``param_groups[g]['params'][i]``).
        accumulate: the accumulation window: exactly this many backward passes per step.
        on_graph_grad: ``'raise'`` (default) or ``'warn'`` for a ``.grad`` carrying a graph.
        allow_stale: do not raise for gradients carried over a step (if that is intended).
        check_moves: compare parameter values before/after each step (None-versus-zero report;
            costs one copy of the parameters per step).
        warn_zero_moved: warn (once per parameter) when a zero gradient still moved it.
        log: ``log(str)`` called with each step's report (e.g. ``print``, ``logger.info``).
        ledger: a :class:`Ledger` to share (default: a private one without norms).

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import Sanitizer
        >>> from gradsum.optim import SGD
        >>> a = gradsum.ones(2, requires_grad=True)
        >>> b = gradsum.ones(2, requires_grad=True)
        >>> opt = SGD([a, b], lr=0.1, weight_decay=0.5)
        >>> with Sanitizer(opt, params={"a": a, "b": b}, warn_zero_moved=False) as s:
        ...     (a * 2).sum().backward()
        ...     b.grad = gradsum.zeros(2)
        ...     opt.step()
        >>> s.last_report.skipped, s.last_report.zero_grad_moved
        ([], ['b'])
    """

    def __init__(
        self,
        optimizer: Any,
        params: Any = None,
        *,
        accumulate: int | None = None,
        on_graph_grad: str = "raise",
        allow_stale: bool = False,
        check_moves: bool = True,
        warn_zero_moved: bool = True,
        log: Callable[[str], Any] | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        if on_graph_grad not in ("raise", "warn"):
            raise ValueError(f"on_graph_grad must be 'raise' or 'warn', got {on_graph_grad!r}")
        if accumulate is not None and accumulate < 1:
            raise ValueError(f"accumulate must be a positive number of backward passes, "
                             f"got {accumulate}")
        self._opt_ref: Any = (lambda o=optimizer: o)  # a weakref in the process-wide mode
        self.window = accumulate
        self.on_graph_grad = on_graph_grad
        self.allow_stale = allow_stale
        self.check_moves = check_moves
        self.warn_zero_moved = warn_zero_moved
        self.log = log
        names = {id(p): n for n, p in named_params(params)}
        self.params: list[tuple[str, Tensor]] = [
            (names.get(id(p), default), p) for default, p in named_params(optimizer)
        ]
        self._ids = [id(p) for _, p in self.params]
        self.ledger = ledger if ledger is not None else Ledger(self.params, record_norms=False)
        if ledger is not None:
            ledger._add_params(self.params)
        self.steps = 0
        self.reports: list[StepReport] = []
        self.last_report: StepReport | None = None
        self.max_reports = 1000
        self._graphs: list[_GraphRef] = []
        self._before: dict[int, Any] | None = None
        self._warned_zero: set[str] = set()
        self._undo: list[Callable[[], None]] = []
        self.attached = False

    @property
    def optimizer(self) -> Any:
        """The optimizer checked."""
        return self._opt_ref()

    # -- lifecycle ------------------------------------------------------------------------------
    def attach(self, hook_steps: bool = True) -> Sanitizer:
        """Start checking (idempotent). Returns ``self``.

        ``hook_steps=False`` leaves calling the checks around ``step()`` to the caller (the
        global strict mode drives them from its own hooks).
        """
        if self.attached:
            return self
        self.ledger.attach()
        if hook_steps:  # (the process-wide mode does not wrap zero_grad: it must not keep
            # the optimizer alive; clears are still seen through the .grad objects)
            self.ledger.watch(self.optimizer, count_steps=False)
            self._undo.append(_optim_hooks.watch_step(self.optimizer, self._pre, self._post))
        HUB.graph_watchers.append(self)
        HUB.refresh()
        self.attached = True
        return self

    def detach(self) -> None:
        """Stop checking; reports stay readable."""
        if not self.attached:
            return
        while self._undo:
            self._undo.pop()()
        for i, w in enumerate(HUB.graph_watchers):
            if w is self:
                del HUB.graph_watchers[i]
                break
        self.ledger.detach()
        HUB.refresh()
        self.attached = False

    def __enter__(self) -> Sanitizer:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()

    @contextmanager
    def accumulate(self, k: int) -> Iterator[Sanitizer]:
        """Declare an accumulation window inside the block: ``k`` backward passes per step.

        Example:
            >>> import gradsum
            >>> from gradsum.toolkit import Sanitizer
            >>> from gradsum.optim import SGD
            >>> w = gradsum.ones(2, requires_grad=True)
            >>> opt = SGD([w], lr=0.1)
            >>> with Sanitizer(opt) as s, s.accumulate(2):
            ...     for _ in range(2):
            ...         (w * 2).sum().backward()
            ...     opt.step(); opt.zero_grad()
            >>> s.last_report.backward_calls
            2
        """
        if k < 1:
            raise ValueError(f"an accumulation window needs k >= 1 backward passes, got {k}")
        prev = self.window
        self.window = k
        try:
            yield self
        finally:
            self.window = prev

    # -- hub callback ---------------------------------------------------------------------------
    def _saw_roots(self, roots: Any, frame: _Frame) -> None:
        if len(self._graphs) > 256:  # many backward calls without a step: drop dead graphs
            self._graphs = [g for g in self._graphs if g.alive() is not None]
        for t in roots:
            fn = t._grad_fn
            if fn is not None:
                self._graphs.append(_graph_ref(fn, frame.seq, frame.site, self.steps,
                                               f"graph of {fn.name()}"))

    # -- the checks -----------------------------------------------------------------------------
    def _pre(self) -> None:
        step = self.steps + 1
        led = self.ledger
        led._sync_ids(self._ids, f"before optimizer step {step}")
        # 1. a graph in .grad
        graphy = [n for n, p in self.params
                  if p._grad is not None and (p._grad._grad_fn is not None
                                              or p._grad._requires_grad)]
        if graphy:
            msg = (
                f"optimizer step {step}: the .grad of {_names(graphy)} carries an autograd "
                "graph (it was produced by backward(create_graph=True)), so the update would "
                "be recorded and the graph kept alive through the parameters: a memory leak "
                "in meta-learning loops. Fix: use torch-style autograd.grad(..., "
                "create_graph=True) for the inner gradients and leave .grad graph-free, or "
                "detach before stepping: p.grad = p.grad.detach(); clear with "
                "optimizer.zero_grad(set_to_none=True)."
            )
            if self.on_graph_grad == "raise":
                raise GradGraphError(msg)
            warnings.warn(msg, GraphLeakWarning, stacklevel=4)
            for n, p in self.params:
                g = p._grad
                if g is not None and g._grad_fn is not None:
                    self._graphs.append(_graph_ref(g._grad_fn, 0, "", self.steps,
                                                   f"graph in the .grad of {n!r}"))
        # 2. stale contributions
        if not self.allow_stale:
            stale: list[tuple[str, list[Contribution]]] = []
            for n, p in self.params:
                tr = led._tracks[id(p)]
                if p._grad is None:
                    continue
                old = [e for e in tr.events[tr.epoch:]
                       if isinstance(e, Contribution) and e.step < tr.steps]
                if old:
                    stale.append((n, old))
            if stale:
                raise StaleGradientError(self._stale_message(step, stale))
        # 3. snapshot values for the None-versus-zero report
        if self.check_moves:
            # Only a parameter without a gradient or with an all-zero one can be reported as
            # "moved anyway": snapshot just those (a full copy of every parameter per step
            # would dominate the cost of strict mode on large models).
            self._before = {
                i: p._array.copy() for i, (_, p) in enumerate(self.params)
                if p._grad is None or not p._grad._array.any()
            }

    def _stale_message(self, step: int, stale: list[tuple[str, list[Contribution]]]) -> str:
        names = [n for n, _ in stale]
        fed = sorted({c.step + 1 for _, cs in stale for c in cs})
        calls: dict[int, Contribution] = {}
        for _, cs in stale:
            for c in cs:
                calls.setdefault(c.call.seq, c)
        shown = [f"backward #{c.call.seq} at {c.call.site}"
                 + (f" [{c.call.label}]" if c.call.label else "") + f" (fed step {c.step + 1})"
                 for c in list(calls.values())[:6]]
        more = f" and {len(calls) - 6} more" if len(calls) > 6 else ""
        per = "; ".join(
            f"{n!r}: steps {sorted({c.step + 1 for c in cs})}" for n, cs in stale[:8])
        return (
            f"optimizer step {step}: the .grad of {_names(names)} still holds gradients from "
            f"before step {step - 1} (contributions that already fed step(s) {fed}: "
            f"{', '.join(shown)}{more}). backward() adds into .grad and nothing clears it, "
            f"so step {step} would apply them again. Per parameter: {per}.\n"
            "Fix: call optimizer.zero_grad() after optimizer.step() (or before each forward). "
            "If carrying gradients over steps is intended, create the sanitizer with "
            "allow_stale=True."
        )

    def _post(self) -> None:
        led = self.ledger
        led._after_step(self._ids)
        self.steps += 1
        step = self.steps
        # backward passes that fed this step: contributions that arrived since the last step
        seqs: set[int] = set()
        for _, p in self.params:
            tr = led._tracks[id(p)]
            for e in tr.events[tr.epoch:]:
                if isinstance(e, Contribution) and e.step == tr.steps - 1:
                    seqs.add(e.call.seq)
        rep = StepReport(step, len(seqs), self.window)
        before = self._before
        self._before = None
        for i, (n, p) in enumerate(self.params):
            g = p._grad
            snap = before.get(i) if before is not None else None
            moved = snap is not None and not bool(xp.array_equal(snap, p._array))
            if g is None:
                rep.skipped.append(n)
                if moved:
                    rep.moved_without_grad.append(n)
                continue
            rep.updated.append(n)
            if snap is not None and not g._array.any():
                (rep.zero_grad_moved if moved else rep.zero_grad_still).append(n)
        # accumulation window
        if self.window is not None and rep.backward_calls != self.window:
            k, got = self.window, rep.backward_calls
            if got < k:
                msg = (f"optimizer step {step} was fed by {got} backward pass(es), fewer than "
                       f"the declared window of {k}: a short window (e.g. the last batches of "
                       "an epoch). Fine if intended, but normalise the loss by the count of "
                       "this window (gradsum.toolkit.micro_batches), not by k.")
            else:
                msg = (f"optimizer step {step} was fed by {got} backward passes, more than "
                       f"the declared window of {k}. Was an optimizer.step() or zero_grad() "
                       "skipped, or the window declared wrongly?")
            rep.messages.append(msg)
            warnings.warn(msg, AccumulationWindowWarning, stacklevel=4)
        # graphs alive across steps
        alive: list[_GraphRef] = []
        for gr in self._graphs:
            node = gr.alive()
            if node is None:
                continue
            alive.append(gr)
            if gr.step < step - 1 and not gr.reported:
                gr.reported = True
                nodes = iter_nodes([node], limit=10_000)
                held = sum(int(a.nbytes) for n in nodes for s in (n._saved or ())
                           if (a := saved_array(s)) is not None)
                origin = (f"backward #{gr.seq} at {gr.site}" if gr.seq else
                          f"autograd.grad at {gr.site}" if gr.site else "optimizer.step()")
                desc = (f"{gr.what} from {origin} (before step {gr.step + 1}) is still alive "
                        f"at step {step}: {len(nodes)} node(s), {held} bytes of saved tensors")
                rep.alive_graphs.append(desc)
                msg = (f"{desc}. Something still references it: a loss kept in a list, "
                       "'total += loss' instead of 'total += loss.item()', a .grad or fast "
                       "weights made with create_graph=True. Fix: keep floats (loss.item()) "
                       "or detach() what you keep across steps.")
                rep.messages.append(msg)
                warnings.warn(msg, GraphLeakWarning, stacklevel=4)
        self._graphs = alive
        if self.warn_zero_moved:
            fresh = [n for n in rep.zero_grad_moved if n not in self._warned_zero]
            if fresh:
                self._warned_zero.update(fresh)
                msg = (f"optimizer step {step}: {_names(fresh)} had an all-zero gradient (not "
                       "None) and still moved (momentum / weight decay act on a zero "
                       "gradient). If they should not change this step, set .grad to None "
                       "(zero_grad(set_to_none=True)): None is skipped, zero is not.")
                rep.messages.append(msg)
                warnings.warn(msg, NoneVsZeroWarning, stacklevel=4)
        self.last_report = rep
        self.reports.append(rep)
        if len(self.reports) > self.max_reports:
            del self.reports[0]
        if self.log is not None:
            self.log(str(rep))


class StrictOptimizer:
    """An optimizer wrapper with strict-mode checks at every ``step()``.

    Everything else is forwarded to the wrapped optimizer. ``sanitizer``, ``last_report`` and
    ``accumulate(k)`` expose the checks.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import StrictOptimizer
        >>> from gradsum.optim import SGD
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> opt = StrictOptimizer(SGD([w], lr=0.1), params={"w": w})
        >>> (w * 2).sum().backward(); opt.step(); opt.zero_grad()
        >>> opt.last_report.updated
        ['w']
        >>> opt.close()
    """

    def __init__(self, optimizer: Any, params: Any = None, **kwargs: Any) -> None:
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "sanitizer", Sanitizer(optimizer, params, **kwargs).attach())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.optimizer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.optimizer, name, value)

    def step(self, *args: Any, **kwargs: Any) -> Any:
        return self.optimizer.step(*args, **kwargs)

    def zero_grad(self, *args: Any, **kwargs: Any) -> Any:
        return self.optimizer.zero_grad(*args, **kwargs)

    @property
    def last_report(self) -> StepReport | None:
        return self.sanitizer.last_report

    def accumulate(self, k: int) -> Any:
        """See :meth:`Sanitizer.accumulate`."""
        return self.sanitizer.accumulate(k)

    def close(self) -> None:
        """Stop the checks (the optimizer keeps working)."""
        self.sanitizer.detach()

    def __repr__(self) -> str:
        return f"StrictOptimizer({self.optimizer!r})"


# -- global strict mode: every optimizer ------------------------------------------------------
class _GlobalStrict:
    """Strict mode for every optimizer that steps while active (``strict()`` / env var).

    One ledger (tracking every leaf) is shared; a :class:`Sanitizer` is created for each
    optimizer at its first step and driven by the global step hooks of :mod:`gradsum.optim`.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.kwargs: dict[str, Any] = {}
        self.names: list[tuple[str, Tensor]] = []
        self.sanitizers: weakref.WeakKeyDictionary[Any, Sanitizer] = (
            weakref.WeakKeyDictionary())
        self.ledger: Ledger | None = None
        self._undo: Callable[[], None] | None = None

    def enter(self, params: Any = None, **kwargs: Any) -> None:
        self.depth += 1
        if self.depth > 1:
            return
        self.kwargs = kwargs
        self.names = named_params(params)
        from gradsum.nn import Parameter

        self.ledger = Ledger(None, record_norms=False)
        # Only parameters before an optimizer claims a leaf: inputs that require grad are
        # not kept alive by a process-wide ledger.
        self.ledger._auto_filter = lambda t: isinstance(t, Parameter)
        self.ledger._add_params(self.names)
        self.ledger.attach()
        self._undo = _install_global_hooks(self._on_pre, self._on_post)

    def exit(self) -> None:
        self.depth -= 1
        if self.depth > 0:
            return
        if self._undo is not None:
            self._undo()
            self._undo = None
        for s in list(self.sanitizers.values()):
            s.detach()
        self.sanitizers.clear()
        if self.ledger is not None:
            self.ledger.detach()
            self.ledger = None

    def _on_pre(self, optimizer: Any, *_: Any) -> None:
        s = self.sanitizers.get(optimizer)
        if s is None:
            s = Sanitizer(optimizer, self.names or None, ledger=self.ledger, **self.kwargs)
            s._opt_ref = weakref.ref(optimizer)
            s.attach(hook_steps=False)
            self.sanitizers[optimizer] = s
            weakref.finalize(optimizer, s.detach)  # the optimizer is gone: stop watching
        s._pre()

    def _on_post(self, optimizer: Any, *_: Any) -> None:
        s = self.sanitizers.get(optimizer)
        if s is not None:
            s._post()


def _install_global_hooks(pre: Callable[..., Any], post: Callable[..., Any]
                          ) -> Callable[[], None]:
    """Run ``pre(opt, args, kwargs)`` / ``post(...)`` around every gradsum optimizer's step.

    Uses torch's global hook API (``register_optimizer_step_pre_hook``) when
    :mod:`gradsum.optim` has it; otherwise wraps ``step`` on every ``Optimizer`` subclass
    (and on classes first instantiated later), undone by the returned function.
    """
    from gradsum.optim import optimizer as om

    if hasattr(om, "register_optimizer_step_pre_hook") and hasattr(
        om, "register_optimizer_step_post_hook"
    ):
        h1 = om.register_optimizer_step_pre_hook(pre)
        h2 = om.register_optimizer_step_post_hook(post)

        def undo_hooks() -> None:
            h1.remove()
            h2.remove()

        return undo_hooks
    return _patch_optimizer_classes(om.Optimizer, pre, post)


def _patch_optimizer_classes(base: type, pre: Callable[..., Any], post: Callable[..., Any]
                             ) -> Callable[[], None]:
    patched: list[tuple[type, Any]] = []
    running: set[int] = set()  # a subclass step calling super().step() is checked once

    def wrap(cls: type) -> None:
        orig = cls.__dict__.get("step")
        if orig is None or getattr(orig, "__gradsum_strict__", False):
            return

        @functools.wraps(orig)
        def step(self: Any, *args: Any, **kwargs: Any) -> Any:
            if id(self) in running:
                return orig(self, *args, **kwargs)
            running.add(id(self))
            try:
                pre(self, args, kwargs)
                out = orig(self, *args, **kwargs)
                post(self, args, kwargs)
                return out
            finally:
                running.discard(id(self))

        step.__gradsum_strict__ = True  # type: ignore[attr-defined]
        cls.step = step  # type: ignore[attr-defined]
        patched.append((cls, orig))

    def all_subclasses(cls: type) -> list[type]:
        out = [cls]
        for sub in cls.__subclasses__():
            out.extend(all_subclasses(sub))
        return out

    for cls in all_subclasses(base):
        wrap(cls)
    orig_patch = base.__dict__.get("_patch_step_function")

    def _patch_step_function(self: Any) -> None:
        if orig_patch is not None:
            orig_patch(self)
        for cls in type(self).__mro__:
            if isinstance(cls, type) and issubclass(cls, base):
                wrap(cls)

    base._patch_step_function = _patch_step_function  # type: ignore[attr-defined]

    def undo() -> None:
        if orig_patch is not None:
            base._patch_step_function = orig_patch  # type: ignore[attr-defined]
        while patched:
            cls, orig = patched.pop()
            cls.step = orig  # type: ignore[attr-defined]

    return undo


_GLOBAL = _GlobalStrict()


class _StrictScope:
    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs

    def __enter__(self) -> _StrictScope:
        _GLOBAL.enter(**self.kwargs)
        return self

    def __exit__(self, *exc: object) -> None:
        _GLOBAL.exit()

    @property
    def sanitizers(self) -> list[Sanitizer]:
        """The sanitizers created for the optimizers stepped inside the block."""
        return list(_GLOBAL.sanitizers.values())


def strict(optimizer: Any = None, params: Any = None, **kwargs: Any) -> Any:
    """Turn on strict mode for one optimizer, or (no optimizer) for every optimizer.

    ``strict(opt, ...)`` returns an attached :class:`Sanitizer` (also a context manager that
    detaches it on exit); ``with strict(): ...`` checks every optimizer stepped in the block.
    Keyword arguments are :class:`Sanitizer`'s (``accumulate=k``, ``allow_stale`` ...).

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import strict
        >>> from gradsum.optim import SGD
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> opt = SGD([w], lr=0.1)
        >>> s = strict(opt, accumulate=1)
        >>> (w * 2).sum().backward(); opt.step(); opt.zero_grad()
        >>> s.last_report.backward_calls
        1
        >>> s.detach()
    """
    if optimizer is None:
        if params is not None:
            kwargs["params"] = params
        return _StrictScope(kwargs)
    return Sanitizer(optimizer, params, **kwargs).attach()


def env_strict() -> bool:
    """True when the environment asks for strict mode (``GRADSUM_STRICT=1``)."""
    return os.environ.get("GRADSUM_STRICT", "").strip().lower() in ("1", "true", "yes", "on")


_ENV_SCOPE: list[_StrictScope] = []


def apply_env() -> bool:
    """Turn process-wide strict mode on or off to match ``GRADSUM_STRICT`` now.

    Run when :mod:`gradsum.toolkit` is imported; call it again after changing the variable.
    Returns whether strict mode is on.
    """
    want = env_strict()
    if want and not _ENV_SCOPE:
        scope = _StrictScope({})
        scope.__enter__()
        _ENV_SCOPE.append(scope)
    elif not want and _ENV_SCOPE:
        _ENV_SCOPE.pop().__exit__(None, None, None)
    return bool(_ENV_SCOPE)
