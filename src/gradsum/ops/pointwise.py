"""Pointwise math of one tensor: exp and log (``exp2``, ``expm1``, ``log2``, ``log10``,
``log1p``), powers and roots, trigonometric and hyperbolic functions and their inverses,
rounding (``floor``, ``ceil``, ``round``, ``trunc``, ``frac``, ``fix``), ``abs``/``sign``,
``clamp`` and its one-sided forms, ``hypot``, ``logaddexp``, ``copysign``, ``nextafter``,
``sinc``, ``logit``, ``nan_to_num`` and the dtype copy ``to_dtype``/``clone``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([0.0, 1.0], dtype=gradsum.float64, requires_grad=True)
    >>> y = gradsum.asinh(gradsum.sin(x))
    >>> y.grad_fn.name()
    'AsinhBackward0'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradsum.ops as F
from gradsum import _device, _memory_format
from gradsum import _dtype as D
from gradsum._backend import copy_c, xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state, no_grad
from gradsum.autograd.grad_mode import _state as _grad_state
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    as_tensor_like,
    broadcast_error,
    const,
    float_dtype_for,
    needs_grad,
    quietly,
    record,
    register,
    require_tensor,
    scalar_value,
    tensor_method,
)
from gradsum.ops.arithmetic import (
    _ERR,
    _F32_F64,
    _bcast,
    _checked,
    _ndarray,
    _no_bool,
    _unary,
    _unary_float,
    select_grad,
)


def _fused_backward(g: Tensor, y: Tensor, t: Any, node_cls: type[Node]) -> Tensor:
    """Wrap ``t = f(g, y)``, the fused backward of an activation given its output ``y``;
    recorded with ``g`` and ``y`` saved so that its own rule gives double backward."""
    if t.__class__ is not _ndarray:  # 0-d operands give NumPy scalars
        t = xp.asarray(t)
    if not needs_grad(g, y):
        return _make(t)
    node = node_cls()
    out = record(node, (g, y), t)
    node.save(g if y.requires_grad else None, y)
    return out


def _rsqrt_array(x: Any) -> Any:
    return (1.0 / xp.sqrt(x)).astype(x.dtype, copy=False)


class ExpBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(g, out)


@register("exp", method=True)
def exp(a: Tensor) -> Tensor:
    """Elementwise ``e ** a``."""
    out = xp.exp(_unary_float(a))
    return _unary(a, out, ExpBackward0, "output")


class LogBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, a)


@register("log", method=True)
def log(a: Tensor) -> Tensor:
    """Natural logarithm."""
    out = quietly(xp.log, _unary_float(a))
    return _unary(a, out, LogBackward0, "input")


class Log1PBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, F.add(a, 1))


@register("log1p", method=True)
def log1p(a: Tensor) -> Tensor:
    """``log(1 + a)``, accurate for small ``a``."""
    out = quietly(xp.log1p, _unary_float(a))
    return _unary(a, out, Log1PBackward0, "input")


class SqrtBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.div(g, F.mul(out, 2))


@register("sqrt", method=True)
def sqrt(a: Tensor) -> Tensor:
    """Elementwise square root."""
    out = quietly(xp.sqrt, _unary_float(a))
    return _unary(a, out, SqrtBackward0, "output")


class RsqrtBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(F.mul(g, F.pow(out, 3)), -0.5)


@register("rsqrt", method=True)
def rsqrt(a: Tensor) -> Tensor:
    """``1 / sqrt(a)``."""
    x = _unary_float(a)
    out = quietly(_rsqrt_array, x)
    return _unary(a, out, RsqrtBackward0, "output")


class AbsBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.sign(a))


@register("abs", "absolute", method=True)
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


@register("sin", method=True)
def sin(a: Tensor) -> Tensor:
    """Elementwise sine."""
    out = xp.sin(_unary_float(a))
    return _unary(a, out, SinBackward0, "input")


class CosBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.neg(F.sin(a)))


@register("cos", method=True)
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


@register("tanh", method=True)
def tanh(a: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    x = a._array
    out = xp.tanh(x if x.dtype.kind in "fV" else _unary_float(a))
    return _unary(a, out, TanhBackward0, "output")


class SignBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return F.zeros_like(g)


@register("sign", method=True)
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


def _rounding(name: str, fn: Any, **surface: Any) -> Any:
    class Rounding(SignBackward0, name=f"{name.capitalize()}Backward0"):
        __slots__ = ()

    def op(a: Tensor) -> Tensor:
        x = a._array
        _no_bool(x, f"{name}_vml_cpu")
        out = fn(x) if x.dtype.kind in "fV" else x.copy()
        if not needs_grad(a):
            return _make(out)
        return record(Rounding(), (a,), out)

    op.__name__ = name
    op.__doc__ = f"Elementwise {name} (gradient zero everywhere)."
    return register(name, **surface)(op)


floor = _rounding("floor", xp.floor, method=True)
ceil = _rounding("ceil", xp.ceil, method=True)
round = _rounding("round", xp.round, method=True)
trunc = _rounding("trunc", xp.trunc, method=True, inplace="fix_")
_F32, _I32, _I8, _U8 = (xp.dtype(t) for t in (xp.float32, xp.int32, xp.int8, xp.uint8))
_F64 = xp.dtype(xp.float64)


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
            out.append(F.sum_to(F.where(_make(m), g, zero), self.shapes[i])
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


@register("clamp", "clip", method=True)
def clamp(a: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to ``[min, max]``; the gradient passes where ``min <= a <= max``."""
    require_tensor("clamp", "input", 1, a)
    if min is None and max is None:
        raise RuntimeError(_messages.clamp_needs_min_or_max())
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if not (min is None or isinstance(min, Tensor)) or not (
            max is None or isinstance(max, Tensor)
        ):
            raise TypeError(_messages.clamp_min_max_mixed(min, max))
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

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _via64(fn: Any, x: Any) -> Any:
    """``fn(x)`` computed in float64 and rounded back to ``x``'s dtype: NumPy's float32 kernels
    for these functions are often 1-2 ulp off, torch's are (nearly always) correctly rounded
    (``log10(100.0)`` is exactly 2.0 in both then)."""
    if x.dtype == xp.float64:
        return fn(x)
    return xp.asarray(fn(x.astype(xp.float64))).astype(x.dtype)


