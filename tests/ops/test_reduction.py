"""Side by side with torch: norm over matrix dims and with p=None, reductions to a non-floating
dtype under autograd and with an explicit dtype, logsumexp over dim=()."""

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
    lambda L, x: L.norm(x, dim=(0, 1, 2)),
    lambda L, x: x.norm(p="fro", dim=[0, 1, 2], keepdim=True),
    lambda L, x: L.norm(x, dim=(0, 1, 5)),
    lambda L, x: L.norm(x, p="nuc"),
])
def test_norm_fro_over_three_dims_is_a_matrix_norm_error(call: Callable[..., Any]) -> None:
    _same_error(lambda L: call(L, L.ones(2, 3, 4, dtype=L.float64)))


def test_norm_p_none_is_the_two_norm() -> None:
    _same_meta(lambda L: L.norm(L.tensor([3.0, 4.0]), p=None, dim=(0,)))


@pytest.mark.parametrize("call", [
    lambda L, x: L.prod(x, dtype=L.int64),
    lambda L, x: L.prod(x, 1, dtype=L.int64),
    lambda L, x: L.sum(x, 0, dtype=L.bool),
    lambda L, x: L.cumsum(x, 0, dtype=L.int64),
])
def test_reduction_to_int_dtype_under_autograd_raises(call: Callable[..., Any]) -> None:
    _same_error(lambda L: call(L, L.ones(2, 3, requires_grad=True)))


@pytest.mark.parametrize("call", [
    lambda L: L.prod(L.ones(2, dtype=L.int64), dtype=L.int32),
    lambda L: L.prod(L.ones(2), dtype=L.bool),
    lambda L: L.prod(L.ones(2, dtype=L.int64), dtype=L.uint8),
    lambda L: L.sum(L.ones(2, dtype=L.int64), dtype=L.int16),
    lambda L: L.sum(L.ones(2), dtype=L.bool),
    lambda L: L.cumsum(L.ones(2, dtype=L.int64), 0, dtype=L.int32),
    lambda L: L.prod(L.ones(2, 3, requires_grad=True), dtype=L.float64),
])
def test_reduction_keeps_an_explicit_dtype(call: Callable[[Any], Any]) -> None:
    _same_meta(call)


@pytest.mark.parametrize("call", [
    lambda L: L.logsumexp(L.ones(2, 3, dtype=L.int64), dim=()),
    lambda L: L.logsumexp(L.ones(3, requires_grad=True), dim=[]),
])
def test_logsumexp_over_empty_dim_fails_like_torch(call: Callable[[Any], Any]) -> None:
    _same_error(call)


@pytest.mark.parametrize("call", [
    lambda L: L.logsumexp(L.ones(2, 3, dtype=L.int64), dim=(), keepdim=True),
    lambda L: L.logsumexp(L.tensor(2.0), dim=()),
    lambda L: L.logsumexp(L.ones(0, 3), dim=()),
])
def test_logsumexp_over_empty_dim_where_torch_computes(call: Callable[[Any], Any]) -> None:
    _same_meta(call)
