"""Activations: ``relu`` (and ``threshold_backward``), ``gelu``, ``silu``, ``leaky_relu``,
``softplus``, ``sigmoid``, ``hardshrink``, ``prelu``, ``softmax``/``log_softmax``,
``logsigmoid`` (nn.functional's, as ``hardshrink`` is too) and the nodes of the activations
that :mod:`gradsum.nn.functional` composes (mish, glu, the hard* family).

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([-1.0, 2.0], requires_grad=True)
    >>> gradsum.relu(x).grad_fn.name()
    'ReluBackward0'
"""

from __future__ import annotations

import math
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state
from gradsum.autograd.grad_mode import _state as _grad_state
from gradsum.autograd.graph import Node
from gradsum.autograd.saved import hooks_active
from gradsum.backends.mkldnn import onednn_gelu_nan_at_inf
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    const,
    needs_grad,
    quietly,
    record,
    register,
    wrap_dim,
)
from gradsum.ops._erf import _scratch as _erf_scratch
from gradsum.ops._erf import gelu_cdf64, gelu_f32, gelu_parts_f32
from gradsum.ops._messages import torch_name
from gradsum.ops.arithmetic import (
    _F32_F64,
    _INT_OF,
    _ndarray,
    _unary,
    _unary_float,
    select,
    select_const,
    select_grad,
)
from gradsum.ops.pointwise import _F32, _F64, _fused_backward, to_dtype

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _float_only(a: Tensor, kernel: str) -> Any:
    """The input array of an activation that torch implements for floating dtypes only."""
    x = a._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented(kernel, x.dtype, "Convert the input with .float() first.")
    return x


def _check_floating(input: Tensor, kernel: str) -> None:
    """nn.functional's activations' check (and :func:`hardshrink`'s, :func:`logsigmoid`'s):
    torch's kernel error, with the fix after a colon (:func:`_float_only`'s text differs)."""
    if not input.is_floating_point():
        raise NotImplementedError(_messages.kernel_not_floating_input(kernel, input))


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


@register("sigmoid", method=True)
def sigmoid(a: Tensor) -> Tensor:
    """Logistic function ``1 / (1 + exp(-a))``."""
    out = _sigmoid_array(_unary_float(a))
    return _unary(a, out, SigmoidBackward0, "output")


# -- activations -------------------------------------------------------------------------------
class ReluBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return threshold_backward(g, out, 0)


