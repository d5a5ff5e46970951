"""How ops' texts print values the way torch's texts do (nn's messages use it too: ops may not
import nn)."""

from __future__ import annotations

from typing import Any

from gradsum import _dtype as D


def torch_name(dtype: Any) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long", ...), as its messages print it."""
    name = dtype if isinstance(dtype, str) else dtype.name
    return D._TORCH_SCALAR_NAMES.get(name, name)
