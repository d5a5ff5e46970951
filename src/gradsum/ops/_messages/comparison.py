"""The texts of the comparisons."""

from __future__ import annotations

from typing import Any

from gradsum.ops._messages._format import torch_name


def extremum_argument_not_tensor(name: Any, pos: Any, bad: Any) -> str:
    return (
        f"{name}(): argument '{'other' if pos == 2 else 'input'}' (position {pos}) must be "
        f"Tensor, not {type(bad).__name__}. Wrap it with tensor(), or use clamp() for a "
        "number."
    )


def isclose_dtype_mismatch(x: Any, y: Any) -> str:
    return (
        f"{torch_name(x)} did not match {torch_name(y)}: isclose "
        "compares tensors of one dtype. Convert one with .to(other.dtype) first."
    )


def isin_needs_a_tensor(elements: Any, test_elements: Any) -> str:
    return (
        "isin() received an invalid combination of arguments - got "
        f"({type(elements).__name__}, {type(test_elements).__name__}): at "
        "least one of elements and test_elements must be a Tensor."
    )


def isin_bool_input() -> str:
    return (
        "Unsupported input type encountered for isin(): Bool. Convert "
        "the bool tensor with .long() first."
    )
