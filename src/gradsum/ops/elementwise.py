"""Elementwise ops with broadcasting: arithmetic, unary math, activations, comparisons.

Gradients of broadcast operands are summed back to the operand's shape with ``sum_to``.

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([[1.0], [2.0]], requires_grad=True)   # (2, 1)
    >>> b = gradsum.tensor([1.0, 2.0, 3.0], requires_grad=True)  # (3,)
    >>> (a * b).sum().backward()
    >>> a.grad.tolist(), b.grad.tolist()
    ([[6.0], [6.0]], [3.0, 3.0, 3.0])
"""

from __future__ import annotations

import math
import operator as _operator
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum import _memory_format
from gradsum._backend import copy_c, silenced, xp
from gradsum._fma import fma
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.graph import (
    _NOTHING_SAVED,
    HOLDS_STATE,
    Node,
    _saved_input,
    _saved_output,
)
from gradsum.autograd.saved import hooks_active
from gradsum.backends.mkldnn import onednn_gelu_nan_at_inf
from gradsum.ops._core import (
    _make,
    as_tensor_like,
    binary_arrays,
    broadcast_error,
    const,
    float_dtype_for,
    needs_grad,
    quietly,
    record,
    register,
    scalar_opmath,
    scalar_value,
)
from gradsum.ops._erf import _scratch as _erf_scratch
from gradsum.ops._erf import erf64, gelu_cdf64, gelu_f32, gelu_parts_f32

_ndarray = xp.ndarray
_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _sum_to(g: Tensor, shape: tuple[int, ...]) -> Tensor:
    return g if g._array.shape == shape else F.sum_to(g, shape)


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
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dt.name]} without "
                               f"overflow (value {v}). Use a wider dtype or a smaller number.")
        return v
    if v.__class__ is not int:
        return v
    info = xp.iinfo(dt)
    if not (-info.max if info.min == 0 else info.min) <= v <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dt.name]} without "
                           f"overflow (value {v}). Use a wider dtype or a smaller number.")
    return _wrap_int(v, dt)


def _wrapped(v: Any, dt: Any) -> Any:
    """A Python number converted to float16 unchecked (too large a number is inf)."""
    with xp.errstate(over="ignore"):
        return xp.float16(v)


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
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead."
        )
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _no_bool(x: Any, kernel: str) -> None:
    """torch has no bool kernel for ``kernel`` (floor division, remainder, pow, ...)."""
    if x.dtype.kind == "b":
        raise D.not_implemented(kernel, x.dtype, "Convert the operands with .long() first.")


def _check_int_divisor(x: Any, y: Any, name: str) -> None:
    """torch raises for an integer division by zero, where NumPy returns 0 with a warning."""
    if x.dtype.kind in "iu" and not xp.all(y):
        zeros = int(xp.size(y) - xp.count_nonzero(y))
        raise RuntimeError(
            f"ZeroDivisionError: integer {name} by zero ({zeros} zero divisor(s)). Convert to "
            "a floating dtype (t.float()) or mask the zero divisors out first."
        )


def _rg(t: Any) -> bool:
    """``t.requires_grad`` for a tensor, False for anything else (inlined by hot ops)."""
    return isinstance(t, Tensor) and (t._grad_fn is not None or t._requires_grad)


def _unary(a: Tensor, out: Any, node_cls: type[Node], save: str) -> Tensor:
    """Wrap the result of a one-input op; when recording, save the input or the output."""
    if not _state.enabled or (a._grad_fn is None and not a._requires_grad):
        return _make(out)
    node = node_cls()
    t = record(node, (a,), out)
    # (Node.save, inlined: one saved tensor)
    node._saved = (_saved_input(a),) if save == "input" else (_saved_output(t),)
    return t


def _fused_backward(g: Tensor, y: Tensor, t: Any, node_cls: type[Node]) -> Tensor:
    """Wrap ``t = f(g, y)``, the fused backward of an activation given its output ``y``;
    recorded with ``g`` and ``y`` saved so that its own rule gives double backward."""
    if t.__class__ is not _ndarray:  # 0-d operands give NumPy scalars
        t = xp.asarray(t)
    if not _state.enabled or not (_rg(g) or _rg(y)):
        return _make(t)
    node = node_cls()
    out = record(node, (g, y), t)
    node.save(g if y.requires_grad else None, y)
    return out


# -- add / sub ---------------------------------------------------------------------------------
class AddBackward0(Node):
    __slots__ = ("a_shape", "alpha", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        nxt = self._next
        shape = g._array.shape
        ga = gb = None
        if nxt[0][0] is not None:  # (_sum_to, inlined: the gradient of every add)
            ga = g if shape == self.a_shape else F.sum_to(g, self.a_shape)
        if nxt[1][0] is not None:
            gb = g if self.alpha == 1 else F.mul(g, self.alpha)
            gb = gb if shape == self.b_shape else F.sum_to(gb, self.b_shape)
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
        raise RuntimeError("Boolean alpha only supported for Boolean results. Pass an int or "
                           "a float alpha.")
    if kind in "biu" and isinstance(alpha, (float, xp.floating)):
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating "
                           f"point number (got alpha={alpha}). Convert the tensors first.")
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


@register("add")
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
        x, y, bt = a._array, b._array, True  # the common case, inlined
    else:
        a, b, x, y, bt = _binary(a, b)
    try:
        out = x + y if alpha == 1 and alpha is not True else _plus_scaled(x, y, alpha)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not _state.enabled or not (
        a._grad_fn is not None or a._requires_grad or (bt and _rg(b))
    ):
        return _make(out)
    node = AddBackward0()
    node.alpha = alpha
    node.a_shape = x.shape
    node.b_shape = y.shape if bt else ()
    return record(node, (a, b), out)


@register("sub")
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
    node.a_shape = x.shape
    node.b_shape = y.shape if bt else ()
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
        if nxt[0][0] is not None:  # (_sum_to, inlined: the gradient of every product)
            ga = _make(gx * y) if arrays else F.mul(g, y)
            if ga._array.shape != self.a_shape:
                ga = F.sum_to(ga, self.a_shape)
        if nxt[1][0] is not None:
            gb = _make(gx * x) if arrays else F.mul(g, x)
            if gb._array.shape != self.b_shape:
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
_MulScalar = type("MulBackward0", (MulScalarBackward,), {"__slots__": ()})
_DivScalar = type("DivBackward0", (_DivScalarBackward,), {"__slots__": ()})


