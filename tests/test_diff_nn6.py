"""Side-by-side tests of the sixth nn sweep: the piecewise-linear and ELU-family activations
as single nodes whose backward takes the input (so under ``create_graph`` their gradient
requires grad and the double backward sends the input zeros, as torch's ``*_backward``
kernels do), their masks at the kinks and at nan, nll_loss's double backward, BCE's float32
epsilon and the in-place functional spellings (``F.relu_`` ...)."""

from __future__ import annotations

import warnings
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


def _nll_program(lib: Any, reduction: str, weighted: bool, k_dim: bool) -> list[Any]:
    rs = np.random.RandomState(7)
    shape = (3, 4, 2) if k_dim else (3, 4)
    x = lib.tensor(rs.randn(*shape), requires_grad=True)
    target = lib.tensor(rs.randint(0, 4, (3, 2) if k_dim else (3,)))
    w = lib.tensor(rs.rand(4)) if weighted else None
    y = lib.nn.functional.nll_loss(x, target, w, ignore_index=1, reduction=reduction)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    return [as_np(g), g.requires_grad, g.grad_fn.name(), as_np(gg)]


@pytest.mark.parametrize("k_dim", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_gradient_requires_grad_under_create_graph(reduction: str, weighted: bool,
                                                             k_dim: bool) -> None:
    t = _nll_program(torch, reduction, weighted, k_dim)
    g = _nll_program(gradsum, reduction, weighted, k_dim)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-12)
    assert g[1] is t[1] is True
    if not k_dim:  # (torch views a 3-D input as 4-D for nll_loss2d: a ViewBackward0 there)
        assert g[2] == t[2] == "NllLossBackwardBackward0"
    np.testing.assert_allclose(g[3], t[3])  # zeros: nll_loss is linear in its input


def test_nll_loss_input_modified_in_place_after_the_loss_raises() -> None:
    def fn(lib: Any) -> Any:
        x = lib.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=True)
        logp = x * 1
        loss = lib.nn.functional.nll_loss(logp, lib.tensor([0, 1]))
        with lib.no_grad():
            logp.add_(1.0)
        loss.backward()

    same_error(fn)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_binary_cross_entropy_gradient_at_0_and_1_uses_a_float32_epsilon(dtype: str) -> None:
    res = []
    for lib in (torch, gradsum):
        x = lib.tensor([0.0, 1.0, 0.0, 1.0, 0.5], dtype=getattr(lib, dtype),
                       requires_grad=True)
        t = lib.tensor([0.0, 1.0, 1.0, 0.0, 0.25], dtype=getattr(lib, dtype))
        lib.nn.functional.binary_cross_entropy(x, t, reduction="sum").backward()
        res.append(as_np(x.grad))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-15)


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


@pytest.mark.parametrize("name", ["mse", "bce", "bce_logits"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weights", [0, 1, 2])
def test_losses_are_one_node_named_as_torch(name: str, reduction: str, weights: int) -> None:
    # torch's MseLossBackward0 / BinaryCrossEntropy(WithLogits)Backward0 include the weights
    # and the reduction; first and second derivatives for input and target match
    rng = np.random.default_rng(weights)
    x0, t0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    if name == "bce":
        x0, t0 = 1 / (1 + np.exp(-x0)), (t0 > 0) * 0.7 + 0.1

    def run(m: Any) -> tuple[str, list[np.ndarray]]:
        F = m.nn.functional
        x = m.tensor(x0, requires_grad=True)
        t = m.tensor(t0, requires_grad=True)
        kw: dict[str, Any] = {}
        if weights:
            kw["weight"] = m.tensor(np.linspace(0.5, 1.5, 4))
        if weights == 2 and name == "bce_logits":
            kw["pos_weight"] = m.tensor(np.linspace(0.2, 2.0, 4))
        if name == "mse":
            y = F.mse_loss(x, t, reduction=reduction)
        elif name == "bce":
            y = F.binary_cross_entropy(x, t, reduction=reduction, **kw)
        else:
            y = F.binary_cross_entropy_with_logits(x, t, reduction=reduction, **kw)
        gx, gt = m.autograd.grad((y * y).sum(), [x, t], create_graph=True)
        ggx, ggt = m.autograd.grad((gx * gx).sum() + (gt * gt).sum(), [x, t])
        return y.grad_fn.name(), [v.detach().numpy() for v in (y, gx, gt, ggx, ggt)]

    (want_name, want), (got_name, got) = run(torch), run(gradsum)
    assert got_name == want_name
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(w).max()))


def test_mse_loss_broadcast_sums_gradients_back() -> None:
    def run(m: Any) -> list[Any]:
        x = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        t = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (both warn about the broadcast)
            y = m.nn.functional.mse_loss(x, t)
        y.backward()
        return [y.item(), *x.grad.flatten().tolist(), *t.grad.tolist()]

    assert run(gradsum) == pytest.approx(run(torch))
