"""Side by side with torch: tensor()'s dtype inference, elements and value errors, arange and
the factory functions, requires_grad at creation and 0-d flatten."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum
from diff_helpers import bool_of, same_op

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


# -- tensor(): torch's dtype inference and errors ---------------------------------------------
_DATA: list[Any] = [
    [np.float64(1.5)], [np.int32(3), 1], [np.float16(1.0), 1.0], [[np.float16(1.0)]],
    [np.float64(1.0), True], [True, np.int8(1)], [np.uint8(1), np.int8(1)],
    [np.ones(2), np.ones(2)], [np.ones(2, np.int32), [1, 2]], [[1, 2], [3]], [[1, 2], 3],
    [1, [2]], [None], None, [[1], [None]], {1, 2}, "a", ["a"], [1, "a"], b"ab",
    [2**63], [-(2**63) - 1], [2**63, 1.0], [], [[]], (), range(3), [np.array(1.0)],
    [True, False], [1, 2.5], 3, 2.5, True,
]


@pytest.mark.parametrize("data", _DATA, ids=repr)
def test_tensor_infers_like_torch(data: Any) -> None:
    same_op(lambda L: L.tensor(data))


@pytest.mark.parametrize("case", [
    lambda L: L.tensor([L.tensor(1.0, dtype=L.float64), 1]),
    lambda L: L.tensor([L.tensor([1.0]), 2.0]),
    lambda L: L.tensor([L.tensor([[1.0]]), L.tensor([[2.0]])]),
    lambda L: L.tensor([L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])]),
    lambda L: L.tensor([L.tensor([1, 2]), [1, 2]]),
    lambda L: L.tensor([300], dtype=L.uint8),
    lambda L: L.tensor([1e10], dtype=L.int32),
    lambda L: L.tensor([float("nan")], dtype=L.int64),
    lambda L: L.tensor([1], dtype="float32"),
    lambda L: L.from_numpy([1, 2]),
    lambda L: L.as_tensor([np.ones(2), np.ones(2)]),
])
def test_tensor_elements_and_value_errors(case: Callable[[Any], Any]) -> None:
    same_op(case)


# -- factories ---------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    (5, 1), (1, 5, -1), (-3,), (1, math.inf), (math.nan,), (np.float32(2.5),),
    (0.5, 5.7, 1.5, "int64"), (0, 5, 0.5, "int64"), (0.5, 5.7, 1.5, "int32"),
    (-2.5, 2, 0.7, "uint8"), (0, 1, 0.5, "int32"), (1, 5, 1, "bool"), (0, 1, 0.25),
])
def test_arange_like_torch(args: tuple[Any, ...]) -> None:
    *nums, dt = args if isinstance(args[-1], str) else (*args, None)

    def call(L: Any) -> Any:
        kw = {} if dt is None else {"dtype": bool_of(L) if dt == "bool" else getattr(L, dt)}
        return L.arange(*nums, **kw)

    same_op(call)


@pytest.mark.parametrize("case", [
    lambda L: L.arange(end=3), lambda L: L.arange(3, step=2), lambda L: L.arange(None),
    lambda L: L.arange(L.tensor(2.5)), lambda L: L.linspace(0, 1, -1),
    lambda L: L.linspace(0, 1, 1), lambda L: L.linspace(0, 1, 0),
    lambda L: L.linspace(0, 10, 4, dtype=bool_of(L)), lambda L: L.eye(-1), lambda L: L.eye(2, -1),
    lambda L: L.eye(2, 3), lambda L: L.full(2, 1.0), lambda L: L.full((2,), 2**63),
    lambda L: L.full((2,), 300, dtype=L.int8), lambda L: L.full((2,), math.nan, dtype=L.int64),
    lambda L: L.full((2,), L.tensor(1)), lambda L: L.full((2,), True),
    lambda L: L.full((2,), 1, L.float64), lambda L: L.full_like(L.tensor([1]), math.nan),
    lambda L: L.zeros(size=(2, 3)), lambda L: L.ones(size=[2]), lambda L: L.zeros(size=2),
    lambda L: L.zeros(2.0), lambda L: L.ones([2.0]), lambda L: L.zeros(True),
    lambda L: L.zeros("2"), lambda L: L.zeros(2, dtype="float32"),
    lambda L: L.rand(2, dtype=L.int64), lambda L: L.randn(2, dtype=bool_of(L)),
    lambda L: L.rand_like(L.tensor([1, 2])), lambda L: L.randn_like(L.ones(2), dtype=L.int64),
    lambda L: L.zeros_like([1.0]), lambda L: L.randint_like(L.ones(2), 5, dtype=L.int64).dtype,
    lambda L: L.randint_like(L.ones(2), 5, 2), lambda L: L.randint_like(L.ones(2), 2.5),
    lambda L: L.randint(5, 2, (3,)), lambda L: L.randint(0, (3,)), lambda L: L.randint(5),
    lambda L: L.randint(2.5, (3,)), lambda L: L.randint(5, 3), lambda L: L.randint(2**63, (2,)),
    lambda L: L.randint(10, (2,), dtype=bool_of(L)), lambda L: L.randint(300, (2,), dtype=L.int8),
    lambda L: L.randint(2, (3,), requires_grad=True),
    lambda L: L.randint(1, 2, (3,), dtype=L.float32, requires_grad=True),
    lambda L: L.randint(3, size=(2,)).dtype, lambda L: L.randint(high=3, size=(2,)).dtype,
    lambda L: L.randint(5, (-1,)), lambda L: L.randperm(-1), lambda L: L.randperm(2.0),
    lambda L: L.randperm(3, dtype=bool_of(L)),
])
def test_factories_like_torch(case: Callable[[Any], Any]) -> None:
    same_op(case)


@pytest.mark.parametrize("call", ["ones(2, requires_grad=1)", "tensor([1.0], requires_grad=1)",
                                  "zeros(2, requires_grad=None)", "ones(()).flatten(1, -1)",
                                  "ones(()).flatten(0, -1)", "ones(()).flatten()"])
def test_creation_requires_grad_and_0d_flatten_like_torch(call):
    outcome = []
    for lib in (torch, gradsum):
        try:
            r = eval(call, {}, {"ones": lib.ones, "tensor": lib.tensor, "zeros": lib.zeros})
            outcome.append((tuple(r.shape), r.requires_grad))
        except (TypeError, IndexError) as e:
            outcome.append(type(e).__name__)
    assert outcome[1] == outcome[0]
