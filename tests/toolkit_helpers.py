"""Shared helpers of the toolkit tests: the autouse fixture that checks a test leaves no
toolkit observer registered in the engine (import it into a test module to apply it there)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gradsum.autograd import engine, graph


@pytest.fixture(autouse=True)
def _toolkit_leaves_engine_clean() -> Iterator[None]:
    yield
    assert engine.backward_observers == []
    assert graph.accumulate_observers == []
