"""Side by side with torch: interpolate / Upsample in every mode, and the upsampling
primitives' gradcheck / gradgradcheck and double-backward node names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import check_grads, same_error, same_repr  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from nn_helpers import randn_arrays  # noqa: E402

Program = Callable[..., Any]


RS = np.random.RandomState(4321)
_arr = randn_arrays(RS)


# -- interpolate / Upsample ---------------------------------------------------------------------
INTERP = [
    ((1, 2, 3, 4), {"scale_factor": 2}),
    ((1, 2, 3, 4), {"size": (5, 7)}),
    ((1, 2, 5, 6), {"size": (3, 4)}),
    ((1, 2, 3, 4), {"scale_factor": 1.7}),
    ((1, 2, 3, 4), {"scale_factor": 1.7, "recompute_scale_factor": True}),
    ((1, 2, 3, 4), {"scale_factor": (2.5, 0.6)}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "bilinear"}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "bilinear", "align_corners": True}),
    ((1, 2, 5, 6), {"size": (2, 3), "mode": "bilinear"}),
    ((1, 2, 3, 4), {"scale_factor": 1.7, "mode": "bilinear"}),
    ((1, 2, 3, 4), {"size": 1, "mode": "bilinear", "align_corners": True}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "nearest-exact"}),
    ((2, 3, 4), {"scale_factor": 3}),
    ((2, 3, 4), {"size": 7, "mode": "linear"}),
    ((2, 3, 4), {"size": 7, "mode": "linear", "align_corners": True}),
    ((2, 3, 7), {"scale_factor": 0.45, "mode": "linear"}),
    ((2, 3, 4), {"size": 9, "mode": "nearest-exact"}),
]


@pytest.mark.parametrize("shape,kw", INTERP)
def test_interpolate(shape: tuple[int, ...], kw: dict[str, Any]) -> None:
    """F.interpolate in each mode: torch's values, derivatives and grad_fn names."""
    check_grads(lambda lib, F, x: F.interpolate(x, **kw), [_arr(*shape)], name=True)


def test_interpolate_float32_and_modules() -> None:
    x = RS.rand(1, 1, 3, 5).astype(np.float32)
    for kw in ({"scale_factor": 1.3}, {"size": (4, 9), "mode": "bilinear"}):
        t = torch.nn.functional.interpolate(torch.tensor(x), **kw)
        g = gradsum.nn.functional.interpolate(gradsum.tensor(x), **kw)
        assert g.dtype == gradsum.float32
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)
    same_repr(lambda lib: lib.nn.Upsample(scale_factor=2, mode="bilinear"))
    same_repr(lambda lib: lib.nn.Upsample(size=(3, 4)))
    same_repr(lambda lib: lib.nn.Upsample(scale_factor=(2, 3)))
    same_repr(lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=2))
    same_repr(lambda lib: lib.nn.UpsamplingBilinear2d(size=5))
    check_grads(lambda lib, F, x: lib.nn.UpsamplingBilinear2d(size=5)(x), [_arr(1, 1, 3, 2)])
    check_grads(lambda lib, F, x: lib.nn.Upsample(scale_factor=2, mode="bilinear")(x),
                [_arr(1, 1, 3, 2)])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=3, scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=3, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=(3, 3, 3)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), scale_factor=(2, 3, 4)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=3, mode="linear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2), size=3, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2), size=3,
                                              recompute_scale_factor=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), scale_factor=0.1),
])
def test_interpolate_errors(call: Program) -> None:
    same_error(call)


def test_upsample_primitives_gradcheck() -> None:
    F = gradsum.nn.functional
    x = gradsum.tensor(_arr(1, 2, 3, 4), dtype=gradsum.float64, requires_grad=True)
    for kw in ({"scale_factor": 1.5}, {"size": (4, 6), "mode": "bilinear"},
               {"size": (2, 7), "mode": "bilinear", "align_corners": True},
               {"size": (5, 3), "mode": "nearest-exact"}):
        assert gradcheck(lambda t, kw=kw: F.interpolate(t, **kw), (x,))
        assert gradgradcheck(lambda t, kw=kw: F.interpolate(t, **kw), (x,))
    y = gradsum.tensor(_arr(2, 1, 4), dtype=gradsum.float64, requires_grad=True)
    assert gradgradcheck(lambda t: F.interpolate(t, size=6, mode="linear"), (y,))


def test_upsample_double_backward_node_names() -> None:
    names = []
    for lib in (torch, gradsum):
        x = lib.ones(1, 1, 2, 2, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=(3, 3), mode="bilinear")
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        names.append(g.grad_fn.name().split("::")[-1])
    assert names[0] == names[1]
