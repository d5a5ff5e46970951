"""Side-by-side checks of the ops in ``ops/extra.py`` that the op table cannot express:
in-place methods, gradients at special points and the Tensor-method spellings."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402


def _pair(values: list[float]) -> tuple[gradsum.Tensor, torch.Tensor]:
    return (gradsum.tensor(values, dtype=gradsum.float64, requires_grad=True),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))


def _same(g: gradsum.Tensor, t: torch.Tensor) -> None:
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    assert g.dtype.name == str(t.dtype).replace("torch.", "")


@pytest.mark.parametrize("name", ["expm1_", "exp2_", "log2_", "log10_", "tan_", "asin_",
                                  "acos_", "atan_", "sinh_", "cosh_", "nan_to_num_",
                                  "arcsin_", "arctan_"])
def test_unary_inplace_methods(name: str) -> None:
    gx, tx = _pair([0.25, -0.5, 0.75])
    gy, ty = gx * 1.0, tx * 1.0
    assert getattr(gy, name)() is gy and getattr(ty, name)() is ty
    _same(gy, ty)
    assert gy._version == ty._version == 1
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)


@pytest.mark.parametrize("call", [
    lambda m, a, b: a.atan2_(b), lambda m, a, b: a.lerp_(b, 0.3), lambda m, a, b: a.lerp_(b, b),
    lambda m, a, b: a.addcmul_(b, b, value=2), lambda m, a, b: a.addcdiv_(b, b + 3, value=-1),
])
def test_binary_inplace_methods(call: object) -> None:
    gx, tx = _pair([0.25, -0.5, 0.75])
    gb, tb = _pair([1.5, 0.5, -2.0])
    gy, ty = gx * 1.0, tx * 1.0
    call(gradsum, gy, gb)  # type: ignore[operator]
    call(torch, ty, tb)  # type: ignore[operator]
    _same(gy, ty)
    assert gy.grad_fn.name() == type(ty.grad_fn).__name__
    gy.sum().backward()
    ty.sum().backward()
    _same(gx.grad, tx.grad)
    _same(gb.grad, tb.grad)


def test_methods_match_functions() -> None:
    gx, tx = _pair([0.2, 0.4])
    for name in ("expm1", "exp2", "log2", "log10", "tan", "asin", "arcsin", "acos", "arccos",
                 "atan", "arctan", "sinh", "cosh", "nan_to_num"):
        _same(getattr(gx, name)(), getattr(tx, name)())
    _same(gx.atan2(gx + 1), tx.atan2(tx + 1))
    _same(gx.arctan2(gx + 1), tx.arctan2(tx + 1))
    _same(gx.lerp(gx + 1, 0.5), tx.lerp(tx + 1, 0.5))
    _same(gx.addcmul(gx, gx, value=3), tx.addcmul(tx, tx, value=3))
    _same(gx.addcdiv(gx, gx + 1), tx.addcdiv(tx, tx + 1))


@pytest.mark.parametrize(("name", "point"), [
    ("log2", 0.0), ("log10", 0.0), ("asin", 1.0), ("acos", -1.0), ("atan", 1e300),
    ("expm1", -1e300), ("sinh", 800.0), ("cosh", -800.0), ("tan", 0.0),
])
def test_gradient_at_special_points(name: str, point: float) -> None:
    gx, tx = _pair([point])
    with np.errstate(all="ignore"):
        getattr(gradsum, name)(gx).sum().backward()
    getattr(torch, name)(tx).sum().backward()
    _same(gx.grad, tx.grad)


def test_atan2_gradient_at_the_origin_and_near_it() -> None:
    gx, tx = _pair([0.0, 0.0, 1e-160, 0.0])
    gy, ty = _pair([0.0, -0.0, 0.0, 1e-160])
    with np.errstate(all="ignore"):
        gradsum.atan2(gx, gy).sum().backward()
    torch.atan2(tx, ty).sum().backward()
    _same(gx.grad, tx.grad)
    _same(gy.grad, ty.grad)
    # the signs of the zeros too (torch: g * -self * recip)
    assert np.array_equal(np.signbit(gy.grad.numpy()), np.signbit(ty.grad.numpy()))


def test_lerp_weight_one_and_integer_promotions() -> None:
    a, b = gradsum.tensor([1e8, -3.0]), gradsum.tensor([1.0, 7.0])
    assert gradsum.lerp(a, b, 1.0).tolist() == torch.lerp(torch.tensor([1e8, -3.0]),
                                                           torch.tensor([1.0, 7.0]), 1.0).tolist()
    ti, gi = torch.tensor([1, 2]), gradsum.tensor([1, 2])
    for name in ("expm1", "exp2", "log2", "log10", "tan", "asin", "atan", "sinh", "cosh"):
        assert getattr(gradsum, name)(gi).dtype.name == str(getattr(torch, name)(ti).dtype)[6:]
    assert gradsum.atan2(gi, gi).dtype == gradsum.float32
    assert gradsum.nan_to_num(gi).dtype == gradsum.int64


def test_nan_to_num_defaults_are_the_dtype_limits() -> None:
    vals = [float("nan"), float("inf"), -float("inf")]
    for gdt, tdt in ((gradsum.float32, torch.float32), (gradsum.float64, torch.float64)):
        g = gradsum.nan_to_num(gradsum.tensor(vals, dtype=gdt))
        t = torch.nan_to_num(torch.tensor(vals, dtype=tdt))
        assert g.tolist() == t.tolist()