class _MaskedBackwardBackward(Node):
    """The rule of a backward ``(g, y) -> g`` times a mask piecewise constant in ``y``
    (``threshold_backward``, ``leaky_relu_backward``): linear in ``g``, that backward again
    (``_rule``, with the backward's ``constant``: threshold or slope), and ``y`` gets zeros
    (not None), as in torch."""

    __slots__ = ("constant",)

    def _rule(self, gg: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    @classmethod
    def recorded(cls, g: Tensor, y: Tensor, t: Any, constant: float) -> Tensor:
        """The backward's result ``t`` recorded with this rule (``g`` and ``y`` its inputs)."""
        node = cls()
        node.constant = constant
        out = record(node, (g, y), t)
        node.save(y)
        return out

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        (y,) = self.saved()
        d_g = self._rule(gg, y) if self._next[0][0] is not None else None
        d_y = F.zeros_like(gg) if self._next[1][0] is not None else None
        return d_g, d_y


class ThresholdBackwardBackward0(_MaskedBackwardBackward):
    """The rule of ``threshold_backward``: linear in ``g`` with a constant mask."""

    __slots__ = ()

    def _rule(self, gg: Tensor, y: Tensor) -> Tensor:
        return threshold_backward(gg, y, self.constant)


def threshold_backward(g: Tensor, y: Tensor, threshold: float) -> Tensor:
    """``g`` unless ``y <= threshold`` (then 0), in one op (relu's backward, as torch's: a nan
    ``y`` passes the gradient, and an inf or nan ``g`` where ``y <= threshold`` gives 0, see
    :func:`select_grad`)."""
    ga = g._array
    ya = y._array
    le = ya <= (const(ya.dtype, 0) if threshold == 0 and threshold.__class__ is int else threshold)
    t = select_grad(ga, le if le.__class__ is _ndarray else xp.asarray(le))
    if not needs_grad(g, y):  # (torch records for y alone too)
        return _make(t)
    return ThresholdBackwardBackward0.recorded(g, y, t, threshold)


@register("relu", method=True)
def relu(a: Tensor) -> Tensor:
    """``max(a, 0)``."""
    x = a._array
    if x.dtype.kind == "b":
        raise RuntimeError(_messages.relu_boolean_input())
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


@register("gelu", method=True)
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
        raise RuntimeError(_messages.gelu_invalid_approximate(approximate))
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


@register("silu", method=True)
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


class LeakyReluBackwardBackward0(_MaskedBackwardBackward):
    """The rule of ``leaky_relu_backward``: linear in ``g`` with a mask that is piecewise
    constant in the input, which gets zeros (not None), as in torch."""

    __slots__ = ()

    def _rule(self, gg: Tensor, y: Tensor) -> Tensor:
        return leaky_relu_backward(gg, y, self.constant)


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
    if not needs_grad(g, a):
        return _make(t)
    return LeakyReluBackwardBackward0.recorded(g, a, t, slope)


@register("leaky_relu", method=True)
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


@register("softplus", method=True)
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


# -- softmax family ------------------------------------------------------------------------------
class SoftmaxBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> Tensor:
        if not _state.enabled:  # (nothing to record: a few passes of arrays)
            (ya,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is ya.dtype and ya.dtype.char in "fd" and ya.ndim and ya.size:
                t = ga * ya
                s = _sum_along(t, self.dim)
                xp.subtract(ga, s, out=t)  # (torch's kernel: (g - sum(g * y)) * y)
                t *= ya
                return _make(t)
        (out,) = self.saved()
        return _in_float32(self._rule, g, out)  # (bfloat16: in float32, rounded once)

    def _rule(self, g: Tensor, out: Tensor) -> Tensor:
        gy = F.mul(g, out)
        return F.sub(gy, F.mul(out, F.sum(gy, self.dim, keepdim=True)))


class SafeSoftmaxBackward0(SoftmaxBackward0):
    """torch's ``_safe_softmax`` (attention's math path): softmax's rule, whose saved output
    is zero on the rows that were all ``-inf`` (so is their gradient)."""

    __slots__ = ()


def safe_softmax(a: Tensor, dim: int) -> Tensor:
    """``softmax(a, dim)`` with rows that are all ``-inf`` giving zeros (and zero gradients),
    torch's ``_safe_softmax`` (one ``SafeSoftmaxBackward0`` node)."""
    x, d = _float_array(a, "softmax", dim)
    if x.ndim == 0 or x.size == 0:
        return softmax(a, dim)
    dead = (x == -math.inf).all(axis=d, keepdims=True)
    if dead.any():
        x = xp.where(dead, 0.0, x).astype(x.dtype, copy=False)
    e = xp.exp(x - _max_along(x, d))
    out = e / e.sum(axis=d, keepdims=True)
    if dead.any():
        out = xp.where(dead, 0.0, out).astype(x.dtype, copy=False)
    if not needs_grad(a):
        return _make(out)
    node = SafeSoftmaxBackward0()
    node.dim = d
    t = record(node, (a,), out)
    node.save(outputs=(t,))
    return t


def _float_array(a: Tensor, name: str, dim: int) -> tuple[Any, int]:
    """The input array of softmax/log_softmax and its wrapped dim, in torch's order: the dim
    is checked first, an empty input is returned as is (any dtype), and otherwise only a
    floating one is accepted, as torch's kernels (whose names its error spells:
    ``softmax_lastdim_kernel_impl`` along the last dim, which a 0-d input's dim 0 is)."""
    x = a._array
    d = wrap_dim(dim, x.ndim)
    if not D.is_float_np(x.dtype) and x.size:
        last = "lastdim_" if d == max(x.ndim, 1) - 1 else ""
        raise D.not_implemented(
            f"{name}_{last}kernel_impl", x.dtype,
            f"Convert with .float() first, or pass dtype=gradsum.float32 to {name}()."
        )
    return x, d


@register("softmax", method=True)
def softmax(a: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(a) / sum(exp(a), dim)``, computed stably."""
    if dtype is not None:
        a = a.to(dtype)
    x, d = _float_array(a, "softmax", dim)
    if x.ndim == 0:  # exp(x - x) / itself: nan where x is not finite (inf - inf)
        out = xp.where(xp.isfinite(x), 1.0, math.nan).astype(x.dtype)
    elif x.size == 0:  # nothing to normalise (NumPy's max of an empty axis would raise)
        out = x.copy()
    elif x.dtype == D._BF16_NP:  # computed in float32 and rounded once, as torch's kernel
        out = softmax(_make(x.astype(xp.float32)), d)._array.astype(x.dtype)
    else:
        out = xp.subtract(x, _max_along(x, d))  # (one buffer: exp and the division in place)
        xp.exp(out, out=out)
        out /= out.sum(axis=d, keepdims=True)
    if not needs_grad(a):
        return _make(out)
    node = SoftmaxBackward0()
    node.dim = d
    t = record(node, (a,), out)
    node.save(outputs=(t,))
    return t


class LogSoftmaxBackward0(Node):
    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> Tensor:
        (out,) = self.saved()
        return _in_float32(lambda g, y: log_softmax_backward(g, y, self.dim), g, out)


class LogSoftmaxBackwardDataBackward0(Node):
    """The rule of ``log_softmax_backward(g, y) = g - exp(y) * sum(g, dim)``, for double
    backward: ``d/dg = gg - sum(gg * exp(y), dim)``, ``d/dy = -sum(g, dim) * exp(y) * gg``
    (torch's formulas)."""

    __slots__ = ("dim",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        g, y = self.saved()
        e = F.exp(y)
        d_g = d_y = None
        if self._next[0][0] is not None:
            d_g = F.sub(gg, F.sum(F.mul(gg, e), self.dim, keepdim=True))
        if self._next[1][0] is not None:
            # (torch's order: -sum(g) * exp(y) * gg)
            d_y = F.mul(F.mul(F.neg(F.sum(g, self.dim, keepdim=True)), e), gg)
        return d_g, d_y


_ONES: dict[tuple[int, Any], Any] = {}
_max_reduce = xp.maximum.reduce
_add_reduce = xp.add.reduce
_STARTS: dict[tuple[int, int], Any] = {}


#: below this many elements NumPy's own reduction along the rows costs about what the
#: tricks of _max_along/_sum_along cost alone, and less inside a training step (measured
#: per step, interleaved: their second kernel and Python steps are not worth it there)
_SMALL_REDUCE = 512


def _max_along(x: Any, d: int) -> Any:
    """``x.max(axis=d, keepdims=True)`` (the same values: a max is exact). Along the last
    axis of a C-contiguous array it is ``maximum.reduceat`` over the flat rows, which NumPy
    runs 1.5-2 times faster than its reduction along short rows."""
    n = x.shape[-1] if x.ndim else 0
    if (d != x.ndim - 1 or n < 2 or x.size <= _SMALL_REDUCE
            or not x.flags.c_contiguous):
        return _max_reduce(x, d, None, None, True) if x.size else x.max(axis=d, keepdims=True)
    rows = x.size // n
    starts = _STARTS.get((rows, n))
    if starts is None:
        if len(_STARTS) >= 64:
            _STARTS.clear()
        starts = _STARTS[(rows, n)] = xp.arange(0, rows * n, n)
        starts.flags.writeable = False
    return xp.maximum.reduceat(x.reshape(-1), starts).reshape(x.shape[:-1] + (1,))


def _sum_along(x: Any, d: int) -> Any:
    """``x.sum(axis=d, keepdims=True)``; along the last axis of a float32/float64 array as a
    matrix-vector product (BLAS), several times faster than NumPy's row reduction for the
    short rows of a softmax (the summation order differs: results may differ in the last
    bit, as between any two libraries)."""
    n = x.shape[-1] if x.ndim else 0
    if (d != x.ndim - 1 or n < 2 or x.size <= _SMALL_REDUCE or x.dtype.char not in "fd"
            or not x.flags.c_contiguous):
        return _add_reduce(x, d, None, None, True)
    ones = _ONES.get((n, x.dtype.char))
    if ones is None:
        ones = _ONES[(n, x.dtype.char)] = xp.ones(n, dtype=x.dtype)
        ones.flags.writeable = False
    return xp.matmul(x, ones)[..., None]


def log_softmax_backward(g: Tensor, y: Tensor, dim: int) -> Tensor:
    """``g - exp(y) * sum(g, dim)`` in one op: log_softmax's backward given its output ``y``
    (torch's ``_log_softmax_backward_data``, a primitive with its own rule)."""
    ga = g._array
    if ga.ndim and ga.dtype == y._array.dtype:
        t = xp.exp(y._array)  # a fresh temporary: the other passes write into it
        t *= _sum_along(ga, dim)
        xp.subtract(ga, t, out=t)
    else:
        t = ga - xp.exp(y._array) * ga.sum(axis=(dim,) if ga.ndim else (), keepdims=True)
        if t.__class__ is not xp.ndarray:  # 0-d operands give NumPy scalars
            t = xp.asarray(t)
    if not _state.enabled or not (g.requires_grad or y.requires_grad):
        return _make(t)
    node = LogSoftmaxBackwardDataBackward0()
    node.dim = dim
    out = record(node, (g, y), t)
    node.save(g if y.requires_grad else None, y)
    return out


def _log_softmax_array(x: Any, d: int) -> Any:
    """``x - max - log(sum(exp(x - max)))`` along ``d`` (a slice whose max is +-inf or nan
    becomes all nan, as in torch: inf - inf)."""
    out = x - _max_along(x, d)  # fresh: the last pass subtracts the log-sum in place
    out -= xp.log(_sum_along(xp.exp(out), d))
    return out


@register("log_softmax", method=True)
def log_softmax(a: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``a - logsumexp(a, dim)``, computed stably."""
    if dtype is not None:
        a = a.to(dtype)
    x, d = _float_array(a, "log_softmax", dim)
    if x.ndim == 0:  # x - x - log(exp(0)): nan where x is not finite (inf - inf)
        out = xp.where(xp.isfinite(x), 0.0, math.nan).astype(x.dtype)
    elif x.size == 0:  # nothing to normalise (NumPy's max of an empty axis would raise)
        out = x.copy()
    elif x.dtype.kind == "V":  # bfloat16: in float32, rounded once (torch's kernel)
        out = quietly(_log_softmax_array, x.astype(xp.float32), d).astype(x.dtype)
    else:
        out = quietly(_log_softmax_array, x, d)
    if not needs_grad(a):
        return _make(out)
    node = LogSoftmaxBackward0()
    node.dim = d
    t = record(node, (a,), out)
    node.save(outputs=(t,))
    return t


# -- activations torch also has as Tensor methods ------------------------------------------------
def _within(a: Any, lambd: float) -> Any:
    """``-lambd <= a <= lambd`` (false at nan): where the shrinks' gradients are blocked."""
    out = xp.greater_equal(a, -lambd)
    out &= xp.less_equal(a, lambd)
    return out


@register("hardshrink", method=True)
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 on ``[-lambd, lambd]``, ``input`` elsewhere (``nn.functional.hardshrink``).

    Example:
        >>> import gradsum
        >>> gradsum.hardshrink(gradsum.tensor([-1.0, 0.2, 0.7])).tolist()
        [-1.0, 0.0, 0.699999988079071]
    """
    _check_floating(input, "hardshrink_cpu")
    x = input._array
    if x.dtype in _F32_F64 and x.ndim:
        # (x on the bits where kept, +0 elsewhere: |x| <= lambd is -lambd <= x <= lambd, nan
        # kept; the keep mask negated as int8 and widened with its sign, as threshold's)
        it = _INT_OF[x.dtype.itemsize]
        keep = xp.abs(x)
        keep = ~(keep <= lambd)
        k8 = keep.view(xp.int8)
        xp.negative(k8, out=k8)
        m = k8.astype(it)
        m &= x.view(it)
        out = m.view(x.dtype)
    else:
        out = xp.asarray(xp.where((x >= -lambd) & (x <= lambd), 0, x), dtype=x.dtype)
    # (torch's hardshrink_backward: 0 on [-lambd, lambd], else g; a nan x passes it)
    return _act(input, out, _Act(*_HARDSHRINK_NODES, None, blocked=lambda a: _within(a, lambd)))


class PreluKernelBackward0(Node):
    """torch's ``_prelu_kernel`` node (inputs ``input`` and the weight reshaped to broadcast
    over it): its rule is :func:`_prelu_kernel_backward`."""

    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        x, w = self.saved()
        gx, gw = _prelu_kernel_backward(g, x, w, self.needs(0), self.needs(1))
        if gw is not None:  # (torch's sum_to_size: a keepdim sum over the broadcast dims)
            axes = tuple(i for i, n in enumerate(w.shape) if n == 1 and gw.shape[i] != 1)
            if axes:
                gw = F.sum(gw, axes, keepdim=True)
        return gx, gw


class PreluKernelBackwardBackward0(Node):
    """The rule of :func:`_prelu_kernel_backward` (inputs ``g, x, w``; outputs the input's
    and the weight's gradients), torch's formulas with its ``x >= 0`` masks: ``g`` gets
    ``where(x >= 0, ggx, ggx w + ggw x)``, ``x`` gets ``where(x >= 0, 0, g ggw)`` and ``w``
    gets ``where(x >= 0, 0, g ggx)`` summed to ``w``'s shape."""

    __slots__ = ()
    num_outputs = 2

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads  # (a missing output gradient is a zero term: left out below)

    def backward(self, ggx: Tensor | None, ggw: Tensor | None
                 ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        g, x, w = self.saved()
        nonneg = _make(x._array >= 0)
        zero = _make(xp.zeros((), dtype=x._array.dtype))
        d_g = d_x = d_w = None
        if self.needs(0):
            neg = None
            if ggx is not None:
                neg = F.mul(ggx, w)
            if ggw is not None:
                gwx = F.mul(ggw, x)
                neg = gwx if neg is None else F.add(neg, gwx)
            d_g = F.where(nonneg, zero if ggx is None else ggx, neg)
            d_g = F.sum_to(d_g, g.shape) if tuple(d_g.shape) != tuple(g.shape) else d_g
        if self.needs(1):
            d_x = (F.zeros_like(x) if ggw is None
                   else F.where(nonneg, zero, F.mul(g, ggw)))
        if self.needs(2):
            d_w = (F.zeros_like(w) if ggx is None
                   else F.sum_to(F.where(nonneg, zero, F.mul(g, ggx)), w.shape))
        return d_g, d_x, d_w


def _prelu_kernel_backward(g: Tensor, x: Tensor, w: Tensor, nx: bool = True,
                           nw: bool = True) -> tuple[Tensor | None, Tensor | None]:
    """torch's ``_prelu_kernel_backward(g, x, w)``: ``(where(x > 0, g, w g),
    where(x > 0, 0, x g))`` (the second in the input's shape: the caller sums it to the
    weight's, as torch's ``sum_to_size``), one op with two outputs recorded with
    ``g, x, w`` as inputs (under ``create_graph`` both gradients require grad whenever one
    of them does)."""
    xa, ga, wa = x._array, g._array, w._array
    pos = xp.asarray(xa > 0)
    dt = xa.dtype
    # (selects on the bits, the values of NumPy's where: see note "Select, don't multiply";
    # select_grad takes the mask over, so it goes last)
    gx = xp.asarray(select(pos, ga, wa * ga), dtype=dt) if nx else None
    gw = (xp.asarray(select_grad(xp.asarray(xa * ga, dtype=dt), pos), dtype=dt) if nw
          else None)
    if not needs_grad(g, x, w):
        return (None if gx is None else _make(gx)), (None if gw is None else _make(gw))
    node = PreluKernelBackwardBackward0()
    outs = (None if gx is None else record(node, (g, x, w), gx, 0),
            None if gw is None else record(node, (g, x, w), gw, 1))
    node.save(g, x, w)
    return outs


@register("prelu", method=True)
@autocast_policy("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``input`` where positive, ``weight * input`` elsewhere; ``weight`` has one element or
    one per channel (dim 1).

    Example:
        >>> import gradsum
        >>> gradsum.prelu(gradsum.tensor([-2.0, 3.0]), gradsum.tensor([0.25])).tolist()
        [-0.5, 3.0]
    """
    # (torch's order of checks: dtypes, then the channel count, then the weight's ndim)
    if weight._array.dtype != input._array.dtype:
        raise RuntimeError(_messages.prelu_type_promoting(torch_name(input._array.dtype),
                                                     torch_name(weight._array.dtype)))
    nd = input._array.ndim
    if weight._array.size != 1:
        if nd == 0:
            raise RuntimeError(_messages.prelu_zero_dim_input())
        channels = input._array.shape[1] if nd >= 2 else 1
        if channels != weight._array.size:
            raise RuntimeError(_messages.prelu_channel_mismatch(weight._array.size, channels))
    if weight._array.ndim > 1:
        raise RuntimeError(_messages.prelu_weight_not_scalar_or_1d(weight._array.ndim))
    if not D.is_float_np(input._array.dtype):
        raise D.not_implemented("prelu_cpu", input._array.dtype, "Convert with .float().")
    w = weight
    if weight._array.ndim != nd:  # (torch: a view of the weight with the input's ndim)
        shape = [1] * nd
        if nd > 1:
            shape[1] = weight._array.size
        w = F.reshape(weight, tuple(shape))
    x, wa = input._array, w._array
    out = xp.asarray(select(xp.asarray(x > 0), x, wa * x), dtype=x.dtype)
    if not needs_grad(input, w):
        return _make(out)
    node = PreluKernelBackward0()
    res = record(node, (input, w), out)
    node.save(input, w)
    return res


# -- the nodes of nn.functional's activations: _Act (hardtanh ... celu), leaky_relu_, mish, glu
class LeakyReluBackward1(Node):
    """In-place ``leaky_relu_`` (torch's node): its rule reads the saved result, which says
    where the input was positive only for a non-negative slope; a negative slope raises at
    backward, as torch's ``leaky_relu_backward(..., self_is_result=True)`` does."""

    __slots__ = ("slope",)

    def backward(self, g: Tensor) -> Tensor:
        (res,) = self.saved()
        if self.slope < 0:
            raise RuntimeError(_messages.leaky_relu_inplace_negative_slope_backward())
        return leaky_relu_backward(g, res, self.slope)

class _Act:
    """An elementwise activation ``y = f(x)`` with torch's gradient rules: ``deriv`` maps the
    input array to ``f'(x)`` (torch's masks at the kinks and at nan), ``second(gg, g, x)`` is
    the gradient that the backward's output sends ``x`` (None: a piecewise-linear ``f``, whose
    backward sends ``x`` zeros). ``fwd``/``bwd`` are the node classes, named as torch's.
    ``rule(g, x)``, if given, is the whole backward ``g * f'(x)`` on two float32/float64
    arrays of one shape and dtype (a kernel's own faster formulation, with ``deriv``'s
    values bit for bit). ``blocked(x)``, given in place of a bool ``deriv``, is where the
    gradient does not pass (a fresh bool array: the negation of that ``deriv``, computed as
    such, which saves the two negations that ``~deriv(x)`` costs)."""

    __slots__ = ("blocked", "bwd", "deriv", "fwd", "rule", "scale", "second")

    def __init__(self, fwd: type[Node], bwd: type[Node], deriv: Any,
                 second: Any = None, scale: float = 1.0, rule: Any = None,
                 blocked: Any = None) -> None:
        self.fwd, self.bwd, self.deriv, self.second = fwd, bwd, deriv, second
        self.scale, self.rule, self.blocked = scale, rule, blocked

class _ActBackward(Node):
    """The node of an :class:`_Act` activation: its rule is :func:`_act_backward`, a primitive
    that takes the input too, as torch's ``<op>_backward`` kernels do. So under
    ``create_graph`` the gradient requires grad whenever the input does, even where ``f`` is
    piecewise linear (then ``x`` gets zeros from the double backward, not ``None``)."""

    __slots__ = ("act",)

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        return _act_backward(g, x, self.act)

class _ActBackwardBackward(Node):
    """The rule of :func:`_act_backward`: linear in ``g`` (its own adjoint), and ``x`` gets
    ``act.second`` (zeros for a piecewise-linear activation, as in torch)."""

    __slots__ = ("act",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        g, x = self.saved()
        act = self.act
        if act.second == "not implemented":  # (torch has no rule for it either)
            raise RuntimeError(
                _messages.activation_double_backward_not_implemented(_ACT_KERNELS[act.fwd.__name__])
            )
        d_g = _act_backward(gg, x, act) if self.needs(0) else None
        d_x = None
        if self.needs(1):
            d_x = F.zeros_like(gg) if act.second is None else act.second(gg, g, x)
        return d_g, d_x

def _act_nodes(name: str, bwd_name: str | None = None) -> tuple[type[Node], type[Node]]:
    """The node classes ``<name>Backward0`` and ``<bwd_name>BackwardBackward0``."""

    class Fwd(_ActBackward, name=f"{name}Backward0"):
        __slots__ = ()

    class Bwd(_ActBackwardBackward, name=f"{bwd_name or name}BackwardBackward0"):
        __slots__ = ()

    return Fwd, Bwd

def _act_backward(g: Tensor, x: Tensor, act: _Act) -> Tensor:
    """``g * f'(x)``, recorded with ``x`` as an input (see :class:`_ActBackward`). A bool
    ``deriv`` (a piecewise-linear ``f``) is where the gradient passes: torch's kernels select
    (``cond ? g : 0``), so an inf or nan ``g`` where it does not pass gives 0 (see note
    "Select, don't multiply" in ``ops/arithmetic.py``); a ``scale`` multiplies what passes."""
    ga, xa = g._array, x._array
    if (act.rule is not None and ga.dtype is xa.dtype and ga.dtype in _F32_F64
            and ga.shape == xa.shape and ga.ndim):
        out = act.rule(ga, xa)
    elif act.blocked is not None:
        out = select_grad(ga if act.scale == 1.0 else xp.asarray(ga * act.scale),
                          xp.asarray(act.blocked(xa)))
    elif (d := act.deriv(xa)).__class__ is tuple:  # (where it passes, the derivative there)
        out = select_grad(xp.asarray(ga * d[1].astype(ga.dtype, copy=False)), ~d[0])
    elif d.dtype.kind == "b":
        out = select_grad(ga if act.scale == 1.0 else xp.asarray(ga * act.scale), ~d)
    else:
        out = xp.asarray(ga * d.astype(ga.dtype, copy=False))
    if not needs_grad(g, x):
        return _make(out)
    node = act.bwd()
    node.act = act
    res = record(node, (g, x), out)
    node.save(g, x)
    return res

def _act(input: Tensor, out: Any, act: _Act) -> Tensor:
    """The output array ``out`` of the activation ``act`` of ``input``, recorded."""
    if not needs_grad(input):
        return _make(out)
    node = act.fwd()
    node.act = act
    res = record(node, (input,), out)
    node.save(input)
    return res

_ACT_KERNELS = {"HardsigmoidBackward0": "hardsigmoid"}

# (torch's CeluBackward0 has elu's double backward: EluBackwardBackward0)
(_HARDTANH_NODES, _THRESHOLD_NODES, _HARDSHRINK_NODES, _SOFTSHRINK_NODES, _HARDSIGMOID_NODES,
 _HARDSWISH_NODES, _ELU_NODES, _RRELU_NODES, _CELU_NODES, _LOGSIGMOID_NODES) = (
    _act_nodes(*names) for names in (
        ("Hardtanh",), ("Threshold",), ("Hardshrink",), ("Softshrink",), ("Hardsigmoid",),
        ("Hardswish",), ("Elu",), ("RreluWithNoise",), ("Celu", "Elu"), ("LogSigmoid",)))


# -- logsigmoid (nn.functional's; BinaryCrossEntropyWithLogitsBackward0's rule uses it) -------
def _logsigmoid_deriv(x: Any) -> Any:
    """torch's ``log_sigmoid_backward`` kernel: ``max_deriv - sign * z / (1 + z)`` with
    ``z = exp(-|x|)`` (``1 - sigmoid(x)``, computed stably)."""
    if x.dtype in _F32_F64 and x.ndim:
        # q = z / (1 + z); q where x >= 0, 1 - q where x < 0 (in x's dtype: 1 - q rounded
        # once, as in float64 and rounded), as q * (1 - 2m) + m for m = (x < 0) in 0 and 1
        z = _neg_abs(x)
        xp.exp(z, out=z)
        z /= z + 1
        m = (x < 0).astype(x.dtype)
        f = m * -2
        f += 1
        z *= f
        z += m
        return z
    neg = x < 0
    z = xp.exp(-xp.abs(x))
    return xp.where(neg, 1.0, 0.0) - xp.where(neg, 1.0, -1.0) * (z / (1 + z))


def _neg_abs(x: Any) -> Any:
    """``-|x|`` of a float32/float64 array in one pass: its bits with the sign bit set (the
    same bits as ``negative(abs(x))``, nan included)."""
    it = _INT_OF[x.dtype.itemsize]
    return xp.bitwise_or(x.view(it), xp.asarray(-0.0, dtype=x.dtype).view(it)).view(x.dtype)


def _logsigmoid_second(gg: Tensor, g: Tensor, x: Tensor) -> Tensor:
    """torch's ``log_sigmoid_double_backward(gg * g, x)``: ``gg * g * (s - 1) * s``."""
    s = sigmoid(x)
    return F.mul(F.mul(F.mul(gg, g), F.sub(s, 1.0)), s)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, one ``LogSigmoidBackward0`` node
    like torch's."""
    _check_floating(input, "log_sigmoid_cpu")
    x = input._array
    if x.dtype in _F32_F64 and x.ndim:  # (in place, the same operations)
        e = _neg_abs(x)
        xp.exp(e, out=e)
        xp.log1p(e, out=e)
        out = xp.minimum(x, 0)
        out -= e
    else:
        out = xp.asarray(xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x))), dtype=x.dtype)
    return _act(input, out, _Act(*_LOGSIGMOID_NODES, _logsigmoid_deriv, _logsigmoid_second))


class MishBackward0(Node):
    """``mish`` (torch's node); its rule is torch's ``infinitely_differentiable_mish_backward``
    in gradsum ops: ``g * (tsp + x * sigmoid(x) * (1 - tsp**2))``, ``tsp = tanh(softplus(x))``
    (so the gradient's ``grad_fn`` is a ``MulBackward0``, as torch's under ``create_graph``)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        if not _grad_state.enabled:  # (nothing to record: the same operations on arrays)
            (xa,) = self.saved_arrays()
            ga = g._array
            if ga.dtype is xa.dtype and xa.dtype in _F32_F64 and ga.shape == xa.shape and (
                    xa.ndim):
                tsp = _softplus_array(xa, 1.0, 20.0)
                xp.tanh(tsp, out=tsp)
                inner = _sigmoid_array(xa)
                inner *= xa
                one_m = tsp * tsp
                xp.subtract(1.0, one_m, out=one_m)
                inner *= one_m
                inner += tsp
                inner *= ga
                return _make(inner)
        (x,) = self.saved()
        tsp = F.tanh(F.softplus(x))
        inner = F.mul(F.mul(x, F.sigmoid(x)), F.rsub(F.mul(tsp, tsp), 1.0))
        return F.mul(g, F.add(tsp, inner))

class GluBackward0(Node):
    """``glu`` (torch's node): its rule is :func:`_glu_backward`."""

    __slots__ = ("dim",)

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        return _glu_backward(g, x, self.dim)

class GluBackwardBackward0(Node):
    """The rule of :func:`_glu_backward` (inputs ``g, x``), with ``s = sigmoid(b)``,
    ``s' = s (1 - s)`` and the incoming gradient's halves ``ga, gb``: ``g`` gets
    ``ga s + gb a s'``, ``a`` gets ``gb g s'`` and ``b`` gets
    ``ga g s' + gb g a s' (1 - 2 s)`` (torch's ``glu_double_backward``)."""

    __slots__ = ("dim",)

    def backward(self, gg: Tensor) -> tuple[Tensor | None, Tensor | None]:
        g, x = self.saved()
        d = self.dim
        h = x.shape[d] // 2
        a, b = F.narrow(x, d, 0, h), F.narrow(x, d, h, h)
        ga, gb = F.narrow(gg, d, 0, h), F.narrow(gg, d, h, h)
        s = F.sigmoid(b)
        ds = F.mul(s, F.rsub(s, 1.0))
        d_g = d_x = None
        if self.needs(0):
            d_g = F.add(F.mul(ga, s), F.mul(F.mul(gb, a), ds))
        if self.needs(1):
            gds = F.mul(g, ds)
            d_a = F.mul(gb, gds)
            d_b = F.add(F.mul(ga, gds),
                          F.mul(F.mul(F.mul(gb, a), gds), F.rsub(F.mul(s, 2.0), 1.0)))
            d_x = F.cat([d_a, d_b], d)
        return d_g, d_x

def _glu_backward(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """torch's ``glu_backward(g, x, dim)``: ``cat(g s, g a s (1 - s))`` along ``dim`` for the
    halves ``a, b`` of ``x`` and ``s = sigmoid(b)``, one op recorded with ``g, x`` as inputs."""
    xa, gaa = x._array, g._array
    h = xa.shape[dim] // 2
    a, b = xp.split(xa, [h], axis=dim)
    with xp.errstate(over="ignore"):
        s = 1.0 / (1.0 + xp.exp(-b))
    gs = gaa * s
    out = xp.asarray(xp.concatenate([gs, gs * a * (1 - s)], axis=dim), dtype=xa.dtype)
    if not needs_grad(g, x):
        return _make(out)
    node = GluBackwardBackward0()
    node.dim = dim
    res = record(node, (g, x), out)
    node.save(g, x)
    return res
