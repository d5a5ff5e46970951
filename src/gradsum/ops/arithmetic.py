"""Arithmetic: ``+ - * / **``, the remainders and floor division, the reflected forms
(``rsub``, ``rdiv``, ``rpow``), the fused ``addcmul``/``addcdiv``/``lerp``, the integer and bit
ops (``bitwise_*``, shifts, ``gcd``, ``lcm``), ``ldexp``/``frexp``, ``float_power`` and the
shared binary-op machinery (broadcast checks, the ``select`` kernels).

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = a * 3 + 1
    >>> y.grad_fn.name()
    'AddBackward0'
    >>> y.sum().backward()
    >>> a.grad.tolist()
    [3.0, 3.0]
"""

from __future__ import annotations

import math
import operator as _operator
from collections import namedtuple
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum import _fma
from gradsum._backend import silenced, xp
from gradsum._fma import fma
from gradsum._tensor import Tensor
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import _NOTHING_SAVED, HOLDS_STATE, Node, _saved_input, _saved_output
from gradsum.ops import _messages as _ops_messages
from gradsum.ops._core import (
    _make,
    as_tensor_like,
    binary_arrays,
    broadcast_error,
    const,
    needs_grad,
    quietly,
    record,
    register,
    require_tensor,
    scalar_opmath,
    scalar_value,
    tensor_method,
    twin,
)

_ndarray = xp.ndarray


def _wrap_int(v: int, dt: Any) -> int:
    """A Python int cast to integer dtype ``dt`` as torch casts a scalar operand: modulo
    ``2**bits`` (``uint8 tensor - 3`` subtracts 253), where NumPy raises OverflowError."""
    info = xp.iinfo(dt)
    if info.min <= v <= info.max:
        return v
    v &= (1 << info.bits) - 1
    return v - (1 << info.bits) if v > info.max else v


#: torch's C++ names of the scalar types, as its overflow errors spell them
_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "float32": "float", "float64": "double",
            "bfloat16": "c10::BFloat16"}


def _checked(v: Any, dt: Any) -> Any:
    """A Python number converted to dtype ``dt`` as torch's checked conversion of a scalar
    argument (``clamp``'s bounds, ``where``'s and ``pow``'s numbers): RuntimeError when it
    overflows (c10::overflows: inf fits a float; an unsigned type takes negatives down to
    ``-max``, wrapped), else the number (an int wrapped to the integer dtype)."""
    kind = dt.kind
    if kind == "b" or v.__class__ is bool:
        return v
    if kind in "fV":
        fv = float(v)
        big = D.finfo(D.bfloat16).max if kind == "V" else xp.finfo(dt).max
        if math.isfinite(fv) and not -big <= fv <= big:
            raise RuntimeError(_ops_messages.scalar_overflows_type(_C_TYPES[dt.name], v))
        return v
    if v.__class__ is not int:
        return v
    info = xp.iinfo(dt)
    if not (-info.max if info.min == 0 else info.min) <= v <= info.max:
        raise RuntimeError(_ops_messages.scalar_overflows_type(_C_TYPES[dt.name], v))
    return _wrap_int(v, dt)


def _arrays(a: Tensor, b: Any) -> tuple[Any, Any, bool]:
    """``binary_arrays``, with an out-of-range Python int operand wrapped to the integer
    result dtype (torch's cast) instead of NumPy's OverflowError."""
    x, y, bt = binary_arrays(a, b)
    if not bt and y.__class__ is int and x.dtype.kind in "iu":
        y = _wrap_int(y, x.dtype)
    return x, y, bt


def _left(a: Any, b: Any, floating: bool = False) -> Tensor:
    """The tensor for a non-tensor left operand of a function-form op (``gradsum.add(2, t)``).
    A number becomes a 0-d constant of the result dtype: torch wraps it as a number of the
    lowest promotion priority (``add(2, int32_t)`` is int32, ``mul(1.5, bool_t)`` float32),
    where a plain 0-d tensor would take part as int64 or as the default float. ``floating``:
    the op computes in a floating dtype (true division), so the number is not cast to an
    integer dtype first."""
    if isinstance(b, Tensor) and isinstance(a, (bool, int, float, xp.generic)):
        v = scalar_value(a)
        rt = D.result_type(b, v).np
        if floating and rt.kind not in "fV":  # (true division computes in the default float)
            rt = D.get_default_dtype().np
        if v.__class__ is int and rt.kind in "iu":
            v = _wrap_int(v, rt)
        return _make(xp.asarray(v, dtype=rt))
    return as_tensor_like(a, b)


def _binary(a: Any, b: Any) -> tuple[Tensor, Any, Any, Any, bool]:
    if isinstance(b, Tensor) and isinstance(a, Tensor):
        x, y = a._array, b._array
        if x.dtype is y.dtype:  # the common case: no promotion to compute
            return a, b, x, y, True
    elif not isinstance(a, Tensor):
        a = _left(a, b)
    x, y, bt = _arrays(a, b)
    return a, b, x, y, bt


def _array_like(v: Any) -> bool:
    """Whether a non-tensor operand is an array (a NumPy scalar is a number, as in torch)."""
    return hasattr(v, "shape") and not isinstance(v, (int, float, xp.generic))


def _is_bool(v: Any) -> bool:
    """Whether an operand is a bool tensor or a Python bool (torch wraps it as one; a NumPy
    bool it reads as a float)."""
    if isinstance(v, Tensor):
        return v._array.dtype.kind == "b"
    return isinstance(v, bool)


def _sub_check(a: Any, b: Any) -> None:
    """torch's ``sub_check``: subtraction is refused when either operand is bool."""
    a_bool, b_bool = _is_bool(a), _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError(_ops_messages.sub_two_bool_tensors())
    if a_bool or b_bool:
        raise RuntimeError(_ops_messages.sub_bool_tensor())


def _no_bool(x: Any, kernel: str) -> None:
    """torch has no bool kernel for ``kernel`` (floor division, remainder, pow, ...)."""
    if x.dtype.kind == "b":
        raise D.not_implemented(kernel, x.dtype, "Convert the operands with .long() first.")


def _check_int_divisor(x: Any, y: Any, name: str) -> None:
    """torch raises for an integer division by zero, where NumPy returns 0 with a warning."""
    if x.dtype.kind in "iu" and not xp.all(y):
        zeros = int(xp.size(y) - xp.count_nonzero(y))
        raise RuntimeError(_ops_messages.integer_division_by_zero(name, zeros))


def _unary(a: Tensor, out: Any, node_cls: type[Node], save: str) -> Tensor:
    """Wrap the result of a one-input op; when recording, save the input or the output."""
    if not _state.enabled or (a._grad_fn is None and not a._requires_grad):
        return _make(out)
    node = node_cls()
    t = record(node, (a,), out)
    # (needs_grad and Node.save, written out here: see "Speed" in docs/ARCHITECTURE.md)
    node._saved = (_saved_input(a),) if save == "input" else (_saved_output(t),)
    return t


