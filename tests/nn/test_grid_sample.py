"""Side by side with torch: ``F.grid_sample`` in every mode (bilinear, nearest, bicubic),
padding (zeros, border, reflection) and ``align_corners``, 2-D and 3-D: values and the
gradients to the input and to the grid, at random points, at exact borders, far outside,
on unit-size images, with non-finite coordinates, and through ``affine_grid`` (a spatial
transformer's identity); torch's warnings and errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

COMBOS = [(d, m, p, a) for d, m, p, a in itertools.product(
    (2, 3), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
    (True, False)) if not (d == 3 and m == "bicubic")]


def _run(m, x, grid, weight, dtype, **kwargs):
    xt = m.tensor(x, dtype=getattr(m, dtype), requires_grad=True)
    gt = m.tensor(grid, dtype=getattr(m, dtype), requires_grad=True)
    y = m.nn.functional.grid_sample(xt, gt, **kwargs)
    gx, gg = m.autograd.grad((y * m.tensor(weight, dtype=getattr(m, dtype))).sum(), [xt, gt])
    return (tuple(y.shape), str(y.dtype).split(".")[-1], y.requires_grad), \
        [y.detach().numpy(), gx.numpy(), gg.numpy()]


def _compare(x, grid, dtype, **kwargs):
    out_shape = (grid.shape[0], x.shape[1], *grid.shape[1:-1])
    weight = np.random.default_rng(7).standard_normal(out_shape)
    (tm, tv), (gm, gv) = (_run(m, x, grid, weight, dtype, **kwargs) for m in (torch, gradsum))
    assert gm == tm
    tol = 2e-5 if dtype == "float32" else 1e-12
    for g, t in zip(gv, tv):  # output, input gradient, grid gradient (nan where nan)
        np.testing.assert_allclose(g, t, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dims,mode,padding_mode,align_corners", COMBOS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_random_points(dims, mode, padding_mode, align_corners, dtype):
    rng = np.random.default_rng(dims * 100 + len(mode) + len(padding_mode))
    x = rng.standard_normal((2, 3, 4, 5) if dims == 2 else (2, 2, 3, 4, 5))
    grid = rng.uniform(-1.3, 1.3, (2, 3, 4, 2) if dims == 2 else (2, 2, 3, 4, 3))
    _compare(x, grid, dtype, mode=mode, padding_mode=padding_mode,
             align_corners=align_corners)


@pytest.mark.parametrize("dims,mode,padding_mode,align_corners", COMBOS)
@pytest.mark.parametrize("spatial", [(4, 5), (1, 3), (1, 1), (3, 1)])
def test_affine_identity_borders_and_unit_sizes(dims, mode, padding_mode, align_corners,
                                                spatial):
    spatial = spatial if dims == 2 else (2, *spatial)
    size = [2, 2, *spatial]
    x = np.random.default_rng(3).standard_normal(size)
    theta = np.tile(np.eye(dims, dims + 1), (2, 1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (affine_grid's unit-size warning)
        grid = gradsum.nn.functional.affine_grid(gradsum.tensor(theta), size,
                                                 align_corners=align_corners).numpy().copy()
    grid[..., 0, 0] = -1.0  # exact borders and a point far outside
    grid[..., -1, 1] = 1.0
    grid[(0,) * (grid.ndim - 2) + (-1, 0)] = 3.7
    _compare(x, grid, "float64", mode=mode, padding_mode=padding_mode,
             align_corners=align_corners)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_non_finite_coordinates(mode, padding_mode):
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    grid = np.array([[[[np.nan, 0.2], [0.1, np.inf]], [[-np.inf, 0.0], [0.5, -0.5]]]])
    out = []
    for m in (torch, gradsum):
        y = m.nn.functional.grid_sample(m.tensor(x), m.tensor(grid), mode=mode,
                                        padding_mode=padding_mode, align_corners=False)
        out.append(y.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("call", [
    "F.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2))",  # align_corners warning
    "F.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2), mode='foo', align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2), padding_mode='foo', "
    "align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(2, 1, 1, 2), align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 3), align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2), m.zeros(1, 1, 2), align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 0, 2), m.zeros(1, 1, 1, 2), align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2, 2), m.zeros(1, 1, 1, 2, dtype=m.float64), "
    "align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2, 2, 2), m.zeros(1, 1, 1, 1, 3), mode='bicubic', "
    "align_corners=False)",
    "F.grid_sample(m.zeros(1, 1, 2, 2, dtype=m.int64), m.zeros(1, 1, 1, 2, dtype=m.int64), "
    "align_corners=False)",
])
def test_warnings_and_errors(call):
    def run(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                eval(call, {"m": m, "F": m.nn.functional})
                outcome = "ok"
            except Exception as e:
                outcome = (type(e).__name__, str(e).split("_cpu")[0][:45])
        return [(w.category.__name__, str(w.message)) for w in caught], outcome

    assert run(gradsum) == run(torch)
