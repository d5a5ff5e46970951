"""Fixtures shared by the tests under tests/.

gradsum's default generator starts each process from a random seed, as torch's does, so a
test that draws from it (``gradsum.rand``, a module's initial weights, dropout, a shuffling
DataLoader) would see different numbers on every run. Each test starts from
``manual_seed(0)``: its numbers are the same whatever ran before it and on every run. A test
that needs other numbers seeds itself; one about the random initial seed runs a fresh process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gradsum


@pytest.fixture(autouse=True)
def _seeded_default_generator() -> Iterator[None]:
    gradsum.manual_seed(0)
    yield
