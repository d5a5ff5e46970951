"""Side by side with torch: the key types __getitem__ accepts."""

from __future__ import annotations

from typing import Any

import pytest

from diff_helpers import same_op

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- getitem key types ---------------------------------------------------------------------
@pytest.mark.parametrize("key", ["a", [], [0, "a"], [0, 2], 5, (0, 5), 1.0],
                         ids=repr)
def test_getitem_key_types(key: Any) -> None:
    same_op(lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])[key])
