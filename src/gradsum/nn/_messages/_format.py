"""How torch's texts print dtypes, sizes and types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_TORCH_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def torch_name(dtype: Any) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long", ...), as its messages print it."""
    return _TORCH_NAMES.get(dtype.name, dtype.name)


def size_str(shape: Sequence[int]) -> str:
    return f"gradsum.Size({list(shape)})"


def typename(obj: object) -> str:
    """``gradsum.Tensor`` for a tensor, else the object's type's qualified name."""
    from gradsum._tensor import Tensor

    if isinstance(obj, Tensor):
        return f"gradsum.{type(obj).__name__}"
    return type(obj).__qualname__
