"""The texts of the random sampling ops."""

from __future__ import annotations

from typing import Any


# -- sampling.py ----------------------------------------------------------------------------------
def geometric_expects_p_p(p: Any) -> str:
    return f"geometric_ expects p to be in (0, 1), but got p={p}"


def cauchy_distribution_continuous_probability(given: Any, tensor: Any) -> str:
    return (
        "Cauchy distribution is a continuous probability distribution. dtype must be a "
        f"floating point but you specified {given.get(str(tensor._array.dtype), 'int')}"
    )


def cauchy_expects_sigma_found(sigma: Any) -> str:
    return f"cauchy_ expects sigma > 0.0, but found sigma={sigma}"


def log_normal_expects_std_found(std: Any) -> str:
    return f"log_normal_ expects std > 0.0, but found std={std:g}"


def exponential_distribution_continuous_probability(given: Any) -> str:
    return (
        "Exponential distribution is a continuous probability distribution. dtype "
        f"must be a floating point but you specified {given}. Convert the tensor "
        "with .float() first."
    )
