"""The texts of the random sampling ops."""

from __future__ import annotations

from typing import Any


# -- sampling.py ----------------------------------------------------------------------------------
def geometric_p_out_of_range(p: Any) -> str:
    return f"geometric_ expects p to be in (0, 1), but got p={p}"


def cauchy_dtype_not_floating(given: Any, tensor: Any) -> str:
    return (
        "Cauchy distribution is a continuous probability distribution. dtype must be a "
        f"floating point but you specified {given.get(str(tensor._array.dtype), 'int')}"
    )


def cauchy_sigma_not_positive(sigma: Any) -> str:
    return f"cauchy_ expects sigma > 0.0, but found sigma={sigma}"


def log_normal_std_not_positive(std: Any) -> str:
    return f"log_normal_ expects std > 0.0, but found std={std:g}"


def exponential_dtype_not_floating(given: Any) -> str:
    return (
        "Exponential distribution is a continuous probability distribution. dtype "
        f"must be a floating point but you specified {given}. Convert the tensor "
        "with .float() first."
    )