# -- unary math --------------------------------------------------------------------------------
class Expm1Backward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(g, F.add(out, 1))


@register("expm1", method=True, inplace="expm1_")
def expm1(a: Tensor) -> Tensor:
    """``exp(a) - 1``, accurate for small ``a`` (integers give the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.expm1(gradsum.tensor([0.0, 1e-10])).tolist()
        [0.0, 1.000000013351432e-10]
    """
    with xp.errstate(over="ignore"):
        out = _via64(xp.expm1, _unary_float(a))
    return _unary(a, out, Expm1Backward0, "output")


class Exp2Backward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(F.mul(g, out), _LN2)


@register("exp2", method=True, inplace="exp2_")
def exp2(a: Tensor) -> Tensor:
    """``2 ** a`` elementwise (integers give the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.exp2(gradsum.tensor([0, 3])).tolist()
        [1.0, 8.0]
    """
    with xp.errstate(over="ignore"):
        out = _via64(xp.exp2, _unary_float(a))
    return _unary(a, out, Exp2Backward0, "output")


class Log2Backward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, F.mul(a, _LN2))


@register("log2", method=True, inplace="log2_")
def log2(a: Tensor) -> Tensor:
    """Base-2 logarithm.

    Example:
        >>> import gradsum
        >>> gradsum.log2(gradsum.tensor([1.0, 8.0])).tolist()
        [0.0, 3.0]
    """
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = _via64(xp.log2, _unary_float(a))
    return _unary(a, out, Log2Backward0, "input")


class Log10Backward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, F.mul(a, _LN10))


@register("log10", method=True, inplace="log10_")
def log10(a: Tensor) -> Tensor:
    """Base-10 logarithm.

    Example:
        >>> import gradsum
        >>> gradsum.log10(gradsum.tensor([1.0, 100.0])).tolist()
        [0.0, 2.0]
    """
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = _via64(xp.log10, _unary_float(a))
    return _unary(a, out, Log10Backward0, "input")


class TanBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return F.mul(g, F.add(F.pow(out, 2), 1))


@register("tan", method=True, inplace="tan_")
def tan(a: Tensor) -> Tensor:
    """Elementwise tangent.

    Example:
        >>> import gradsum
        >>> gradsum.tan(gradsum.tensor([0.0])).tolist()
        [0.0]
    """
    out = _via64(xp.tan, _unary_float(a))
    return _unary(a, out, TanBackward0, "output")


def _one_minus_square(a: Tensor) -> Tensor:
    """``1 - a * a``, as torch's ``-self * self + 1``."""
    return F.add(F.mul(F.neg(a), a), 1)


class AsinBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        with xp.errstate(divide="ignore", invalid="ignore"):
            return F.mul(g, F.rsqrt(_one_minus_square(a)))


@register("asin", "arcsin", method=True, inplace=("asin_", "arcsin_"))
def asin(a: Tensor) -> Tensor:
    """Elementwise arcsine (nan outside ``[-1, 1]``; the gradient is inf at +-1, as torch's).

    Example:
        >>> import gradsum
        >>> gradsum.asin(gradsum.tensor([0.0, 2.0])).tolist()
        [0.0, nan]
    """
    with xp.errstate(invalid="ignore"):
        out = _via64(xp.arcsin, _unary_float(a))
    return _unary(a, out, AsinBackward0, "input")


class AcosBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        with xp.errstate(divide="ignore", invalid="ignore"):
            return F.mul(g, F.neg(F.rsqrt(_one_minus_square(a))))


@register("acos", "arccos", method=True, inplace=("acos_", "arccos_"))
def acos(a: Tensor) -> Tensor:
    """Elementwise arccosine (nan outside ``[-1, 1]``).

    Example:
        >>> import gradsum
        >>> gradsum.acos(gradsum.tensor([1.0])).tolist()
        [0.0]
    """
    with xp.errstate(invalid="ignore"):
        out = _via64(xp.arccos, _unary_float(a))
    return _unary(a, out, AcosBackward0, "input")


class AtanBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.div(g, F.add(F.mul(a, a), 1))


@register("atan", "arctan", method=True, inplace=("atan_", "arctan_"))
def atan(a: Tensor) -> Tensor:
    """Elementwise arctangent.

    Example:
        >>> import gradsum
        >>> gradsum.atan(gradsum.tensor([0.0])).tolist()
        [0.0]
    """
    out = _via64(xp.arctan, _unary_float(a))
    return _unary(a, out, AtanBackward0, "input")


class SinhBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, cosh(a))


@register("sinh", method=True, inplace="sinh_")
def sinh(a: Tensor) -> Tensor:
    """Hyperbolic sine.

    Example:
        >>> import gradsum
        >>> gradsum.sinh(gradsum.tensor([0.0])).tolist()
        [0.0]
    """
    with xp.errstate(over="ignore"):
        out = _via64(xp.sinh, _unary_float(a))
    return _unary(a, out, SinhBackward0, "input")


class CoshBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, sinh(a))


@register("cosh", method=True, inplace="cosh_")
def cosh(a: Tensor) -> Tensor:
    """Hyperbolic cosine.

    Example:
        >>> import gradsum
        >>> gradsum.cosh(gradsum.tensor([0.0])).tolist()
        [1.0]
    """
    with xp.errstate(over="ignore"):
        out = _via64(xp.cosh, _unary_float(a))
    return _unary(a, out, CoshBackward0, "input")


class Atan2Backward0(Node):
    """torch's ``atan2_backward``: ``g * (other, -self) / (self**2 + other**2)``, with the
    reciprocal taken as 0 where both operands are 0 (torch's gradient there is 0)."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        denom = F.add(F.mul(a, a), F.mul(b, b))
        with xp.errstate(divide="ignore"):
            recip = F.where(_make(denom._array == 0), F.zeros((), dtype=denom.dtype),
                            F.reciprocal(denom))
        with xp.errstate(invalid="ignore"):
            ga = F.sum_to(F.mul(F.mul(g, b), recip), self.shapes[0]) if self.needs(0) else None
            gb = (F.sum_to(F.mul(F.mul(g, F.neg(a)), recip), self.shapes[1])
                  if self.needs(1) else None)
        return ga, gb


@register("atan2", "arctan2", method=True, inplace=("atan2_", "arctan2_"))
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point ``(other, input)``, elementwise with broadcasting (integers give
    the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.atan2(gradsum.tensor([1.0, 0.0]), gradsum.tensor([0.0, -1.0])).tolist()
        [1.5707963705062866, 3.1415927410125732]
    """
    require_tensor("atan2", "input", 1, input)
    require_tensor("atan2", "other", 2, other)
    rt = D.result_type(input, other).np
    if rt.kind not in "fV":
        rt = D.get_default_dtype().np
    x, y = input._array.astype(rt, copy=False), other._array.astype(rt, copy=False)
    try:
        out = _via64(lambda u: xp.arctan2(u, y.astype(xp.float64, copy=False)), x)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not needs_grad(input, other):
        return _make(out)
    node = Atan2Backward0()
    node.shapes = (x.shape, y.shape)
    t = record(node, (input, other), out)
    node.save(input, other)
    return t


# -- nan_to_num --------------------------------------------------------------------------------
class NanToNumBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, _make(xp.isfinite(a._array)))


@register("nan_to_num", method=True, inplace="nan_to_num_")
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """``input`` with nan, +inf and -inf replaced (by default with 0 and the dtype's largest and
    lowest finite values); the gradient is 0 at the replaced entries, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.nan_to_num(gradsum.tensor([float("nan"), 1.0, float("-inf")]), neginf=-9.0
        ...                    ).tolist()
        [0.0, 1.0, -9.0]
    """
    x = input._array
    if x.dtype.kind not in "fV":
        out = x.copy()
    else:
        out = xp.asarray(xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf))
    if not needs_grad(input):
        return _make(out)
    return _unary(input, out, NanToNumBackward0, "input")

_PI = math.pi


def _f64(x: Any) -> Any:
    return xp.asarray(x, dtype=xp.float64)


def _back(out: Any, x: Any) -> Any:
    return xp.asarray(out).astype(x.dtype, copy=False)


# == elementwise unary ops =====================================================================
def _float_in(a: Tensor) -> Any:
    return _unary_float(a)


class SincBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        # torch's sinc_backward: where(pi x^2 == 0, 0, g * (pi x cos(pi x) - sin(pi x)) /
        # (pi x^2)), a selection (an inf or nan g gives 0 at x == 0)
        pa = F.mul(a, _PI)
        sq = F.mul(F.mul(a, a), _PI)
        out = F.div(F.mul(g, F.sub(F.mul(pa, F.cos(pa)), F.sin(pa))), sq)
        return F.where(_make(sq._array == 0), F.zeros((), dtype=out.dtype), out)


@register("sinc", method=True, inplace="sinc_")
def sinc(input: Tensor) -> Tensor:
    """The normalised sinc ``sin(pi x) / (pi x)`` (1 at 0).

    Example:
        >>> import gradsum
        >>> gradsum.sinc(gradsum.tensor([0.0, 0.5], dtype=gradsum.float64)).tolist()
        [1.0, 0.6366197723675814]
    """
    x = _float_in(input)
    x64 = _f64(x)
    with xp.errstate(**_ERR):
        px = _PI * x64
        out = xp.where(x64 == 0, 1.0, xp.sin(px) / px)
    return _unary(input, _back(out, x), SincBackward0, "input")


class FracBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        return g


@register("frac", method=True, inplace="frac_")
def frac(input: Tensor) -> Tensor:
    """The fractional part ``x - trunc(x)`` (floating dtypes only, as torch).

    Example:
        >>> import gradsum
        >>> gradsum.frac(gradsum.tensor([1.5, -2.25])).tolist()
        [0.5, -0.25]
    """
    x = input._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented("frac_cpu", x.dtype, "Convert the input with .float() first.")
    out = xp.trunc(x, out=xp.empty_like(x))
    xp.subtract(x, out, out=out)  # (in place: the same difference, one allocation)
    if not needs_grad(input):
        return _make(out)
    return record(FracBackward0(), (input,), out)


class Deg2RadBackward0(Node):
    __slots__ = ()
    factor = _PI / 180.0

    def backward(self, g: Tensor) -> Tensor:
        return F.mul(g, self.factor)


