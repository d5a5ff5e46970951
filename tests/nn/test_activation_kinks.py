"""Side by side with torch: the piecewise-linear and ELU-family activations as single nodes
whose backward takes the input (under ``create_graph`` their gradient requires grad and the
double backward sends the input zeros, as torch's ``*_backward`` kernels do), their masks at the
kinks and at nan, and the in-place functional spellings (``F.relu_`` ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, same_error  # noqa: E402

Act = Callable[[Any, Any], Any]  # (F, x) -> y


# kinks, nan, both sides of each piece (torch's gradient at nan depends on whether the element
# falls in a vectorised block or the scalar tail of its CPU kernel: only values are compared
# there)
POINTS = [float("nan"), -6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0]


ACTIVATIONS: dict[str, Act] = {
    "hardtanh": lambda F, t: F.hardtanh(t),
    "hardtanh_bounds": lambda F, t: F.hardtanh(t, -0.5, 3.0),
    "relu6": lambda F, t: F.relu6(t),
    "leaky_relu": lambda F, t: F.leaky_relu(t),
    "leaky_relu_0.2": lambda F, t: F.leaky_relu(t, 0.2),
    "threshold": lambda F, t: F.threshold(t, 0.5, 5.0),
    "hardshrink": lambda F, t: F.hardshrink(t),
    "softshrink": lambda F, t: F.softshrink(t),
    "hardsigmoid": lambda F, t: F.hardsigmoid(t),
    "hardswish": lambda F, t: F.hardswish(t),
    "elu": lambda F, t: F.elu(t),
    "elu_0.5": lambda F, t: F.elu(t, 0.5),
    "selu": lambda F, t: F.selu(t),
    "celu_2": lambda F, t: F.celu(t, 2.0),
    "rrelu_eval": lambda F, t: F.rrelu(t, training=False),
}


def _first_and_second(lib: Any, act: Act, dtype: str) -> list[Any]:
    """y, its grad_fn name, the create_graph gradient (values, requires_grad, grad_fn name)
    and the gradient of its sum (or the exception type that raised)."""
    x = lib.tensor(POINTS, dtype=getattr(lib, dtype), requires_grad=True)
    y = act(lib.nn.functional, x)
    (g,) = lib.autograd.grad((y * 1.5).sum(), x, create_graph=True)
    out = [as_np(y), y.grad_fn.name(), as_np(g), g.requires_grad]
    gg: Any = None
    if g.requires_grad:
        try:
            gg = as_np(lib.autograd.grad((g * g).sum(), x)[0])
        except RuntimeError:
            gg = RuntimeError
    out.append(gg)
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients_at_kinks_nan_and_double_backward(name: str, dtype: str) -> None:
    t = _first_and_second(torch, ACTIVATIONS[name], dtype)
    g = _first_and_second(gradsum, ACTIVATIONS[name], dtype)
    tol = 1e-12 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(g[0], t[0], rtol=tol, atol=tol, equal_nan=True)
    assert g[1] == t[1]
    np.testing.assert_allclose(g[2][1:], t[2][1:], rtol=tol, atol=tol)
    assert g[3] is t[3] is True  # (torch's *_backward takes the input: it requires grad)
    if t[4] is RuntimeError:  # hardsigmoid: torch has no double backward
        assert g[4] is RuntimeError
    else:
        np.testing.assert_allclose(g[4][1:], t[4][1:], rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["hardtanh", "leaky_relu", "threshold", "hardshrink",
                                  "softshrink", "elu", "celu_2", "hardswish"])
def test_double_backward_node_names(name: str) -> None:
    names = []
    for lib in (torch, gradsum):
        x = lib.tensor([-2.0, 0.25, 2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(ACTIVATIONS[name](lib.nn.functional, x).sum(), x,
                                 create_graph=True)
        names.append(g.grad_fn.name())
    assert names[1] == names[0]


def test_hardsigmoid_double_backward_is_not_implemented_like_torch() -> None:
    def fn(lib: Any) -> Any:
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        return lib.autograd.grad(g.sum(), x)

    same_error(fn)


def test_rrelu_training_gradient_at_nan_is_one() -> None:
    for lib in (torch, gradsum):
        x = lib.tensor([float("nan"), 2.0, -1.0], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.rrelu(x * 1, training=True)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        assert g[:2].tolist() == [1.0, 1.0]
        assert 1 / 8 <= g[2].item() <= 1 / 3
        assert g.requires_grad
        assert y.grad_fn.name() == "RreluWithNoiseBackward0"


@pytest.mark.parametrize("name,args", [
    ("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (2.0,)),
    ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, 3.0)),
    ("rrelu_", ()),
])
def test_in_place_functional_spellings(name: str, args: tuple[Any, ...]) -> None:
    res = []
    for lib in (torch, gradsum):
        x = lib.tensor([-1.0, 0.3, 2.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        r = getattr(lib.nn.functional, name)(y, *args)
        assert r is y
        res.append([as_np(y), as_np(lib.autograd.grad(y.sum(), x)[0])])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    same_error(lambda lib: getattr(lib.nn.functional, name)(
        lib.tensor([1.0], requires_grad=True), *args))
