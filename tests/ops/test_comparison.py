"""Side by side with torch: isclose refuses mixed dtypes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import same_error_type  # noqa: E402

_same_error = same_error_type


@pytest.mark.parametrize("name", ["isclose", "allclose"])
@pytest.mark.parametrize("dt", ["float64", "int64"])
def test_isclose_refuses_mixed_dtypes(name: str, dt: str) -> None:
    _same_error(lambda L: getattr(L, name)(L.zeros(2), L.zeros(2, dtype=getattr(L, dt))))
