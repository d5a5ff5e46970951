"""The accumulation toolkit: make gradient-accumulation bugs loud, visible, impossible.

Everything here is opt-in. With no ledger, sanitizer or transactional scope active, nothing is
registered with the engine (``engine.backward_observers`` and ``graph.accumulate_observers``
stay empty) and gradsum behaves, and costs, exactly as without the toolkit.

- :class:`Ledger`: who contributed what to each ``.grad``, from which line, in which step.
- :func:`strict` / :class:`StrictOptimizer` / :class:`Sanitizer`: checks at ``optimizer.step()``
  (forgotten ``zero_grad``, accumulation windows, graphs in ``.grad``, leaked graphs,
  ``None`` versus zero).
- :func:`micro_batches`, :func:`accumulate_backward`, :func:`check_accumulation`: exact
  micro-batching (the loss normalised by the whole window's count).
- :func:`transactional`: a backward that fails part way leaves every ``.grad`` untouched.
- :func:`to_dot` / :func:`draw`: the graph, with leaves, their sinks and fan-in.

Example:
    >>> import gradsum
    >>> from gradsum import toolkit
    >>> w = gradsum.ones(2, requires_grad=True)
    >>> with toolkit.Ledger({"w": w}) as ledger:
    ...     (w * 2).sum().backward()
    >>> len(ledger.contributions(w))
    1
"""

from __future__ import annotations

from gradsum.toolkit import sanitizer as _sanitizer
from gradsum.toolkit.dot import draw, to_dot
from gradsum.toolkit.ledger import Contribution, Explanation, GradEvent, Ledger, LedgerMismatchError
from gradsum.toolkit.microbatch import (
    AccumulationMismatchError,
    MicroBatch,
    accumulate_backward,
    check_accumulation,
    micro_batches,
)
from gradsum.toolkit.sanitizer import (
    AccumulationWindowWarning,
    GradGraphError,
    GraphLeakWarning,
    NoneVsZeroWarning,
    Sanitizer,
    StaleGradientError,
    StepReport,
    StrictOptimizer,
    strict,
)
from gradsum.toolkit.transactional import transactional, transactional_backward

if _sanitizer.env_strict():  # GRADSUM_STRICT=1: strict mode for every optimizer
    _sanitizer.apply_env()

__all__ = [
    "AccumulationMismatchError",
    "AccumulationWindowWarning",
    "GradGraphError",
    "GraphLeakWarning",
    "NoneVsZeroWarning",
    "Sanitizer",
    "StaleGradientError",
    "StepReport",
    "StrictOptimizer",
    "strict",
    "Contribution",
    "Explanation",
    "GradEvent",
    "Ledger",
    "LedgerMismatchError",
    "MicroBatch",
    "accumulate_backward",
    "check_accumulation",
    "draw",
    "micro_batches",
    "to_dot",
    "transactional",
    "transactional_backward",
]
