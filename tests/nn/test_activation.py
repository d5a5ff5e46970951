"""Side by side with torch: the activations of torch.nn (ELU ... RReLU, PReLU, GLU, Mish,
LogSigmoid, CELU, Softmax2d and the other composites): values, first and second derivatives, their
masks at the kinks and at nan, the single nodes named as torch's, the in-place functional spellings
(``F.relu_`` ...), errors and module reprs."""

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
from nn_helpers import (  # noqa: E402
    gradsum_repr,
    lib_tensor,
    wide_randn_arrays,
)

Program = Callable[..., Any]


RS = np.random.RandomState(1234)
_arr = wide_randn_arrays(RS)


# -- activations ---------------------------------------------------------------------------
_KINKS = np.array([[0.0, -3.0, 3.0, 1.0, -1.0, 0.5], [6.0, -0.5, 2.0, -6.0, 25.0, -25.0]])


ACTIVATIONS: dict[str, tuple[Program, bool]] = {  # name: (program, second order in torch)
    "elu": (lambda lib, F, x: F.elu(x, 0.7), True),
    "selu": (lambda lib, F, x: F.selu(x), True),
    "celu": (lambda lib, F, x: F.celu(x, 1.5), True),
    "hardtanh": (lambda lib, F, x: F.hardtanh(x, -1.0, 2.0), True),
    "relu6": (lambda lib, F, x: F.relu6(x), True),
    "hardsigmoid": (lambda lib, F, x: F.hardsigmoid(x), False),
    "hardswish": (lambda lib, F, x: F.hardswish(x), True),
    "mish": (lambda lib, F, x: F.mish(x), True),
    "logsigmoid": (lambda lib, F, x: F.logsigmoid(x), True),
    "softsign": (lambda lib, F, x: F.softsign(x), True),
    "tanhshrink": (lambda lib, F, x: F.tanhshrink(x), True),
    "softshrink": (lambda lib, F, x: F.softshrink(x, 1.0), True),
    "hardshrink": (lambda lib, F, x: F.hardshrink(x, 1.0), True),
    "threshold": (lambda lib, F, x: F.threshold(x, 0.5, -2.0), True),
    "softmin": (lambda lib, F, x: F.softmin(x, 1), True),
    "glu": (lambda lib, F, x: F.glu(x, 1), True),
    "rrelu_eval": (lambda lib, F, x: F.rrelu(x, 0.1, 0.3), True),
    "prelu": (lambda lib, F, x: F.prelu(x.reshape(2, 3, 2), lib.tensor(
        [0.1, 0.2, 0.3], dtype=lib.float64)), False),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("data", ["kinks", "random"])
def test_activation_values_and_gradients(name: str, data: str) -> None:
    fn, second = ACTIVATIONS[name]
    arr = _KINKS if data == "kinks" else _arr(2, 6)
    # (torch's float64 hardsigmoid gradient is float32's 1/6: equal to 3e-8 relative only)
    check_grads(fn, [arr], second=second, atol=1e-7 if name == "hardsigmoid" else 1e-10)


def test_prelu_weight_gradient() -> None:
    check_grads(lambda lib, F, x, w: F.prelu(x, w), [_arr(3, 4, 2), np.array([0.1, 0.2, 0.3, 0.4])],
                second=False)
    check_grads(lambda lib, F, x, w: F.prelu(x, w), [_arr(5), np.array([0.25])], second=False)


@pytest.mark.parametrize("name", ["elu_", "selu_", "celu_", "hardtanh_", "relu6_", "mish_",
                                  "hardswish_", "hardsigmoid_", "threshold_", "rrelu_"])
def test_inplace_activations(name: str) -> None:
    """The in-place activations (inplace=True): torch's values and gradients at the kinks."""
    def prog(lib: Any, F: Any, x: Any) -> Any:
        y = x * 1.0
        base = name[:-1]
        if base == "threshold":
            F.threshold(y, 0.5, -1.0, inplace=True)
        else:
            getattr(F, base)(y, inplace=True)
        return y

    check_grads(prog, [_KINKS], second=False, atol=1e-7 if name == "hardsigmoid_" else 1e-10)


def test_rrelu_training_draws_slopes_in_bounds() -> None:
    x = gradsum.full((2000,), -1.0, requires_grad=True)
    y = gradsum.nn.functional.rrelu(x, 0.2, 0.4, training=True)
    slopes = -np.asarray(y.tolist())
    assert slopes.min() >= 0.2 and slopes.max() <= 0.4 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), slopes, rtol=1e-6)
    m = gradsum.nn.RReLU()
    assert m(gradsum.ones(3)).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.celu(lib.ones(2), alpha=0.0),
    lambda lib: lib.nn.functional.hardtanh(lib.ones(2), 2.0, 1.0),
    lambda lib: lib.nn.Hardtanh(2.0, 1.0),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2), -1.0),
    lambda lib: lib.nn.functional.glu(lib.ones(2, 3)),
    lambda lib: lib.nn.functional.glu(lib.tensor(1.0)),
    lambda lib: lib.nn.functional.glu(lib.ones(2, 4), 2),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(3, 1)),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.rrelu(lib.ones(2), 0.5, 0.1),
    lambda lib: lib.nn.functional.elu(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.mish(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.hardsigmoid(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.logsigmoid(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.hardshrink(lib.ones(2, dtype=lib.int64)),
])
def test_activation_errors(prog: Program) -> None:
    same_error(prog)


@pytest.mark.parametrize("make", [
    lambda nn: nn.ELU(), lambda nn: nn.ELU(0.5, True), lambda nn: nn.CELU(2.0),
    lambda nn: nn.SELU(), lambda nn: nn.SELU(True), lambda nn: nn.Hardtanh(-2.0, 3.0, True),
    lambda nn: nn.ReLU6(), lambda nn: nn.ReLU6(True), lambda nn: nn.Hardsigmoid(True),
    lambda nn: nn.Hardswish(), lambda nn: nn.Mish(True), lambda nn: nn.LogSigmoid(),
    lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(), lambda nn: nn.Softshrink(0.3),
    lambda nn: nn.Hardshrink(), lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.Softmin(1),
    lambda nn: nn.GLU(), lambda nn: nn.PReLU(), lambda nn: nn.PReLU(4, 0.1),
    lambda nn: nn.RReLU(0.1, 0.2, True),
])
def test_activation_module_reprs(make: Program) -> None:
    same_repr(lambda lib: make(lib.nn))


def test_prelu_module_parameters_and_training() -> None:
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3, init=0.1)
        assert [n for n, _ in m.named_parameters()] == ["weight"]
        assert m.weight.shape == (3,)
    x = _arr(2, 3, 4)
    grads = []
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3, init=0.1)
        m(lib.tensor(x, dtype=lib.float32)).pow(2).sum().backward()
        grads.append(np.asarray(m.weight.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)


F = gradsum.nn.functional


@pytest.mark.parametrize("shape", [(2, 3, 2, 2), (3, 2, 4)])
def test_softmax2d_matches_torch(shape: tuple[int, ...]) -> None:
    res = []
    arr = np.random.default_rng(6).standard_normal(shape)
    for lib in (torch, gradsum):
        x = lib_tensor(lib, arr)
        y = lib.nn.Softmax2d()(x)
        (g,) = lib.autograd.grad((y * y).sum(), x)
        res.append([as_np(y), as_np(g), y.grad_fn.name(), gradsum_repr(lib.nn.Softmax2d())])
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-10, atol=1e-14)
    assert res[1][2:] == res[0][2:]
    for bad in [(3, 4), (1, 2, 3, 4, 5)]:
        assert same_error(lambda lib, bad=bad: lib.nn.Softmax2d()(lib.ones(*bad))) is ValueError
