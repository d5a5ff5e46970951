"""Regressions found by the random-program fuzzer's sweep of seeds 10000-11999
(tests/test_diff_programs.py), each run side by side with torch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import outcome as _outcome  # noqa: E402


def _both(program: Any) -> None:
    want: list[Any] = []
    got: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch: masked_fill_ on expanded is deprecated)
        program(torch, want)
        program(gradsum, got)
    assert len(want) == len(got), (want, got)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, equal_nan=True)
        else:
            assert w == g, (want, got)


def test_masked_fill_on_an_expanded_tensor_writes_the_shared_elements() -> None:
    # seeds 10151, 11417, 11946: torch's masked_fill_ does not check internal overlap (a
    # deprecation warning); a shared element masked anywhere takes the value. gradsum raised.
    def program(m: Any, log: list[Any]) -> None:
        y = m.tensor([[1.0], [2.0], [float("nan")]]).expand(3, 3)
        mask = m.tensor([[True, False, False], [False, False, False], [False, True, False]])
        v = y._version
        y.masked_fill_(mask, 5.0)
        log.append(np.array(y.tolist()))
        log.append(y._version - v)

    _both(program)


def test_a_recorded_masked_fill_on_an_expanded_view_fails_in_backward() -> None:
    # seed 11535: recorded, the forward works; the backward (CopySlices) refuses the region
    def program(m: Any, log: list[Any]) -> None:
        a = m.tensor([[1.0], [2.0]], requires_grad=True)
        b = a * 1
        y = b.expand(2, 3)
        y.masked_fill_(m.tensor([[True, False, False], [False, False, False]]), 5.0)
        log.append(np.array(y.tolist()))
        log.append(_outcome(lambda: y.sum().backward()))
        log.append(a.grad is None)

    _both(program)


def test_copy_of_the_same_elements_into_an_expanded_tensor_writes_nothing() -> None:
    # seeds 11633 (x.copy_(x)) and 10746 (x[...] = x): torch's copy_ returns early when source
    # and destination are the same elements, so an expanded tensor passes; gradsum raised
    def program(m: Any, log: list[Any]) -> None:
        x = m.tensor([[1.0], [2.0]]).expand(2, 3)
        v = x._version
        log.append(_outcome(lambda: x.copy_(x)))
        log.append(_outcome(lambda: x.__setitem__(Ellipsis, x)))
        log.append(_outcome(lambda: x.copy_(x.clone())))
        log.append(np.array(x.tolist()))
        log.append(x._version - v)

    _both(program)
