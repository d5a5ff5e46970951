"""Side by side with torch: the dtypes binary cross entropy (with and without logits),
cross entropy and nll_loss take for their inputs, targets and class weights, and their argument
errors (the target grad of BCE, nan inputs, 0-d and 1-d inputs)."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


import gradsum  # noqa: E402
import gradsum.nn.functional as F  # noqa: E402
from nn_helpers import both_raise, same_values  # noqa: E402


# -- binary cross entropy -----------------------------------------------------------------------
def test_bce_target_grad_is_unclamped_neg_logit() -> None:
    # torch: d/dt = -logit(x), so +inf at x = 0 and -inf at x = 1 (gradsum clamped to +-100)
    def fn(lib: Any, f: Any) -> list[Any]:
        x = lib.tensor([0.0, 1.0, 0.25])
        t = lib.tensor([1.0, 0.0, 0.5], requires_grad=True)
        f.binary_cross_entropy(x, t, reduction="sum").backward()
        return [t.grad]

    same_values(fn)


def test_bce_refuses_nan_input() -> None:
    both_raise(lambda lib, f: f.binary_cross_entropy(lib.tensor([float("nan"), 0.5]),
                                                     lib.tensor([1.0, 0.0])))


@pytest.mark.parametrize("tdt", ["float64", "int64"])
def test_bce_target_dtype_must_match_input(tdt: str) -> None:
    both_raise(lambda lib, f: f.binary_cross_entropy(lib.full((3,), 0.5),
                                                     lib.ones(3, dtype=getattr(lib, tdt))))


def test_bce_weight_keeps_the_input_dtype() -> None:
    same_values(lambda lib, f: [f.binary_cross_entropy(
        lib.full((3,), 0.3), lib.ones(3), weight=lib.ones(3, dtype=lib.float64))])


@pytest.mark.parametrize("case", ["bce_weight", "bcel_weight", "bcel_pos_weight", "nll_weight",
                                  "ce_weight", "ce_smooth_weight"])
def test_class_weights_refuse_requires_grad(case: str) -> None:
    def fn(lib: Any, f: Any) -> Any:
        w = lib.ones(3, requires_grad=True)
        x, t = lib.full((2, 3), 0.5), lib.ones(2, 3)
        idx = lib.tensor([0, 2])
        return {
            "bce_weight": lambda: f.binary_cross_entropy(x, t, weight=w),
            "bcel_weight": lambda: f.binary_cross_entropy_with_logits(x, t, weight=w),
            "bcel_pos_weight": lambda: f.binary_cross_entropy_with_logits(x, t, pos_weight=w),
            "nll_weight": lambda: f.nll_loss(x, idx, weight=w),
            "ce_weight": lambda: f.cross_entropy(x, idx, weight=w),
            "ce_smooth_weight": lambda: f.cross_entropy(x, idx, weight=w, label_smoothing=0.1),
        }[case]()

    both_raise(fn)
    with gradsum.no_grad():  # (torch's check is autograd's: off under no_grad)
        fn(gradsum, F)


def test_bce_with_logits_result_has_the_target_dtype() -> None:
    def fn(lib: Any, f: Any) -> list[Any]:
        x = lib.tensor([0.3, -2.0, 5.0], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([1.0, 0.0, 0.5])
        loss = f.binary_cross_entropy_with_logits(x, t, pos_weight=lib.tensor([2.0, 1.0, 3.0]))
        loss.backward()
        return [loss, x.grad]

    same_values(fn)


@pytest.mark.parametrize("tdt", ["int64", "bool"])
def test_bce_with_logits_refuses_non_float_targets(tdt: str) -> None:
    both_raise(lambda lib, f: f.binary_cross_entropy_with_logits(
        lib.zeros(3), lib.ones(3, dtype=getattr(lib, tdt))))


# -- nll_loss / cross_entropy -------------------------------------------------------------------
def test_cross_entropy_soft_targets_differentiate_the_weight() -> None:
    def fn(lib: Any, f: Any) -> list[Any]:
        w = lib.tensor([1.0, 2.0, 0.5], requires_grad=True)
        x = lib.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]], requires_grad=True)
        t = lib.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
        f.cross_entropy(x, t, weight=w, label_smoothing=0.1).backward()
        return [x.grad, w.grad]

    same_values(fn)


@pytest.mark.parametrize("shape,tdt", [((3, 4), "int32"), ((3, 4), "int16"),
                                       ((3, 4, 2), "uint8"), ((3, 4, 2), "int32")])
def test_nll_target_dtypes(shape: tuple[int, ...], tdt: str) -> None:
    tshape = (shape[0],) + shape[2:]
    both_raise(lambda lib, f: f.nll_loss(lib.zeros(shape),
                                         lib.zeros(tshape, dtype=getattr(lib, tdt))))
    both_raise(lambda lib, f: f.cross_entropy(lib.zeros(shape),
                                              lib.zeros(tshape, dtype=getattr(lib, tdt))))


def test_nll_byte_target_of_2d_input() -> None:
    same_values(lambda lib, f: [f.nll_loss(lib.tensor([[-1.0, -2.0], [-3.0, -0.5]]),
                                           lib.tensor([0, 1], dtype=lib.uint8))])


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 2)])
def test_nll_integer_input_is_not_implemented(shape: tuple[int, ...]) -> None:
    tshape = (shape[0],) + shape[2:]
    both_raise(lambda lib, f: f.nll_loss(lib.ones(shape, dtype=lib.int64),
                                         lib.zeros(tshape, dtype=lib.int64)))


def test_nll_weight_dtype_must_match_input() -> None:
    both_raise(lambda lib, f: f.nll_loss(lib.zeros(2, 3, dtype=lib.float64),
                                         lib.tensor([0, 1]), weight=lib.ones(3)))
    both_raise(lambda lib, f: f.cross_entropy(lib.zeros(2, 3, dtype=lib.float64),
                                              lib.tensor([0, 1]), weight=lib.ones(3)))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_1d_input_takes_a_1_element_target(reduction: str) -> None:
    # (forward only: torch's backward of this case fails with "size mismatch")
    def fn(lib: Any, f: Any) -> list[Any]:
        x = lib.tensor([1.0, -2.0, 0.5])
        loss = f.cross_entropy(x, lib.tensor([2]), reduction=reduction)
        nll = f.nll_loss(lib.tensor([-1.0, -2.0]), lib.tensor([1]), reduction=reduction)
        return [loss, nll]

    same_values(fn)


def test_nll_1d_input_errors() -> None:
    both_raise(lambda lib, f: f.nll_loss(lib.zeros(3), lib.tensor([0, 1])))  # ValueError
    both_raise(lambda lib, f: f.nll_loss(lib.zeros(3), lib.tensor([[0]])))  # RuntimeError
    both_raise(lambda lib, f: f.cross_entropy(lib.zeros(3), lib.tensor([0]),
                                              label_smoothing=0.1))


def test_cross_entropy_0d_input_errors() -> None:
    assert both_raise(lambda lib, f: f.cross_entropy(lib.tensor(1.0), lib.tensor(0))) \
        is RuntimeError  # (same shapes: the soft-target path, which wants a float target)
    both_raise(lambda lib, f: f.cross_entropy(lib.tensor(1.0), lib.tensor(0.5)))
    both_raise(lambda lib, f: f.cross_entropy(lib.tensor(1.0), lib.tensor([0])))
