"""Side by side with torch: F.linear's shape checks and nn.Bilinear."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402
    check_grads,
    same_error,
    same_repr,
)
from nn_helpers import (  # noqa: E402
    floats,
    randn_arrays,
)


# -- F.linear: torch's checks of the weight and the bias --------------------------------------
@pytest.mark.parametrize("shapes", [
    ((2, 3), (3,), (1,)),          # 1-D weight and a bias: addmm needs a matrix
    ((2, 3), (3,), ()),
    ((3,), (3,), (2,)),
    ((5, 2, 3), (3,), (1,)),
    ((2, 3), (2, 2, 3), None),      # 3-D weight
    ((2, 3), (4, 3), (3,)),         # the bias does not broadcast
    ((2, 3), (4, 3), (3, 4)),
    ((2, 3), (4, 3), (1, 2, 4)),    # the bias would enlarge the output
    ((3,), (4, 3), (2, 4)),
])
def test_linear_weight_and_bias_shape_errors(shapes: tuple[Any, ...]) -> None:
    x, w, b = shapes

    def prog(lib: Any) -> Any:
        bias = None if b is None else (lib.ones(*b) if b else lib.tensor(1.0))
        return lib.nn.functional.linear(lib.ones(*x), lib.ones(*w), bias)

    assert same_error(prog) is RuntimeError


@pytest.mark.parametrize("shapes", [
    ((3,), (3,), ()), ((2, 3), (3,), None), ((3,), (4, 3), (1,)), ((2, 3), (4, 3), (2, 1)),
    ((5, 2, 3), (4, 3), (4,)),
])
def test_linear_accepted_shapes_still_match(shapes: tuple[Any, ...]) -> None:
    x, w, b = shapes
    outs = []
    for lib in (gradsum, torch):
        bias = None if b is None else (lib.ones(*b) * 0.5 if b else lib.tensor(0.5))
        xt = lib.arange(float(np.prod(x))).reshape(x)
        outs.append(floats(lib.nn.functional.linear(xt, lib.ones(*w), bias)))
    np.testing.assert_allclose(outs[0], outs[1])


RS = np.random.RandomState(4321)
_arr = randn_arrays(RS)


def test_bilinear() -> None:
    """F.bilinear / nn.Bilinear as torch's: values, first and second derivatives, reprs, the
    weight's shape and init bound, the shape error."""
    check_grads(lambda lib, F, a, b, w, c: F.bilinear(a, b, w, c),
                [_arr(4, 3), _arr(4, 2), _arr(5, 3, 2), _arr(5)])
    check_grads(lambda lib, F, a, b, w: F.bilinear(a, b, w), [_arr(2, 4, 3), _arr(2, 4, 2),
                                                              _arr(5, 3, 2)], second=False)
    same_repr(lambda lib: lib.nn.Bilinear(3, 2, 5))
    same_repr(lambda lib: lib.nn.Bilinear(3, 2, 5, bias=False))
    m = gradsum.nn.Bilinear(4, 2, 3)
    assert tuple(m.weight.shape) == (3, 4, 2) and float(m.weight.abs().max()) <= 0.5
    assert tuple(m(gradsum.ones(7, 4), gradsum.ones(7, 2)).shape) == (7, 3)
    same_error(lambda lib: lib.nn.functional.bilinear(lib.ones(4, 3), lib.ones(5, 2),
                                                      lib.ones(5, 3, 2)))