@register("mul", "multiply")
def mul(a: Any, b: Any) -> Tensor:
    """Elementwise product with broadcasting.

    Example:
        >>> import gradsum
        >>> (gradsum.tensor([1.0, 2.0]) * 3).tolist()
        [3.0, 6.0]
    """
    if isinstance(b, Tensor) and isinstance(a, Tensor) and a._array.dtype is b._array.dtype:
        x, y, bt = a._array, b._array, True  # the common case, inlined
    else:
        a, b, x, y, bt = _binary(a, b)
    try:
        # (a bfloat16 tensor times a number: torch's kernel keeps the number in float32)
        out = x * y if bt or x.dtype.kind != "V" else scalar_opmath(_operator.mul, x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not _state.enabled:
        return _make(out)
    a_rg = a._grad_fn is not None or a._requires_grad
    b_rg = bt and (b._grad_fn is not None or b._requires_grad)
    if not (a_rg or b_rg):
        return _make(out)
    if not bt:
        node1 = _MulScalar()
        node1.scalar = y
        node1._saved = HOLDS_STATE  # (torch saves the number, wrapped as a tensor)
        return record(node1, (a, None), out)
    node = MulBackward0()
    node.a_shape = x.shape
    node.b_shape = y.shape
    out_t = record(node, (a, b), out)
    # Save only what a rule needs (SEMANTICS 7): grad of a needs b, grad of b needs a, for
    # an input with an edge (note "Saved for an edge" in linalg._record_product: a view made in
    # no_grad mode requires grad but has none). (Node.save, inlined)
    nxt = node._next
    node._saved = (_saved_input(a) if nxt[1][0] is not None else _NOTHING_SAVED,
                   _saved_input(b) if nxt[0][0] is not None else _NOTHING_SAVED)
    return out_t


class DivBackward0(Node):
    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        ga = _sum_to(F.div(g, b), self.a_shape) if self.needs(0) else None
        gb = None
        if self.needs(1):
            gb = _sum_to(F.neg(F.div(F.mul(g, a), F.mul(b, b))), self.b_shape)
        return ga, gb


def _rsqrt_array(x: Any) -> Any:
    return (1.0 / xp.sqrt(x)).astype(x.dtype, copy=False)


def _reciprocal_array(x: Any) -> Any:
    return (1.0 / x).astype(x.dtype, copy=False)


@silenced
def _quiet_div(x: Any, y: Any) -> Any:
    """``x / y`` without NumPy's floating-point warnings (torch raises none)."""
    return x / y


@register("div", "true_divide", "divide")
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
        node1 = _DivScalar()
        node1.scalar = y
        node1._saved = HOLDS_STATE  # (torch saves the number, wrapped as a tensor)
        return record(node1, (a, None), out)
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
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
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
            ga = _sum_to(ga, self.a_shape)
        if self.needs(1):
            zero = F.logical_and(F.eq(a, 0), F.ge(b, 0)).detach()
            rt = D.result_type(a, b)  # (torch: the log in the operands' promoted dtype)
            a = a if a.dtype is rt else a.to(rt)
            gb = F.mul(g, F.where(zero, F.zeros_like(out), F.mul(out, F.log(a))))
            gb = _sum_to(gb, self.b_shape)
        return ga, gb


class PowBackward2(Node):
    """``s ** b`` for a Python number ``s`` and a tensor ``b``."""

    __slots__ = ("base",)

    def backward(self, g: Tensor) -> Tensor:
        (b, out) = self.saved()
        s = self.base
        if s.__class__ is bool:  # (torch 2.13 fails on a bool base: an internal assert)
            raise RuntimeError(
                "pow(bool, tensor) has no derivative: torch fails here with an internal assert "
                "('unknown ivalue tag 4'). Pass the base as an int or a float (1 ** t).")
        if s == 0:
            return F.where(F.ge(b, 0).detach(), F.zeros_like(g), F.mul(g, F.mul(out, -math.inf)))
        return F.mul(g, F.mul(out, math.log(s) if s > 0 else math.nan))


@register("pow")
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
            raise RuntimeError(
                "Integers to negative integer powers are not allowed. Use a float base "
                "(t.float() ** p)."
            )
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


def _float_only(a: Tensor, kernel: str) -> Any:
    """The input array of an activation that torch implements for floating dtypes only."""
    x = a._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented(kernel, x.dtype, "Convert the input with .float() first.")
    return x


class NegBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return F.neg(g)


@register("neg", "negative")
def neg(a: Tensor) -> Tensor:
    """``-a``."""
    if a._array.dtype.kind == "b":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    out = -a._array
    if not _state.enabled or (a._grad_fn is None and not a._requires_grad):  # (needs_grad)
        return _make(out)
    return record(NegBackward0(), (a,), out)


class ExpBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(g, out)


@register("exp")
def exp(a: Tensor) -> Tensor:
    """Elementwise ``e ** a``."""
    out = xp.exp(_unary_float(a))
    return _unary(a, out, ExpBackward0, "output")


class LogBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, a)


@register("log")
def log(a: Tensor) -> Tensor:
    """Natural logarithm."""
    out = quietly(xp.log, _unary_float(a))
    return _unary(a, out, LogBackward0, "input")


class Log1PBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, F.add(a, 1))


@register("log1p")
def log1p(a: Tensor) -> Tensor:
    """``log(1 + a)``, accurate for small ``a``."""
    out = quietly(xp.log1p, _unary_float(a))
    return _unary(a, out, Log1PBackward0, "input")


class SqrtBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.div(g, F.mul(out, 2))


@register("sqrt")
def sqrt(a: Tensor) -> Tensor:
    """Elementwise square root."""
    out = quietly(xp.sqrt, _unary_float(a))
    return _unary(a, out, SqrtBackward0, "output")


class RsqrtBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(F.mul(g, F.pow(out, 3)), -0.5)


@register("rsqrt")
def rsqrt(a: Tensor) -> Tensor:
    """``1 / sqrt(a)``."""
    x = _unary_float(a)
    out = quietly(_rsqrt_array, x)
    return _unary(a, out, RsqrtBackward0, "output")


class ReciprocalBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.neg(F.mul(g, F.mul(out, out)))


@register("reciprocal")
def reciprocal(a: Tensor) -> Tensor:
    """``1 / a``."""
    x = _unary_float(a)
    out = quietly(_reciprocal_array, x)
    return _unary(a, out, ReciprocalBackward0, "output")


class AbsBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.sign(a))


@register("abs", "absolute")
def abs(a: Tensor) -> Tensor:
    """Absolute value (its gradient at 0 is 0, as torch's)."""
    _no_bool(a._array, "abs_cpu")
    out = xp.abs(a._array)
    return _unary(a, out, AbsBackward0, "input")


class SinBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.cos(a))


@register("sin")
def sin(a: Tensor) -> Tensor:
    """Elementwise sine."""
    out = xp.sin(_unary_float(a))
    return _unary(a, out, SinBackward0, "input")


class CosBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.neg(F.sin(a)))


