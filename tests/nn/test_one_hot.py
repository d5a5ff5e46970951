"""Side by side with torch: F.one_hot of an empty tensor without num_classes fails like
torch's."""

from __future__ import annotations

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import same_error_type  # noqa: E402

_same_error = same_error_type


def test_one_hot_of_empty_without_num_classes() -> None:
    _same_error(lambda L: L.nn.functional.one_hot(L.zeros(0, dtype=L.int64)))
