"""Side by side with torch: split/chunk of 0-d tensors, cat with legacy empty tensors, unflatten's
-1 and bad sizes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import same_error_type, same_meta  # noqa: E402

_same_error = same_error_type


_same_meta = same_meta


@pytest.mark.parametrize("call", [
    lambda L: L.chunk(L.tensor(3.0), 2),
    lambda L: L.tensor(3.0).chunk(0),
    lambda L: L.split(L.tensor(3.0), 1),
    lambda L: L.tensor(3.0).split([1], dim=3),
])
def test_split_chunk_of_0d_raise_runtime_error(call: Callable[[Any], Any]) -> None:
    _same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.cat([L.zeros(0, dtype=L.float64)], dim=-3),
    lambda L: L.cat([L.zeros(0, dtype=L.float64), L.zeros(0)], dim=4),
    lambda L: L.cat([L.zeros(2, 3), L.zeros(0, dtype=L.float64)]),
    lambda L: L.cat([L.zeros(0, dtype=L.float64), L.zeros(0, 2)], dim=1),
])
def test_cat_legacy_empty_promotes_but_skips_shape_checks(call: Callable[[Any], Any]) -> None:
    _same_meta(call)


def test_cat_legacy_empty_still_checks_dim_of_the_others() -> None:
    _same_error(lambda L: L.cat([L.zeros(0, dtype=L.float64), L.zeros(2, 3)], dim=-3))


@pytest.mark.parametrize("call", [
    lambda L: L.unflatten(L.zeros(0, 1, 1), -1, (-1, 1)),
    lambda L: L.zeros(0, 1, 1).unflatten(0, (-1, 2)),
])
def test_unflatten_infers_minus_one_from_the_dim(call: Callable[[Any], Any]) -> None:
    _same_meta(call)


def test_unflatten_bad_sizes_raise_runtime_error() -> None:
    _same_error(lambda L: L.zeros(0, 1, 1).unflatten(0, (-1, 0)))
