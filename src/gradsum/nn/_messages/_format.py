"""How torch's texts print dtypes, sizes and types (``torch_name`` is ops' own, in
``gradsum/ops/_messages/``: ops raises texts that print dtypes too, and may not import nn)."""

from __future__ import annotations

from collections.abc import Sequence

from gradsum.ops._messages import torch_name  # noqa: F401  (ops prints dtypes the same way)


def size_str(shape: Sequence[int]) -> str:
    return f"gradsum.Size({list(shape)})"


def typename(obj: object) -> str:
    """``gradsum.Tensor`` for a tensor, else the object's type's qualified name."""
    from gradsum._tensor import Tensor

    if isinstance(obj, Tensor):
        return f"gradsum.{type(obj).__name__}"
    return type(obj).__qualname__
