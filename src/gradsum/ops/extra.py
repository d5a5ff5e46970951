"""More of torch's elementwise math: exp/log variants, trigonometric and hyperbolic functions,
``atan2``, ``lerp``, ``addcmul``/``addcdiv`` and ``nan_to_num``.

Each primitive has its own ``<Op>Backward0`` with torch's derivative formula written in gradsum
ops (double backward works), and saves what torch's node saves, so a second backward without
``retain_graph`` raises exactly where torch's does.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([0.0, 1.0], requires_grad=True)
    >>> gradsum.expm1(x).sum().backward()
    >>> x.grad.tolist()
    [1.0, 2.7182817459106445]
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum import _fma
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd import _messages
from gradsum.autograd.graph import Node
from gradsum.ops._core import (
    _make,
    broadcast_error,
    needs_grad,
    record,
    register,
    scalar_value,
)
from gradsum.ops.elementwise import _sum_to, _unary, _unary_float, select

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


@register("expm1")
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


@register("exp2")
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


@register("log2")
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


@register("log10")
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


@register("tan")
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


@register("asin", "arcsin")
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


@register("acos", "arccos")
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


@register("atan", "arctan")
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


@register("sinh")
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


@register("cosh")
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


# -- atan2 -------------------------------------------------------------------------------------
def _require_tensor(name: str, arg: str, pos: int, v: Any) -> Tensor:
    if not isinstance(v, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}. Wrap it with gradsum.tensor().")
    return v


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
            ga = _sum_to(F.mul(F.mul(g, b), recip), self.shapes[0]) if self.needs(0) else None
            gb = (_sum_to(F.mul(F.mul(g, F.neg(a)), recip), self.shapes[1])
                  if self.needs(1) else None)
        return ga, gb


@register("atan2", "arctan2")
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point ``(other, input)``, elementwise with broadcasting (integers give
    the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.atan2(gradsum.tensor([1.0, 0.0]), gradsum.tensor([0.0, -1.0])).tolist()
        [1.5707963705062866, 3.1415927410125732]
    """
    _require_tensor("atan2", "input", 1, input)
    _require_tensor("atan2", "other", 2, other)
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


# -- lerp --------------------------------------------------------------------------------------
class LerpBackward0(Node):
    """``lerp`` with a number weight: nothing saved (torch keeps the number only)."""

    __slots__ = ("shapes", "weight")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        w = self.weight
        ga = _sum_to(F.mul(g, 1 - float(w)), self.shapes[0]) if self.needs(0) else None
        gb = _sum_to(F.mul(g, w), self.shapes[1]) if self.needs(1) else None
        return ga, gb


class LerpBackward1(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        a, b, w = self.saved()
        ga = _sum_to(F.mul(g, F.rsub(w, 1)), self.shapes[0]) if self.needs(0) else None
        gb = _sum_to(F.mul(g, w), self.shapes[1]) if self.needs(1) else None
        gw = _sum_to(F.mul(g, F.sub(b, a)), self.shapes[2]) if self.needs(2) else None
        return ga, gb, gw


def _lerp_dtype_check(name: str, ref: Any, other: Any, what: str) -> None:
    if other.dtype != ref.dtype:
        raise RuntimeError(
            f"expected dtype {D.from_numpy_dtype(ref.dtype).name} for `{what}` but got dtype "
            f"{D.from_numpy_dtype(other.dtype).name}. Convert it with .to(input.dtype)."
        )


@register("lerp")
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)`` with broadcasting; ``weight`` is a number or a
    tensor. Floating dtypes only, all operands of one dtype (as torch).

    Example:
        >>> import gradsum
        >>> gradsum.lerp(gradsum.tensor([0.0, 10.0]), gradsum.tensor([10.0, 20.0]), 0.25).tolist()
        [2.5, 12.5]
    """
    _require_tensor("lerp", "input", 1, input)
    _require_tensor("lerp", "end", 2, end)
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
        ga = _sum_to(g, self.shapes[0]) if self.needs(0) else None
        if not (self.needs(1) or self.needs(2)):
            return ga, None, None  # (nothing was saved)
        t1, t2 = self.saved()
        g1 = _sum_to(F.mul(F.mul(g, t2), v), self.shapes[1]) if self.needs(1) else None
        g2 = _sum_to(F.mul(F.mul(g, t1), v), self.shapes[2]) if self.needs(2) else None
        return ga, g1, g2


class AddcdivBackward0(Node):
    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        t1, t2 = self.saved()
        v = self.value
        ga = _sum_to(g, self.shapes[0]) if self.needs(0) else None
        if self.needs(1) and not t2.dtype.is_floating_point:
            # (torch's rule divides into tensor2's integer dtype and fails)
            raise RuntimeError(_messages.cast_inplace(D.get_default_dtype().name, t2.dtype.name,
                                                      "addcdiv's backward"))
        g1 = _sum_to(F.mul(g, F.div(v, t2)), self.shapes[1]) if self.needs(1) else None
        g2 = None
        if self.needs(2):
            # (torch's grouping, which sets the dtype each step computes in)
            g2 = F.mul(F.neg(g), F.div(F.mul(t1, v), F.mul(t2, t2)))
            g2 = _sum_to(g2, self.shapes[2])
        return ga, g1, g2


def _addc(name: str, input: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any
          ) -> tuple[Any, Any, Any, Any]:
    for pos, (arg, v) in enumerate((("input", input), ("tensor1", tensor1),
                                    ("tensor2", tensor2)), 1):
        _require_tensor(name, arg, pos, v)
    value = scalar_value(value)
    rt = D.result_type(input, tensor1, tensor2).np
    x, t1, t2 = (t._array.astype(rt, copy=False) for t in (input, tensor1, tensor2))
    if rt.kind in "biu" and isinstance(value, float):
        value = int(value)  # (torch casts the value to the integer result type)
    return x, t1, t2, value


@register("addcmul")
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


@register("addcdiv")
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
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. Use "
            "(input + value * tensor1 / tensor2) with floating tensors instead."
        )
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


# -- nan_to_num --------------------------------------------------------------------------------
class NanToNumBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, _make(xp.isfinite(a._array)))


@register("nan_to_num")
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
