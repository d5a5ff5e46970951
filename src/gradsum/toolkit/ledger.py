"""The accumulation ledger: who put what into each ``.grad``, and when it was cleared.

``backward()`` adds into ``.grad``; after a few calls nobody remembers which losses, which
lines and which optimizer steps the number in ``.grad`` is made of. A :class:`Ledger` records,
for every tracked parameter, every contribution (backward call number, the ``file:line`` of the
``.backward()`` call, an optional label, the contribution's norm and optionally its value, the
optimizer step it feeds) and every event that resets or rewrites the accumulator
(``zero_grad()``, ``p.grad = None``, ``p.grad.zero_()``, assigning a new tensor, in-place
scaling such as gradient clipping). :meth:`Ledger.explain` shows ``.grad`` as the sum of its
contributions since the last clear.

How clears are seen: the ledger remembers, after every backward, which tensor object each
``.grad`` is and its version counter. Before the next contribution, at every watched
``optimizer.step()``/``zero_grad()`` and in :meth:`Ledger.explain`, it compares: ``None`` now
means "set to None"; another object means "assigned"; the same object with a new version
means "modified in place" (all zeros: "zeroed"). ``autograd.grad`` writes no ``.grad`` and so
records nothing.

Example:
    >>> import gradsum
    >>> from gradsum.toolkit import Ledger
    >>> w = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> with Ledger({"w": w}, store_values=True) as ledger:
    ...     with ledger.label("loss_a"):
    ...         (w * 2).sum().backward()
    ...     ledger.next_label("loss_b")
    ...     (w * w).sum().backward()
    >>> [c.call.label for c in ledger.contributions(w)]
    ['loss_a', 'loss_b']
    >>> ledger.explain(w).max_abs_error
    0.0
    >>> w.grad.tolist()
    [4.0, 6.0]
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp
from gradsum.toolkit import _optim_hooks
from gradsum.toolkit._hub import (
    HUB,
    BackwardCall,
    _Frame,
    call_site,
    named_params,
    optimizer_params,
    shape_str,
)

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["Contribution", "Explanation", "GradEvent", "Ledger", "LedgerMismatchError"]


class LedgerMismatchError(AssertionError):
    """The recorded contributions do not add up to ``.grad`` (raised by :meth:`Ledger.verify`)."""


@dataclass
class Contribution:
    """One gradient added into a tracked ``.grad`` by one backward call.

    Attributes:
        call: the backward call (``seq``, ``site``, ``label``, ``status``).
        step: optimizer steps this parameter had taken when it arrived; it feeds step
            ``step + 1`` (and every later step until ``.grad`` is cleared).
        norm: its L2 norm (``None`` when the ledger records no norms).
        value: a copy of the array added (only with ``store_values=True``).
    """

    call: BackwardCall
    step: int
    norm: float | None = None
    value: Any = None
    kind: str = field(default="contribution", init=False)


@dataclass
class GradEvent:
    """Something other than backward changed ``.grad``: the start of a new accumulation.

    Attributes:
        kind: ``'set_to_none'``, ``'zeroed'``, ``'assigned'``, ``'modified'`` (in place, not
            zero: e.g. clipping) or ``'present'`` (a ``.grad`` already there when tracking
            began).
        where: how it was seen, e.g. ``'optimizer.zero_grad(set_to_none=True)'`` or
            ``'detected before backward #7 (train.py:31)'``.
        step: optimizer steps this parameter had taken at that point.
        norm: norm of ``.grad`` right after the event (``None`` if it is ``None``).
        value: a copy of ``.grad`` right after the event (``store_values=True``; ``None`` when
            ``.grad`` is ``None`` or all zeros).
    """

    kind: str
    where: str
    step: int
    norm: float | None = None
    value: Any = None


class _Track:
    __slots__ = ("call_seq", "epoch", "events", "exp_ref", "exp_ver", "name", "param", "steps",
                 "synced")

    def __init__(self, name: str, param: Tensor) -> None:
        self.name = name
        self.param = param
        self.events: list[Contribution | GradEvent] = []
        self.epoch = 0  # index in events where the current accumulation starts
        self.exp_ref: weakref.ref[Any] | None = None  # .grad object expected (None: None)
        self.exp_ver = 0
        self.steps = 0
        self.call_seq = -1  # the backward call that last touched it
        self.synced = False  # compared with .grad at least once

    def remember(self) -> None:
        g = self.param._grad
        if g is None:
            self.exp_ref = None
        else:
            self.exp_ref = weakref.ref(g)
            self.exp_ver = g._vc[0]


def _norm(arr: Any) -> float:
    flat = arr.ravel(order="K")  # a view for C- or F-contiguous arrays (no copy)
    return float(xp.sqrt(abs(xp.vdot(flat, flat))))


@dataclass
class Explanation:
    """``.grad`` of one parameter as the sum of its contributions since the last clear.

    Printing it gives a table. ``max_abs_error`` is ``max|baseline + sum(contributions) -
    .grad|`` when values were stored (``store_values=True``), else ``None``.
    """

    name: str
    shape: str
    grad_norm: float | None
    baseline: GradEvent | None
    contributions: list[Contribution]
    total: Any = None
    max_abs_error: float | None = None
    steps: int = 0
    earlier: int = 0  # contributions recorded before the baseline event

    def __str__(self) -> str:
        lines = [
            f"{self.name} {self.shape}: .grad = "
            + ("None" if self.grad_norm is None else f"tensor with norm {self.grad_norm:.6g}")
            + f" (optimizer steps taken: {self.steps})"
        ]
        head = f"  {'#':>3}  {'what':<12} {'backward':<9} {'label':<12} {'feeds step':<10} " \
               f"{'norm':>12}  where"
        lines.append(head)
        b = self.baseline
        if b is not None:
            norm = "-" if b.norm is None else f"{b.norm:.6g}"
            lines.append(f"  {0:>3}  {b.kind:<12} {'-':<9} {'-':<12} {b.step + 1:<10} "
                         f"{norm:>12}  {b.where}")
        else:
            lines.append(f"  {0:>3}  {'start':<12} {'-':<9} {'-':<12} {'-':<10} {'-':>12}  "
                         "tracking began with .grad = None")
        for i, c in enumerate(self.contributions, 1):
            label = c.call.label if c.call.label is not None else "-"
            norm = "-" if c.norm is None else f"{c.norm:.6g}"
            status = "" if c.call.status in ("ok", "running") else f" [{c.call.status}]"
            lines.append(f"  {i:>3}  {'+ backward':<12} {'#' + str(c.call.seq):<9} "
                         f"{label:<12} {c.step + 1:<10} {norm:>12}  {c.call.site}{status}")
        stale = [c for c in self.contributions if c.step < self.steps]
        if stale:
            lines.append(
                f"  note: {len(stale)} contribution(s) arrived before optimizer step "
                f"{self.steps} and were never cleared: they will be applied again. Call "
                "optimizer.zero_grad() after optimizer.step()."
            )
        if self.earlier:
            lines.append(f"  ({self.earlier} earlier contribution(s) are part of the baseline)")
        if self.max_abs_error is not None:
            lines.append(f"  check: baseline + contributions == .grad "
                         f"(max abs difference {self.max_abs_error:.3g})")
        return "\n".join(lines)

    __repr__ = __str__


class Ledger:
    """Record every contribution to (and every clear of) the ``.grad`` of some parameters.

    Args:
        params: what to track: a module, ``named_parameters()``, a ``{name: tensor}`` dict, an
            iterable of tensors, an optimizer, or ``None`` to track every leaf that receives a
            gradient while attached (they are then kept alive by the ledger).
        store_values: keep a copy of every contribution (needed for :meth:`verify` and
            ``Explanation.total``); memory grows with each backward.
        record_norms: compute each contribution's norm (one pass over the gradient).
        max_events: per parameter, older accumulations are dropped beyond this many events.

    Use it as a context manager, or call :meth:`attach` / :meth:`detach`. :meth:`watch` an
    optimizer (and a module) to count steps and to name ``zero_grad()`` clears.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import Ledger
        >>> w = gradsum.ones(3, requires_grad=True)
        >>> ledger = Ledger([w]).attach()
        >>> (w * 2).sum().backward()
        >>> w.grad = None
        >>> (w * 5).sum().backward()
        >>> [e.kind for e in ledger.history(w)]
        ['contribution', 'set_to_none', 'contribution']
        >>> ledger.detach()
    """

    def __init__(
        self,
        params: Any = None,
        *,
        store_values: bool = False,
        record_norms: bool = True,
        max_events: int = 10_000,
    ) -> None:
        self.store_values = store_values
        self.record_norms = record_norms
        self.max_events = max_events
        self.auto = params is None
        self._tracks: dict[int, _Track] = {}
        for name, p in named_params(params):
            if id(p) not in self._tracks:
                self._tracks[id(p)] = _Track(name, p)
        self.calls: list[BackwardCall] = []
        self.steps = 0
        self.attached = False
        self._labels: list[str] = []
        self._next_label: str | None = None
        self._touched: dict[int, list[_Track]] = {}
        self._undo: list[Any] = []
        self._watched: list[Any] = []
        # which leaves an automatic ledger (params=None) adopts; None: every leaf
        self._auto_filter: Any = None

    # -- lifecycle ------------------------------------------------------------------------------
    def attach(self) -> Ledger:
        """Start recording (idempotent). Returns ``self``."""
        if not self.attached:
            for tr in self._tracks.values():
                self._sync(tr, "tracking began" if not tr.events else "while detached")
            self.attached = True
            HUB.add_ledger(self)
        return self

    def detach(self) -> None:
        """Stop recording and unhook watched optimizers/modules; the records stay readable."""
        if self.attached:
            HUB.remove_ledger(self)
            self.attached = False
        while self._undo:
            self._undo.pop()()
        self._watched.clear()

    def __enter__(self) -> Ledger:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()

    # -- labels ---------------------------------------------------------------------------------
    @contextmanager
    def label(self, name: str) -> Iterator[None]:
        """Label every backward inside the block (innermost label wins)."""
        self._labels.append(name)
        try:
            yield
        finally:
            self._labels.pop()

    def next_label(self, name: str) -> None:
        """Label the next backward call only."""
        self._next_label = name

    # -- optimizer / module watching ------------------------------------------------------------
    def watch(self, obj: Any, *, count_steps: bool = True) -> Ledger:
        """Count ``obj.step()`` calls (an optimizer) and name its ``zero_grad()`` clears.

        Works with any object with ``param_groups`` and ``step()``, and with modules (only
        ``zero_grad()`` is watched). Returns ``self``.
        """
        if any(o is obj for o in self._watched):
            return self
        self._watched.append(obj)
        if hasattr(obj, "param_groups"):
            params = optimizer_params(obj)
            if self.auto:
                self._add_params(named_params(obj))
            ids = [id(p) for p in params]
            if count_steps:
                self._undo.append(_optim_hooks.watch_step(
                    obj, lambda: self._before_step(ids), lambda: self._after_step(ids)))
        elif hasattr(obj, "parameters"):
            params = list(obj.parameters())
            if self.auto:
                self._add_params(named_params(obj))
            ids = [id(p) for p in params]
        else:
            raise TypeError(
                f"watch() expects an optimizer (with param_groups) or a module, got "
                f"{type(obj).__name__}"
            )
        if hasattr(obj, "zero_grad"):
            self._undo.append(_optim_hooks.watch_zero_grad(
                obj, lambda where: self._sync_ids(ids, where)))
        return self

    def _add_params(self, pairs: list[tuple[str, Tensor]]) -> None:
        for name, p in pairs:
            tr = self._tracks.get(id(p))
            if tr is None:
                tr = self._tracks[id(p)] = _Track(name, p)
                if self.attached:
                    self._sync(tr, "tracking began")
            elif tr.name.startswith("leaf[") and not name.startswith("param"):
                tr.name = name  # a better name than the automatic one

    def _sync_ids(self, ids: list[int], where: str) -> None:
        for i in ids:
            tr = self._tracks.get(i)
            if tr is not None:
                self._sync(tr, where)

    def _before_step(self, ids: list[int]) -> None:
        self._sync_ids(ids, f"before optimizer step {self.steps + 1}")

    def _after_step(self, ids: list[int]) -> None:
        self.steps += 1
        for i in ids:
            tr = self._tracks.get(i)
            if tr is not None:
                tr.steps += 1
                self._sync(tr, f"during optimizer step {self.steps}")

    # -- engine callbacks (through the hub) -----------------------------------------------------
    def _begin(self, frame: _Frame) -> BackwardCall:
        label = self._next_label if self._next_label is not None else (
            self._labels[-1] if self._labels else None)
        self._next_label = None
        call = BackwardCall(frame.seq, frame.site, label)
        self.calls.append(call)
        if len(self.calls) > self.max_events:
            del self.calls[: len(self.calls) - self.max_events]
        return call

    def _on_accumulate(self, leaf: Tensor, grad: Tensor, frame: _Frame | None) -> None:
        tr = self._tracks.get(id(leaf))
        if tr is None or tr.param is not leaf:
            if not self.auto or (self._auto_filter is not None and not self._auto_filter(leaf)):
                return
            tr = self._tracks[id(leaf)] = _Track(f"leaf[{len(self._tracks)}]", leaf)
            self._sync(tr, "tracking began")
        call = frame.calls.get(id(self)) if frame is not None else None
        if call is None:  # attached from inside a running backward
            call = BackwardCall(0, call_site(), None)
        if tr.call_seq != call.seq or call.seq == 0:
            self._sync(tr, f"detected before backward #{call.seq} ({call.site})")
            tr.call_seq = call.seq
            self._touched.setdefault(call.seq, []).append(tr)
        arr = grad._array
        tr.events.append(Contribution(
            call, tr.steps,
            _norm(arr) if self.record_norms else None,
            arr.copy() if self.store_values else None,
        ))

    def _end(self, call: BackwardCall, error: BaseException | None, rolled_back: bool) -> None:
        touched = self._touched.pop(call.seq, ())
        call.status = "rolled back" if rolled_back else ("failed" if error else "ok")
        for tr in touched:
            if rolled_back:  # transactional(): the contributions did not land
                tr.events = [e for e in tr.events
                             if not (isinstance(e, Contribution) and e.call is call)]
            tr.remember()
            if len(tr.events) > self.max_events and tr.epoch > 0:
                cut = min(tr.epoch, len(tr.events) - self.max_events)
                del tr.events[:cut]
                tr.epoch -= cut

    # -- detecting clears -----------------------------------------------------------------------
    def _sync(self, tr: _Track, where: str) -> None:
        g = tr.param._grad
        if g is None:
            if tr.exp_ref is None:  # was None (or tracking just began with None): no change
                tr.synced = True
                return
            kind = "set_to_none"
        elif tr.exp_ref is not None and tr.exp_ref() is g:
            if g._vc[0] == tr.exp_ver:
                return
            kind = "modified" if g._array.any() else "zeroed"
        elif not tr.synced:
            kind = "present"
        else:
            kind = "assigned" if g._array.any() else "zeroed"
        tr.synced = True
        self._event(tr, kind, where)

    def _event(self, tr: _Track, kind: str, where: str) -> None:
        g = tr.param._grad
        value = None
        norm = None
        if g is not None:
            arr = g._array
            norm = _norm(arr) if self.record_norms else None
            if self.store_values and arr.any():
                value = arr.copy()
        if g is None and kind == "set_to_none" and "zero_grad" not in where:
            where = f"p.grad = None, {where}"
        tr.epoch = len(tr.events)
        tr.events.append(GradEvent(kind, where, tr.steps, norm, value))
        tr.remember()

    def sync(self) -> None:
        """Look for clears / assignments of every tracked ``.grad`` now (done automatically at
        each backward, watched step and zero_grad, and in :meth:`explain`)."""
        for tr in self._tracks.values():
            self._sync(tr, "detected on inspection")

    # -- reading --------------------------------------------------------------------------------
    def _track(self, param: Tensor | str) -> _Track:
        if isinstance(param, str):
            for tr in self._tracks.values():
                if tr.name == param:
                    return tr
            raise KeyError(f"no tracked parameter named {param!r}; tracked: "
                           f"{[t.name for t in self._tracks.values()]}")
        tr = self._tracks.get(id(param))
        if tr is None or tr.param is not param:
            raise KeyError(
                f"tensor of shape {shape_str(param)} is not tracked by this ledger. Pass it "
                "(or its module) to Ledger(...), or use Ledger() to track every leaf."
            )
        return tr

    def names(self) -> list[str]:
        """Names of the tracked parameters."""
        return [tr.name for tr in self._tracks.values()]

    def history(self, param: Tensor | str) -> list[Contribution | GradEvent]:
        """Every recorded event of one parameter, oldest first (bounded by ``max_events``)."""
        tr = self._track(param)
        if self.attached:
            self._sync(tr, "detected on inspection")
        return list(tr.events)

    def contributions(self, param: Tensor | str) -> list[Contribution]:
        """The contributions since the last clear: what ``.grad`` is the sum of."""
        tr = self._track(param)
        if self.attached:
            self._sync(tr, "detected on inspection")
        return [e for e in tr.events[tr.epoch:] if isinstance(e, Contribution)]

    def explain(self, param: Tensor | str) -> Explanation:
        """``.grad`` of ``param`` as a table: baseline + each contribution since the last clear.

        Example:
            >>> import gradsum
            >>> from gradsum.toolkit import Ledger
            >>> w = gradsum.ones(2, requires_grad=True)
            >>> with Ledger({"w": w}) as ledger:
            ...     (w * 3).sum().backward()
            ...     print(ledger.explain("w"))  # doctest: +ELLIPSIS
            w (2,): .grad = tensor with norm 4.24264 (optimizer steps taken: 0)
            ...
                1  + backward   #...
        """
        tr = self._track(param)
        if self.attached:
            self._sync(tr, "detected on inspection")
        epoch = tr.events[tr.epoch:]
        baseline = epoch[0] if epoch and isinstance(epoch[0], GradEvent) else None
        if baseline is not None and baseline.kind == "set_to_none":
            baseline = None
        contribs = [e for e in epoch if isinstance(e, Contribution)]
        g = tr.param._grad
        total = None
        err = None
        if self.store_values and g is not None:
            if baseline is not None and baseline.value is not None:
                total = baseline.value.copy()
            for c in contribs:
                total = c.value.copy() if total is None else total + c.value
            if total is None:
                total = xp.zeros_like(g._array)
            err = float(xp.max(xp.abs(total - g._array))) if total.size else 0.0
        earlier = 0
        if baseline is not None and baseline.kind == "modified":
            earlier = sum(1 for e in tr.events[: tr.epoch] if isinstance(e, Contribution))
        return Explanation(
            tr.name, shape_str(tr.param), None if g is None else _norm(g._array), baseline,
            contribs, total, err, tr.steps, earlier,
        )

    def verify(self, atol: float = 1e-6, rtol: float = 1e-5) -> float:
        """Check that every tracked ``.grad`` equals baseline + its recorded contributions.

        Needs ``store_values=True``. Returns the largest absolute difference; raises
        :class:`LedgerMismatchError` (an ``AssertionError``) naming the parameter otherwise.
        """
        if not self.store_values:
            raise RuntimeError(
                "verify() needs the contributions' values: create the ledger with "
                "Ledger(params, store_values=True)."
            )
        worst = 0.0
        for tr in self._tracks.values():
            ex = self.explain(tr.param)
            g = tr.param._grad
            if g is None:
                if ex.contributions:
                    raise LedgerMismatchError(
                        f"{tr.name}: .grad is None but {len(ex.contributions)} contribution(s) "
                        "are recorded since the last clear"
                    )
                continue
            tol = atol + rtol * float(xp.max(xp.abs(g._array))) if g._array.size else atol
            assert ex.max_abs_error is not None
            if ex.max_abs_error > tol:
                raise LedgerMismatchError(
                    f"{tr.name}: baseline + contributions differs from .grad by "
                    f"{ex.max_abs_error:.3g} (tolerance {tol:.3g}). Something wrote into "
                    f".grad outside backward without bumping its version counter (e.g. "
                    f"writing to .grad.numpy()).\n{ex}"
                )
            worst = max(worst, ex.max_abs_error)
        return worst

    def summary(self) -> str:
        """One line per tracked parameter: contributions since the last clear, last clear.

        Example:
            >>> import gradsum
            >>> from gradsum.toolkit import Ledger
            >>> w = gradsum.ones(2, requires_grad=True)
            >>> with Ledger({"w": w}) as ledger:
            ...     (w * 3).sum().backward()
            ...     print(ledger.summary())  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
            parameter  contributions  backward calls  last clear
            w          1              #...            -
        """
        rows = []
        for tr in self._tracks.values():
            if self.attached:
                self._sync(tr, "detected on inspection")
            ep = tr.events[tr.epoch:]
            cs = [e for e in ep if isinstance(e, Contribution)]
            base = ep[0] if ep and isinstance(ep[0], GradEvent) else None
            calls = ",".join(f"#{c.call.seq}" for c in cs[:8]) + ("..." if len(cs) > 8 else "")
            rows.append((tr.name, str(len(cs)), calls or "-",
                         "-" if base is None else f"{base.kind} ({base.where})"))
        heads = ("parameter", "contributions", "backward calls", "last clear")
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(heads)]
        out = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip()]
        for r in rows:
            out.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        return "\n".join(out)
