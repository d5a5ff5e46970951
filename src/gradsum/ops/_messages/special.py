"""The texts of the special functions (ops/special/)."""

from __future__ import annotations

from typing import Any


def polygamma_n_not_int(n: Any) -> str:
    return (
        f"polygamma(): argument 'n' (position 1) must be int, not "
        f"{type(n).__name__}"
    )


def polygamma_negative_n(n: Any) -> str:
    return f"polygamma(n, x) does not support negative n. Got n={n}."


def mvlgamma_p_too_small(p: Any) -> str:
    return f"p has to be greater than or equal to 1 (got p={p})"


def polynomial_arguments_not_tensor(name: Any, input: Any, n: Any) -> str:
    return (
        f"{name}(): expected a Tensor for 'input' or 'n', got "
        f"{type(input).__name__} and {type(n).__name__}"
    )
