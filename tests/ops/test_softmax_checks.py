"""Side by side with torch: softmax's order of checks (dim, then emptiness, then dtype)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import both_or_error, same_error_type, same_meta  # noqa: E402

_both = both_or_error


_same_error = same_error_type


_same_meta = same_meta


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_checks_dim_then_emptiness_then_dtype(name: str) -> None:
    _same_error(lambda L: getattr(L, name)(L.zeros(2, 3, dtype=L.int64), 5))
    _same_error(lambda L: getattr(L, name)(L.tensor(3), 2))
    _same_meta(lambda L: getattr(L, name)(L.zeros(0, dtype=L.int64), 0))
    _same_meta(lambda L: getattr(L, name)(L.zeros(2, 0, dtype=L.int32), -1))
    g, t = _both(lambda L: getattr(L, name)(L.tensor(3), 0))
    assert g is t is NotImplementedError
