"""Side by side with torch: activations recorded as one node named as torch's (``GluBackward0``,
``MishBackward0``, ``LogSigmoidBackward0``, ``CeluBackward0``, ELU's for elu and selu, PReLU's)
with torch's first and second derivatives, composites keeping torch's names, and the in-place
``leaky_relu`` with a negative slope."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from derivative_helpers import (  # noqa: E402
    compare_derivatives,
    grad_fn_name,
    normal_arrays,
)
from diff_helpers import as_np, same_error  # noqa: E402

_arr = normal_arrays(8)


# -- activations ----------------------------------------------------------------------------------
A = np.array([[-30.0, -2.0, -0.5, 0.0, 0.3, 1.2], [3.0, 25.0, -1.0, 0.7, -0.2, 2.0]])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_one_node_two_derivatives(dim: int) -> None:
    x = _arr(4, 6, 2)
    t = compare_derivatives(lambda lib, xx: lib.nn.functional.glu(xx, dim), [x])
    assert t["name"] == "GluBackward0" and t["g_names"] == ["GluBackwardBackward0"]
    compare_derivatives(lambda lib, xx: lib.nn.GLU(dim)(xx), [x])


def test_mish_one_node_two_derivatives() -> None:
    t = compare_derivatives(lambda lib, xx: lib.nn.functional.mish(xx), [A])
    assert t["name"] == "MishBackward0" and t["g_names"] == ["MulBackward0"]
    compare_derivatives(lambda lib, xx: lib.nn.Mish()(xx), [A])


def test_logsigmoid_one_node_two_derivatives() -> None:
    t = compare_derivatives(lambda lib, xx: lib.nn.functional.logsigmoid(xx), [A * 3])
    assert t["name"] == "LogSigmoidBackward0"
    assert t["g_names"] == ["LogSigmoidBackwardBackward0"]
    compare_derivatives(lambda lib, xx: lib.nn.LogSigmoid()(xx), [A])


@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.5])
def test_celu_node_is_celus(alpha: float) -> None:
    t = compare_derivatives(lambda lib, xx: lib.nn.functional.celu(xx, alpha), [A])
    assert t["name"] == "CeluBackward0" and t["g_names"] == ["EluBackwardBackward0"]
    compare_derivatives(lambda lib, xx: lib.nn.CELU(alpha)(xx), [A])


def test_elu_and_selu_keep_elus_node() -> None:
    assert compare_derivatives(lambda lib, xx: lib.nn.functional.elu(xx),
                               [A])["name"] == "EluBackward0"
    assert compare_derivatives(lambda lib, xx: lib.nn.functional.selu(xx),
                               [A])["name"] == "EluBackward0"


def test_other_composites_keep_torch_names() -> None:
    x, y, z = _arr(3, 4), _arr(3, 4), _arr(3, 4)
    s = np.array([1.0, -1.0, 1.0])
    for fn, arrays in [
        (lambda lib, a, b, c: lib.nn.functional.gaussian_nll_loss(a, b, c.abs() + 0.1),
         [x, y, z]),
        (lambda lib, a, b, c: lib.nn.functional.margin_ranking_loss(a[0], b[0], c),
         [x[:, :3], y[:, :3], s]),
        (lambda lib, a, b, c: lib.nn.functional.cosine_embedding_loss(a, b, c), [x, y, s]),
        (lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c), [x, y, z]),
        (lambda lib, a: lib.nn.functional.softsign(a), [x]),
        (lambda lib, a: lib.nn.functional.tanhshrink(a), [x]),
        (lambda lib, a: lib.nn.functional.softmin(a, 1), [x]),
        (lambda lib, a: lib.nn.functional.normalize(a), [x]),
    ]:
        n = len(arrays)
        compare_derivatives(fn, arrays, tuple(i for i in range(n) if arrays[i] is not s),
                            names=False)


# -- prelu ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("xshape,wshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)),
                                           ((5,), ()), ((), (1,)), ((2, 3, 2, 2), (3,)),
                                           ((4,), (1,))])
def test_prelu_one_node_two_derivatives(xshape: tuple[int, ...],
                                        wshape: tuple[int, ...]) -> None:
    x = np.round(_arr(*xshape), 1)
    x.reshape(-1)[:1] = 0.0  # (the kink: torch's x > 0 and x >= 0 masks)
    w = _arr(*wshape) * 0.3
    for idx in [(0, 1), (0,), (1,)]:
        t = compare_derivatives(lambda lib, xx, ww: lib.nn.functional.prelu(xx, ww), [x, w], idx)
        assert t["name"] == "PreluKernelBackward0" and all(t["g_rg"])
        compare_derivatives(lambda lib, xx, ww: xx.prelu(ww), [x, w], idx)


def test_prelu_module_and_shared_implementation() -> None:
    x = _arr(2, 3, 4)
    names = []
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3)
        y = m(lib.tensor(x, dtype=lib.float32, requires_grad=True))
        (g,) = lib.autograd.grad(y.sum(), m.weight, create_graph=True)
        assert g.requires_grad
        names.append(grad_fn_name(g))
    assert names[0] == names[1] == "ViewBackward0"
    assert gradsum.nn.functional.prelu.__doc__ and gradsum.prelu(
        gradsum.tensor([-2.0]), gradsum.tensor([0.5])).tolist() == [-1.0]


@pytest.mark.parametrize("wshape", [(1, 1), (3, 1), (2, 2)])
def test_prelu_errors(wshape: tuple[int, ...]) -> None:
    same_error(lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(*wshape)))


# -- in-place leaky_relu with a negative slope ----------------------------------------------------
def test_inplace_leaky_relu_negative_slope_raises_at_backward() -> None:
    x = _arr(5)

    def prog(lib: Any) -> Any:
        a = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.leaky_relu(a * 1, -0.5, inplace=True)
        assert grad_fn_name(y) == "LeakyReluBackward1"
        y.sum().backward()

    same_error(prog)
    for slope in (0.0, 0.2):
        grads = []
        for lib in (torch, gradsum):
            a = lib.tensor(x, requires_grad=True)
            y = lib.nn.functional.leaky_relu(a * 1, slope, inplace=True)
            assert grad_fn_name(y) == "LeakyReluBackward1"
            y.sum().backward()
            grads.append(as_np(a.grad))
        np.testing.assert_allclose(grads[1], grads[0])
    for lib in (torch, gradsum):  # (nothing recorded: nothing raises)
        with lib.no_grad():
            lib.nn.functional.leaky_relu(lib.tensor(x), -0.5, inplace=True)
        lib.nn.functional.leaky_relu(lib.tensor(x), -0.5, inplace=True)
