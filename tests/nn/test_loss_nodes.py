"""Side by side with torch: losses recorded as one node named as torch's
(``SmoothL1LossBackward0``, ``HuberLossBackward0``, ``SoftMarginLossBackward0``,
``MultiMarginLossBackward0``, ``MultilabelMarginLossBackward0``) with torch's first and second
derivatives, and the losses torch composes keeping their names."""

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
    normal_arrays,
)
from diff_helpers import same_error  # noqa: E402

_arr = normal_arrays(8)


# -- smooth_l1 / huber ----------------------------------------------------------------------------
X = np.array([[-2.5, -1.0, -0.3, 0.0, 0.4], [1.0, 1.7, 3.0, -0.9, 0.05]])


T = np.array([[0.0, 0.0, 0.3, 0.0, -0.6], [0.0, 0.2, 0.5, 0.1, 0.05]])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_smooth_l1_loss_one_node_two_derivatives(reduction: str, beta: float) -> None:
    t = compare_derivatives(lambda lib, x, y: lib.nn.functional.smooth_l1_loss(
        x, y, reduction=reduction, beta=beta), [X, T], (0, 1))
    assert t["name"] == "SmoothL1LossBackward0"


def test_smooth_l1_loss_beta_zero_is_l1_composition() -> None:
    t = compare_derivatives(lambda lib, x, y: lib.nn.functional.smooth_l1_loss(x, y, beta=0.0),
                            [X, T], (0, 1), names=False, second=False)
    assert t["name"] == "MeanBackward0"


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("delta", [1.0, 0.5, 2.5])
def test_huber_loss_one_node_two_derivatives(reduction: str, delta: float) -> None:
    t = compare_derivatives(lambda lib, x, y: lib.nn.functional.huber_loss(
        x, y, reduction=reduction, delta=delta), [X, T], (0, 1))
    assert t["name"] == "HuberLossBackward0"


def test_huber_loss_with_weight_multiplies_the_unreduced_node() -> None:
    w = np.abs(_arr(2, 5))
    t = compare_derivatives(lambda lib, x, y, wt: lib.nn.functional.huber_loss(x, y, weight=wt),
                            [X, T, w], (0, 1, 2))
    assert t["name"] == "MeanBackward0"


def test_smooth_l1_and_huber_target_only_and_modules() -> None:
    compare_derivatives(lambda lib, x, y: lib.nn.SmoothL1Loss(beta=0.7)(x, y), [X, T], (1,))
    compare_derivatives(lambda lib, x, y: lib.nn.HuberLoss(reduction="sum")(x, y), [X, T], (1,))


# -- soft margin ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_soft_margin_loss_one_node_two_derivatives(reduction: str) -> None:
    y = np.sign(_arr(3, 4))
    t = compare_derivatives(lambda lib, x, tt: lib.nn.functional.soft_margin_loss(
        x, tt, reduction=reduction), [_arr(3, 4) * 2, y])
    assert t["name"] == "SoftMarginLossBackward0"
    assert t["g_names"] == ["SoftMarginLossBackwardBackward0"]


def test_soft_margin_loss_target_is_not_differentiable() -> None:
    x, y = _arr(3), np.sign(_arr(3))

    def prog(lib: Any) -> Any:
        return lib.nn.functional.soft_margin_loss(lib.tensor(x), lib.tensor(y,
                                                                          requires_grad=True))

    same_error(prog)
    for lib in (torch, gradsum):  # (no_grad: nothing is recorded, nothing raises)
        with lib.no_grad():
            prog(lib)


# -- multi margin / multilabel margin -------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss_one_node(reduction: str, p: int, weighted: bool) -> None:
    x, cls, w = _arr(4, 5), np.array([0, 3, 4, 1]), np.abs(_arr(5))

    def fn(lib: Any, xx: Any, cc: Any, ww: Any) -> Any:
        return lib.nn.functional.multi_margin_loss(
            xx, cc, p=p, margin=0.8, weight=ww if weighted else None, reduction=reduction)

    t = compare_derivatives(fn, [x, cls, w], second=False)
    assert t["name"] == "MultiMarginLossBackward0"
    assert t["g_names"] == ["NotImplemented"]
    compare_derivatives(lambda lib, xx, cc: lib.nn.functional.multi_margin_loss(
        xx, cc, reduction=reduction), [x[1], np.array(2)], second=False)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_one_node(reduction: str) -> None:
    x = _arr(3, 4)
    tgt = np.array([[0, 2, -1, 0], [1, -1, 0, 0], [3, 0, 1, -1]])
    t = compare_derivatives(lambda lib, xx, tt: lib.nn.functional.multilabel_margin_loss(
        xx, tt, reduction=reduction), [x, tgt], second=False)
    assert t["name"] == "MultilabelMarginLossBackward0"
    assert t["g_names"] == ["NotImplemented"]
    compare_derivatives(lambda lib, xx, tt: lib.nn.functional.multilabel_margin_loss(
        xx, tt, reduction=reduction), [x[0], np.array([3, 1, -1, 2])], second=False)


@pytest.mark.parametrize("fn", ["multi_margin_loss", "multilabel_margin_loss"])
def test_margin_losses_have_no_double_backward(fn: str) -> None:
    x = _arr(3, 4)
    tgt = np.array([0, 2, 1]) if fn == "multi_margin_loss" else np.array(
        [[0, 2, -1, 0], [1, -1, 0, 0], [3, 0, 1, -1]])

    def prog(lib: Any) -> Any:
        xx = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.nn.functional, fn)(xx, lib.tensor(tgt)), xx,
                                 create_graph=True)
        g.sum().backward()

    same_error(prog)


def test_multi_margin_loss_weight_is_not_differentiable() -> None:
    def prog(lib: Any) -> Any:
        return lib.nn.functional.multi_margin_loss(
            lib.tensor(_arr(2, 3), requires_grad=True), lib.tensor([0, 2]),
            weight=lib.tensor([1.0, 2.0, 3.0], requires_grad=True))

    same_error(prog)


@pytest.mark.parametrize("fn", [
    "l1_loss", "kl_div", "poisson_nll_loss", "hinge_embedding_loss",
    "multilabel_soft_margin_loss"])
def test_losses_torch_composes_keep_their_names(fn: str) -> None:
    x, y = _arr(3, 4), np.abs(_arr(3, 4))
    if fn == "hinge_embedding_loss":
        y = np.sign(_arr(3, 4))
    if fn == "multilabel_soft_margin_loss":
        y = (y > 0.5).astype(float)
    compare_derivatives(lambda lib, xx, yy: getattr(lib.nn.functional, fn)(xx, yy), [x, y],
                        names=False, second=fn != "l1_loss")
