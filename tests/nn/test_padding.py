"""Side by side with torch: F.pad in every mode, the padding modules, and gradcheck /
gradgradcheck of the pad and pooling primitives in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import check_grads, same_error  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from nn_helpers import wide_randn_arrays  # noqa: E402

Program = Callable[..., Any]


RS = np.random.RandomState(1234)
_arr = wide_randn_arrays(RS)


# -- F.pad and Conv2d padding modes --------------------------------------------------------
PADS = [
    ((2, 3, 4), (1, 2), "constant"), ((2, 3, 4), (1, -1, 2, 0, 1, 1), "constant"),
    ((3, 4), (-2, -1), "constant"), ((2, 3, 4), (0, 0, -3, 2), "constant"),
    ((1, 3, 4), (3, 2), "reflect"), ((3, 4), (2, -1), "reflect"),
    ((1, 1, 3, 4), (3, -1, 2, 1), "reflect"), ((2, 3, 4), (1, 1, 2, 2), "reflect"),
    ((1, 3, 4), (3, 5), "replicate"), ((1, 1, 3, 4), (3, -1, 2, 4), "replicate"),
    ((3, 4), (2, 0), "replicate"), ((1, 3, 4), (4, 2), "circular"),
    ((1, 1, 3, 4), (3, -1, 2, 1), "circular"), ((2, 3, 4), (1, 1, 1, 1), "circular"),
    ((1, 1, 2, 3, 4), (1, 1, 1, 1, 1, 1), "reflect"),
    ((1, 2, 3, 4), (2, 1, 1, 1, 1, 1), "replicate"),
]


@pytest.mark.parametrize(("shape", "pad", "mode"), PADS)
def test_pad(shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> None:
    """F.pad in each mode: torch's values, derivatives and grad_fn names."""
    value = 1.5 if mode == "constant" else None
    check_grads(lambda lib, F, x: F.pad(x, pad, mode=mode, value=value), [_arr(*shape)], name=True)


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,)),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1, 1, 1, 1, 1)),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (3, 3), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 1, 2, 3), (0, 0, 2, 0), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (4, 2), mode="circular"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (2, 2), mode="foo"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (2, 2), mode="replicate", value=1.0),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (-4, 2)),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (-2, -2)),
    lambda lib: lib.nn.functional.pad(lib.ones(3), (1, 2), mode="replicate"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 1, 2, 3), (1, 2), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (1.5, 2)),
])
def test_pad_errors(prog: Program) -> None:
    same_error(prog)


# -- gradcheck / gradgradcheck of the new primitives ------------------------------------------
def _x(*shape: int, ties: bool = False) -> gradsum.Tensor:
    return gradsum.tensor(_arr(*shape, ties=ties), dtype=gradsum.float64, requires_grad=True)


F = gradsum.nn.functional


PRIMITIVES: list[tuple[str, Program, tuple[int, ...]]] = [
    ("constant_pad", lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), (2, 3, 4)),
    ("reflect_pad", lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), (1, 2, 3, 4)),
    ("replicate_pad", lambda x: F.pad(x, (3, -1), mode="replicate"), (2, 3, 4)),
    ("circular_pad", lambda x: F.pad(x, (2, 1, -1, 2), mode="circular"), (1, 3, 4)),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 2, 5, 6)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, True, False), (2, 2, 5, 6)),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 5, 7)),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 3)), (2, 5, 7)),
]


@pytest.mark.parametrize(("fn", "shape"), [p[1:] for p in PRIMITIVES],
                         ids=[p[0] for p in PRIMITIVES])
def test_primitive_gradcheck(fn: Program, shape: tuple[int, ...]) -> None:
    x = _x(*shape)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
