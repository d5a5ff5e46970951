"""Side by side with torch: arithmetic with a number on the left, add/sub's alpha, integer
powers with negative exponents, remainder's signed zeros, the bitwise operators and invert."""

from __future__ import annotations

import math
from typing import Any

import pytest

from diff_helpers import ramp, same_op

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- promotion: a number on the left of a function-form op, alpha, integer pow ---------------
_KINDS = [("bool", 0), ("bool", 1), ("int64", 0), ("int32", 1), ("uint8", 0), ("float32", 1),
          ("float64", 0)]


_NUMBERS = [True, 2, -3, 1.5]


def _kind(L: Any, kind: tuple[str, int]) -> Any:
    dt, nd = kind
    return ramp(L, (3,) if nd else (), dt)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "floor_divide", "remainder",
                                "where", "bitwise_and", "maximum", "eq", "logical_and"])
@pytest.mark.parametrize("number", _NUMBERS)
def test_number_on_the_left_of_a_function(op: str, number: Any) -> None:
    for kind in _KINDS:
        def call(L: Any, kind: tuple[str, int] = kind) -> Any:
            t = _kind(L, kind)
            if op == "where":
                return L.where(L.tensor([True, False, True]), number, t)
            return getattr(L, op)(number, t)

        same_op(call)


@pytest.mark.parametrize("alpha", [2, -1, 1.5, True, 0])
def test_add_sub_alpha_dtypes(alpha: Any) -> None:
    for kind in _KINDS:
        for other in (True, -3, kind):
            def call(L: Any, kind: tuple[str, int] = kind, other: Any = other) -> Any:
                b = _kind(L, other) if isinstance(other, tuple) else other
                return L.add(_kind(L, kind), b, alpha=alpha)

            same_op(call)


def test_integer_pow_with_negative_tensor_exponents() -> None:
    base, exp = [3, -2, 5, 1, -1, 0, 2], [-1, -3, 2, -5, -3, -1, 0]
    same_op(lambda L: L.tensor(base) ** L.tensor(exp))
    same_op(lambda L: L.pow(2, L.tensor(exp)))
    same_op(lambda L: (-1) ** L.tensor(exp, dtype=L.int32))
    same_op(lambda L: L.tensor([True, False]) ** L.tensor([2, 3]))
    for e in (True, False, 0, 1, 2, 1.5, -1):
        same_op(lambda L, e=e: L.tensor([True, False]) ** e)


@pytest.mark.parametrize("divisor", [3.0, -3.0, math.inf, -math.inf, 0.0])
def test_remainder_signed_zeros_like_torch(divisor: float) -> None:
    vals = [5.0, -5.0, 0.0, -0.0, 3.0, -3.0, math.inf, math.nan]
    same_op(lambda L: L.tensor(vals) % divisor)
    same_op(lambda L: L.remainder(L.tensor(vals), L.tensor([divisor] * len(vals))))
    same_op(lambda L: divisor % L.tensor(vals))


# -- bitwise operators -------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["&", "|", "^"])
def test_bitwise_operators(op: str) -> None:
    """&, | and ^ between tensors of each kind and Python numbers: torch's result dtypes and
    values, or its exception types."""
    import operator

    fn = {"&": operator.and_, "|": operator.or_, "^": operator.xor}[op]
    kinds = [*_KINDS, ("py", True), ("py", 6), ("py", 1.5)]
    for ka in kinds:
        for kb in kinds:
            if ka[0] == "py" and kb[0] == "py":
                continue

            def call(L: Any, ka: Any = ka, kb: Any = kb) -> Any:
                a = ka[1] if ka[0] == "py" else _kind(L, ka)
                b = kb[1] if kb[0] == "py" else _kind(L, kb)
                return fn(a, b)

            same_op(call)


@pytest.mark.parametrize("dtype", ["bool", "int64", "uint8", "float32"])
def test_invert_and_bitwise_not(dtype: str) -> None:
    same_op(lambda L: ~ramp(L, (3,), dtype))
    same_op(lambda L: L.bitwise_not(ramp(L, (3,), dtype)))