@register("cos")
def cos(a: Tensor) -> Tensor:
    """Elementwise cosine."""
    out = xp.cos(_unary_float(a))
    return _unary(a, out, CosBackward0, "input")


class TanhBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: tanh_backward's arrays alone)
            (ya,) = self.saved_arrays()
            return _make(_tanh_grad(g._array, ya))
        (out,) = self.saved()
        return tanh_backward(g, out)


class TanhBackwardBackward0(Node):
    """The rule of ``tanh_backward(g, y) = g * (1 - y**2)``, for double backward."""

    __slots__ = ()

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        g, y = self.saved()
        d_g = tanh_backward(gg, y) if self.needs(0) else None
        d_y = F.mul(F.mul(gg, g), F.mul(y, -2.0)) if self.needs(1) else None
        return d_g, d_y


def _tanh_grad(ga: Any, ya: Any) -> Any:
    return ga * (const(ya.dtype, 1) - ya * ya)


def tanh_backward(g: Tensor, y: Tensor) -> Tensor:
    """``g * (1 - y**2)`` in one op: tanh's backward given its output ``y`` (like torch's
    ``tanh_backward``, a primitive with its own rule so double backward works)."""
    return _fused_backward(g, y, _tanh_grad(g._array, y._array), TanhBackwardBackward0)


@register("tanh")
def tanh(a: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    x = a._array
    out = xp.tanh(x if x.dtype.kind in "fV" else _unary_float(a))
    return _unary(a, out, TanhBackward0, "output")


class SigmoidBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: sigmoid_backward's arrays alone)
            (ya,) = self.saved_arrays()
            return _make(_sigmoid_grad(g._array, ya))
        (out,) = self.saved()
        return sigmoid_backward(g, out)


class SigmoidBackwardBackward0(Node):
    """The rule of ``sigmoid_backward(g, y) = g * y * (1 - y)``, for double backward."""

    __slots__ = ()

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        g, y = self.saved()
        d_g = sigmoid_backward(gg, y) if self.needs(0) else None
        d_y = F.mul(F.mul(gg, g), F.rsub(F.mul(y, 2.0), 1)) if self.needs(1) else None
        return d_g, d_y


def _sigmoid_grad(ga: Any, ya: Any) -> Any:
    # (torch's order, g * (1 - y) * y, in one buffer)
    t = const(ya.dtype, 1) - ya
    if t.__class__ is not _ndarray or t.dtype is not ga.dtype or t.shape != xp.shape(ga):
        return ga * t * ya
    t *= ga
    t *= ya
    return t


def sigmoid_backward(g: Tensor, y: Tensor) -> Tensor:
    """``g * y * (1 - y)`` in one op: sigmoid's backward given its output ``y``."""
    return _fused_backward(g, y, _sigmoid_grad(g._array, y._array), SigmoidBackwardBackward0)


def _sigmoid_array(x: Any) -> Any:
    if x.dtype == D._BF16_NP:  # (in float32, rounded once: torch's opmath)
        return _sigmoid_array(x.astype(xp.float32)).astype(x.dtype)
    if x.dtype.kind == "f" and x.ndim:
        # 1 / (1 + exp(-x)) in place (exp overflows to inf below about -88 in float32: 0)
        with xp.errstate(over="ignore"):
            e = xp.negative(x)
            xp.exp(e, out=e)
        e += const(e.dtype, 1)
        return xp.divide(const(e.dtype, 1), e, out=e)
    # exp of a non-positive number only: no overflow warnings for large |x|.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


@register("sigmoid")
def sigmoid(a: Tensor) -> Tensor:
    """Logistic function ``1 / (1 + exp(-a))``."""
    out = _sigmoid_array(_unary_float(a))
    return _unary(a, out, SigmoidBackward0, "output")


class ErfBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the rule on arrays, the same values)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype.kind == "f" and xa.dtype.itemsize >= 4 and xa.ndim:
                return _make(_erf_grad(ga, xa))
        (a,) = self.saved()
        return F.mul(g, F.mul(F.exp(F.neg(F.mul(a, a))), _TWO_OVER_SQRT_PI))


def _erf_grad(ga: Any, xa: Any) -> Any:
    """``g * (exp(-(x * x)) * 2/sqrt(pi))`` in place (the recorded rule's operations)."""
    e = xa * xa
    xp.negative(e, out=e)
    xp.exp(e, out=e)
    e *= _TWO_OVER_SQRT_PI
    xp.multiply(ga, e, out=e)
    return e


def _erf_array(x: Any) -> Any:
    """erf in float64 (Cody's rational approximations, :mod:`gradsum.ops._erf`): to a few
    units of float64 for a float64 ``x``, with the shorter rules that suffice for a correctly
    rounded result for a narrower ``x``."""
    return erf64(x, exact=xp.asarray(x).dtype.itemsize >= 8)


@register("erf")
def erf(a: Tensor) -> Tensor:
    """The error function."""
    x = _unary_float(a)
    out = _erf_array(x).astype(x.dtype, copy=False)
    return _unary(a, out, ErfBackward0, "input")


class SignBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return F.zeros_like(g)


@register("sign")
def sign(a: Tensor) -> Tensor:
    """-1, 0 or 1 by sign (gradient zero everywhere)."""
    x = a._array
    if (x.dtype is _F32 or x.dtype is _F64) and x.ndim:
        # torch's (0 < x) - (x < 0) on one-byte masks, then widened: 0 for nan and for -0.0
        # (NumPy's sign, 2x slower, gives nan there)
        d8 = xp.greater(x, 0).view(_I8)
        d8 -= xp.less(x, 0).view(_I8)
        out = d8.astype(x.dtype)
    elif x.dtype.kind == "b":  # (bool: itself)
        out = x.copy()
    else:
        out = xp.asarray(xp.sign(x))
        if x.dtype.kind in "fV":
            # torch computes (0 < x) - (x < 0): 0 for nan, where NumPy gives nan. abs and the
            # 1-norm take their gradient from sign, so it is 0 at a nan input there too.
            nan = xp.isnan(out)
            if nan.any():
                xp.copyto(out, 0, where=nan)
    if not needs_grad(a):
        return _make(out)
    return record(SignBackward0(), (a,), out)


def _rounding(name: str, fn: Any) -> Any:
    cls = type(f"{name.capitalize()}Backward0", (SignBackward0,), {"__slots__": ()})

    def op(a: Tensor) -> Tensor:
        x = a._array
        _no_bool(x, f"{name}_vml_cpu")
        out = fn(x) if x.dtype.kind in "fV" else x.copy()
        if not needs_grad(a):
            return _make(out)
        return record(cls(), (a,), out)

    op.__name__ = name
    op.__doc__ = f"Elementwise {name} (gradient zero everywhere)."
    return register(name)(op)