# -- add / sub ---------------------------------------------------------------------------------
class AddBackward0(Node):
    #: ``a_shape``/``b_shape``: the shape an operand's gradient is summed to (sum_to), None
    #: where the operand has the result's shape or is a number: decided once when add and
    #: mul record, so that the rule makes no call for an operand that was not broadcast
    #: (the gradient of nearly every add and product; "Speed" in docs/ARCHITECTURE.md)
    __slots__ = ("a_shape", "alpha", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        nxt = self._next
        ga = gb = None
        if nxt[0][0] is not None:
            ga = g if self.a_shape is None else F.sum_to(g, self.a_shape)
        if nxt[1][0] is not None:
            gb = g if self.alpha == 1 else F.mul(g, self.alpha)
            if self.b_shape is not None:
                gb = F.sum_to(gb, self.b_shape)
        return ga, gb


class SubBackward0(AddBackward0):
    __slots__ = ()


_INT_ONE = 1  # (the default alpha: ``alpha is not _INT_ONE`` skips the checks cheaply)


def _scaled(x: Any, y: Any, alpha: Any) -> Any:
    """``alpha * y`` in the result dtype of ``x``, as torch computes it: for bool tensors
    ``alpha`` is a bool (the sum stays bool), and an int product is wrapped to an integer
    dtype (``uint8_t + (-3) * 2`` wraps, where NumPy raises OverflowError)."""
    kind = x.dtype.kind
    if isinstance(alpha, xp.bool_):
        alpha = float(alpha)  # (torch reads a NumPy bool as a float)
    if isinstance(alpha, bool) and kind != "b":
        raise RuntimeError(_ops_messages.boolean_alpha_only_for_boolean_results())
    if kind in "biu" and isinstance(alpha, (float, xp.floating)):
        raise RuntimeError(_ops_messages.integral_alpha_not_floating(alpha))
    if kind == "b":
        return xp.logical_and(y, bool(alpha))
    if kind in "iu" and alpha.__class__ is int:
        if y.__class__ is int:
            return _wrap_int(y * alpha, x.dtype)
        return y * _wrap_int(alpha, x.dtype)  # (modular: the same bits as torch's product)
    return y * alpha


def _plus_scaled(x: Any, y: Any, alpha: Any) -> Any:
    """``x + alpha * y`` as torch computes it: for a floating result one fused multiply-add
    (torch's vectorised CPU kernels; see :mod:`gradsum._fma`), else :func:`_scaled`'s
    product added."""
    rt = xp.result_type(x, y)
    if rt.kind in "fV" and isinstance(alpha, (int, float, xp.integer, xp.floating)) and not (
            isinstance(alpha, bool)):
        return fma(alpha, xp.asarray(y, dtype=rt), xp.asarray(x, dtype=rt))
    return x + _scaled(x, y, alpha)


@register("add", method=True, dunders=("__add__", "__radd__"))
def add(a: Any, b: Any, *, alpha: Any = 1) -> Tensor:
    """``a + alpha * b`` with broadcasting.

    Example:
        >>> import gradsum
        >>> gradsum.add(gradsum.tensor([1.0, 2.0]), 1.0, alpha=2).tolist()
        [3.0, 4.0]
    """
    if alpha is not _INT_ONE and isinstance(alpha, Tensor):
        alpha = alpha.item()  # (torch takes a one-element tensor as the number)
    if isinstance(b, Tensor) and isinstance(a, Tensor) and a._array.dtype is b._array.dtype:
        x, y, bt = a._array, b._array, True  # (_binary's common case, written out)
    else:
        a, b, x, y, bt = _binary(a, b)
    try:
        out = x + y if alpha == 1 and alpha is not True else _plus_scaled(x, y, alpha)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not _state.enabled or not (  # (needs_grad, written out: "Speed", ARCHITECTURE.md)
        a._grad_fn is not None or a._requires_grad or (
            bt and (b._grad_fn is not None or b._requires_grad))
    ):
        return _make(out)
    node = AddBackward0()
    node.alpha = alpha
    node.a_shape = None if x.shape == out.shape else x.shape
    node.b_shape = None if not bt or y.shape == out.shape else y.shape
    return record(node, (a, b), out)


@register("sub", method=("sub", "subtract"), dunders="__sub__")
def sub(a: Any, b: Any, *, alpha: Any = 1) -> Tensor:
    """``a - alpha * b`` with broadcasting."""
    if alpha is not _INT_ONE and isinstance(alpha, Tensor):
        alpha = alpha.item()  # (torch takes a one-element tensor as the number)
    _sub_check(a, b)
    a, b, x, y, bt = _binary(a, b)
    try:
        out = x - y if alpha == 1 and alpha is not True else _plus_scaled(x, y, -alpha)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not needs_grad(a, b):
        return _make(out)
    node = SubBackward0()
    node.alpha = -alpha
    node.a_shape = None if x.shape == out.shape else x.shape
    node.b_shape = None if not bt or y.shape == out.shape else y.shape
    return record(node, (a, b), out)


class RsubBackward1(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return F.neg(g)


def rsub(a: Tensor, b: Any) -> Tensor:
    """``b - a`` for a non-tensor ``b`` (the reflected operator)."""
    if isinstance(b, Tensor):
        return sub(b, a)
    if _array_like(b):
        return sub(as_tensor_like(b, a), a)
    b = scalar_value(b)
    _sub_check(b, a)
    x, y, _ = _arrays(a, b)
    out = y - x
    if not needs_grad(a):
        return _make(out)
    return record(RsubBackward1(), (a,), out)


# -- mul / div ---------------------------------------------------------------------------------
class MulBackward0(Node):
    #: ``a_shape``/``b_shape``: as :class:`AddBackward0`'s
    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        nxt = self._next
        gx = g._array
        # With nothing to record, the products of the arrays (the saved tensors' arrays, no
        # dispatch); recorded, or where the dtypes differ (torch's promotion), gradsum ops.
        arrays = not _state.enabled
        if arrays:
            x, y = self.saved_arrays()
            arrays = ((nxt[0][0] is None or gx.dtype is y.dtype)
                      and (nxt[1][0] is None or gx.dtype is x.dtype))
        if not arrays:
            x, y = self.saved()
        ga = gb = None
        if nxt[0][0] is not None:
            ga = _make(gx * y) if arrays else F.mul(g, y)
            if self.a_shape is not None:
                ga = F.sum_to(ga, self.a_shape)
        if nxt[1][0] is not None:
            gb = _make(gx * x) if arrays else F.mul(g, x)
            if self.b_shape is not None:
                gb = F.sum_to(gb, self.b_shape)
        return ga, gb


class MulScalarBackward(Node):
    """Multiplication by a Python scalar (nothing to save but the number). Torch wraps the
    scalar in a tensor and shows ``MulBackward0``/``DivBackward0``; so does ``name()``."""

    __slots__ = ("scalar",)

    def backward(self, g: Tensor) -> tuple[Tensor, None]:
        return F.mul(g, self.scalar), None


class _DivScalarBackward(MulScalarBackward):
    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor, None]:
        return F.div(g, self.scalar), None


# Same class names as torch's nodes for tensor-scalar products (torch wraps the scalar).
class _MulScalar(MulScalarBackward, name="MulBackward0"):
    __slots__ = ()


class _DivScalar(_DivScalarBackward, name="DivBackward0"):
    __slots__ = ()


def _record_by_number(node: MulScalarBackward, number: Any, a: Tensor, out: Any) -> Tensor:
    """``out`` recorded as ``a`` times (or over) a number: the node keeps the number only."""
    node.scalar = number
    node._saved = HOLDS_STATE  # (torch saves the number, wrapped as a tensor)
    return record(node, (a, None), out)


@register("mul", "multiply", method=True, dunders=("__mul__", "__rmul__"))
def mul(a: Any, b: Any) -> Tensor:
    """Elementwise product with broadcasting.

    Example:
        >>> import gradsum
        >>> (gradsum.tensor([1.0, 2.0]) * 3).tolist()
        [3.0, 6.0]
    """
    if isinstance(b, Tensor) and isinstance(a, Tensor) and a._array.dtype is b._array.dtype:
        x, y, bt = a._array, b._array, True  # (_binary's common case, written out)
    else:
        a, b, x, y, bt = _binary(a, b)
    try:
        # (a bfloat16 tensor times a number: torch's kernel keeps the number in float32)
        out = x * y if bt or x.dtype.kind != "V" else scalar_opmath(_operator.mul, x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not _state.enabled:  # (needs_grad, written out: "Speed" in docs/ARCHITECTURE.md)
        return _make(out)
    a_rg = a._grad_fn is not None or a._requires_grad
    b_rg = bt and (b._grad_fn is not None or b._requires_grad)
    if not (a_rg or b_rg):
        return _make(out)
    if not bt:
        return _record_by_number(_MulScalar(), y, a, out)
    node = MulBackward0()
    node.a_shape = None if x.shape == out.shape else x.shape
    node.b_shape = None if y.shape == out.shape else y.shape
    out_t = record(node, (a, b), out)
    # Save only what a rule needs (SEMANTICS 7): grad of a needs b, grad of b needs a, for
    # an input with an edge (note "Saved for an edge" in linalg._record_product: a view made in
    # no_grad mode requires grad but has none). (Node.save, written out)
    nxt = node._next
    node._saved = (_saved_input(a) if nxt[1][0] is not None else _NOTHING_SAVED,
                   _saved_input(b) if nxt[0][0] is not None else _NOTHING_SAVED)
    return out_t


class DivBackward0(Node):
    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        ga = F.sum_to(F.div(g, b), self.a_shape) if self.needs(0) else None
        gb = None
        if self.needs(1):
            gb = F.sum_to(F.neg(F.div(F.mul(g, a), F.mul(b, b))), self.b_shape)
        return ga, gb


def _reciprocal_array(x: Any) -> Any:
    return (1.0 / x).astype(x.dtype, copy=False)


@silenced
def _quiet_div(x: Any, y: Any) -> Any:
    """``x / y`` without NumPy's floating-point warnings (torch raises none)."""
    return x / y


@register("div", "true_divide", "divide", method=True, dunders="__truediv__")
def div(a: Any, b: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division with broadcasting (integers promote to the default float)."""
    if rounding_mode is not None:
        return _div_rounded(a, b, rounding_mode)
    if not isinstance(a, Tensor):
        a = _left(a, b, floating=True)
    x, y, bt = binary_arrays(a, b)
    if x.dtype.kind not in "fV":
        # (each operand straight to the default float, as torch's true division: not through
        # their common integer dtype, which would wrap a 0-d uint8 253 to int8's -3)
        fd = D.get_default_dtype().np
        if bt:
            x, y = a._array.astype(fd), b._array.astype(fd)
        else:
            x = x.astype(fd)
    try:
        # (torch divides by zero silently: inf or nan, no warning; a number of magnitude
        # >= 1 can neither divide by zero nor overflow, so it skips the quiet call)
        if not bt and x.dtype.kind == "V":  # (torch: by the number in float32)
            with xp.errstate(divide="ignore", invalid="ignore"):
                out = scalar_opmath(_operator.truediv, x, y)
        else:
            out = (x / y if not bt and (1.0 <= y < math.inf or -math.inf < y <= -1.0)
                   else _quiet_div(x, y))
    except ValueError:
        raise broadcast_error(x, y) from None
    if out.dtype != x.dtype:
        out = out.astype(x.dtype)
    if not needs_grad(a, b):
        return _make(out)
    if not bt:
        return _record_by_number(_DivScalar(), y, a, out)
    node = DivBackward0()
    node.a_shape = x.shape
    node.b_shape = y.shape
    out_t = record(node, (a, b), out)
    node.save(a if node._next[1][0] is not None else None, b)  # (see mul)
    return out_t


class DivBackward2(Node):
    """``div`` with a rounding mode: piecewise constant, so both gradients are zero (torch's
    rule; the output still requires grad)."""

    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = F.zeros(self.a_shape, dtype=g.dtype) if self.needs(0) else None
        gb = F.zeros(self.b_shape, dtype=g.dtype) if self.needs(1) else None
        return ga, gb


def _div_rounded(a: Any, b: Any, rounding_mode: str) -> Tensor:
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(_ops_messages.div_invalid_rounding_mode(rounding_mode))
    a, b, x, y, bt = _binary(a, b)
    _no_bool(x, f"div_{rounding_mode}_cpu")
    _check_int_divisor(x, y, "division")
    with xp.errstate(divide="ignore", invalid="ignore"):
        try:
            if rounding_mode == "floor":
                out = _floor_divide(x, y)
            elif x.dtype.kind in "fV":
                out = xp.trunc(x / y)
            else:
                q = xp.floor_divide(x, y)
                out = q + ((q < 0) & (q * y != x))  # round toward zero
        except ValueError:
            raise broadcast_error(x, y) from None
    out = xp.asarray(out).astype(x.dtype, copy=False)
    if not needs_grad(a, b):
        return _make(out)
    node = DivBackward2()
    node.a_shape, node.b_shape = x.shape, (xp.shape(y) if bt else ())
    return record(node, (a, b), out)


def rdiv(a: Tensor, b: Any) -> Tensor:
    """``b / a`` for a non-tensor ``b``."""
    if _array_like(b):
        return div(as_tensor_like(b, a), a)
    return mul(reciprocal(a), scalar_value(b))


# -- pow ---------------------------------------------------------------------------------------
class PowBackward0(Node):
    """``a ** p`` for a Python number ``p``."""

    __slots__ = ("exponent",)

    def backward(self, g: Tensor) -> Tensor:
        p = self.exponent
        if not _state.enabled and p != 0:  # (nothing to record: the rule on arrays)
            (xa,) = self.saved_arrays()
            ga = g._array
            if (ga.dtype is xa.dtype and xa.dtype in _F32_F64 and xa.ndim
                    and _fast_exponent(p - 1)):
                t = _pow_float(xa, p - 1)
                t *= p
                return _make(xp.multiply(ga, t, out=t))
        (a,) = self.saved()
        if p == 0:
            return F.zeros_like(g)
        return F.mul(g, F.mul(F.pow(a, p - 1), p))


class PowBackward1(Node):
    """``a ** b`` for two tensors."""

    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, out = self.saved()
        ga = gb = None
        if self.needs(0):
            ga = F.mul(g, F.mul(b, F.pow(a, F.sub(b, 1))))
            ga = F.where(F.eq(b, 0).detach(), F.zeros_like(ga), ga)
            ga = F.sum_to(ga, self.a_shape)
        if self.needs(1):
            zero = F.logical_and(F.eq(a, 0), F.ge(b, 0)).detach()
            rt = D.result_type(a, b)  # (torch: the log in the operands' promoted dtype)
            a = a if a.dtype is rt else a.to(rt)
            gb = F.mul(g, F.where(zero, F.zeros_like(out), F.mul(out, F.log(a))))
            gb = F.sum_to(gb, self.b_shape)
        return ga, gb


class PowBackward2(Node):
    """``s ** b`` for a Python number ``s`` and a tensor ``b``."""

    __slots__ = ("base",)

    def backward(self, g: Tensor) -> Tensor:
        (b, out) = self.saved()
        s = self.base
        if s.__class__ is bool:  # (torch 2.13 fails on a bool base: an internal assert)
            raise RuntimeError(_ops_messages.pow_bool_base_no_derivative())
        if s == 0:
            return F.where(F.ge(b, 0).detach(), F.zeros_like(g), F.mul(g, F.mul(out, -math.inf)))
        return F.mul(g, F.mul(out, math.log(s) if s > 0 else math.nan))


@register("pow", method=True, dunders="__pow__")
def pow(a: Any, b: Any) -> Tensor:
    """``a ** b`` with broadcasting; ``a`` or ``b`` may be a Python number."""
    if not isinstance(a, Tensor):
        return rpow(b, a)
    if (b is True or b is False) and a._array.dtype.kind == "b":
        # torch: a bool exponent of 1 is a copy and of 0 a fill with ones, both in bool
        # (a bool tensor never requires grad: nothing to record)
        return _make(a._array.copy() if b else xp.ones_like(a._array))
    x, y, bt = binary_arrays(a, b)
    _no_bool(x, "pow")
    try:
        if not bt and x.dtype.kind in "iu" and isinstance(y, int) and y < 0:
            raise RuntimeError(_ops_messages.integers_to_negative_integer_powers())
        if bt:
            out = _int_power(x, y) if x.dtype.kind in "iu" else x**y
        elif x.dtype.itemsize < 4 or x.dtype.kind not in "fV":
            out = x ** _checked(y, x.dtype)  # (torch converts the exponent to the dtype)
        elif y.__class__ is int and not -16777216 <= y <= 16777216:
            # (torch keeps the exponent in double: an odd 2**40 - 1 stays odd)
            out = (x.astype(xp.float64) ** y).astype(x.dtype)
        else:
            out = _pow_float(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    if out.dtype != x.dtype:
        out = out.astype(x.dtype)
    if not needs_grad(a, b):
        return _make(out)
    if not bt:
        node = PowBackward0()
        node.exponent = y
        out_t = record(node, (a,), out)
        node.save(a)
        return out_t
    node1 = PowBackward1()
    node1.a_shape = x.shape
    node1.b_shape = y.shape
    out_t = record(node1, (a, b), out)
    node1.save(a, b, outputs=(out_t,))
    return out_t


_F32_F64 = (xp.dtype(xp.float32), xp.dtype(xp.float64))
#: the integer exponents of a float32 power taken as float64 products by :func:`_pow_float`
_F32_INT_POWERS = (3, 4, -2, -3, -4)


def _fast_exponent(y: Any) -> bool:
    """Whether :func:`_pow_float` computes ``x ** y`` with its own products (or NumPy's fast
    square, reciprocal and square root), so that a backward can call it on arrays."""
    return y.__class__ in (int, float) and y in (1, 2, 3, 4, -1, -2, -3, -4, 0.5, -0.5)


def _pow_float(x: Any, y: Any) -> Any:
    """``x ** y`` for a float32 or float64 array and a number: -0.5 is ``1 / sqrt(x)``, as
    torch's rsqrt (nan at -inf, -inf at -0.0, where C's pow gives 0 and +inf; pow(x, 0.5)'s
    gradient uses it); a float32 integer power from -4 to 4 but 1, 2 and -1 as float64
    products (and a reciprocal) rounded once to float32 (at most two float64 roundings before
    it: as accurate as C's powf, many times faster); else NumPy's power (its own fast square,
    square root and reciprocal)."""
    if x.dtype.itemsize == 4 and y.__class__ in (int, float) and y in _F32_INT_POWERS:
        w = x.astype(xp.float64)
        with xp.errstate(over="ignore", divide="ignore", invalid="ignore"):
            out = xp.multiply(w, w, out=xp.empty_like(w))  # (exact: 48 bits; 0-d stays an array)
            if y in (3, -3):
                out *= w
            elif y in (4, -4):
                out *= out
            if y < 0:
                xp.divide(1.0, out, out=out)
            return out.astype(xp.float32)
    if y == -0.5:
        with xp.errstate(divide="ignore", invalid="ignore"):
            out = xp.sqrt(x, out=xp.empty_like(x))  # (0-d stays an array)
            return xp.divide(1, out, out=out)
    if y == 1:
        return x.copy()
    return x**y


def _int_power(x: Any, y: Any) -> Any:
    """``x ** y`` for integer arrays as torch computes it: a negative exponent gives 0, except
    for a base of 1 (1) and -1 (+-1 by the exponent's parity), where NumPy raises."""
    if not (y < 0).any():
        return x**y
    neg = y < 0
    out = xp.asarray(x ** xp.where(neg, 0, y))
    inv = xp.where(x == 1, 1, xp.where(x == -1, xp.where(y % 2 == 0, 1, -1), 0))
    return xp.where(neg, inv, out).astype(out.dtype, copy=False)


def rpow(a: Tensor, base: Any) -> Tensor:
    """``base ** a`` for a non-tensor ``base``."""
    if _array_like(base):
        return pow(as_tensor_like(base, a), a)
    s = scalar_value(base)
    x, sv, _ = _arrays(a, s)
    _no_bool(x, "pow")
    out = _int_power(xp.asarray(sv, dtype=x.dtype), x) if x.dtype.kind in "iu" else xp.power(
        xp.asarray(sv, dtype=x.dtype), x)
    if not needs_grad(a):
        return _make(out)
    node = PowBackward2()
    node.base = s
    out_t = record(node, (a,), out)
    node.save(a, outputs=(out_t,))
    return out_t


# -- unary math --------------------------------------------------------------------------------
def _unary_float(a: Tensor) -> Any:
    x = a._array
    if x.dtype.kind not in "fV":
        x = x.astype(D.get_default_dtype().np)
    return x


class NegBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return F.neg(g)


@register("neg", "negative", method=True, dunders="__neg__")
def neg(a: Tensor) -> Tensor:
    """``-a``."""
    if a._array.dtype.kind == "b":
        raise RuntimeError(_ops_messages.neg_bool_tensor())
    out = -a._array
    if not needs_grad(a):
        return _make(out)
    return record(NegBackward0(), (a,), out)


class ReciprocalBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.neg(F.mul(g, F.mul(out, out)))


@register("reciprocal", method=True)
def reciprocal(a: Tensor) -> Tensor:
    """``1 / a``."""
    x = _unary_float(a)
    out = quietly(_reciprocal_array, x)
    return _unary(a, out, ReciprocalBackward0, "output")


def _floor_divide(x: Any, y: Any) -> Any:
    """NumPy's ``floor_divide`` (torch's values for floats), at the speed of a division.

    For float32/float64 it is ``floor(x / y)`` wherever the rounded quotient is not a whole
    number and below ``2**(p - 3)`` (``p`` bits of precision): rounding is monotonic and whole
    numbers are representable there, so the rounded quotient lies on the same side of every
    whole number as the exact one, and the floor of the exact quotient is what NumPy's
    fmod-based loop gives there. Whole, infinite and nan
    quotients (exact divisions, signed zeros, overflow, ...) take NumPy's own loop."""
    rt = xp.result_type(x, y)
    if (rt != xp.float32 and rt != xp.float64) or not (xp.ndim(x) or xp.ndim(y)):
        return xp.floor_divide(x, y)
    q = xp.asarray(xp.true_divide(x, y))
    out = xp.floor(q)
    ok = xp.less(out, q)
    # (NumPy's loop rounds twice, at most 2 eps |q| off, rounded to a whole number: exact
    # below 2**(p - 3), where it is the floor of the exact quotient)
    ok &= xp.less(xp.abs(q), 2.0 ** 21 if rt == xp.float32 else 2.0 ** 50)
    if not ok.all():
        bad = ~ok
        xs = xp.broadcast_to(x, q.shape)[bad]
        ys = xp.broadcast_to(y, q.shape)[bad] if xp.ndim(y) else y
        out[bad] = xp.floor_divide(xs, ys)
    return out


@register("floor_divide", method=True, inplace=twin("floor_divide_", "__ifloordiv__", cast=True))
def floor_divide(a: Any, b: Any) -> Tensor:
    """Division rounded down (not differentiable, like torch's)."""
    a, b, x, y, bt = _binary(a, b)
    _no_bool(x, "div_floor_cpu")
    _check_int_divisor(x, y, "division")
    with xp.errstate(divide="ignore", invalid="ignore"):
        try:
            out = xp.asarray(_floor_divide(x, y))
        except ValueError:
            raise broadcast_error(x, y) from None
    if not needs_grad(a, b):
        return _make(out)
    # torch records a NotImplemented node: the output requires grad, its backward raises
    node = _NotImplementedNode()
    node.op = "floor_divide"
    # (its edges are those of the operands that require grad only, as torch's)
    ins = tuple(t for t in ((a, b) if bt else (a,)) if t.requires_grad)
    return record(node, ins, out)


class RemainderBackward0(Node):
    """``a % s`` for a Python number ``s``: the gradient of ``a`` is ``g``."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return g


class RemainderBackward1(Node):
    """``a % b`` for two tensors: ``d/da = 1``, ``d/db = -floor(a / b)``."""

    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = F.sum_to(g, self.a_shape) if self.needs(0) else None
        gb = None
        if self.needs(1):
            a, b = self.saved()
            q = div(a.detach(), b.detach(), rounding_mode="floor")
            gb = F.sum_to(F.neg(F.mul(g, q)), self.b_shape)
        return ga, gb


def _fmod(x: Any, y: Any, remainder: bool = False) -> Any:
    """NumPy's ``fmod`` (exact), for float32 at the speed of a few vectorised passes.

    float32 operands are computed in float64, where ``x - trunc(x / y) * y`` is exact for
    quotients below 2**29 (the product has at most 53 bits, and the difference is the exact
    remainder, which float32 holds) whenever the truncated rounded quotient is the exact
    one's; an element where it is not gives a remainder of the wrong sign, and goes through
    NumPy's loop with the quotients that are too large and the non-finite ones. The sign of
    a zero is the dividend's, as C's fmod. ``remainder``: float32 only, moved by one divisor
    where the signs differ (:func:`_remainder`). The quotient is first taken in float32
    (below 2**24, by the same argument); the elements it does not settle are done as above
    (all of them when they are more than an eighth)."""
    if xp.result_type(x, y) != xp.float32 or not (xp.ndim(x) or xp.ndim(y)):
        return xp.fmod(x, y)
    x, y = xp.asarray(x, dtype=xp.float32), xp.asarray(y, dtype=xp.float32)  # (NumPy's casts)
    n = x.size
    if n > 2 * _FMOD_BLOCK and x.flags.c_contiguous and (
            y.ndim == 0 or (y.shape == x.shape and y.flags.c_contiguous)):
        # (in blocks that stay in cache: the passes over float64 temporaries of a large
        # input would each go to memory)
        out = xp.empty(x.shape, xp.float32)
        xf, of = x.reshape(-1), out.reshape(-1)
        yf = y if y.ndim == 0 else y.reshape(-1)
        for i in range(0, n, _FMOD_BLOCK):
            j = i + _FMOD_BLOCK
            of[i:j] = _fmod_f32(xf[i:j], yf if y.ndim == 0 else yf[i:j], remainder)
        return out
    return _fmod_f32(x, y, remainder)


_FMOD_BLOCK = 1 << 16


def _fmod_f32(x: Any, y: Any, remainder: bool, narrow: bool = True) -> Any:
    """:func:`_fmod` of float32 arrays, in one go. ``remainder``: the quotient rounded down
    instead of toward zero, which gives the exact ``fmod + y`` where the signs differ, in
    float64 (as that sum of two float32 numbers, rounded once to float64 then to float32:
    the float32 sum, as 53 >= 2 * 24 + 2 bits) and the sign of ``x`` for a zero."""
    # the quotient in float32: below 2**24 whole numbers are representable, so the rounded
    # quotient, rounded to a whole number, is the exact one's or one too far, as in float64
    # (a float32 whole number times a float32 divisor: exact in float64)
    # (the others, and ``narrow=False``: the quotient in float64, exact products below 2**29)
    x64, y64 = x.astype(xp.float64), y.astype(xp.float64)
    if narrow:
        q = xp.asarray(xp.true_divide(x, y))
        (xp.floor if remainder else xp.trunc)(q, out=q)
        ok = xp.less(xp.abs(q), 2.0 ** 24)
        r = q.astype(xp.float64)
    else:
        r = xp.asarray(xp.true_divide(x64, y64))
        (xp.floor if remainder else xp.trunc)(r, out=r)
        ok = xp.less(xp.abs(r), 2.0 ** 29)
    t = xp.empty_like(r)
    xp.multiply(r, y64, out=r)
    xp.subtract(x64, r, out=r)
    # (a quotient rounded to a whole number one too far leaves a remainder of the wrong
    # sign; one too near cannot occur, as whole numbers are representable; nan: not finite)
    xp.multiply(r, y64 if remainder else x64, out=t)
    ok &= xp.greater_equal(t, 0)
    out = r.astype(xp.float32)  # (exact, or the float32 sum as above)
    if not remainder:
        # the sign of x where the remainder is +0 (x - t * y is not -0): or-ing x's sign bit,
        # a no-op on the others that are kept (NumPy's copysign is several times slower)
        bits = out.view(xp.uint32)
        xp.bitwise_or(bits, xp.bitwise_and(x.view(xp.uint32), xp.uint32(0x80000000)), out=bits)
    else:
        zero = out == 0
        if zero.any():
            xp.copysign(out, xp.broadcast_to(x, out.shape), out=out, where=zero)
    if not ok.all():
        bad = ~ok
        if narrow and 8 * xp.count_nonzero(bad) > bad.size:  # (large quotients: all again)
            return _fmod_f32(x, y, remainder, narrow=False)
        xs = xp.broadcast_to(x, out.shape)[bad]
        ys = xp.broadcast_to(y, out.shape)[bad] if xp.ndim(y) else y
        if narrow:
            out[bad] = _fmod_f32(xs, ys, remainder, narrow=False)
        else:
            out[bad] = _remainder_fmod(xs, ys) if remainder else xp.fmod(xs, ys)
    return out


def _remainder_fmod(x: Any, y: Any) -> Any:
    """torch's float ``remainder`` from NumPy's ``fmod``: moved by one divisor where the
    signs differ."""
    out = xp.asarray(xp.fmod(x, y))
    fix = (out != 0) & ((out < 0) != (xp.asarray(y) < 0))
    if fix.any():
        out = xp.where(fix, out + y, out)
    return out


def _remainder(x: Any, y: Any) -> Any:
    """torch's ``remainder``: ``fmod``, moved by one divisor when the signs differ. For floats
    it differs from NumPy's only in the sign of a zero (``0 % -1`` is 0.0 in torch, -0.0 in
    NumPy), which ``1 / r`` or ``copysign`` would expose."""
    if xp.result_type(x, y).kind not in "fV":  # (either may be a Python number)
        return xp.remainder(x, y)
    if xp.result_type(x, y) == xp.float32 and (xp.ndim(x) or xp.ndim(y)):
        return _fmod(x, y, remainder=True)
    return _remainder_fmod(x, y)


@register("remainder", method=True, inplace=twin("remainder_", "__imod__", cast=True))
def remainder(a: Any, b: Any) -> Tensor:
    """Python-style modulus ``a - floor(a / b) * b`` (the sign of ``b``), like torch's."""
    if isinstance(a, (bool, int, float, xp.generic)) and isinstance(b, Tensor):
        # torch's remainder(number, tensor) is the reflected op: no derivative, as ``7 % t``
        return _number_left(b, scalar_value(a), "remainder", _remainder)
    a, b, x, y, bt = _binary(a, b)
    _no_bool(x, "remainder_cpu")
    _check_int_divisor(x, y, "remainder")
    with xp.errstate(divide="ignore", invalid="ignore"):
        try:
            out = xp.asarray(_remainder(x, y)).astype(x.dtype, copy=False)
        except ValueError:
            raise broadcast_error(x, y) from None
    if not needs_grad(a, b):
        return _make(out)
    if not bt:
        return record(RemainderBackward0(), (a,), out)
    node = RemainderBackward1()
    node.a_shape, node.b_shape = x.shape, y.shape
    t = record(node, (a, b), out)
    if b.requires_grad:  # (torch saves both only for the divisor's gradient)
        node.save(a, b)
    return t


class _NoDerivative(Node):
    """The node of an op torch has no derivative for (``7 % t``, ``7 // t``): the output
    requires grad, and a backward through it raises, as torch's ``NotImplemented`` node."""

    __slots__ = ("op",)

    def backward(self, g: Tensor) -> Tensor:
        what = ("a number on the left of '%'" if self.op == "remainder"
                else "floor division ('//', floor_divide)")
        raise RuntimeError(_ops_messages.arithmetic_derivative_not_implemented(self.op, what))


_NotImplementedNode = type("NotImplemented", (_NoDerivative,), {"__slots__": ()})


def _number_left(a: Tensor, b: Any, op: str, fn: Any) -> Tensor:
    """``fn(b, a)`` for a number ``b`` on the left (``b // a``, ``b % a``): the number
    promotes like torch's wrapped scalars (``7.5 // int_tensor`` is float32)."""
    x, y, _ = _arrays(a, b)
    kernel = "div_floor_cpu" if op == "floor_divide" else "remainder_cpu"
    _no_bool(x, kernel)
    _check_int_divisor(x, x, "division" if op == "floor_divide" else "remainder")
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = xp.asarray(fn(y, x)).astype(x.dtype, copy=False)
    if not needs_grad(a):
        return _make(out)
    node = _NotImplementedNode()
    node.op = op
    return record(node, (a,), out)


def rfloor_divide(a: Tensor, b: Any) -> Tensor:
    """``b // a`` for a non-tensor ``b`` (the reflected operator)."""
    if isinstance(b, Tensor):
        return floor_divide(b, a)
    if _array_like(b):
        return floor_divide(as_tensor_like(b, a), a)
    return _number_left(a, scalar_value(b), "floor_divide", xp.floor_divide)


def rremainder(a: Tensor, b: Any) -> Tensor:
    """``b % a`` for a non-tensor ``b`` (the reflected operator)."""
    if isinstance(b, Tensor):
        return remainder(b, a)
    if _array_like(b):
        return remainder(as_tensor_like(b, a), a)
    return _number_left(a, scalar_value(b), "remainder", _remainder)


#: the signed integer dtype of each float width, for :func:`select_grad`'s bit mask (dtype
#: objects: ``astype``/``view`` take them without converting a scalar type first)
_INT_OF = {n: xp.dtype(f"i{n}") for n in (2, 4, 8)}
_I8, _U8 = xp.dtype(xp.int8), xp.dtype(xp.uint8)
#: the same for the two common float dtypes, looked up by the dtype itself (one lookup)
_INT_OF_FLOAT = {dt: _INT_OF[dt.itemsize] for dt in (xp.dtype(xp.float32), xp.dtype(xp.float64))}
#: 1 as a read-only 0-d array of each mask dtype (see :func:`const`: NumPy converts a Python
#: int operand on every call, which costs more than a small array's pass)
_ONE_OF = {it: const(it, 1) for it in (*_INT_OF.values(), _U8)}


def _bits_out(shape: Any, dtype: Any, it: Any) -> tuple[Any, Any]:
    """A fresh float array of ``dtype`` and its integer (``it``) view, for a result built on
    the bits: written through the view, the float array is returned. (The integer array's
    ``view(dtype)`` would have a base, so the engine could not take it over as a leaf's
    ``.grad`` and would copy it.)"""
    out = xp.empty(shape, dtype)
    return out, out.view(it)


def select_grad(ga: Any, blocked: Any) -> Any:
    """Note "Select, don't multiply": ``where(blocked, 0, ga)`` on arrays, as torch's
    ``threshold_backward``/``masked_fill``/``where`` rules compute it. ``ga * ~blocked`` would
    turn an inf or nan gradient at a blocked position into nan where torch gives 0.

    Done on the bits: the bool mask minus 1 as int8 (1 -> 0, 0 -> -1) widened with its sign
    to an all-ones / all-zeros integer of the gradient's width, and-ed with the gradient's
    bits. As cheap as the multiply it replaces (one-byte passes but for the last two), where
    ``xp.where`` branches per element and costs 2x-4x more on a random mask. ``blocked`` must
    be a fresh array (it is overwritten)."""
    it = _INT_OF_FLOAT.get(ga.dtype)
    if (it is not None and blocked.__class__ is _ndarray and ga.size < 32768
            and blocked.shape == ga.shape):
        # (small: the mask widened at once, fewer views: each costs more than a small pass.
        # The result is a view: a leaf's .grad made of it is copied, which costs little here)
        m = blocked.astype(it)
        m -= _ONE_OF[it]
        m &= ga.view(it)
        return m.view(ga.dtype)
    if it is None:
        dt = ga.dtype
        it = _INT_OF.get(dt.itemsize) if dt.kind in "fV" else None
    if it is None or blocked.__class__ is not _ndarray:
        return xp.asarray(xp.where(blocked, xp.zeros((), dtype=ga.dtype), ga))
    b8 = blocked.view(_U8)
    b8 -= _ONE_OF[_U8]
    if blocked.shape == ga.shape:  # (one-byte passes first; the result owns its buffer)
        out, m = _bits_out(ga.shape, ga.dtype, it)
        xp.copyto(m, b8.view(_I8))
        m &= ga.view(it)
        return out
    out, m = _bits_out(xp.broadcast_shapes(blocked.shape, ga.shape), ga.dtype, it)
    xp.bitwise_and(b8.view(_I8), ga.view(it), out=m)
    return out


def select(cond: Any, a: Any, b: Any) -> Any:
    """``where(cond, a, b)`` for two float arrays of one dtype and shape, on the bits: the
    bool mask as an all-ones / all-zeros integer of their width, ``b ^ ((a ^ b) & mask)``.
    Five cheap passes where ``xp.where`` branches per element (on a random mask it costs 20x
    a product in float32). Exact for every value (nan, inf, the sign of zero)."""
    it = _INT_OF.get(a.dtype.itemsize) if a.dtype.kind in "fV" else None
    if (it is None or a.dtype is not b.dtype or a.shape != b.shape or cond.shape != a.shape
            or a.__class__ is not _ndarray or b.__class__ is not _ndarray):
        return xp.asarray(xp.where(cond, a, b))
    m = cond.astype(it)
    xp.negative(m, out=m)
    bi = b.view(it)
    res, out = _bits_out(a.shape, a.dtype, it)
    xp.bitwise_xor(a.view(it), bi, out=out)
    out &= m
    out ^= bi
    return res


def select_const(cond: Any, a: float, b: float, dtype: Any) -> Any:
    """``where(cond, a, b)`` for two numbers as a fresh float array of ``dtype`` (float32 or
    float64) and ``cond``'s shape, on the bits: the mask as integers times ``a ^ b``, xor-ed
    with ``b``. Two passes of the result's width where ``xp.where`` branches per element."""
    it = _INT_OF[xp.dtype(dtype).itemsize]
    ab = xp.asarray([a, b], dtype=dtype).view(it)
    res, m = _bits_out(cond.shape, dtype, it)
    xp.copyto(m, cond)
    m *= ab[0] ^ ab[1]
    m ^= ab[1]
    return res


def _bitwise(name: str, fn: Any, **surface: Any) -> Any:
    def op(a: Any, b: Any) -> Tensor:
        if not isinstance(a, Tensor):
            a = _left(a, b)
        x, y, _ = _arrays(a, b)
        if x.dtype.kind in "fV":
            raise D.not_implemented(f"{name}_cpu", x.dtype,
                                    "Bitwise ops take bool or integer tensors.")
        try:
            return _make(xp.asarray(fn(x, y)))
        except ValueError:
            raise broadcast_error(x, y) from None

    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` of bool or integer tensors (the ``{name[8:]}`` "
                  "operator; not differentiable).")
    return register(name, **surface)(op)


bitwise_and = _bitwise("bitwise_and", xp.bitwise_and, method=True, dunders=("__and__", "__rand__"),
                       inplace=twin("bitwise_and_", "__iand__", cast=True))
bitwise_or = _bitwise("bitwise_or", xp.bitwise_or, method=True, dunders=("__or__", "__ror__"),
                      inplace=twin("bitwise_or_", "__ior__", cast=True))
bitwise_xor = _bitwise("bitwise_xor", xp.bitwise_xor, method=True, dunders=("__xor__", "__rxor__"),
                       inplace=twin("bitwise_xor_", "__ixor__", cast=True))


@register("bitwise_not", method=True, inplace=twin("bitwise_not_", untracked=True))
def bitwise_not(a: Tensor) -> Tensor:
    """Elementwise bitwise not: logical not of a bool tensor, ``~x`` of an integer one."""
    x = a._array
    if x.dtype.kind in "fV":
        raise D.not_implemented("bitwise_not_cpu", x.dtype,
                                "Bitwise ops take bool or integer tensors.")
    return _make(xp.invert(x))


@tensor_method(dunders="__invert__")
def invert(a: Tensor) -> Tensor:
    """``~a`` (Python's operator): torch raises TypeError for a floating tensor."""
    if a._array.dtype.kind in "fV":
        raise TypeError(_ops_messages.invert_only_integer_and_boolean())
    return bitwise_not(a)


# -- atan2 -------------------------------------------------------------------------------------

# -- lerp --------------------------------------------------------------------------------------
class LerpBackward0(Node):
    """``lerp`` with a number weight: nothing saved (torch keeps the number only)."""

    __slots__ = ("shapes", "weight")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        w = self.weight
        ga = F.sum_to(F.mul(g, 1 - float(w)), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(F.mul(g, w), self.shapes[1]) if self.needs(1) else None
        return ga, gb


class LerpBackward1(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        a, b, w = self.saved()
        ga = F.sum_to(F.mul(g, F.rsub(w, 1)), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(F.mul(g, w), self.shapes[1]) if self.needs(1) else None
        gw = F.sum_to(F.mul(g, F.sub(b, a)), self.shapes[2]) if self.needs(2) else None
        return ga, gb, gw


def _lerp_dtype_check(name: str, ref: Any, other: Any, what: str) -> None:
    if other.dtype != ref.dtype:
        raise RuntimeError(_ops_messages.lerp_dtype_mismatch(ref.dtype, other.dtype, what))


@register("lerp", method=True, inplace="lerp_")
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)`` with broadcasting; ``weight`` is a number or a
    tensor. Floating dtypes only, all operands of one dtype (as torch).

    Example:
        >>> import gradsum
        >>> gradsum.lerp(gradsum.tensor([0.0, 10.0]), gradsum.tensor([10.0, 20.0]), 0.25).tolist()
        [2.5, 12.5]
    """
    require_tensor("lerp", "input", 1, input)
    require_tensor("lerp", "end", 2, end)
    x, y = input._array, end._array
    w_is_t = isinstance(weight, Tensor)
    kernel = "lerp_kernel_tensor" if w_is_t else "lerp_kernel_scalar"
    _lerp_dtype_check("lerp", x, y, "end")
    if w_is_t:
        _lerp_dtype_check("lerp", x, weight._array, "weight")
    if x.dtype.kind not in "fV":
        raise D.not_implemented(kernel, x.dtype, "Convert the operands with .float() first.")
    w = weight._array if w_is_t else scalar_value(weight)
    try:
        shape = xp.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x, y) from None
    if w_is_t:
        try:
            shape = xp.broadcast_shapes(shape, w.shape)
        except ValueError:
            raise broadcast_error(xp.empty(shape), w) from None
    # torch's kernel: from the nearer end (so lerp(a, b, 1) is exactly b), fused
    out = xp.asarray(_fma.lerp(x, y, w, select)).astype(x.dtype, copy=False)
    out = xp.broadcast_to(out, shape).copy() if out.shape != shape else out
    if not needs_grad(input, end, weight):
        return _make(out)
    if not w_is_t:
        node0 = LerpBackward0()
        node0.shapes, node0.weight = (x.shape, y.shape), weight
        return record(node0, (input, end), out)
    node1 = LerpBackward1()
    node1.shapes = (x.shape, y.shape, w.shape)
    t = record(node1, (input, end, weight), out)
    node1.save(input, end, weight)
    return t


# -- addcmul / addcdiv -------------------------------------------------------------------------
class AddcmulBackward0(Node):
    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        v = self.value
        ga = F.sum_to(g, self.shapes[0]) if self.needs(0) else None
        if not (self.needs(1) or self.needs(2)):
            return ga, None, None  # (nothing was saved)
        t1, t2 = self.saved()
        g1 = F.sum_to(F.mul(F.mul(g, t2), v), self.shapes[1]) if self.needs(1) else None
        g2 = F.sum_to(F.mul(F.mul(g, t1), v), self.shapes[2]) if self.needs(2) else None
        return ga, g1, g2


class AddcdivBackward0(Node):
    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        t1, t2 = self.saved()
        v = self.value
        ga = F.sum_to(g, self.shapes[0]) if self.needs(0) else None
        if self.needs(1) and not t2.dtype.is_floating_point:
            # (torch's rule divides into tensor2's integer dtype and fails)
            raise RuntimeError(_messages.cast_inplace(D.get_default_dtype().name, t2.dtype.name,
                                                      "addcdiv's backward"))
        g1 = F.sum_to(F.mul(g, F.div(v, t2)), self.shapes[1]) if self.needs(1) else None
        g2 = None
        if self.needs(2):
            # (torch's grouping, which sets the dtype each step computes in)
            g2 = F.mul(F.neg(g), F.div(F.mul(t1, v), F.mul(t2, t2)))
            g2 = F.sum_to(g2, self.shapes[2])
        return ga, g1, g2


def _addc(name: str, input: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any
          ) -> tuple[Any, Any, Any, Any]:
    for pos, (arg, v) in enumerate((("input", input), ("tensor1", tensor1),
                                    ("tensor2", tensor2)), 1):
        require_tensor(name, arg, pos, v)
    value = scalar_value(value)
    rt = D.result_type(input, tensor1, tensor2).np
    x, t1, t2 = (t._array.astype(rt, copy=False) for t in (input, tensor1, tensor2))
    if rt.kind in "biu" and isinstance(value, float):
        value = int(value)  # (torch casts the value to the integer result type)
    return x, t1, t2, value


@register("addcmul", method=True, inplace="addcmul_")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2`` with broadcasting.

    Example:
        >>> import gradsum
        >>> gradsum.addcmul(gradsum.ones(2), gradsum.tensor([2.0, 3.0]), gradsum.tensor([4.0, 5.0]),
        ...                 value=0.5).tolist()
        [5.0, 8.5]
    """
    x, t1, t2, v = _addc("addcmul", input, tensor1, tensor2, value)
    if x.dtype.kind == "b":
        raise D.not_implemented("addcmul_cpu_out", x.dtype, "Convert the tensors with .long() "
                                "first.")
    try:
        shape = xp.broadcast_shapes(x.shape, t1.shape, t2.shape)
    except ValueError:
        raise broadcast_error(t1 if t1.shape != x.shape else x, t2) from None
    fused = xp.result_type(x, t1, t2).kind in "fV" and not isinstance(v, complex)
    # (torch's kernels: fma(value * t1, t2, input) for floats, fused like add's alpha)
    out = _fma.addcmul(x, v, t1, t2) if fused else x + v * t1 * t2
    out = xp.asarray(out).astype(x.dtype, copy=False)
    if out.shape != shape:
        out = xp.broadcast_to(out, shape).copy()
    if not needs_grad(input, tensor1, tensor2):
        return _make(out)
    node = AddcmulBackward0()
    node.shapes, node.value = (x.shape, t1.shape, t2.shape), v
    t = record(node, (input, tensor1, tensor2), out)
    if node.needs(1) or node.needs(2):  # (torch saves each factor for the other's gradient)
        node.save(tensor1 if node.needs(2) else None, tensor2 if node.needs(1) else None)
    return t


@register("addcdiv", method=True, inplace="addcdiv_")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` with broadcasting (floating dtypes: torch refuses
    integer division here).

    Example:
        >>> import gradsum
        >>> gradsum.addcdiv(gradsum.ones(2), gradsum.tensor([2.0, 3.0]), gradsum.tensor([4.0, 6.0]),
        ...                 value=2).tolist()
        [2.0, 2.0]
    """
    if all(isinstance(t, Tensor) and t._array.dtype.kind in "biu" for t in (tensor1, tensor2)):
        raise RuntimeError(_ops_messages.addcdiv_integer_division())
    x, t1, t2, v = _addc("addcdiv", input, tensor1, tensor2, value)
    try:
        shape = xp.broadcast_shapes(x.shape, t1.shape, t2.shape)
    except ValueError:
        raise broadcast_error(t1 if t1.shape != x.shape else x, t2) from None
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = xp.asarray(x + (v * t1) / t2).astype(x.dtype, copy=False)  # (torch's order)
    if out.shape != shape:
        out = xp.broadcast_to(out, shape).copy()
    if not needs_grad(input, tensor1, tensor2):
        return _make(out)
    node = AddcdivBackward0()
    node.shapes, node.value = (x.shape, t1.shape, t2.shape), v
    t = record(node, (input, tensor1, tensor2), out)
    node.save(tensor1, tensor2)  # (torch saves both whichever gradients are needed)
    return t


_ERR = {"divide": "ignore", "invalid": "ignore", "over": "ignore", "under": "ignore"}


def _bcast(out: Any, x: Any, y: Any) -> Any:
    shape = xp.broadcast_shapes(x.shape, y.shape)
    out = xp.asarray(out).astype(x.dtype, copy=False)
    return out if out.shape == shape else xp.broadcast_to(out, shape).copy()


class FmodBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return g


class FmodBackward1(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = F.sum_to(g, self.shapes[0]) if self.needs(0) else None
        gb = None
        if self.needs(1):
            a, b = self.saved()
            gb = F.sum_to(F.mul(F.neg(g), F.div(a, b, rounding_mode="trunc")), self.shapes[1])
        return ga, gb


@register("fmod", method=True, inplace="fmod_")
def fmod(input: Tensor, other: Any) -> Tensor:
    """The C remainder: the result has the sign of the dividend (``input``); integer tensors
    stay integers (division by an integer 0 raises, as torch).

    Example:
        >>> import gradsum
        >>> gradsum.fmod(gradsum.tensor([-3.0, 3.0]), 2).tolist()
        [-1.0, 1.0]
    """
    require_tensor("fmod", "input", 1, input)
    x, y, yt = binary_arrays(input, other)
    y = xp.asarray(y, dtype=x.dtype) if not yt else y
    if x.dtype.kind in "biu" and (xp.asarray(y) == 0).any():
        raise RuntimeError(_ops_messages.fmod_zero_division())
    try:
        with xp.errstate(**_ERR):
            out = _fmod(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    out = _bcast(out, x, y)
    if not needs_grad(input, other):
        return _make(out)
    if yt:
        node = FmodBackward1()
        node.shapes = (x.shape, y.shape)
        t = record(node, (input, other), out)
        if node.needs(1):
            node.save(input, other)
        return t
    return record(FmodBackward0(), (input,), out)


# -- float_power, fmax / fmin ---------------------------------------------------------------
@register("float_power", method=True)
def float_power(input: Any, exponent: Any) -> Tensor:
    """:func:`pow` computed in float64 (both operands are converted first).

    Example:
        >>> import gradsum
        >>> y = gradsum.float_power(gradsum.tensor([2, 3]), 2)
        >>> y.dtype, y.tolist()
        (gradsum.float64, [4.0, 9.0])
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(_ops_messages.float_power_needs_a_tensor(input, exponent))

    def f64(v: Any) -> Any:
        if isinstance(v, Tensor):
            return v if v._array.dtype == xp.float64 else F.to_dtype(v, D.float64)
        return float(v)

    return F.pow(f64(input), f64(exponent))


@tensor_method("float_power_")
def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place :func:`float_power`: only a float64 tensor can hold the result."""
    if self._array.dtype != xp.float64:
        raise RuntimeError(_ops_messages.float_power_inplace_base_not_double(self._array.dtype))
    from gradsum.ops.inplace import _op_inplace

    return _op_inplace("float_power_", float_power, registered=False)(self, exponent)


# -- torch's alias names --------------------------------------------------------------------
subtract = sub


def square_(input: Tensor) -> Tensor:
    """In-place :func:`square` (``input.square_()``).

    Example:
        >>> import gradsum
        >>> gradsum.square_(gradsum.tensor([3.0])).tolist()
        [9.0]
    """
    return input.square_()

frexp_result = namedtuple("frexp", ["mantissa", "exponent"])



# -- integer ops: shifts, gcd, lcm --------------------------------------------------------------
def _int_binary(name: str, kernel: str, input: Any, other: Any) -> tuple[Any, Any]:
    """Both operands as arrays of their promoted dtype, which must be an integer one."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(_ops_messages.integer_op_expected_a_tensor(name))
        rt = D.result_type(other, input).np
        x = xp.asarray(scalar_value(input), dtype=rt)
        y = other._array.astype(rt, copy=False)
    else:
        x, y, _ = binary_arrays(input, other)
        x = xp.asarray(x)
        y = xp.asarray(y, dtype=x.dtype)
    if x.dtype.kind not in "iu":
        raise D.not_implemented(kernel, x.dtype, "Use integer tensors.")
    if x.shape != y.shape:
        try:
            xp.broadcast(x, y)  # (a quarter of broadcast_shapes' call)
        except ValueError:
            raise broadcast_error(x, y) from None
    return x, y


def _shifts_in_range(y: Any, bits: int) -> bool:
    """Whether every shift amount is in ``[0, bits)`` (NumPy's shifts are then torch's)."""
    if not y.size:
        return False
    if y.ndim == 0:
        return 0 <= int(y) < bits
    # (one pass: a negative amount, seen unsigned, is at least 2**63 (int64) > bits)
    return bool((y.view(f"u{y.dtype.itemsize}") < bits).all())


@register("bitwise_left_shift", method=True, dunders="__lshift__",
          inplace=twin("bitwise_left_shift_", "__ilshift__", cast=True))
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """``input << other`` for integer tensors (a shift by the bit width or more, or by a
    negative amount, gives 0, as torch's).

    Example:
        >>> import gradsum
        >>> gradsum.bitwise_left_shift(gradsum.tensor([1, 3]), 2).tolist()
        [4, 12]
    """
    x, y = _int_binary("bitwise_left_shift", "lshift_cpu", input, other)
    bits = x.dtype.itemsize * 8
    if _shifts_in_range(y, bits):
        return _make(xp.asarray(xp.left_shift(x, y), dtype=x.dtype))
    out = xp.asarray(xp.left_shift(x, xp.clip(y, 0, bits - 1)), dtype=x.dtype)
    # (0 where the amount is out of range: the bits and-ed with a mask of all ones or none,
    # on the amounts' shape, where a select over the result branches per element)
    keep = xp.asarray((y >= 0) & (y < bits)).astype(x.dtype)
    xp.negative(keep, out=keep)
    if out.ndim:
        out &= keep
    else:
        out = out & keep
    return _make(out)


@register("bitwise_right_shift", method=True, dunders="__rshift__",
          inplace=twin("bitwise_right_shift_", "__irshift__", cast=True))
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """``input >> other`` (arithmetic for signed integers; a shift by the bit width or more,
    or by a negative amount, shifts by the width minus one, as torch's).

    Example:
        >>> import gradsum
        >>> gradsum.bitwise_right_shift(gradsum.tensor([-8, 8]), 2).tolist()
        [-2, 2]
    """
    x, y = _int_binary("bitwise_right_shift", "rshift_cpu", input, other)
    bits = x.dtype.itemsize * 8
    if _shifts_in_range(y, bits):
        return _make(xp.asarray(xp.right_shift(x, y), dtype=x.dtype))
    y = xp.where((y < 0) | (y >= bits), bits - 1, y)
    return _make(xp.asarray(xp.right_shift(x, y.astype(x.dtype)), dtype=x.dtype))


@tensor_method(dunders="__rlshift__")
def _rlshift(self: Tensor, other: Any) -> Tensor:
    """``other << self``."""
    return bitwise_left_shift(other, self)


@tensor_method(dunders="__rrshift__")
def _rrshift(self: Tensor, other: Any) -> Tensor:
    """``other >> self``."""
    return bitwise_right_shift(other, self)


def _gcd_lcm(name: str, kernel: Any, doc: str) -> Any:
    """The registered ``name(input, other)`` (``gcd`` or ``lcm``): the array op ``kernel`` on
    both tensors' promoted integer arrays (torch's kernel ``<name>_cpu``)."""
    cpu = f"{name}_cpu"

    def fn(input: Tensor, other: Tensor) -> Tensor:
        require_tensor(name, "input", 1, input)
        require_tensor(name, "other", 2, other)
        x, y = _int_binary(name, cpu, input, other)
        return _make(xp.asarray(kernel(x, y), dtype=x.dtype))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return register(name, method=True, inplace=twin(f"{name}_", cast=True))(fn)


gcd = _gcd_lcm(
    "gcd", xp.gcd,
    """Greatest common divisor, elementwise (integers only; ``gcd(0, 0)`` is 0).

    Example:
        >>> import gradsum
        >>> gradsum.gcd(gradsum.tensor([4, -6]), gradsum.tensor([6, 0])).tolist()
        [2, 6]
    """)
lcm = _gcd_lcm(
    "lcm", xp.lcm,
    """Least common multiple, elementwise (integers only).

    Example:
        >>> import gradsum
        >>> gradsum.lcm(gradsum.tensor([4, -6]), gradsum.tensor([6, 0])).tolist()
        [12, 0]
    """)


# -- ldexp, frexp ---------------------------------------------------------------------------------
class LdexpBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, e = self.saved()
        p = F.pow(2.0, e)
        ga = F.sum_to(F.mul(g, p), a.shape) if self.needs(0) else None
        ge = None
        if self.needs(1):
            ge = F.sum_to(F.mul(F.mul(F.mul(g, a), p), math.log(2.0)), e.shape)
        return ga, ge


@register("ldexp", method=True, inplace=twin("ldexp_", cast=True))
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other`` in the promoted floating dtype.

    Example:
        >>> import gradsum
        >>> gradsum.ldexp(gradsum.tensor([1.0, 3.0]), gradsum.tensor([2, -1])).tolist()
        [4.0, 1.5]
    """
    input = require_tensor("ldexp", "input", 1, input)
    other = require_tensor("ldexp", "other", 2, other)
    rt = D.result_type(input, other).np
    if rt.kind not in "fV":
        rt = D.get_default_dtype().np
    x, y = input._array.astype(rt, copy=False), other._array.astype(rt, copy=False)
    try:
        with xp.errstate(over="ignore", invalid="ignore"):
            out = xp.asarray(x * xp.exp2(y), dtype=rt)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not needs_grad(input, other):
        return _make(out)
    node = LdexpBackward0()
    res = record(node, (input, other), out)
    node.save(input, other)
    return res


class FrexpBackward0(Node):
    __slots__ = ("exponent",)
    num_outputs = 2

    def backward(self, g: Tensor, g_exp: Tensor | None = None) -> Tensor:
        return F.div(g, _make(xp.exp2(self.exponent).astype(g._array.dtype)))

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


@register("frexp", method=True)
def frexp(input: Tensor) -> Any:
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent`` and
    ``0.5 <= |mantissa| < 1`` (the exponent is int32).

    Example:
        >>> import gradsum
        >>> m, e = gradsum.frexp(gradsum.tensor([8.0, 0.75]))
        >>> m.tolist(), e.tolist()
        ([0.5, 0.75], [4, 0])
    """
    x = input._array
    if x.dtype.kind not in "fV":
        raise RuntimeError(_ops_messages.frexp_only_floating(x.dtype))
    m, e = xp.frexp(x)
    m, e = xp.asarray(m, dtype=x.dtype), xp.asarray(e, dtype=xp.int32)
    if not needs_grad(input):
        return frexp_result(_make(m), _make(e))
    node = FrexpBackward0()
    node.exponent = e
    node._saved = HOLDS_STATE
    return frexp_result(record(node, (input,), m), _make(e))


@tensor_method("positive")
def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (bool tensors raise, as torch's).

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0])
        >>> gradsum.positive(x) is x
        True
    """
    if input._array.dtype.kind == "b":
        raise RuntimeError(_ops_messages.positive_bool_tensor())
    return input


# -- square (bound as Tensor methods in gradsum.ops) -----------------------------------------------
# -- a few everyday composites (built from primitives above; torch names) ---------------------
@register("square", method=True, inplace="square_")
def square(a: Tensor) -> Tensor:
    """``a ** 2`` (torch records it as ``PowBackward0`` too)."""
    return pow(a, 2)
