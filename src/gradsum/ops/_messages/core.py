"""The texts of the op base and the registry (ops/_core.py)."""

from __future__ import annotations

from typing import Any


# -- _core.py -------------------------------------------------------------------------------------
def derivative_not_implemented(op: Any) -> str:
    """torch's text for an aten op with no derivative formula."""
    return f"derivative for aten::{op} is not implemented"


def derivative_for_not_implemented(what: Any) -> str:
    """torch's text for a derivative it names but does not implement (``'inplace version of
    ...'``, ``'_unique2'``, ``'polygamma'`` ...)."""
    return f"the derivative for '{what}' is not implemented."


def inplace_derivative_not_implemented(op: Any) -> str:
    return derivative_for_not_implemented(f"inplace version of {op}")


def argument_not_tensor(name: Any, arg: Any, pos: Any, v: Any) -> str:
    return (
        f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
        f"{type(v).__name__}. Wrap it with gradsum.tensor()."
    )


def unsupported_operand_type(v: Any) -> str:
    return f"unsupported operand type {type(v).__name__}: expected a Tensor or a number"


def operation_failed_for_shapes(sa: Any, sb: Any) -> str:
    return f"operation failed for shapes {sa} and {sb}"


def wrap_dim_out_of_range(lo: Any, hi: Any, dim: Any) -> str:
    return (f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim}): "
            f"pass a dim from {lo} to {hi} (negative dims count from the last)")


def dim_appears_multiple_times(dim: Any) -> str:
    return f"dim {tuple(dim)} appears multiple times in the list of dims"


def tensor_method_declared_twice(name: Any, out: Any, obj: Any) -> str:
    return f"Tensor.{name} is declared twice (by {out[name]!r} and {obj!r})"
