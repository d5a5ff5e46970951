"""How ops' texts print values the way torch's texts do (nn's messages use it too: ops may not
import nn)."""

from __future__ import annotations

from typing import Any

_TORCH_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def torch_name(dtype: Any) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long", ...), as its messages print it."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)
