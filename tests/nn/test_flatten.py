"""Side by side with torch: nn.Unflatten."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

from diff_helpers import (  # noqa: E402
    same,
    same_error,
)


def test_unflatten() -> None:
    """nn.Unflatten's repr, the -1 it infers and its refusals of bad sizes, as torch's."""
    def program(lib: Any) -> Any:
        m = lib.nn.Unflatten(1, (2, -1))
        return repr(m), tuple(m(lib.ones(4, 6)).shape)

    assert same(program) == ("Unflatten(dim=1, unflattened_size=(2, -1))", (4, 2, 3))
    for bad in (3, (2.0, 3)):
        same_error(lambda lib, bad=bad: lib.nn.Unflatten(1, bad))
