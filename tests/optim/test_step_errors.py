"""Side-by-side tests of what torch does at the edges of ``optimizer.step``: the exception
types for integer/bool parameters, for state loaded from parameters of other shapes, for
betas/etas of the wrong length and for tensor learning rates torch's update refuses
(multi-element, or a tensor with ``foreach=True`` in Adam); silent inf/nan updates (no NumPy
warning, even where warnings are errors); Rprop's sign of nan (0, as torch); and SequentialLR
refusing ReduceLROnPlateau."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import both_or_error  # noqa: E402

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "Adadelta",
         "Rprop", "ASGD"]


def same_outcome(fn: Any) -> None:
    """Both raise the same exception type, or both return equal values."""
    g, t = both_or_error(fn, quiet=True)
    assert g == t, (g, t)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("extra", [{}, {"weight_decay": 0.1}, {"maximize": True}],
                         ids=["plain", "wd", "maximize"])
def test_integer_parameters_fail_at_step_like_torch(name: str, dtype: str,
                                                    extra: dict[str, Any]) -> None:
    def fn(lib: Any) -> Any:
        p = lib.ones(2, dtype=getattr(lib, dtype))
        opt = getattr(lib.optim, name)([p], lr=0.1, **extra)
        p.grad = lib.ones(2, dtype=getattr(lib, dtype))
        opt.step()
        return p.tolist()

    same_outcome(fn)


def test_integer_parameter_error_says_what_to_do() -> None:
    p = gradsum.ones(2, dtype=gradsum.int64)
    p.grad = gradsum.ones(2, dtype=gradsum.int64)
    with pytest.raises(NotImplementedError, match=r"Adam.step\(\).*int64.*\.float\(\)"):
        gradsum.optim.Adam([p]).step()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(3,), (2, 1), (4,)])
def test_state_of_other_shapes_fails_at_step_like_torch(name: str,
                                                        shape: tuple[int, ...]) -> None:
    kw = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}

    def fn(lib: Any) -> Any:
        a = lib.nn.Parameter(lib.ones(2))
        a.grad = lib.ones(2)
        opt = getattr(lib.optim, name)([a], lr=0.1, **kw)
        opt.step()
        b = lib.nn.Parameter(lib.ones(*shape))
        opt2 = getattr(lib.optim, name)([b], lr=0.1, **kw)
        opt2.load_state_dict(opt.state_dict())  # (torch does not check shapes here)
        b.grad = lib.ones(*shape)
        opt2.step()
        return b.tolist()

    same_outcome(fn)


def test_state_shape_error_message() -> None:
    a = gradsum.nn.Parameter(gradsum.ones(2))
    a.grad = gradsum.ones(2)
    opt = gradsum.optim.Adam([a])
    opt.step()
    b = gradsum.nn.Parameter(gradsum.ones(3))
    opt2 = gradsum.optim.Adam([b])
    opt2.load_state_dict(opt.state_dict())
    b.grad = gradsum.ones(3)
    with pytest.raises(RuntimeError, match=r"must match the size of tensor b.*'exp_avg' of "
                       r"shape \(2,\), the parameter has shape \(3,\)"):
        opt2.step()
    assert b.tolist() == [1.0, 1.0, 1.0]  # (checked before the update: nothing moved)


def test_a_closure_error_is_not_translated() -> None:
    p = gradsum.ones(2, dtype=gradsum.int64)
    p.grad = gradsum.ones(2, dtype=gradsum.int64)

    def closure() -> None:
        raise ValueError("from the closure")

    for opt in (gradsum.optim.SGD([p], lr=0.1), gradsum.optim.LBFGS([p])):
        with pytest.raises(ValueError, match="from the closure"):
            opt.step(closure)


@pytest.mark.parametrize("name,key", [("Adam", "betas"), ("AdamW", "betas"),
                                      ("NAdam", "betas"), ("RAdam", "betas"),
                                      ("Adamax", "betas"), ("Rprop", "etas"),
                                      ("Rprop", "step_sizes")])
@pytest.mark.parametrize("length", [1, 3])
def test_pairs_of_the_wrong_length_fail_at_step_like_torch(name: str, key: str,
                                                           length: int) -> None:
    values = {"betas": (0.9, 0.99, 0.5), "etas": (0.5, 1.2, 2.0),
              "step_sizes": (1e-6, 50.0, 60.0)}[key][:length]

    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        opt = getattr(lib.optim, name)([p], lr=0.01)
        opt.param_groups[0][key] = values  # (set after construction: not validated there)
        opt.step()
        return [round(v, 6) for v in p.tolist()]

    same_outcome(fn)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "RAdam", "Adamax"])
def test_three_betas_given_to_the_constructor(name: str) -> None:
    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        getattr(lib.optim, name)([p], betas=(0.9, 0.99, 0.5)).step()
        return p.tolist()

    same_outcome(fn)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Rprop", "NAdam", "Adamax"])
def test_multi_element_tensor_lr_set_later_is_a_type_error(name: str) -> None:
    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        opt = getattr(lib.optim, name)([p], lr=0.01)
        opt.param_groups[0]["lr"] = lib.tensor([0.02, 0.03])
        opt.step()
        return p.tolist()

    same_outcome(fn)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
@pytest.mark.parametrize("foreach", [True, False, None])
@pytest.mark.parametrize("lr", [[0.02], [0.02, 0.03]], ids=["one", "two"])
def test_adam_foreach_refuses_a_tensor_lr_set_later(name: str, foreach: bool | None,
                                                    lr: list[float]) -> None:
    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.ones(2)
        opt = getattr(lib.optim, name)([p], lr=0.01, foreach=foreach)
        opt.param_groups[0]["lr"] = lib.tensor(lr)
        opt.step()
        return [round(v, 6) for v in p.tolist()]

    same_outcome(fn)


def test_sequential_lr_refuses_reduce_on_plateau_like_torch() -> None:
    def fn(lib: Any) -> Any:
        S = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        return S.SequentialLR(opt, [S.ReduceLROnPlateau(opt), S.StepLR(opt, 3)], [2])

    same_outcome(fn)
    S = gradsum.optim.lr_scheduler
    opt = gradsum.optim.SGD([gradsum.nn.Parameter(gradsum.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match=r"does not support `ReduceLROnPlateau`.*index 1"):
        S.SequentialLR(opt, [S.StepLR(opt, 3), S.ReduceLROnPlateau(opt)], [2])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("grad", [0.0, float("inf"), float("nan")])
def test_inf_and_nan_updates_are_silent_even_where_warnings_are_errors(name: str,
                                                                       grad: float) -> None:
    """torch's kernels never warn: eps=0 with a zero gradient (0/0) or an inf gradient gives
    nan parameters silently; NumPy's RuntimeWarnings must not escape ``step``."""
    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
        kw: dict[str, Any] = {"lr": 0.1}
        if name not in ("SGD", "Rprop", "ASGD"):
            kw["eps"] = 0.0
        opt = getattr(lib.optim, name)([p], **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(2):
                p.grad = lib.tensor([grad, 0.0])
                opt.step()
        return [v if v == v else "nan" for v in p.tolist()]

    g, t = both_or_error(fn)
    assert g == t, (g, t)


def test_the_closure_keeps_the_callers_floating_point_warnings() -> None:
    p = gradsum.nn.Parameter(gradsum.ones(1))
    p.grad = gradsum.ones(1)

    def closure() -> float:
        np.log(np.zeros(1))  # the user's own NumPy code warns as usual
        return 1.0

    for opt in (gradsum.optim.SGD([p], lr=0.1), gradsum.optim.LBFGS([p])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning, match="divide by zero"):
                opt.step(closure)


@pytest.mark.parametrize("grad", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rprop_sign_of_nan_is_zero_like_torch(grad: float, dtype: str) -> None:
    def fn(lib: Any) -> Any:
        dt = getattr(lib, dtype)
        p = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5], dtype=dt))
        opt = lib.optim.Rprop([p], lr=0.1)
        out = []
        for g in ([grad, 0.0, 1.0], [grad, 1.0, -1.0], [1.0, grad, 1.0]):
            p.grad = lib.tensor(g, dtype=dt)
            opt.step()
            out.append([v if v == v else "nan" for v in p.tolist()])
            out.append([v if v == v else "nan" for v in opt.state[p]["step_size"].tolist()])
        return out

    g, t = both_or_error(fn)
    assert g == t, (g, t)