class Rad2DegBackward0(Deg2RadBackward0):
    __slots__ = ()
    factor = 180.0 / _PI


def _angle(input: Tensor, node_cls: type[Deg2RadBackward0]) -> Tensor:
    x = _float_in(input)
    out = xp.asarray(x * x.dtype.type(node_cls.factor)).astype(x.dtype, copy=False)
    if not needs_grad(input):
        return _make(out)
    return record(node_cls(), (input,), out)


@register("deg2rad", method=True, inplace="deg2rad_")
def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians.

    Example:
        >>> import gradsum
        >>> gradsum.deg2rad(gradsum.tensor([180.0], dtype=gradsum.float64)).tolist()
        [3.141592653589793]
    """
    return _angle(input, Deg2RadBackward0)


@register("rad2deg", method=True, inplace="rad2deg_")
def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return _angle(input, Rad2DegBackward0)


# == binary ops ================================================================================
def _float_pair(name: str, input: Tensor, other: Any, arg: str = "other") -> tuple[Any, Any]:
    """Both operands tensors, promoted to a floating dtype (torch's ``<name>_cpu`` error for
    an integer result)."""
    require_tensor(name, "input", 1, input)
    require_tensor(name, arg, 2, other)
    rt = D.result_type(input, other).np
    if rt.kind not in "fV":
        raise D.not_implemented(f"{name}_cpu", rt, "Convert the inputs with .float() first.")
    x, y = input._array.astype(rt, copy=False), other._array.astype(rt, copy=False)
    try:
        xp.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x, y) from None
    return x, y


def _record2(node: Node, input: Tensor, other: Tensor, out: Any, x: Any, y: Any,
             save: tuple[Any, ...] = (), outputs: bool = False) -> Tensor:
    node.shapes = (x.shape, y.shape)  # type: ignore[attr-defined]
    t = record(node, (input, other), out)
    if outputs:
        node.save(*save, outputs=(t,))
    elif save:
        node.save(*save)
    return t


class HypotBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, out = self.saved()
        r = F.div(g, out)
        ga = F.sum_to(F.mul(r, a), self.shapes[0]) if self.needs(0) else None
        gb = F.sum_to(F.mul(r, b), self.shapes[1]) if self.needs(1) else None
        return ga, gb


#: elements per block of :func:`_f64_blocks`: its float64 temporaries stay in the CPU's cache
#: (full-size ones, 8 bytes an element, page-fault and slowed the whole step down)
_F64_BLOCK = 1 << 15


def _f64_blocks(x: Any, y: Any, kernel: Callable[[Any, Any, Any], None]) -> Any:
    """A float32 result of two float32 operands computed in float64 and rounded once, block
    by block (:data:`_F64_BLOCK` elements) in reused float64 scratch: ``kernel(a, b, s)``
    leaves its value in ``a``, given the block's operands in ``a`` and ``b`` and a third
    buffer ``s``. None unless both are contiguous arrays of one shape (the caller then takes
    NumPy's float32 loop)."""
    if x.shape != y.shape or not (x.flags.c_contiguous and y.flags.c_contiguous):
        return None
    n = x.size
    out = xp.empty(x.shape, _F32)
    fx, fy, fo = x.reshape(-1), y.reshape(-1), out.reshape(-1)
    k = min(n, _F64_BLOCK)
    ba, bb, bs = xp.empty(k, _F64), xp.empty(k, _F64), xp.empty(k, _F64)
    with xp.errstate(**_ERR):  # (a signalling nan warns in the casts)
        for i in range(0, n, k):
            j = min(i + k, n)
            a = ba[:j - i]
            a[...] = fx[i:j]
            bb[:j - i] = fy[i:j]
            kernel(a, bb[:j - i], bs[:j - i])
            fo[i:j] = a
    return out


def _hypot_kernel(a: Any, b: Any, s: Any) -> None:
    a *= a
    b *= b
    a += b
    xp.sqrt(a, out=a)


def _hypot32(x: Any, y: Any) -> Any:
    """NumPy's float32 ``hypot`` (the C library's ``hypotf``) as ``sqrt(x*x + y*y)`` in
    float64, rounded once to float32: the squares of float32 numbers are exact in float64 and
    cannot overflow there, so this is the C library's own method, bit for bit (checked on 25M
    random operands of every scale and 4M random bit patterns, nan signs included), in a few
    vectorised passes per block where NumPy calls ``hypotf`` per element. An infinity beside
    a nan gives +inf (IEEE's hypot), where the sum gives nan. None unless both are contiguous
    arrays of one shape (the caller takes NumPy's hypot)."""
    out = _f64_blocks(x, y, _hypot_kernel)
    if out is None:
        return None
    nan = xp.isnan(out)
    if nan.any():
        inf = xp.isinf(x) | xp.isinf(y)
        inf &= nan
        out[inf] = xp.inf
    return out


@register("hypot", method=True, inplace="hypot_")
def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow, with broadcasting.

    Example:
        >>> import gradsum
        >>> gradsum.hypot(gradsum.tensor([3.0]), gradsum.tensor([4.0])).tolist()
        [5.0]
    """
    x, y = _float_pair("hypot", input, other)
    out = _hypot32(x, y) if x.dtype == _F32 and x.ndim and y.ndim else None
    out = _bcast(xp.hypot(x, y), x, y) if out is None else out
    if not needs_grad(input, other):
        return _make(out)
    return _record2(HypotBackward0(), input, other, out, x, y, (input, other), outputs=True)


class LogaddexpBackward0(Node):
    __slots__ = ("shapes",)
    base2 = False

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        e = F.exp2 if self.base2 else F.exp
        ga = (F.sum_to(F.div(g, F.add(e(F.sub(b, a)), 1)), self.shapes[0])
              if self.needs(0) else None)
        gb = (F.sum_to(F.div(g, F.add(e(F.sub(a, b)), 1)), self.shapes[1])
              if self.needs(1) else None)
        return ga, gb


class Logaddexp2Backward0(LogaddexpBackward0):
    __slots__ = ()
    base2 = True


_INV_LN2 = 1.0 / math.log(2.0)


def _logaddexp_kernel(a: Any, b: Any, m: Any, base2: bool = False) -> None:
    xp.maximum(a, b, out=m)
    xp.subtract(a, b, out=a)
    xp.abs(a, out=a)
    xp.negative(a, out=a)
    (xp.exp2 if base2 else xp.exp)(a, out=a)
    xp.log1p(a, out=a)
    if base2:
        a *= _INV_LN2
    a += m


def _logaddexp2_kernel(a: Any, b: Any, m: Any) -> None:
    _logaddexp_kernel(a, b, m, True)


def _logaddexp32(x: Any, y: Any, base2: bool) -> Any:
    """float32 ``logaddexp``/``logaddexp2`` as ``max(x, y) + log1p(exp(-|x - y|))`` (``exp2``,
    the logarithm divided by ln 2) in float64, rounded once (:func:`_f64_blocks`): within
    1 ULP of the float64 value, and its rounding for all but about 0.1% of inputs (tested),
    where NumPy's per-element float32 loop (the C library's ``expf``/``log1pf``) is 1.3 ULP
    off, as torch's is. An infinity beside the same infinity
    stays itself (the difference is nan there). None unless both are contiguous arrays of
    one shape (the caller takes NumPy's loop)."""
    out = _f64_blocks(x, y, _logaddexp2_kernel if base2 else _logaddexp_kernel)
    if out is None:
        return None
    nan = xp.isnan(out)
    if nan.any():
        same = x == y
        same &= nan
        out[same] = x[same]
    return out


@register("logaddexp", method=True)
def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` computed stably.

    Example:
        >>> import gradsum
        >>> gradsum.logaddexp(gradsum.tensor([0.0]), gradsum.tensor([0.0])).tolist()
        [0.6931471824645996]
    """
    x, y = _float_pair("logaddexp", input, other)
    out = _logaddexp32(x, y, False) if x.dtype == _F32 and x.ndim else None
    if out is None:
        with xp.errstate(**_ERR):
            out = _bcast(xp.logaddexp(x, y), x, y)
    if not needs_grad(input, other):
        return _make(out)
    return _record2(LogaddexpBackward0(), input, other, out, x, y, (input, other))


@register("logaddexp2", method=True)
def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` computed stably."""
    x, y = _float_pair("logaddexp2", input, other)
    out = _logaddexp32(x, y, True) if x.dtype == _F32 and x.ndim else None
    if out is None:
        with xp.errstate(**_ERR):
            out = _bcast(xp.logaddexp2(x, y), x, y)
    if not needs_grad(input, other):
        return _make(out)
    return _record2(Logaddexp2Backward0(), input, other, out, x, y, (input, other))


class NextafterBackward0(Node):
    """torch's rule: the gradient of ``input`` passes through except where ``input ==
    other`` (there it is 0, selected: an inf or nan gradient gives 0), ``other`` gets zeros."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = None
        if self.needs(0):
            a, b = self.saved()
            ga = F.sum_to(_masked_zero(g, a._array == b._array), self.shapes[0])
        gb = F.zeros(self.shapes[1], dtype=g.dtype) if self.needs(1) else None
        return ga, gb


_NEXT_INT = {xp.dtype(xp.float32): (xp.int32, xp.int32(-2 ** 31 + 1)),
             xp.dtype(xp.float64): (xp.int64, xp.int64(-2 ** 63 + 1))}


def _nextafter(x: Any, y: Any) -> Any:
    """NumPy's (the C library's) ``nextafter``, bit for bit, on the integer bits for
    float32/float64: for ordered ``x != y`` the bits of a nonzero ``x`` step by one (up
    where the magnitude grows: ``y > x`` for a positive ``x``, ``y < x`` for a negative
    one; an infinity steps to the largest finite number), a zero gives the smallest
    subnormal with the sign of ``y``. Equal and unordered (nan) pairs take NumPy's loop."""
    if x.dtype not in _NEXT_INT or x.dtype != y.dtype or not (x.ndim or y.ndim):
        return xp.nextafter(x, y)
    it, neg_tiny = _NEXT_INT[x.dtype]
    shape = xp.broadcast_shapes(x.shape, y.shape)
    xb = xp.broadcast_to(x, shape)
    ordered = xp.greater(y, x)
    up = xp.less(xb, 0)
    xp.not_equal(up, ordered, out=up)  # (the bits step up, else down)
    ordered |= xp.less(y, x)
    out = up.astype(it)
    out += out
    out -= 1
    out += xb.view(it)
    zero = xp.equal(xb, 0)
    if zero.any():
        zero &= ordered
        out[zero] = xp.where(xp.broadcast_to(y, shape)[zero] < 0, neg_tiny, 1)
    if not ordered.all():
        rest = ~ordered
        out[rest] = xp.nextafter(xb[rest], xp.broadcast_to(y, shape)[rest]).view(it)
    return out.view(x.dtype)


@register("nextafter", method=True, inplace="nextafter_")
def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next floating-point value after ``input`` towards ``other`` (torch's gradient:
    ``grad`` for ``input``, zeros for ``other``).

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0], dtype=gradsum.float64)
        >>> (gradsum.nextafter(x, gradsum.tensor([2.0], dtype=gradsum.float64)) - x).tolist()
        [2.220446049250313e-16]
    """
    x, y = _float_pair("nextafter", input, other)
    out = _bcast(_nextafter(x, y), x, y)
    if not needs_grad(input, other):
        return _make(out)
    return _record2(NextafterBackward0(), input, other, out, x, y, (input, other))


_NotImplementedNode: type[Node] = type("NotImplemented", (Node,), {
    "__slots__": ("op",),
    "backward": lambda self, *g: (_ for _ in ()).throw(RuntimeError(
        _messages.derivative_not_implemented(self.op))),
})


@register("heaviside", method=True, inplace="heaviside_")
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The Heaviside step: 0 below 0, ``values`` at 0, 1 above (nan gives 0, as torch).
    Both operands must have one dtype; not differentiable (torch's ``NotImplemented`` node).

    Example:
        >>> import gradsum
        >>> gradsum.heaviside(gradsum.tensor([-1.0, 0.0, 2.0]), gradsum.tensor([0.5])).tolist()
        [0.0, 0.5, 1.0]
    """
    require_tensor("heaviside", "input", 1, input)
    require_tensor("heaviside", "values", 2, values)
    x, v = input._array, values._array
    if x.dtype != v.dtype:
        raise RuntimeError(_messages.heaviside_dtype_mismatch(x.dtype, v.dtype))
    try:
        shape = xp.broadcast_shapes(x.shape, v.shape)
    except ValueError:
        raise broadcast_error(x, v) from None
    out = xp.where(x == 0, v, (x > 0)).astype(x.dtype, copy=False)
    out = xp.broadcast_to(out, shape).copy() if out.shape != shape else xp.asarray(out)
    if not needs_grad(input, values):
        return _make(out)
    node = _NotImplementedNode()
    node.op = "heaviside"  # type: ignore[attr-defined]
    return record(node, (input, values), out)