floor = _rounding("floor", xp.floor)
ceil = _rounding("ceil", xp.ceil)
round = _rounding("round", xp.round)
trunc = _rounding("trunc", xp.trunc)


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


@register("floor_divide")
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
        ga = _sum_to(g, self.a_shape) if self.needs(0) else None
        gb = None
        if self.needs(1):
            a, b = self.saved()
            q = div(a.detach(), b.detach(), rounding_mode="floor")
            gb = _sum_to(F.neg(F.mul(g, q)), self.b_shape)
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


@register("remainder")
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
        raise RuntimeError(
            f"derivative for aten::{self.op} is not implemented: {what} has no gradient rule. "
            "Detach the tensor operand first, or write the expression with differentiable ops."
        )


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


# -- activations -------------------------------------------------------------------------------
class ReluBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return threshold_backward(g, out, 0)


class ThresholdBackwardBackward0(Node):
    """The rule of ``threshold_backward``: linear in ``g`` with a constant mask."""

    __slots__ = ("threshold",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (y,) = self.saved()
        # (the mask is piecewise constant in y: torch sends y a zero gradient, not none)
        d_y = F.zeros_like(gg) if self._next[1][0] is not None else None
        d_g = threshold_backward(gg, y, self.threshold) if self._next[0][0] is not None else None
        return d_g, d_y


#: the signed integer type of each float width, for :func:`select_grad`'s bit mask
_INT_OF = {2: xp.int16, 4: xp.int32, 8: xp.int64}
_F32, _I32, _I8, _U8 = (xp.dtype(t) for t in (xp.float32, xp.int32, xp.int8, xp.uint8))
_F64 = xp.dtype(xp.float64)


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
    it = _INT_OF.get(ga.dtype.itemsize) if ga.dtype.kind in "fV" else None
    if it is None or blocked.__class__ is not _ndarray:
        return xp.asarray(xp.where(blocked, xp.zeros((), dtype=ga.dtype), ga))
    b8 = blocked.view(xp.uint8)
    b8 -= 1
    if blocked.shape == ga.shape:
        out, m = _bits_out(ga.shape, ga.dtype, it)
        xp.copyto(m, b8.view(xp.int8))
        m &= ga.view(it)
        return out
    out, m = _bits_out(xp.broadcast_shapes(blocked.shape, ga.shape), ga.dtype, it)
    xp.bitwise_and(b8.view(xp.int8), ga.view(it), out=m)
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


def threshold_backward(g: Tensor, y: Tensor, threshold: float) -> Tensor:
    """``g`` unless ``y <= threshold`` (then 0), in one op (relu's backward, as torch's: a nan
    ``y`` passes the gradient, and an inf or nan ``g`` where ``y <= threshold`` gives 0, see
    :func:`select_grad`)."""
    ga = g._array
    ya = y._array
    le = ya <= (const(ya.dtype, 0) if threshold == 0 and threshold.__class__ is int else threshold)
    if ga.dtype is _F32 and le.__class__ is _ndarray and le.shape == ga.shape:
        # (select_grad inlined: the MLP hot path)
        if ga.size < 32768:  # (fewer views: each costs more than a small pass)
            m = le.astype(_I32)
            m -= 1
            m &= ga.view(_I32)
            t = m.view(_F32)
        else:  # (one-byte passes first; the result owns its buffer, see _bits_out)
            b8 = le.view(_U8)
            b8 -= 1
            t, m = _bits_out(ga.shape, _F32, _I32)
            xp.copyto(m, b8.view(_I8))
            m &= ga.view(_I32)
    else:
        t = select_grad(ga, xp.asarray(le))
    if not _state.enabled or not (_rg(g) or _rg(y)):  # (torch records for y alone too)
        return _make(t)
    node = ThresholdBackwardBackward0()
    node.threshold = threshold
    out = record(node, (g, y), t)
    node.save(y)
    return out


@register("relu")
def relu(a: Tensor) -> Tensor:
    """``max(a, 0)``."""
    x = a._array
    if x.dtype.kind == "b":
        raise RuntimeError(
            "Boolean inputs not supported for relu. Convert the mask with .float() first."
        )
    if x.size >= 16384 and (x.dtype is _F32 or x.dtype is _F64) and x.flags.c_contiguous:
        # (against an array of zeros, written into it: NumPy's loop for an array and a
        # broadcast scalar is 2x slower; the same operands in the same order)
        out = xp.zeros(x.shape, x.dtype)
        xp.maximum(x, out, out=out)
    else:
        out = xp.maximum(x, const(x.dtype, 0))
    return _unary(a, out, ReluBackward0, "output")


def _in_float32(rule: Any, g: Tensor, a: Tensor) -> Tensor:
    """``rule(g, a)``, a backward rule written in gradsum ops, for a bfloat16 ``a`` computed
    in float32 and rounded once, as torch's reduced-precision kernels (each of the rule's ops
    would round to bfloat16 otherwise); recorded, so double backward goes through it."""
    if a._array.dtype.kind != "V":
        return rule(g, a)
    return to_dtype(rule(to_dtype(g, D.float32), to_dtype(a, D.float32)), a.dtype)


class GeluBackward0(Node):
    #: ``deriv``: gelu'(x) from the forward (exact, float32: the operations :func:`_gelu_grad`
    #: would repeat, the same bits), used by the first backward and dropped
    __slots__ = ("approximate", "deriv")

    def backward(self, g: Tensor) -> Tensor:
        deriv = getattr(self, "deriv", None)
        if deriv is not None:
            self.deriv = None
        if not _state.enabled:  # (nothing to record: one fused pass of arrays)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype.kind == "f" and xa.dtype.itemsize >= 4 and xa.ndim:
                if deriv is not None and ga.shape == deriv.shape:
                    return _make(xp.multiply(deriv, ga, out=deriv))
                return _make(_gelu_grad(ga, xa, self.approximate))
        (a,) = self.saved()
        return _in_float32(self._rule, g, a)

    def _rule(self, g: Tensor, a: Tensor) -> Tensor:
        if self.approximate == "tanh":
            k = math.sqrt(2.0 / math.pi)
            inner = F.mul(F.add(a, F.mul(F.pow(a, 3), 0.044715)), k)
            t = F.tanh(inner)
            dinner = F.mul(F.add(F.mul(F.mul(a, a), 3 * 0.044715), 1), k)
            left = F.mul(F.add(t, 1), 0.5)
            right = F.mul(F.mul(F.mul(a, 0.5), F.rsub(F.mul(t, t), 1)), dinner)
            return F.mul(g, F.add(left, right))
        cdf = F.mul(F.add(F.erf(F.mul(a, 1 / _SQRT_2)), 1), 0.5)
        pdf = F.mul(F.exp(F.mul(F.mul(a, a), -0.5)), _INV_SQRT_2PI)
        return F.mul(g, F.add(cdf, F.mul(a, pdf)))


def _gelu_tanh_inner(x: Any) -> Any:
    """``(x + x**3 * 0.044715) * sqrt(2/pi)``, the operations of the recorded rule."""
    u = x * x
    u *= x
    u *= 0.044715
    u += x
    u *= math.sqrt(2.0 / math.pi)
    return u


def _gelu_deriv_f32(x: Any, phi: Any, e: Any) -> Any:
    """gelu'(x) ``= cdf(x) + x pdf(x)`` for float32 from :func:`gelu_parts_f32`'s parts."""
    d = xp.multiply(e, x)
    d *= _INV_SQRT_2PI
    d += phi
    return d


def _gelu_grad(ga: Any, x: Any, approximate: str) -> Any:
    """GELU's gradient ``g * gelu'(x)`` on arrays (float32 or float64). tanh: the recorded
    rule's operations, in place; exact: ``cdf(x) + x pdf(x)`` in float64 (the CDF from
    :func:`gelu_cdf64`, accurate in the lower tail), rounded, times ``g``."""
    if approximate == "tanh":
        t = xp.tanh(_gelu_tanh_inner(x))
        right = t * t
        xp.subtract(1, right, out=right)
        right *= x * 0.5
        d = x * x
        d *= 3 * 0.044715
        d += 1
        d *= math.sqrt(2.0 / math.pi)
        right *= d
        t += 1
        t *= 0.5
        t += right
        t *= ga
        return t
    if x.dtype is _F32 and x.ndim:  # (float32: the CDF and exp(-x*x/2) in float32)
        d = _gelu_deriv_f32(x, *gelu_parts_f32(x))
        d *= ga
        return d
    f32 = x.dtype.itemsize < 8
    if f32:  # (in the erf kernels' scratch buffers 6 and 7: see gelu_cdf64)
        x64 = _erf_scratch(6, x.shape)
        x64[...] = x
        pdf = xp.multiply(x64, x64, out=_erf_scratch(7, x.shape))
    else:
        x64 = x
        pdf = x64 * x64
    pdf *= -0.5
    xp.exp(pdf, out=pdf)
    pdf *= _INV_SQRT_2PI
    pdf *= x64
    pdf += gelu_cdf64(x, exact=not f32)
    if f32:
        pdf = pdf.astype(x.dtype)
    pdf *= ga
    return pdf


@register("gelu")
def gelu(a: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh formula.

    The exact form is ``x * cdf(x)``, the CDF without ``1 + erf``'s cancellation in the lower
    tail: for float32 in float32 (:func:`gelu_parts_f32`, within 9 units in the last place
    on [-6, 6], 14 down to -14), for float64 by :func:`gelu_cdf64`; tanh: torch's formula in
    the input's dtype."""
    x = _float_only(a, "GeluKernelImpl")
    low = x.dtype if x.dtype.kind == "V" else None  # bfloat16: in float32, rounded once
    if low is not None:
        x = x.astype(xp.float32)
    deriv = None
    if approximate == "none":
        if x.dtype is _F32 and x.ndim:
            # (the backward's derivative now, from the same parts: a backward of one pass;
            # not under saved-tensor hooks, which manage what a graph keeps)
            out, deriv = gelu_f32(x, low is None and not hooks_active and needs_grad(a))
        else:
            out = gelu_cdf64(x, exact=x.dtype.itemsize >= 8)
            out *= x
            out = out.astype(x.dtype, copy=False)
        if low is None and x.dtype == xp.float32 and x.size > 1 and x.flags.c_contiguous \
                and onednn_gelu_nan_at_inf():
            # torch runs a contiguous float32 input of more than one element through
            # oneDNN's gelu_erf, whose AVX-512 kernel gives nan at +inf (its AVX2 kernel and
            # torch's native one, used otherwise, give inf)
            big = x == xp.inf
            if big.any():
                out = xp.where(big, xp.float32(xp.nan), out)
    elif approximate == "tanh":
        # 0.5 * x * (1 + tanh(inner)), in place ((0.5 (1 + t)) x: the same rounding)
        out = xp.tanh(_gelu_tanh_inner(x))
        out += 1
        out *= 0.5
        out *= x
        out = out.astype(x.dtype, copy=False)
    else:
        raise RuntimeError(
            f"approximate argument must be either none or tanh, got {approximate!r}"
        )
    if low is not None:
        out = out.astype(low)
    if not needs_grad(a):
        return _make(out)
    node = GeluBackward0()
    node.approximate = approximate
    node.deriv = deriv
    t = record(node, (a,), out)
    node.save(a)
    return t


class SiluBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: the rule's operations on arrays)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype.kind == "f" and xa.dtype.itemsize >= 4 and (
                    xa.ndim):
                s = _sigmoid_array(xa)
                t = xp.subtract(const(s.dtype, 1), s)
                t *= xa
                t += const(s.dtype, 1)
                t *= s
                return _make(xp.multiply(ga, t, out=t))
        (a,) = self.saved()
        return _in_float32(self._rule, g, a)

    @staticmethod
    def _rule(g: Tensor, a: Tensor) -> Tensor:
        s = F.sigmoid(a)
        return F.mul(g, F.mul(s, F.add(F.mul(a, F.rsub(s, 1)), 1)))


def _silu_array(x: Any) -> Any:
    """torch's silu kernel, ``x / (1 + exp(-x))`` (one pass fewer than ``x * sigmoid(x)``, and
    closer: max 2.8 ULP against float64 where that product has 3.2, torch's bits on 83% of
    normal float32 inputs where it has 64%, and torch's nan, the input's own). ``exp``
    overflows to inf below about -88 in float32: ``x / inf`` is -0, -inf gives nan (as
    torch)."""
    with xp.errstate(over="ignore", invalid="ignore"):
        if x.__class__ is _ndarray and x.ndim:
            e = xp.negative(x)
            xp.exp(e, out=e)
            e += const(e.dtype, 1)
            return xp.divide(x, e, out=e)
        return xp.asarray(x / (const(x.dtype, 1) + xp.exp(-x))).astype(x.dtype, copy=False)


@register("silu")
def silu(a: Tensor) -> Tensor:
    """``a * sigmoid(a)``, as torch's kernel computes it: ``a / (1 + exp(-a))``."""
    x = _float_only(a, "silu_cpu")
    if x.dtype.kind == "V":  # (in float32, rounded once: torch's kernel)
        out = _silu_array(x.astype(xp.float32)).astype(x.dtype)
    else:
        out = _silu_array(x)
    return _unary(a, out, SiluBackward0, "input")


class LeakyReluBackward0(Node):
    __slots__ = ("slope",)

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return leaky_relu_backward(g, a, self.slope)


class LeakyReluBackwardBackward0(Node):
    """The rule of ``leaky_relu_backward``: linear in ``g`` with a mask that is piecewise
    constant in the input, which gets zeros (not None), as in torch."""

    __slots__ = ("slope",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (a,) = self.saved()
        d_g = leaky_relu_backward(gg, a, self.slope) if self._next[0][0] is not None else None
        d_a = F.zeros_like(gg) if self._next[1][0] is not None else None
        return d_g, d_a


def leaky_relu_backward(g: Tensor, a: Tensor, slope: float) -> Tensor:
    """``g`` where ``a > 0``, ``slope * g`` elsewhere (nan included), in one op recorded with
    ``a`` as an input (torch's ``leaky_relu_backward(grad, self, slope)``): under
    ``create_graph`` the gradient requires grad whenever the input does."""
    ga = g._array
    xa = a._array
    if ga.dtype is xa.dtype and ga.dtype in _F32_F64 and ga.shape == xa.shape and ga.ndim:
        sv = xp.asarray(slope, dtype=ga.dtype)
        if slope.__class__ in (int, float) and xp.isfinite(sv):
            # (torch: x > 0 ? g : g * slope, as g times 1 or slope; g * 1 is g)
            t = select_const(xp.greater(xa, 0), 1.0, slope, ga.dtype)
            t *= ga
        else:
            t = select(xa > 0, ga, ga * slope)
    else:
        t = ga * xp.where(xa > 0, 1.0, slope).astype(ga.dtype, copy=False)
    if t.__class__ is not _ndarray:
        t = xp.asarray(t)
    if not _state.enabled or not (_rg(g) or _rg(a)):
        return _make(t)
    node = LeakyReluBackwardBackward0()
    node.slope = slope
    out = record(node, (g, a), t)
    node.save(a)
    return out


@register("leaky_relu")
def leaky_relu(a: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``a`` where positive, ``negative_slope * a`` elsewhere."""
    x = _float_only(a, "leaky_relu_cpu")
    s = negative_slope
    if x.dtype in _F32_F64 and x.ndim and s.__class__ in (int, float) and 0 < s < math.inf:
        # x > 0 ? x : x * s as a maximum (s <= 1) or a minimum (s > 1): the same values, nan,
        # inf and signed zeros included (x * s has the sign of x), in two passes
        xs = x * s
        out = xp.maximum(x, xs, out=xs) if s <= 1 else xp.minimum(x, xs, out=xs)
    else:
        out = xp.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)
    if not needs_grad(a):
        return _make(out)
    node = LeakyReluBackward0()
    node.slope = negative_slope
    t = record(node, (a,), out)
    node.save(a)
    return t


class SoftplusBackward0(Node):
    __slots__ = ("beta", "threshold")

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: torch's kernel on arrays)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype in _F32_F64 and ga.shape == xa.shape and (
                    xa.ndim):
                # z = x * beta; z > threshold ? g : g * e / (e + 1), e = exp(z) (torch's
                # softplus_backward; e = inf only where z > threshold when it is below 88)
                z = xa * self.beta if self.beta != 1 else xa
                with xp.errstate(over="ignore", invalid="ignore"):
                    e = xp.exp(z)
                    t = e + const(e.dtype, 1)
                    e *= ga
                    e /= t
                return _make(select(z > self.threshold, ga, e))
        (a,) = self.saved()
        z = F.mul(a, self.beta)
        lin = _make(z._array > self.threshold)
        return F.where(lin, g, F.mul(g, F.sigmoid(z)))


def _softplus_array(x: Any, beta: float, threshold: float) -> Any:
    """softplus of an array: ``x`` where ``x * beta > threshold``, else
    ``log1p(exp(x * beta)) / beta`` (torch's kernel: exp(z) cannot overflow below a threshold
    of 80, and above it the value is not taken); the stable ``max(z, 0) + log1p(exp(-|z|))``
    otherwise."""
    if x.dtype in _F32_F64 and x.ndim and threshold <= 80 and beta > 0:
        z = x * beta if beta != 1 else x
        with xp.errstate(over="ignore"):
            soft = xp.exp(z)
        xp.log1p(soft, out=soft)
        if beta != 1:
            soft /= beta
        return select(z > threshold, x, soft)
    z = x * beta
    with xp.errstate(over="ignore"):
        soft = (xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))) / beta
    return xp.where(z > threshold, x, soft).astype(x.dtype, copy=False)


@register("softplus")
def softplus(a: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * a)) / beta``, linear above ``threshold``."""
    x = _float_only(a, "softplus_cpu")
    out = _softplus_array(x, beta, threshold)
    if not needs_grad(a):
        return _make(out)
    node = SoftplusBackward0()
    node.beta, node.threshold = beta, threshold
    t = record(node, (a,), out)
    node.save(a)
    return t


class ClampBackward0(Node):
    """clamp with tensor bounds, torch's ``clamp_backward_min_max``: ``a`` gets the gradient
    where ``min <= a <= max``, ``min`` where ``a < min < max``, ``max`` where ``a > max`` or
    ``max < min`` (an inverted pair returns ``max``). A nan ``a`` passes no gradient at all;
    each gradient is summed to its operand's shape."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        a, lo, hi = self.saved()
        x = a._array
        yes = xp.ones((), dtype=bool)
        lo_ok = x >= lo._array if lo is not None else yes
        hi_ok = x <= hi._array if hi is not None else yes
        lo_wins = x < lo._array if lo is not None else ~yes
        hi_wins = x > hi._array if hi is not None else ~yes
        if lo is not None and hi is not None:
            lo_wins = lo_wins & (lo._array < hi._array)
            hi_wins = hi_wins | (hi._array < lo._array)
        zero = F.zeros((), dtype=g.dtype)
        out: list[Tensor | None] = []
        for i, m in enumerate((lo_ok & hi_ok, lo_wins, hi_wins)):
            out.append(_sum_to(F.where(_make(m), g, zero), self.shapes[i])
                       if self.needs(i) else None)
        return out[0], out[1], out[2]


class ClampBackward1(Node):
    __slots__ = ("hi", "lo")

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        x = a._array
        mask = xp.ones(x.shape, dtype=bool)
        if self.lo is not None:
            mask &= x >= self.lo
        if self.hi is not None:
            mask &= x <= self.hi
        # (torch's where(min <= x <= max, g, 0): see note "Select, don't multiply")
        return F.where(_make(mask), g, F.zeros((), dtype=g.dtype))


@register("clamp", "clip")
def clamp(a: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to ``[min, max]``; the gradient passes where ``min <= a <= max``."""
    if not isinstance(a, Tensor):
        raise TypeError(f"clamp(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(a).__name__}. Wrap it with gradsum.tensor().")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if not (min is None or isinstance(min, Tensor)) or not (
            max is None or isinstance(max, Tensor)
        ):
            raise TypeError(
                "clamp() received an invalid combination of arguments: min and max must both "
                f"be Tensors or both numbers, got {type(min).__name__} and "
                f"{type(max).__name__}. Wrap the number with tensor()."
            )
        return _clamp_tensor(a, min, max)
    x = a._array
    lo = None if min is None else scalar_value(min)
    hi = None if max is None else scalar_value(max)
    if x.dtype.kind not in "fV":  # integer/bool tensors promote with the bounds, as in torch
        rt = D.result_type(a, *[v for v in (lo, hi) if v is not None]).np
        if rt.kind == "b":
            kernel = "clamp_scalar_cpu" if lo is not None and hi is not None else (
                "clamp_min_scalar_cpu" if hi is None else "clamp_max_scalar_cpu")
            raise D.not_implemented(kernel, rt, "Convert the tensor with .long() first.")
        if rt != x.dtype:
            x = x.astype(rt)
    # (torch converts each bound to the dtype, checked: uint8's -3 is 253, 300 an error)
    lo = None if lo is None else _checked(lo, x.dtype)
    hi = None if hi is None else _checked(hi, x.dtype)
    out = xp.clip(x, lo, hi)
    if out.dtype != x.dtype:
        out = out.astype(x.dtype)
    if not needs_grad(a):
        return _make(out)
    node = ClampBackward1()
    node.lo, node.hi = lo, hi
    t = record(node, (a,), out)
    node.save(a)
    return t


def _clamp_tensor(a: Tensor, lo: Any, hi: Any) -> Tensor:
    lo = None if lo is None else (lo if isinstance(lo, Tensor) else as_tensor_like(lo, a))
    hi = None if hi is None else (hi if isinstance(hi, Tensor) else as_tensor_like(hi, a))
    rt = D.result_type(*(t for t in (a, lo, hi) if t is not None)).np
    if rt.kind == "b" and lo is not None and hi is not None:
        raise D.not_implemented("clamp_cpu", rt, "Convert the tensors with .long() first.")
    x = a._array.astype(rt, copy=False)
    try:
        out = x
        if lo is not None:
            out = xp.maximum(out, lo._array.astype(rt, copy=False))
        if hi is not None:
            out = xp.minimum(out, hi._array.astype(rt, copy=False))
    except ValueError:
        other = lo if lo is not None and lo._array.ndim else hi
        raise broadcast_error(x, other._array if other is not None else x) from None
    if not needs_grad(a, lo, hi):
        return _make(out)
    node = ClampBackward0()
    node.shapes = tuple(() if t is None else t._array.shape for t in (a, lo, hi))
    t = record(node, (a, lo, hi), out)
    node.save(a, lo, hi)
    return t


# -- maximum / minimum / where -----------------------------------------------------------------
class MaximumBackward0(Node):
    __slots__ = ("a_shape", "b_shape", "sign")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        x, y = a._array, b._array
        # torch's rule: where(a == b, g / 2, g), masked_fill'ed with 0 where the operand
        # loses (a selection: an inf or nan g gives 0 there, see note "Select, don't
        # multiply"). A nan on either side is no tie and loses nowhere: both operands get g.
        tie = x == y
        shared = F.where(_make(tie), F.div(g, 2), g) if tie.any() else g
        a_loses, b_loses = (x < y, x > y) if self.sign > 0 else (x > y, x < y)
        ga = gb = None
        if self.needs(0):
            ga = _sum_to(F.masked_fill(shared, _make(xp.broadcast_to(a_loses, g.shape)), 0.0),
                         self.a_shape)
        if self.needs(1):
            gb = _sum_to(F.masked_fill(shared, _make(xp.broadcast_to(b_loses, g.shape)), 0.0),
                         self.b_shape)
        return ga, gb


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


def _extremum(a: Any, b: Any, sign: int) -> Tensor:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        name = "maximum" if sign > 0 else "minimum"
        pos, bad = (2, b) if isinstance(a, Tensor) else (1, a)
        raise TypeError(
            f"{name}(): argument '{'other' if pos == 2 else 'input'}' (position {pos}) must be "
            f"Tensor, not {type(bad).__name__}. Wrap it with tensor(), or use clamp() for a "
            "number."
        )
    x, y, _ = binary_arrays(a, b)
    try:
        out = xp.maximum(x, y) if sign > 0 else xp.minimum(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not needs_grad(a, b):
        return _make(out)
    node = MaximumBackward0() if sign > 0 else MinimumBackward0()
    node.a_shape, node.b_shape, node.sign = x.shape, y.shape, sign
    t = record(node, (a, b), out)
    node.save(a, b)
    return t


@register("maximum")
def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum; ties split the gradient equally (torch's rule)."""
    return _extremum(a, b, 1)


@register("minimum")
def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum; ties split the gradient equally."""
    return _extremum(a, b, -1)


class WhereBackward0(Node):
    __slots__ = ("a_shape", "b_shape", "cond")

    def backward(self, g: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
        cond = _make(self.cond)
        zero = F.zeros_like(g)
        ga = _sum_to(F.where(cond, g, zero), self.a_shape) if self.needs(1) else None
        gb = _sum_to(F.where(cond, zero, g), self.b_shape) if self.needs(2) else None
        return None, ga, gb


@register("where")
def where(condition: Tensor, a: Any = None, b: Any = None) -> Any:
    """``a`` where ``condition`` holds, else ``b`` (broadcast). One argument: nonzero indices."""
    if a is None and b is None:
        return tuple(_make(i) for i in xp.nonzero(condition._array))
    cond = condition._array if isinstance(condition, Tensor) else xp.asarray(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{D.from_numpy_dtype(cond.dtype).name}. Compare first (e.g. mask = t > 0)."
        )
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        # a number takes the result dtype, converted as torch converts it: checked
        # (``where(c, uint8_t, 300)`` raises, ``where(c, float_t, 1e300)`` too)
        rt = D.result_type(*(v if isinstance(v, Tensor) else scalar_value(v)
                             for v in (a, b))).np
        check = _checked if rt != xp.float16 else _wrapped  # (float16: inf, unchecked)
        if not isinstance(a, Tensor):
            a = _make(xp.asarray(check(scalar_value(a), rt), dtype=rt))
        if not isinstance(b, Tensor):
            b = _make(xp.asarray(check(scalar_value(b), rt), dtype=rt))
    if not isinstance(a, Tensor):
        a_t = _left(a, b)
        x, y, _ = binary_arrays(a_t, b)
        a = a_t
    else:
        x, y, _ = binary_arrays(a, b)
    try:
        out = xp.where(cond, x, y)
    except ValueError:
        raise broadcast_error(cond, x) from None
    if not needs_grad(a, b):
        return _make(out)
    node = WhereBackward0()
    node._saved = HOLDS_STATE  # (torch saves the condition)
    node.cond = cond
    node.a_shape = x.shape
    node.b_shape = xp.shape(y)
    return record(node, (None, a, b), out)


# -- comparisons and logic (not differentiable) ------------------------------------------------
def _not_tensor(name: str, arg: str, pos: int, v: Any) -> TypeError:
    return TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                     f"{type(v).__name__}. Wrap it with gradsum.tensor().")


def _compare(name: str, fn: Any) -> Any:
    logical = name.startswith("logical")

    def op(a: Any, b: Any) -> Tensor:
        if not isinstance(a, Tensor):  # (torch: only the methods take a number)
            raise _not_tensor(name, "input", 1, a)
        if logical and not isinstance(b, Tensor):
            raise _not_tensor(name, "other", 2, b)
        x, y, _ = _arrays(a, b)
        try:
            return _make(fn(x, y))
        except ValueError:
            raise broadcast_error(x, y) from None

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` comparison, a bool tensor (not differentiable)."
    return register(name)(op)


eq = _compare("eq", xp.equal)
ne = _compare("ne", xp.not_equal)
lt = _compare("lt", xp.less)
le = _compare("le", xp.less_equal)
gt = _compare("gt", xp.greater)
ge = _compare("ge", xp.greater_equal)
logical_and = _compare("logical_and", xp.logical_and)
logical_or = _compare("logical_or", xp.logical_or)
logical_xor = _compare("logical_xor", xp.logical_xor)


def _bitwise(name: str, fn: Any) -> Any:
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
    return register(name)(op)


bitwise_and = _bitwise("bitwise_and", xp.bitwise_and)
bitwise_or = _bitwise("bitwise_or", xp.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", xp.bitwise_xor)


@register("bitwise_not")
def bitwise_not(a: Tensor) -> Tensor:
    """Elementwise bitwise not: logical not of a bool tensor, ``~x`` of an integer one."""
    x = a._array
    if x.dtype.kind in "fV":
        raise D.not_implemented("bitwise_not_cpu", x.dtype,
                                "Bitwise ops take bool or integer tensors.")
    return _make(xp.invert(x))


def invert(a: Tensor) -> Tensor:
    """``~a`` (Python's operator): torch raises TypeError for a floating tensor."""
    if a._array.dtype.kind in "fV":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors. Use logical_not() or 1 - t.")
    return bitwise_not(a)


@register("logical_not")
def logical_not(a: Tensor) -> Tensor:
    """Elementwise not (bool result)."""
    return _make(xp.logical_not(a._array))


@register("isnan")
def isnan(a: Tensor) -> Tensor:
    return _make(xp.isnan(a._array))


@register("isinf")
def isinf(a: Tensor) -> Tensor:
    return _make(xp.isinf(a._array))


@register("isfinite")
def isfinite(a: Tensor) -> Tensor:
    return _make(xp.isfinite(a._array))


@register("equal")
def equal(a: Tensor, b: Tensor) -> bool:
    """True when both tensors have the same shape and elements.

    Large contiguous operands are compared in growing blocks, stopping at the first block
    that differs (as torch stops early); the values compared are the same."""
    x, y = a._array, b._array
    if x.shape != y.shape:
        return False
    n = x.size
    if n <= 4096 or not (x.flags.c_contiguous and y.flags.c_contiguous):
        return bool(xp.array_equal(x, y))
    x, y = x.reshape(-1), y.reshape(-1)
    i, step = 0, 1024
    while i < n:
        j = min(n, i + step)
        if not (x[i:j] == y[i:j]).all():
            return False
        i, step = j, step * 4
    return True


@register("allclose")
def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    """Whether all elements are close (``|a - b| <= atol + rtol * |b|``)."""
    _same_dtype(a, b)
    return bool(xp.allclose(a._array, b._array, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _same_dtype(a: Tensor, b: Tensor) -> None:
    """torch's isclose (and allclose) does not promote: the dtypes must be equal."""
    x, y = a._array.dtype, b._array.dtype
    if x != y:
        names = D._TORCH_SCALAR_NAMES
        raise RuntimeError(
            f"{names.get(str(x), str(x))} did not match {names.get(str(y), str(y))}: isclose "
            "compares tensors of one dtype. Convert one with .to(other.dtype) first."
        )


@register("isclose")
def isclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
            equal_nan: bool = False) -> Tensor:
    _same_dtype(a, b)
    return _make(xp.isclose(a._array, b._array, rtol=rtol, atol=atol, equal_nan=equal_nan))


# -- dtype conversion and copies ---------------------------------------------------------------
class ToCopyBackward0(Node):
    __slots__ = ("src_dtype",)

    def backward(self, g: Tensor) -> Tensor:
        return F.to_dtype(g, self.src_dtype)


def to_dtype(a: Tensor, dtype: D.dtype) -> Tensor:
    """Cast to ``dtype`` (differentiable between floating types)."""
    out = a._array.astype(dtype.np)
    if out.dtype.kind == "V" and a._array.dtype.kind == "f":  # (to bfloat16)
        nan = xp.isnan(a._array)
        if nan.any():  # torch's conversion writes every nan as 0xFFFF
            out.view(xp.int16)[nan] = -1
    if not needs_grad(a) or not dtype.is_floating_point:
        return _make(out)
    node = ToCopyBackward0()
    node.src_dtype = a.dtype
    return record(node, (a,), out)


class CloneBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return g


def copied(a: Tensor, out: Any) -> Tensor:
    """``out``, a copy of ``a``'s values in some layout, as the result of a copy that stays
    in the graph (``clone``, ``contiguous``: torch's CloneBackward0)."""
    if not needs_grad(a):
        return _make(out)
    return record(CloneBackward0(), (a,), out)


def _preserving_copy(x: Any) -> Any:
    """A copy laid out as torch's ``preserve_format`` lays out a clone: ``x``'s strides when it
    is dense (a transposed view stays transposed), else dense in ``x``'s memory order."""
    if x.ndim < 2 or x.flags.c_contiguous or _memory_format.preserved_strides(x) is None:
        return copy_c(x)  # (row-major; a transposed view of a row-major array: 16 bytes a step)
    out = _memory_format.empty_preserving(x)
    out[...] = x
    return out


@register("clone")
def clone(a: Tensor) -> Tensor:
    """A copy of ``a`` that stays in the graph, laid out as ``a`` (torch's
    ``preserve_format``: a dense layout's strides are kept)."""
    return copied(a, _preserving_copy(a._array))


_float = float_dtype_for  # re-exported for reductions
