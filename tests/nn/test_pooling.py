"""Side by side with torch: the 2-D pooling functions and modules (values with and without ties,
integer inputs, errors, reprs). The 1-D/3-D, adaptive and unpooling layers: test_conv_nd.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, check_grads, same_error, same_repr  # noqa: E402
from nn_helpers import wide_randn_arrays  # noqa: E402

Program = Callable[..., Any]


RS = np.random.RandomState(1234)
_arr = wide_randn_arrays(RS)


# -- pooling ------------------------------------------------------------------------------
POOLS: list[tuple[str, Program, bool]] = [  # id, program, ties
    ("max", lambda lib, F, x: F.max_pool2d(x, 2), False),
    ("max_ties_overlap", lambda lib, F, x: F.max_pool2d(x, 3, 1, 1, return_indices=True), True),
    ("max_ceil_dil", lambda lib, F, x: F.max_pool2d(x, (3, 2), (2, 3), (1, 1), (1, 2),
                                                     ceil_mode=True, return_indices=True), False),
    ("max_unbatched", lambda lib, F, x: F.max_pool2d(x[0], 3, 2, 1, 2, True), False),
    ("avg", lambda lib, F, x: F.avg_pool2d(x, 2), False),
    ("avg_pad_ceil", lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1, True, True), False),
    ("avg_exclude_pad", lambda lib, F, x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1), True, False),
     False),
    ("avg_divisor", lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1, True, False, 5), False),
    ("avg_unbatched", lambda lib, F, x: F.avg_pool2d(x[0], 3, 2, 1, False, False), False),
    ("adaptive_avg", lambda lib, F, x: F.adaptive_avg_pool2d(x, (3, 4)), False),
    ("adaptive_avg_none", lambda lib, F, x: F.adaptive_avg_pool2d(x, (None, 4)), False),
    ("adaptive_avg_1", lambda lib, F, x: F.adaptive_avg_pool2d(x, 1), False),
    ("adaptive_avg_up", lambda lib, F, x: F.adaptive_avg_pool2d(x[0], 9), False),
    ("adaptive_max", lambda lib, F, x: F.adaptive_max_pool2d(x, (3, 4), True), True),
    ("adaptive_max_none", lambda lib, F, x: F.adaptive_max_pool2d(x[0], (5, None)), False),
    ("max1d", lambda lib, F, x: F.max_pool1d(x[0], 3, 2, 1), False),
    ("max1d_idx", lambda lib, F, x: F.max_pool1d(x[:, 0, 0], 2, return_indices=True), True),
    ("avg1d", lambda lib, F, x: F.avg_pool1d(x[0], 3, 2, 1, True, False), False),
]


@pytest.mark.parametrize(("fn", "ties", "name"), [(p[1], p[2], "1d" not in p[0]) for p in POOLS],
                         ids=[p[0] for p in POOLS])
def test_pooling(fn: Program, ties: bool, name: bool) -> None:
    """The 2-D pooling functions: torch's values, derivatives (ties included) and grad_fn names."""
    # (1-d pooling ends in a squeeze, whose grad_fn gradsum names SqueezeBackward0)
    check_grads(fn, [_arr(2, 3, 7, 6, ties=ties)], name=name)


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 0),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 2, dilation=0),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 6),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), (2, 2, 2)),
    lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 2, 5, 5), 3, padding=2),
    lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 2, 5, 5), 2, divisor_override=0),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 2, 5, 5), (2,)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(5), 2),
])
def test_pooling_errors(prog: Program) -> None:
    same_error(prog)


def test_pooling_integer_inputs() -> None:
    x = np.arange(32).reshape(1, 2, 4, 4) * 3 - 20
    for fn in (lambda lib: lib.nn.functional.max_pool2d(lib.tensor(x), 2, 1, 1),
               lambda lib: lib.nn.functional.avg_pool2d(lib.tensor(x), 3, 2, 1)):
        assert fn(gradsum).tolist() == fn(torch).tolist()


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool2d(2), lambda nn: nn.MaxPool2d((3, 2), 1, 1, 2, True, True),
    lambda nn: nn.AvgPool2d(3), lambda nn: nn.AvgPool2d(3, 2, 1, True, False, 4),
    lambda nn: nn.AdaptiveAvgPool2d((None, 3)), lambda nn: nn.AdaptiveMaxPool2d(2),
    lambda nn: nn.MaxPool1d(2), lambda nn: nn.AvgPool1d(3), lambda nn: nn.AvgPool1d(3, 2, 1),
])
def test_pooling_module_reprs_and_forward(make: Program) -> None:
    same_repr(lambda lib: make(lib.nn))
    x = _arr(2, 3, 8, 7)
    x = x[:, :, 0] if "1d" in type(make(gradsum.nn)).__name__ else x
    outs = []
    for lib in (torch, gradsum):
        y = make(lib.nn)(lib.tensor(x, dtype=lib.float64))
        outs.append([as_np(t) for t in (y if isinstance(y, tuple) else (y,))])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12)


F = gradsum.nn.functional