def _promoted_float(name: str, input: Any, other: Any) -> tuple[Any, Any, bool]:
    """Arrays of a float result (integers give the default float); ``other`` may be a number."""
    rt = D.result_type(input, other).np
    if rt.kind not in "fV":
        rt = D.get_default_dtype().np
    x = input._array.astype(rt, copy=False)
    if isinstance(other, Tensor):
        y = other._array.astype(rt, copy=False)
        try:
            xp.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise broadcast_error(x, y) from None
        return x, y, True
    return x, xp.asarray(scalar_value(other), dtype=rt), False


def _copysign_ratio(a: Tensor, out: Tensor) -> Tensor:
    """torch's ``(result / self).masked_fill_(self == 0, 0)`` (nan in its second derivative
    at 0, as torch's)."""
    return _masked_zero(F.div(out, a), a._array == 0)


class CopysignBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, out = self.saved()
        ga = gb = None
        if self.needs(0):
            ga = F.sum_to(F.mul(g, _copysign_ratio(a, out)), self.shapes[0])
        if self.needs(1):
            gb = F.zeros(self.shapes[1], dtype=g.dtype)
        return ga, gb


class CopysignBackward1(CopysignBackward0):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:  # type: ignore[override]
        a, out = self.saved()
        return F.sum_to(F.mul(g, _copysign_ratio(a, out)), self.shapes[0])