def test_rprop_nan_gradient_of_a_0d_parameter() -> None:
    def fn(lib: Any) -> Any:
        p = lib.nn.Parameter(lib.tensor(0.5))
        opt = lib.optim.Rprop([p], lr=0.1)
        for g in (float("nan"), 1.0, float("inf")):
            p.grad = lib.tensor(g)
            opt.step()
        return p.item(), opt.state[p]["step_size"].item()

    g, t = both_or_error(fn)
    assert g == t, (g, t)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "NAdam", "Adamax",
                                  "Adafactor", "Muon"])
def test_a_step_refused_for_an_integer_parameter_changes_nothing(name: str) -> None:
    # torch raises partway through the update (the float parameter already moved); gradsum
    # raises the same exception type before touching any parameter or state
    def build(lib: Any) -> tuple[Any, Any, Any]:
        a = lib.tensor([[1.0, 2.0]], requires_grad=True)
        b = lib.tensor([[1, 2]])
        a.grad = lib.tensor([[0.5, 0.5]])
        b.grad = lib.tensor([[1, 1]])
        kw = {"momentum": 0.9} if name == "SGD" else {}
        return a, b, getattr(lib.optim, name)([a, b], lr=0.1, **kw)

    ta, _, topt = build(torch)
    ga, gb, gopt = build(gradsum)
    with pytest.raises(Exception) as want:
        topt.step()
    with pytest.raises(want.type):
        gopt.step()
    assert ga.tolist() == [[1.0, 2.0]] and gb.tolist() == [[1, 2]]
    assert not gopt.state