@register("copysign", method=True, inplace="copysign_")
def copysign(input: Tensor, other: Any) -> Tensor:
    """``|input|`` with the sign of ``other`` (a tensor or a number; integers give floats).

    Example:
        >>> import gradsum
        >>> gradsum.copysign(gradsum.tensor([1.0, -2.0]), -0.0).tolist()
        [-1.0, -2.0]
    """
    require_tensor("copysign", "input", 1, input)
    x, y, yt = _promoted_float("copysign", input, other)
    out = _bcast(xp.copysign(x, y), x, y)
    if not needs_grad(input, other):
        return _make(out)
    if yt:
        return _record2(CopysignBackward0(), input, other, out, x, y, (input,), outputs=True)
    node = CopysignBackward1()
    node.shapes = (x.shape, ())
    t = record(node, (input,), out)
    node.save(input, outputs=(t,))
    return t


def _masked_zero(t: Tensor, mask: Any) -> Tensor:
    mask = xp.broadcast_to(mask, t._array.shape)
    return F.masked_fill(t, _make(xp.ascontiguousarray(mask)), 0.0) if mask.any() else t


# -- logit ----------------------------------------------------------------------------------
class LogitBackward0(Node):
    """torch's ``logit_backward``: ``g / (x (1 - x))``; without ``eps`` nan outside [0, 1],
    with it zero outside ``[eps, 1 - eps]``."""

    __slots__ = ("eps",)

    def backward(self, g: Tensor) -> Tensor:
        if not _grad_state.enabled:  # (nothing to record: the same operations on arrays)
            (x,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is x.dtype and x.dtype in _F32_F64 and ga.shape == x.shape and x.ndim:
                with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    t = xp.subtract(1, x)
                    t *= x
                    xp.divide(ga, t, out=t)
                eps = self.eps
                if eps is None or eps < 0:
                    out = xp.less(x, 0)
                    out |= xp.greater(x, 1)
                    if out.any():  # (probabilities outside [0, 1] only)
                        xp.copyto(t, xp.nan, where=out)
                    return _make(t)
                out = xp.less(x, eps)
                out |= xp.greater(x, 1 - eps)
                return _make(select_grad(t, out))
        (a,) = self.saved()
        x = a._array
        with xp.errstate(divide="ignore", invalid="ignore"):
            base = F.div(g, F.mul(a, F.rsub(a, 1)))
            if self.eps is None or self.eps < 0:
                return F.masked_fill(base, _make((x < 0) | (x > 1)), float("nan"))
            return F.masked_fill(base, _make((x < self.eps) | (x > 1 - self.eps)), 0.0)


@register("logit", method=True, inplace="logit_")
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given
    (integers give the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.logit(gradsum.tensor([0.5, 0.0]), eps=0.25).tolist()
        [0.0, -1.0986123085021973]
    """
    if input._array.dtype.kind not in "fV":
        input = F.to_dtype(input, D.get_default_dtype())
    x = input._array
    xc = x if eps is None or eps < 0 else xp.clip(x, eps, 1 - eps)
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = xp.asarray(xp.log(xc / (1 - xc)), dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = LogitBackward0()
    node.eps = None if eps is None else float(eps)
    t = record(node, (input,), out)
    node.save(input)
    return t


# -- clamp_min / clamp_max ------------------------------------------------------------------
class ClampMinBackward0(Node):
    """``g`` where ``x >= min`` (torch's rule: a nan input gets nothing)."""

    __slots__ = ("bound",)

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        keep = (a._array >= self.bound) if type(self) is ClampMinBackward0 else (
            a._array <= self.bound)
        return F.where(_make(keep), g, F.zeros((), dtype=g.dtype))


class ClampMaxBackward0(ClampMinBackward0):
    """``g`` where ``x <= max``."""

    __slots__ = ()


class ClampMinBackward1(Node):
    """Tensor bound: the input gets ``g`` where ``x >= min``, the bound where ``x < min``."""

    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        x, y = a._array, b._array
        take_a, take_b = (x >= y, x < y) if type(self) is ClampMinBackward1 else (x <= y, x > y)
        zero = F.zeros((), dtype=g.dtype)
        ga = gb = None
        if self.needs(0):
            ga = F.sum_to(F.where(_make(xp.broadcast_to(take_a, g.shape)), g, zero),
                          self.a_shape)
        if self.needs(1):
            gb = F.sum_to(F.where(_make(xp.broadcast_to(take_b, g.shape)), g, zero),
                          self.b_shape)
        return ga, gb


class ClampMaxBackward1(ClampMinBackward1):
    """Tensor bound: the input gets ``g`` where ``x <= max``, the bound where ``x > max``."""

    __slots__ = ()


def _clamp_one(input: Tensor, bound: Any, is_min: bool) -> Tensor:
    name = "clamp_min" if is_min else "clamp_max"
    if bound is None:
        raise TypeError(_messages.clamp_bound_none(name, is_min))
    b_t = isinstance(bound, Tensor)
    with no_grad():
        kw = {"min" if is_min else "max": bound.detach() if b_t else bound}
        out = F.clamp(input.detach(), **kw)._array
    if not needs_grad(input, bound):
        return _make(out)
    if b_t:
        node1 = ClampMinBackward1() if is_min else ClampMaxBackward1()
        node1.a_shape, node1.b_shape = input._array.shape, bound._array.shape
        t = record(node1, (input, bound), out)
        node1.save(input, bound)
        return t
    node0 = ClampMinBackward0() if is_min else ClampMaxBackward0()
    node0.bound = bound
    t = record(node0, (input,), out)
    node0.save(input)
    return t


@register("clamp_min", method=True, inplace="clamp_min_")
def clamp_min(input: Tensor, min: Any) -> Tensor:
    """:func:`clamp` with a lower bound only (a number or a tensor); its own node, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.clamp_min(gradsum.tensor([-1.0, 2.0]), 0).tolist()
        [0.0, 2.0]
    """
    return _clamp_one(input, min, True)


@register("clamp_max", method=True, inplace="clamp_max_")
def clamp_max(input: Tensor, max: Any) -> Tensor:
    """:func:`clamp` with an upper bound only (a number or a tensor).

    Example:
        >>> import gradsum
        >>> gradsum.clamp_max(gradsum.tensor([-1.0, 2.0]), 0).tolist()
        [-1.0, 0.0]
    """
    return _clamp_one(input, max, False)



# -- creation and index helpers -------------------------------------------------------------
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *,
             dtype: D.dtype | None = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in log.

    Example:
        >>> import gradsum
        >>> gradsum.logspace(0, 2, 3).tolist()
        [1.0, 10.0, 100.0]
    """
    _device.check_factory(device, "logspace")
    if steps < 0:
        raise RuntimeError(_messages.logspace_negative_steps(steps))
    dt = (dtype or D.get_default_dtype()).np
    exps = xp.linspace(float(start), float(end), int(steps))
    out = xp.power(float(base), exps)
    t = _make(out.astype(dt) if dt.kind in "fV" else xp.trunc(out).astype(dt))
    t.requires_grad_(requires_grad)
    return t


def scalar_tensor(s: Any, *, dtype: D.dtype | None = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype``.

    Example:
        >>> import gradsum
        >>> gradsum.scalar_tensor(3)
        tensor(3.)
    """
    if isinstance(s, Tensor):
        raise TypeError(_messages.scalar_tensor_given_tensor())
    _device.check_factory(device, "scalar_tensor")
    dt = (dtype or D.get_default_dtype()).np
    t = _make(xp.asarray(s, dtype=dt))
    t.requires_grad_(requires_grad)
    return t


# -- inverse hyperbolic functions ---------------------------------------------------------------
class AcoshBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        with xp.errstate(divide="ignore", invalid="ignore"):
            return F.mul(g, F.rsqrt(F.sub(F.pow(a, 2), 1)))


class AsinhBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.rsqrt(F.add(F.pow(a, 2), 1)))


class AtanhBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        with xp.errstate(divide="ignore", invalid="ignore"):
            return F.mul(g, F.reciprocal(F.rsub(F.pow(a, 2), 1)))


@register("acosh", "arccosh", method=True)
def acosh(input: Tensor) -> Tensor:
    """Inverse hyperbolic cosine (nan below 1; integers give the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.acosh(gradsum.tensor([1.0, 0.5])).tolist()
        [0.0, nan]
    """
    with xp.errstate(invalid="ignore"):
        out = _via64(xp.arccosh, _unary_float(input))
    return _unary(input, out, AcoshBackward0, "input")


@register("asinh", "arcsinh", method=True)
def asinh(input: Tensor) -> Tensor:
    """Inverse hyperbolic sine.

    Example:
        >>> import gradsum
        >>> gradsum.asinh(gradsum.tensor([0.0])).tolist()
        [0.0]
    """
    return _unary(input, _via64(xp.arcsinh, _unary_float(input)), AsinhBackward0, "input")


@register("atanh", "arctanh", method=True)
def atanh(input: Tensor) -> Tensor:
    """Inverse hyperbolic tangent (+-inf at +-1, nan outside ``[-1, 1]``).

    Example:
        >>> import gradsum
        >>> gradsum.atanh(gradsum.tensor([0.0, 1.0])).tolist()
        [0.0, inf]
    """
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = _via64(xp.arctanh, _unary_float(input))
    return _unary(input, out, AtanhBackward0, "input")


arccosh, arcsinh, arctanh = acosh, asinh, atanh


class _InplaceNotImplemented(Node):
    """torch records the in-place inverse hyperbolic functions with a node (``AcoshBackward1``
    ...) whose derivative is not implemented: a backward through it raises."""

    __slots__ = ()
    op = ""

    def backward(self, g: Tensor) -> Tensor:
        raise NotImplementedError(_messages.inplace_derivative_not_implemented(self.op))


class AcoshBackward1(_InplaceNotImplemented):
    __slots__ = ()
    op = "acosh"


class AsinhBackward1(_InplaceNotImplemented):
    __slots__ = ()
    op = "asinh"


class AtanhBackward1(_InplaceNotImplemented):
    __slots__ = ()
    op = "atanh"


def _inplace_form(fn: Callable[[Tensor], Tensor], node_cls: type[Node],
                  inplace: tuple[str, ...]) -> Callable[[Tensor], Tensor]:
    """The out-of-place op an in-place inverse hyperbolic function writes back: ``fn``'s
    value, recorded with torch's ``...Backward1`` node; the twins ``inplace`` are made
    from it."""

    def op(input: Tensor) -> Tensor:
        with no_grad():
            out = fn(input)._array
        if not needs_grad(input):
            return _make(out)
        return record(node_cls(), (input,), out)

    return tensor_method(inplace=inplace)(op)


_acosh_inplace = _inplace_form(acosh, AcoshBackward1, inplace=("acosh_", "arccosh_"))
_asinh_inplace = _inplace_form(asinh, AsinhBackward1, inplace=("arcsinh_", "asinh_"))
_atanh_inplace = _inplace_form(atanh, AtanhBackward1, inplace=("arctanh_", "atanh_"))


def _identity(input: Tensor) -> Tensor:
    return input


@register("fix", method=True)
def fix(input: Tensor) -> Tensor:
    """Alias of :func:`trunc`: rounds toward zero.

    Example:
        >>> import gradsum
        >>> gradsum.fix(gradsum.tensor([-1.5, 1.5])).tolist()
        [-1.0, 1.0]
    """
    return F.trunc(input)


class AngleBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        self.saved()  # (torch saves the input: a second backward raises as torch's)
        return F.zeros_like(g)  # (a real tensor's angle is piecewise constant)


@register("angle", method=True)
def angle(input: Tensor) -> Tensor:
    """The argument of each value: ``pi`` for negatives, 0 otherwise (nan stays nan);
    integers give the default float dtype.

    Example:
        >>> import gradsum
        >>> gradsum.angle(gradsum.tensor([-2.0, 3.0])).tolist()
        [3.1415927410125732, 0.0]
    """
    x = _unary_float(input)
    if x.dtype.kind == "f" and x.ndim:  # (pi times the sign test: no per-element branch)
        out = (x < 0).astype(x.dtype)  # (then scaled in place: the mixed bool-float product
        out *= xp.asarray(math.pi, dtype=x.dtype)  # casts per element, 1.5x slower)
        nan = xp.isnan(x)
        if nan.any():
            out = xp.where(nan, x, out)
    else:
        out = xp.where(x < 0, xp.asarray(math.pi, dtype=x.dtype), xp.zeros((), dtype=x.dtype))
        out = xp.where(xp.isnan(x), x, out).astype(x.dtype, copy=False)
    if not needs_grad(input):
        return _make(out)
    node = AngleBackward0()
    res = record(node, (input,), out)
    node.save(input)
    return res


# -- type_as and sgn (bound as Tensor methods in gradsum.ops) --------------------------------------
@tensor_method("type_as")
def type_as(a: Tensor, other: Tensor) -> Tensor:
    return a.to(other.dtype)

@tensor_method("sgn", inplace="sgn_")
def sgn(a: Tensor) -> Tensor:
    """:func:`sign` (gradsum's tensors are real).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([-2.0, 0.0, 3.0]).sgn().tolist()
        [-1.0, 0.0, 1.0]
    """
    return sign(a)
