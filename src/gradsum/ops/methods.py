"""torch.Tensor's remaining everyday methods: the inverse hyperbolic functions, bit shifts,
``gcd``/``lcm``, ``ldexp``/``frexp``, the in-place comparisons, ``unfold`` (a view),
``put``, ``index_put`` with ``accumulate``, ``addr``, ``renorm``, ``mvlgamma``, ``cov`` and
``corrcoef``, ``histogram``, ``prelu``, ``narrow_copy``, ``unsafe_split`` and the small
predicates and identities of real tensors (``positive``, ``resolve_conj``, ``isreal``, ...).

Where torch has a node of its own (``AcoshBackward0``, ``LdexpBackward0``, ``AddrBackward0``,
``RenormBackward0``, ``UnfoldBackward0``, ``PutBackward0``, ...), gradsum has one with that
name, its backward written in gradsum ops (double backward works); where torch composes
(``cov`` ends in a ``SqueezeBackward0``, ``corrcoef`` in a ``ClampBackward1``), so does gradsum.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([2.0, 3.0], requires_grad=True)
    >>> y = gradsum.acosh(x)
    >>> y.grad_fn.name()
    'AcoshBackward0'
    >>> gradsum.arange(5.0).unfold(0, 2, 2).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state, no_grad
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops._core import (
    _make,
    binary_arrays,
    broadcast_error,
    mark_view,
    needs_grad,
    record,
    register,
    scalar_value,
    wrap_dim,
)
from gradsum.ops.elementwise import _unary, _unary_float, select, select_grad
from gradsum.ops.extra import _via64
from gradsum.ops.inplace import _check_leaf, _check_out_shape, _recording, _write, apply_inplace

__all__ = [
    "acosh", "addr", "adjoint", "angle", "arccosh", "arcsinh", "arctanh", "as_strided", "asinh",
    "atanh",
    "bitwise_left_shift", "bitwise_right_shift", "conj", "conj_physical", "corrcoef", "cov",
    "fix", "frexp", "gcd", "hardshrink", "histogram", "is_conj", "is_inference", "is_neg",
    "isneginf", "isposinf", "isreal", "lcm", "ldexp", "msort", "mvlgamma", "narrow_copy",
    "positive", "prelu", "put", "real", "renorm", "resolve_conj", "resolve_neg",
    "split_with_sizes", "unsafe_chunk", "unsafe_split",
]

frexp_result = namedtuple("frexp", ["mantissa", "exponent"])
histogram_result = namedtuple("histogram", ["hist", "bin_edges"])


def _linalg() -> Any:
    """The ``gradsum.linalg`` namespace (built after this module is imported)."""
    from gradsum.ops.more import linalg

    return linalg


def _tname(dt: Any) -> str:
    """torch's scalar-type name of a NumPy dtype (``Float``, ``Long``)."""
    return D._TORCH_SCALAR_NAMES.get(str(dt), str(dt))


def _tensor_arg(name: str, arg: str, pos: int, v: Any) -> Tensor:
    if not isinstance(v, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}. Wrap it with gradsum.tensor().")
    return v


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


@register("acosh", "arccosh")
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


@register("asinh", "arcsinh")
def asinh(input: Tensor) -> Tensor:
    """Inverse hyperbolic sine.

    Example:
        >>> import gradsum
        >>> gradsum.asinh(gradsum.tensor([0.0])).tolist()
        [0.0]
    """
    return _unary(input, _via64(xp.arcsinh, _unary_float(input)), AsinhBackward0, "input")


@register("atanh", "arctanh")
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
        raise NotImplementedError(f"the derivative for 'inplace version of {self.op}' is not "
                                  "implemented.")


class AcoshBackward1(_InplaceNotImplemented):
    __slots__ = ()
    op = "acosh"


class AsinhBackward1(_InplaceNotImplemented):
    __slots__ = ()
    op = "asinh"


class AtanhBackward1(_InplaceNotImplemented):
    __slots__ = ()
    op = "atanh"


def _inplace_form(fn: Callable[[Tensor], Tensor], node_cls: type[Node]
                  ) -> Callable[[Tensor], Tensor]:
    """The out-of-place op an in-place inverse hyperbolic function writes back: ``fn``'s
    value, recorded with torch's ``...Backward1`` node."""

    def op(input: Tensor) -> Tensor:
        with no_grad():
            out = fn(input)._array
        if not needs_grad(input):
            return _make(out)
        return record(node_cls(), (input,), out)

    return op


_acosh_inplace = _inplace_form(acosh, AcoshBackward1)
_asinh_inplace = _inplace_form(asinh, AsinhBackward1)
_atanh_inplace = _inplace_form(atanh, AtanhBackward1)


# -- integer ops: shifts, gcd, lcm --------------------------------------------------------------
def _int_binary(name: str, kernel: str, input: Any, other: Any) -> tuple[Any, Any]:
    """Both operands as arrays of their promoted dtype, which must be an integer one."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): expected at least one Tensor argument. Wrap one with "
                            "gradsum.tensor().")
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


@register("bitwise_left_shift")
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


@register("bitwise_right_shift")
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


@register("gcd")
def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor, elementwise (integers only; ``gcd(0, 0)`` is 0).

    Example:
        >>> import gradsum
        >>> gradsum.gcd(gradsum.tensor([4, -6]), gradsum.tensor([6, 0])).tolist()
        [2, 6]
    """
    _tensor_arg("gcd", "input", 1, input)
    _tensor_arg("gcd", "other", 2, other)
    x, y = _int_binary("gcd", "gcd_cpu", input, other)
    return _make(xp.asarray(xp.gcd(x, y), dtype=x.dtype))


@register("lcm")
def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple, elementwise (integers only).

    Example:
        >>> import gradsum
        >>> gradsum.lcm(gradsum.tensor([4, -6]), gradsum.tensor([6, 0])).tolist()
        [12, 0]
    """
    _tensor_arg("lcm", "input", 1, input)
    _tensor_arg("lcm", "other", 2, other)
    x, y = _int_binary("lcm", "lcm_cpu", input, other)
    return _make(xp.asarray(xp.lcm(x, y), dtype=x.dtype))


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


@register("ldexp")
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other`` in the promoted floating dtype.

    Example:
        >>> import gradsum
        >>> gradsum.ldexp(gradsum.tensor([1.0, 3.0]), gradsum.tensor([2, -1])).tolist()
        [4.0, 1.5]
    """
    input = _tensor_arg("ldexp", "input", 1, input)
    other = _tensor_arg("ldexp", "other", 2, other)
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


@register("frexp")
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
        raise RuntimeError("torch.frexp() only supports floating-point dtypes (got "
                           f"{_tname(x.dtype)}). Convert the input with .float() first.")
    m, e = xp.frexp(x)
    m, e = xp.asarray(m, dtype=x.dtype), xp.asarray(e, dtype=xp.int32)
    if not needs_grad(input):
        return frexp_result(_make(m), _make(e))
    node = FrexpBackward0()
    node.exponent = e
    node._saved = HOLDS_STATE
    return frexp_result(record(node, (input,), m), _make(e))


# -- predicates and identities of real tensors -----------------------------------------------
@register("isposinf")
def isposinf(input: Tensor) -> Tensor:
    """Where the values are ``+inf`` (bool; always False for integers).

    Example:
        >>> import gradsum
        >>> gradsum.isposinf(gradsum.tensor([1.0, float("inf"), -float("inf")])).tolist()
        [False, True, False]
    """
    x = input._array
    return _make(xp.isposinf(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, dtype=bool))


@register("isneginf")
def isneginf(input: Tensor) -> Tensor:
    """Where the values are ``-inf`` (bool; always False for integers).

    Example:
        >>> import gradsum
        >>> gradsum.isneginf(gradsum.tensor([1.0, -float("inf")])).tolist()
        [False, True]
    """
    x = input._array
    return _make(xp.isneginf(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, dtype=bool))


@register("isreal")
def isreal(input: Tensor) -> Tensor:
    """Where the values are real: everywhere, for gradsum's real dtypes.

    Example:
        >>> import gradsum
        >>> gradsum.isreal(gradsum.tensor([1.0, 2.0])).tolist()
        [True, True]
    """
    return _make(xp.ones(input._array.shape, dtype=bool))


def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (bool tensors raise, as torch's).

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0])
        >>> gradsum.positive(x) is x
        True
    """
    if input._array.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported. Convert the "
                           "tensor to an integer dtype first.")
    return input


def _identity(input: Tensor) -> Tensor:
    return input


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: the tensor itself for gradsum's real dtypes.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([1.0])
        >>> gradsum.conj(x) is x
        True
    """
    return input


conj_physical = resolve_conj = resolve_neg = real = conj


def is_conj(input: Tensor) -> bool:
    """Whether the conjugate bit is set: never, for real tensors."""
    return False


is_neg = is_conj


def is_inference(input: Tensor) -> bool:
    """Whether this is an inference tensor: never (gradsum's inference_mode is no_grad)."""
    return False


@register("fix")
def fix(input: Tensor) -> Tensor:
    """Alias of :func:`trunc`: rounds toward zero.

    Example:
        >>> import gradsum
        >>> gradsum.fix(gradsum.tensor([-1.5, 1.5])).tolist()
        [-1.0, 1.0]
    """
    return F.trunc(input)


@register("msort")
def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension (the values of ``sort(input, 0)``).

    Example:
        >>> import gradsum
        >>> gradsum.msort(gradsum.tensor([[3, 1], [2, 4]])).tolist()
        [[2, 1], [3, 4]]
    """
    return F.shape.as_node(F.sort(input, 0).values, F.shape.SortBackward0)


class AngleBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        self.saved()  # (torch saves the input: a second backward raises as torch's)
        return F.zeros_like(g)  # (a real tensor's angle is piecewise constant)


@register("angle")
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


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions: a transpose view for real tensors.

    Example:
        >>> import gradsum
        >>> gradsum.ones(2, 3).adjoint().shape
        (3, 2)
    """
    if input._array.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input._array.ndim}-D tensor.")
    return F.transpose(input, -2, -1)


# -- activations torch also has as Tensor methods ------------------------------------------------
@register("hardshrink")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 on ``[-lambd, lambd]``, ``input`` elsewhere (``nn.functional.hardshrink``).

    Example:
        >>> import gradsum
        >>> gradsum.hardshrink(gradsum.tensor([-1.0, 0.2, 0.7])).tolist()
        [-1.0, 0.0, 0.699999988079071]
    """
    from gradsum.nn import functional as NF

    return NF.hardshrink(input, lambd)


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


@register("prelu")
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
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_tname(input._array.dtype)} and {_tname(weight._array.dtype)} "
                           "(give the weight the input's dtype)")
    nd = input._array.ndim
    if weight._array.size != 1:
        if nd == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input._array.shape[1] if nd >= 2 else 1
        if channels != weight._array.size:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {weight._array.size} and channel size = {channels}.")
    if weight._array.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight._array.ndim}")
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


# -- addr ------------------------------------------------------------------------------------------
class AddrBackward0(Node):
    __slots__ = ("alpha", "beta", "in_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        v1, v2 = self.saved()
        gi = None
        if self.needs(0):
            gi = F.sum_to(g if self.beta == 1 else F.mul(g, self.beta), self.in_shape)
        g1 = F.mul(F.mv(g, v2), self.alpha) if self.needs(1) else None
        g2 = F.mul(F.mv(F.t(g), v1), self.alpha) if self.needs(2) else None
        return gi, g1, g2


@register("addr")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1
         ) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` broadcasts; with ``beta`` 0 it
    is ignored, nan included).

    Example:
        >>> import gradsum
        >>> gradsum.addr(gradsum.zeros(2, 2), gradsum.tensor([1.0, 2.0]),
        ...              gradsum.tensor([3.0, 4.0])).tolist()
        [[3.0, 4.0], [6.0, 8.0]]
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._array.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got "
                               f"{v._array.ndim}-D")
    rt = D.promote_types(D.promote_types(input.dtype, vec1.dtype), vec2.dtype).np
    if rt.kind in "biu":
        for name, s in (("beta", beta), ("alpha", alpha)):
            if isinstance(s, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be "
                                   "a floating point number.")
    shape = (vec1._array.shape[0], vec2._array.shape[0])
    x = input._array.astype(rt, copy=False)
    try:
        xb = xp.broadcast_to(x, shape)
    except ValueError:
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[1]}) must match the existing size "
            f"({x.shape[-1] if x.ndim else 1}) at non-singleton dimension {x.ndim - 1}.  Target "
            f"sizes: {list(shape)}.  Tensor sizes: {list(x.shape)}") from None
    o = xp.multiply.outer(vec1._array.astype(rt, copy=False), vec2._array.astype(rt, copy=False))
    if rt.kind == "b":
        out = (o & bool(alpha)) | (xb & bool(beta))
    else:
        out = o * alpha if alpha != 1 else o.copy()
        if beta != 0:
            out = out + (xb * beta if beta != 1 else xb)
    out = xp.asarray(out, dtype=rt)
    if not needs_grad(input, vec1, vec2):
        return _make(out)
    node = AddrBackward0()
    node.alpha, node.beta, node.in_shape = alpha, beta, input._array.shape
    res = record(node, (input, vec1, vec2), out)
    node.save(vec1, vec2)
    return res


# -- renorm, mvlgamma -----------------------------------------------------------------------------
def _norm_backward(gsum: Tensor, x: Tensor, p: float, norm: Tensor, dims: tuple[int, ...]
                   ) -> Tensor:
    """The gradient of ``vector_norm(x, p, dims, keepdim=True)`` for the incoming ``gsum``."""
    if p == 1:
        return F.mul(F.sign(x), gsum)
    if p == math.inf:
        mask = F.to_dtype(F.eq(F.abs(x), norm), x.dtype)
        return F.mul(F.div(F.mul(F.sign(x), mask), F.sum(mask, dims, True)), gsum)
    zero = _make(norm._array == 0)
    if p == 2:
        scaled = F.div(x, norm)
    else:
        scaled = F.div(F.mul(x, F.pow(F.abs(x), p - 2)), F.pow(norm, p - 1))
    return F.where(zero, F.zeros_like(x), F.mul(scaled, gsum))


class RenormBackward0(Node):
    __slots__ = ("dim", "maxnorm", "p")

    def backward(self, g: Tensor) -> Tensor:
        (x,) = self.saved()
        dims = tuple(d for d in range(x.ndim) if d != self.dim)
        norm = _linalg().vector_norm(x, self.p, dims, True)
        gsum = F.sum(F.mul(x, g), dims, True)
        nb = _norm_backward(gsum, x, self.p, norm, dims)
        inv = F.reciprocal(F.add(norm, 1e-7))
        factor = F.mul(inv, self.maxnorm)
        active = _make(norm._array > self.maxnorm)
        return F.where(active, F.sub(F.mul(factor, g), F.mul(F.mul(F.mul(inv, inv),
                                                                   self.maxnorm), nb)), g)


@register("renorm")
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` rescaled so that its ``p``-norm is at most ``maxnorm``.

    Example:
        >>> import gradsum
        >>> gradsum.renorm(gradsum.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0).tolist()
        [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    """
    x = input._array
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (got p={p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if x.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} "
                           "dimensions")
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_tname(x.dtype)}")
    d = wrap_dim(dim, x.ndim)
    dims = tuple(i for i in range(x.ndim) if i != d)
    a = xp.abs(x.astype(xp.float64))
    if p == math.inf:
        norm = a.max(axis=dims, keepdims=True, initial=0.0)
    else:
        norm = (a ** p).sum(axis=dims, keepdims=True) ** (1.0 / p)
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    out = xp.asarray(x * factor.astype(x.dtype), dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = RenormBackward0()
    node.p, node.dim, node.maxnorm = float(p), d, float(maxnorm)
    res = record(node, (input,), out)
    node.save(input)
    return res


class MvlgammaBackward0(Node):
    __slots__ = ("p",)

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        s = F.digamma(a)
        for j in range(1, self.p):
            s = F.add(s, F.digamma(F.sub(a, j / 2)))
        return F.mul(g, s)


@register("mvlgamma")
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``: ``sum_j lgamma(x - j / 2)``
    plus ``p (p - 1) / 4 log(pi)`` (torch no longer checks that the values exceed
    ``(p - 1) / 2``; below, ``lgamma`` is the log of ``|gamma|``).

    Example:
        >>> import gradsum
        >>> round(gradsum.mvlgamma(gradsum.tensor([2.5]), 2).item(), 4)
        0.857
    """
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got p={p})")
    x = _unary_float(input)
    with no_grad():
        t = _make(x)
        s = F.lgamma(t)._array.astype(xp.float64)
        for j in range(1, p):
            s = s + F.lgamma(_make(x - x.dtype.type(j / 2)))._array
    out = xp.asarray(s + p * (p - 1) / 4 * math.log(math.pi), dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = MvlgammaBackward0()
    node.p = int(p)
    res = record(node, (input,), out)
    node.save(input)
    return res


# -- unfold (a view), narrow_copy, split_with_sizes, unsafe_split --------------------------------
class UnfoldBackwardBackward0(Node):
    __slots__ = ("dim", "size", "step")

    def backward(self, g: Tensor) -> Tensor:
        return unfold(g, self.dim, self.size, self.step)


def _unfold_backward(g: Tensor, shape: tuple[int, ...], dim: int, size: int, step: int
                     ) -> Tensor:
    """Zeros of ``shape`` with every window of ``g`` added back where it was read."""
    ga = g._array
    out = xp.zeros(shape, dtype=ga.dtype)
    if out.ndim == 0:
        out = out + ga.reshape(())
    else:
        mv = xp.moveaxis(out, dim, -1)
        gw = xp.moveaxis(ga, dim, -2)  # (..., windows, size)
        for k in range(gw.shape[-2]):
            mv[..., k * step:k * step + size] += gw[..., k, :]
    if not (_state.enabled and g.requires_grad):
        return _make(out)
    node = UnfoldBackwardBackward0()
    node.dim, node.size, node.step = dim, size, step
    return record(node, (g,), out)


class UnfoldBackward0(Node):
    __slots__ = ("dim", "in_shape", "size", "step")

    def backward(self, g: Tensor) -> Tensor:
        return _unfold_backward(g, self.in_shape, self.dim, self.size, self.step)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every slice of length ``size`` along ``dimension``, ``step`` apart, as a
    new last dimension (``Tensor.unfold``).

    Example:
        >>> import gradsum
        >>> gradsum.arange(4.0).unfold(0, 2, 1).tolist()
        [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    x = input._array
    nd = x.ndim
    d = wrap_dim(dimension, nd)
    n = x.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if nd == 0:
        out = x.reshape(1)
    else:
        count = (n - size) // step + 1
        shape = x.shape[:d] + (count,) + x.shape[d + 1:] + (size,)
        st = x.strides
        strides = st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],)
        out = xp.lib.stride_tricks.as_strided(
            x, shape, strides, writeable=bool(x.flags.writeable and step >= size))

    def view_fn(b: Tensor) -> Tensor:
        return unfold(b, d, size, step)

    if not needs_grad(input):
        return mark_view(_make(out), input, view_fn if _state.enabled else None)
    node = UnfoldBackward0()
    node.dim, node.in_shape, node.size, node.step = d, x.shape, size, step
    return mark_view(record(node, (input,), out), input, view_fn)


class NarrowCopyBackward0(Node):
    __slots__ = ("dim", "in_shape", "start")

    def backward(self, g: Tensor) -> Tensor:
        from gradsum.ops.compose import slice_scatter

        z = F.zeros(self.in_shape, dtype=g.dtype)
        return slice_scatter(z, g, self.dim, self.start, self.start + g.shape[self.dim])


@register("narrow_copy")
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy (not a view) of :func:`narrow`'s slice.

    Example:
        >>> import gradsum
        >>> gradsum.narrow_copy(gradsum.arange(5), 0, 1, 2).tolist()
        [1, 2]
    """
    with no_grad():
        v = F.narrow(input, dim, start, length)
    out = v._array.copy()
    if not needs_grad(input):
        return _make(out)
    d = wrap_dim(dim, input._array.ndim)
    node = NarrowCopyBackward0()
    node.dim, node.in_shape = d, input._array.shape
    node.start = start + input._array.shape[d] if start < 0 else start
    return record(node, (input,), out)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0
                     ) -> tuple[Tensor, ...]:
    """Pieces of the given sizes along ``dim`` (they must add up to its length); views.

    Example:
        >>> import gradsum
        >>> [t.tolist() for t in gradsum.arange(3).split_with_sizes([1, 2])]
        [[0], [1, 2]]
    """
    if isinstance(split_sizes, int):
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 1) must be tuple "
                        "of ints, not int. Use split(input, size) for equal pieces.")
    return F.split(input, list(split_sizes), dim)


class UnsafeSplitBackward0(Node):
    __slots__ = ("_dtype", "_shapes", "dim", "in_shape", "num_outputs")

    def backward(self, *grads: Tensor | None) -> Tensor:
        parts = [g if g is not None else F.zeros(s, dtype=self._dtype)
                 for g, s in zip(grads, self._shapes)]
        return F.cat(parts, self.dim)

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads


def _unsafe_pieces(input: Tensor, pieces: tuple[Tensor, ...], dim: int) -> tuple[Tensor, ...]:
    """The pieces of a split as tensors that are not views (torch's ``unsafe_*``): they share
    memory with ``input`` but autograd does not track them as views."""
    arrays = [p._array for p in pieces]
    if not needs_grad(input):
        return tuple(_make(a) for a in arrays)
    node = UnsafeSplitBackward0()
    node.num_outputs = len(arrays)
    node.dim, node.in_shape = dim, input._array.shape
    node._shapes = [a.shape for a in arrays]
    node._dtype = input.dtype
    return tuple(record(node, (input,), a, i) for i, a in enumerate(arrays))


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`split` whose pieces autograd does not treat as views (torch's
    ``UnsafeSplitBackward0``): writing into one in place is allowed.

    Example:
        >>> import gradsum
        >>> [t.tolist() for t in gradsum.unsafe_split(gradsum.arange(3), 2)]
        [[0, 1], [2]]
    """
    with no_grad():
        pieces = F.split(input, split_size, dim)
    return _unsafe_pieces(input, pieces, wrap_dim(dim, input._array.ndim))


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """:func:`chunk` whose pieces autograd does not treat as views (see
    :func:`unsafe_split`).

    Example:
        >>> import gradsum
        >>> len(gradsum.unsafe_chunk(gradsum.arange(4), 2))
        2
    """
    with no_grad():
        pieces = F.chunk(input, chunks, dim)
    return _unsafe_pieces(input, pieces, wrap_dim(dim, input._array.ndim))


# -- put, index_put with accumulate ---------------------------------------------------------------
class PutBackward0(Node):
    __slots__ = ("accumulate", "index", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        idx = _make(self.index)
        gi = None
        if self.needs(0):
            gi = g if self.accumulate else put(g, idx, F.zeros(self.src_shape, dtype=g.dtype))
        gs = F.reshape(F.take(g, idx), self.src_shape) if self.needs(1) else None
        return gi, gs


@register("put")
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written (or, with ``accumulate``, added) at the
    flat positions ``index`` (negative counts from the end).

    Example:
        >>> import gradsum
        >>> gradsum.put(gradsum.zeros(2, 2), gradsum.tensor([0, 3, 3]),
        ...             gradsum.tensor([1.0, 2.0, 3.0]), accumulate=True).tolist()
        [[1.0, 0.0], [0.0, 5.0]]
    """
    x, i, s = input._array, index._array, source._array
    if i.dtype.kind not in "iu":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_tname(i.dtype)}")
    if s.dtype != x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname(x.dtype)} and source.dtype = "
                           f"{_tname(s.dtype)}")
    if i.size != s.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {s.size}, index.numel() = "
                         f"{i.size}")
    n = x.size
    flat_i = i.reshape(-1).astype(xp.int64)
    bad = (flat_i >= n) | (flat_i < -n)
    if bad.any():
        k = int(flat_i[bad][0])
        raise IndexError(f"out of range: tried to access index {k} on a tensor of {n} "
                         "elements.")
    flat_i = xp.where(flat_i < 0, flat_i + n, flat_i)
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        xp.add.at(flat, flat_i, s.reshape(-1))
    else:
        flat[flat_i] = s.reshape(-1)
    if not needs_grad(input, source):
        return _make(out)
    node = PutBackward0()
    node._saved = HOLDS_STATE
    node.accumulate, node.index, node.src_shape = bool(accumulate), flat_i, s.shape
    return record(node, (input, source), out)


class IndexPutBackward0(Node):
    """``index_put(..., accumulate=True)``: the input's gradient passes whole; the values'
    is the gradient read at the indices, summed back to their shape."""

    __slots__ = ("key", "value_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        gv = None
        if self.needs(1):
            gv = F.sum_to(F.getitem(g, self.key), self.value_shape)
        return (g if self.needs(0) else None), gv


def _index_put_accumulate(input: Tensor, key: tuple[Any, ...], values: Tensor) -> Tensor:
    x = input._array
    k = tuple(t._array if isinstance(t, Tensor) else t for t in key)
    parts: list[Any] = []
    for kk in k:
        if isinstance(kk, xp.ndarray) and kk.dtype.kind == "b":
            parts.extend(xp.nonzero(kk))
        else:
            parts.append(kk)
    kk_t = tuple(parts)
    v = values._array.astype(x.dtype, copy=False)
    out = x.copy()
    try:
        target_shape = out[kk_t].shape
        xp.add.at(out, kk_t, xp.broadcast_to(v, target_shape))
    except ValueError as e:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                           f"broadcast to indexing result ({e})") from None
    if not needs_grad(input, values):
        return _make(out)
    node = IndexPutBackward0()
    node._saved = HOLDS_STATE
    node.key = tuple(_make(a) if isinstance(a, xp.ndarray) else a for a in kk_t)
    node.value_shape = v.shape
    return record(node, (input, values), out)


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """``Tensor.index_put``: a copy with ``values`` written at ``input[indices]`` (a tuple of
    index tensors); ``accumulate`` adds instead, repeated indices adding up.

    Example:
        >>> import gradsum
        >>> x = gradsum.zeros(3)
        >>> x.index_put((gradsum.tensor([0, 0]),), gradsum.tensor(1.0), accumulate=True).tolist()
        [2.0, 0.0, 0.0]
    """
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' (position 1) must be tuple of "
                        f"Tensors, not {type(indices).__name__}. Pass (index,).")
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}. Wrap it with gradsum.tensor().")
    if values._array.dtype != input._array.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_tname(input._array.dtype)} for the destination and "
                           f"{_tname(values._array.dtype)} for the source.")
    key = tuple(indices)
    if accumulate:
        return _index_put_accumulate(input, key, values)
    return F.index_put(input, key, values)


# -- cov, corrcoef, histogram ---------------------------------------------------------------------
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), with optional frequency and analytic weights, as ``torch.cov``.

    Example:
        >>> import gradsum
        >>> gradsum.cov(gradsum.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = input._array
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {x.ndim} dimensions")
    if x.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    inp = F.reshape(input, (1, -1)) if x.ndim < 2 else input
    n_obs = inp._array.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        fw = fweights._array
        if fw.ndim > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but "
                               f"got fweights with {fw.ndim} dimensions")
        if fw.dtype.kind not in "iu":
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {_tname(fw.dtype)} dtype")
        if fw.size != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are "
                               f"observations in the input but got {fw.size} != {n_obs}")
        if n_obs and fw.min() < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        aw = aweights._array
        if aw.ndim > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but "
                               f"got aweights with {aw.ndim} dimensions")
        if aw.dtype.kind not in "fV":
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_tname(aw.dtype)} dtype")
        if aw.size != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are "
                               f"observations in the input but got {aw.size} != {n_obs}")
        if n_obs and aw.min() < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else F.mul(w, aweights)
    if w is None:
        w_sum: Tensor = _make(xp.asarray(n_obs, dtype=xp.int64))
    else:
        w_sum = F.sum(w)
        if w_sum.item() == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = F.div(F.sum(inp if w is None else F.mul(inp, w), 1), w_sum)
    if w is not None and correction != 0:
        if aweights is None:
            norm_factor = F.sub(w_sum, correction)
        else:
            norm_factor = F.sub(w_sum, F.div(F.mul(F.sum(F.mul(w, aweights)), correction),
                                             w_sum))
    else:
        norm_factor = F.sub(w_sum, correction)
    if norm_factor.item() <= 0:
        import warnings

        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor = F.zeros_like(norm_factor)
    centered = F.sub(inp, F.unsqueeze(avg, 1))
    c = F.mm(centered, F.t(centered if w is None else F.mul(centered, w)))
    return F.squeeze(F.div(c, norm_factor))


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input`` (clipped to
    ``[-1, 1]``), as ``torch.corrcoef``.

    Example:
        >>> import gradsum
        >>> gradsum.corrcoef(gradsum.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    if input._array.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input._array.ndim} dimensions")
    c = cov(input)
    if c._array.ndim == 0:
        return F.div(c, c)
    std = F.sqrt(F.diagonal(c))
    c = F.div(c, F.reshape(std, (-1, 1)))
    c = F.div(c, F.reshape(std, (1, -1)))
    return F.clamp(c, -1, 1)


def histogram(input: Tensor, bins: Any = 100, *, range: Sequence[float] | None = None,
              weight: Tensor | None = None, density: bool = False) -> Any:
    """``(hist, bin_edges)``: counts (or summed weights, or a density) of ``input`` in
    ``bins`` equal bins over ``range`` (default: the data's), or in the bins given by a
    tensor of edges. Not differentiable.

    Example:
        >>> import gradsum
        >>> h, e = gradsum.histogram(gradsum.tensor([1.0, 2.0, 1.0]), bins=4)
        >>> h.tolist(), e.tolist()
        ([2.0, 0.0, 0.0, 1.0], [1.0, 1.25, 1.5, 1.75, 2.0])
    """
    x = input._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented("histogramdd", x.dtype, "Convert the input with .float().")
    if isinstance(bins, Tensor):
        edges = bins._array
        if edges.ndim != 1:
            raise RuntimeError(f"torch.histogramdd(): bins tensor should have one dimension, "
                               f"but got {edges.ndim} dimensions in the bin tensor")
        edges_in: Any = edges.astype(xp.float64)
    else:
        if int(bins) <= 0:
            raise RuntimeError(f"torch.histogramdd(): number of bins in dimension 0 should "
                               f"be greater than 0, but got {bins}")
        edges_in = int(bins)
    w = None if weight is None else weight._array.astype(xp.float64).reshape(-1)
    if w is not None and weight is not None and weight._array.shape != x.shape:
        raise RuntimeError("torch.histogramdd(): if weight tensor is provided it should have "
                           "the same shape as the input tensor excluding its innermost "
                           f"dimension, but got input with shape {list(x.shape)} and weight "
                           f"with shape {list(weight._array.shape)}")
    rng = None if range is None else (float(range[0]), float(range[1]))
    if rng is not None and rng[0] > rng[1]:
        raise RuntimeError(f"torch.histogramdd(): for dimension 0, left edge ({rng[0]}) must "
                           f"be <= right edge ({rng[1]})")
    h, e = xp.histogram(x.reshape(-1).astype(xp.float64), edges_in, range=rng, weights=w,
                        density=density)
    return histogram_result(_make(xp.asarray(h, dtype=x.dtype)),
                            _make(xp.asarray(e, dtype=x.dtype)))


# -- in-place forms -------------------------------------------------------------------------------
class _CmpBackward(Node):
    """An in-place comparison (``eq_``, ...): torch records it with a zero gradient."""

    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        return tuple(F.zeros(s, dtype=g.dtype) if self.needs(i) else None
                     for i, s in enumerate(self.shapes))


_CMP_NODES: dict[str, tuple[type[Node], type[Node]]] = {
    name: (type(f"{name}Backward0", (_CmpBackward,), {"__slots__": ()}),
           type(f"{name}Backward1", (_CmpBackward,), {"__slots__": ()}))
    for name in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge")
}


def _cmp_inplace(name: str, op: Callable[..., Tensor], node: str) -> Callable[..., Tensor]:
    """``t.eq_(other)`` and its kin: ``t`` holds the comparison's result in its own dtype;
    recorded (a zero gradient) when ``t`` or ``other`` requires grad."""
    scalar_node, tensor_node = _CMP_NODES[node]

    def method(self: Tensor, other: Any) -> Tensor:
        _check_leaf(self, name)
        if isinstance(other, Tensor):
            _check_out_shape(self._array.shape, other._array.shape, name)

        def fn(old: Tensor) -> Tensor:
            out = op(old, other)._array.astype(self._array.dtype)
            if not needs_grad(old, other):
                return _make(out)
            if isinstance(other, Tensor):
                n: Node = tensor_node()
                n.shapes = (old._array.shape, other._array.shape)
                return record(n, (old, other), out)
            n = scalar_node()
            n.shapes = (old._array.shape,)
            return record(n, (old,), out)

        if _recording(self, other):
            return apply_inplace(self, name, fn, other)
        _write(self, fn(self.detach())._array, name)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: the result (0/1) in this tensor's dtype."
    return method


def _untracked_inplace(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """An in-place op torch gives no derivative: written and versioned, history kept (torch
    lets it run on a leaf that requires grad too)."""

    def method(self: Tensor, *args: Any) -> Tensor:
        res = op(self, *args)._array
        _check_out_shape(self._array.shape, res.shape, name)
        if not D.can_cast(D.from_numpy_dtype(res.dtype), self.dtype):
            from gradsum.autograd import _messages

            raise RuntimeError(_messages.cast_inplace(_tname(res.dtype), self.dtype.name, name))
        _write(self, res, name)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: writes into this tensor, bumps its version."
    return method


def _no_grad_check(self: Tensor, name: str) -> None:
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element by ``callable(element)``, in place (slow: one Python call per
    element; refused on a tensor that requires grad).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 2]).apply_(lambda v: v * 10).tolist()
        [10, 20]
    """
    _no_grad_check(self, "apply_")
    x = self._array
    flat = [callable(v) for v in x.reshape(-1).tolist()]
    x[...] = xp.asarray(flat, dtype=x.dtype).reshape(x.shape) if flat else x
    return self


def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Replace each element ``a`` by ``callable(a, b)``, ``b`` from ``tensor`` (broadcast to
    this tensor's shape), in place.

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 2]).map_(gradsum.tensor([3, 4]), lambda a, b: a * b).tolist()
        [3, 8]
    """
    _no_grad_check(self, "map_")
    x = self._array
    try:
        y = xp.broadcast_to(tensor._array, x.shape)
    except ValueError:
        raise broadcast_error(x, tensor._array) from None
    flat = [callable(a, b) for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist())]
    x[...] = xp.asarray(flat, dtype=x.dtype).reshape(x.shape) if flat else x
    return self


def resize_(self: Tensor, *sizes: Any) -> Tensor:
    """Give this tensor the shape ``sizes`` in place: the first elements (in memory order)
    are kept, new ones are zero (torch's are uninitialised); refused when it requires grad.

    Example:
        >>> import gradsum
        >>> gradsum.arange(6).resize_(2, 2).tolist()
        [[0, 1], [2, 3]]
    """
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    shape = tuple(int(s) for s in sizes)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    x = self._array
    if shape == x.shape:
        return self
    n = math.prod(shape)
    flat = x.reshape(-1) if x.flags.c_contiguous else xp.ascontiguousarray(x).reshape(-1)
    if n <= flat.size and x.flags.c_contiguous:
        self._array = flat[:n].reshape(shape)  # (same memory: views of it still alias it)
    else:
        new = xp.zeros(n, dtype=x.dtype)
        k = min(n, flat.size)
        new[:k] = flat[:k]
        self._array = new.reshape(shape)
    self._vc[0] += 1
    return self


def resize_as_(self: Tensor, the_template: Tensor) -> Tensor:
    """:meth:`resize_` to ``the_template``'s shape.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(4).resize_as_(gradsum.zeros(2, 2)).shape
        (2, 2)
    """
    return resize_(self, the_template._array.shape)


# -- random fills ---------------------------------------------------------------------------------
def _fill_random(self: Tensor, name: str, arr: Any) -> Tensor:
    _check_leaf(self, name)
    _write(self, arr.astype(self._array.dtype), name)
    return self


def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill in place with draws of a geometric distribution (trials to the first success,
    ``1, 2, ...``).

    Example:
        >>> import gradsum
        >>> bool((gradsum.zeros(5).geometric_(0.5) >= 1).all())
        True
    """
    from gradsum import _random

    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill_random(self, "geometric_",
                        _random.rng(generator).geometric(p, self._array.shape))


def _float_fill_check(self: Tensor, kernel: str) -> None:
    if self._array.dtype.kind not in "fV":
        raise D.not_implemented(kernel, self._array.dtype, "Convert with .float() first.")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None
            ) -> Tensor:
    """Fill in place with draws of a Cauchy distribution.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(3).cauchy_().shape
        (3,)
    """
    from gradsum import _random

    if self._array.dtype.kind not in "fV":
        given = {"int64": "long int", "int32": "int", "int16": "short int",
                 "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {given.get(str(self._array.dtype), 'int')}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    r = _random.rng(generator)
    return _fill_random(self, "cauchy_", median + sigma * r.standard_cauchy(self._array.shape))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None
                ) -> Tensor:
    """Fill in place with ``exp`` of normal draws (``mean``, ``std``).

    Example:
        >>> import gradsum
        >>> bool((gradsum.zeros(3).log_normal_() > 0).all())
        True
    """
    from gradsum import _random

    _float_fill_check(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    r = _random.rng(generator)
    return _fill_random(self, "log_normal_", r.lognormal(mean, std, self._array.shape))


# -- linalg method forms ---------------------------------------------------------------------------
def _qr_method(self: Tensor, some: bool = True) -> Any:
    """``t.qr(some)``: ``linalg.qr(t, 'reduced' if some else 'complete')``."""
    return _linalg().qr(self, "reduced" if some else "complete")


_REMOVED = {
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`.",
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.",
    "eig": "`torch.linalg.eig` returns complex tensors; use torch.linalg.eig.",
    "symeig": "Use `torch.linalg.eigh` instead.",
}


def _removed(name: str) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now "
                           f"removed. {_REMOVED[name]}")

    method.__name__ = name
    method.__doc__ = f"Removed in torch 1.9: raises, as torch's ``Tensor.{name}``."
    return method


# -- memory introspection --------------------------------------------------------------------------
def _root(a: Any) -> Any:
    """The array that owns the memory ``a`` looks at (the end of its ``.base`` chain)."""
    while True:
        b = a.base
        if not isinstance(b, xp.ndarray):  # (as_strided's interface holder keeps its array)
            b = getattr(b, "base", None)
            if not isinstance(b, xp.ndarray):
                return a
        a = b


def data_ptr(self: Tensor) -> int:
    """The address of the tensor's first element.

    Example:
        >>> import gradsum
        >>> x = gradsum.zeros(4)
        >>> x[1:].data_ptr() - x.data_ptr()
        4
    """
    return int(self._array.__array_interface__["data"][0])


def storage_offset(self: Tensor) -> int:
    """The offset, in elements, of the first element in the memory the tensor views.

    Example:
        >>> import gradsum
        >>> gradsum.arange(6)[2:].storage_offset()
        2
    """
    a = self._array
    r = _root(a)
    diff = a.__array_interface__["data"][0] - r.__array_interface__["data"][0]
    return int(diff // a.itemsize) if a.itemsize else 0


def get_device(self: Tensor) -> int:
    """The CUDA device index: -1 for a CPU tensor (always, in gradsum)."""
    return -1


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether the tensor lives in pinned memory: never, in gradsum."""
    return False


def is_shared(self: Tensor) -> bool:
    """Whether the tensor lives in shared memory: never, in gradsum."""
    return False


def _no_overlap(name: str, method: Callable[..., Tensor], pos: int, kw: str
                ) -> Callable[..., Tensor]:
    """``method`` after torch's ``assert_no_overlap`` between the tensor written and the
    source operand (argument ``pos``, or keyword ``kw``): any shared element raises."""
    from gradsum.ops.inplace import _check_overlap

    def wrapped(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _check_leaf(self, name)  # (torch's order: the leaf check comes first)
        src = kwargs.get(kw, args[pos] if len(args) > pos else None)
        if isinstance(src, Tensor):
            _check_overlap(self._array, src._array, name, full_too=True)
        return method(self, *args, **kwargs)

    wrapped.__name__ = name
    wrapped.__doc__ = method.__doc__
    return wrapped


# -- as_strided (a view of the storage with explicit sizes, strides and offset) -------------------
def _geometry_indices(size: Sequence[int], stride: Sequence[int], offset: int) -> Any:
    """The storage index of every element of a ``(size, stride, offset)`` view (int64)."""
    idx = xp.full(tuple(size), offset, dtype=xp.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (xp.arange(n, dtype=xp.int64) * st).reshape(shape)
    return idx


def _as_strided_backward(g: Tensor, in_geom: tuple[Any, ...], out_geom: tuple[Any, ...]
                         ) -> Tensor:
    """torch's ``as_strided_backward``: ``g`` added (overlapping windows too) into zeros over
    the storage both geometries cover, divided where the input's own elements share memory,
    then read back with the input's geometry. Written in gradsum ops (put/take): linear in
    ``g``, so double backward works."""
    in_size = in_geom[0]
    if not (_state.enabled and g.requires_grad):
        fast = _as_strided_backward_array(g._array, in_geom, out_geom)
        if fast is not None:
            return _make(fast)
    inp = _geometry_indices(*in_geom)
    outp = _geometry_indices(*out_geom)
    if inp.size == 0 or outp.size == 0:
        return F.zeros(in_size, dtype=g.dtype)
    lo = int(min(inp.min(), outp.min()))
    hi = int(max(inp.max(), outp.max())) + 1
    buf = F.zeros(hi - lo, dtype=g.dtype)
    buf = put(buf, _make(outp - lo), g, accumulate=True)
    count = xp.bincount((inp - lo).reshape(-1), minlength=hi - lo)
    if count.max() > 1:
        inv = xp.where(count > 0, 1.0 / xp.maximum(count, 1), 0.0).astype(g._array.dtype)
        buf = buf * _make(inv)
    return F.take(buf, _make(inp - lo))


def _overlap_free(size: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether no two elements of a ``(size, stride)`` geometry share a storage index."""
    reach = 0  # (the largest offset the inner dimensions reach)
    for st, n in sorted((st, n) for n, st in zip(size, stride) if n != 1):
        if st <= reach:
            return False
        reach += (n - 1) * st
    return True


def _strided(buf: Any, geom: tuple[Any, ...], lo: int) -> Any:
    size, stride, off = geom
    return xp.lib.stride_tricks.as_strided(
        buf[off - lo:], shape=tuple(size), strides=tuple(st * buf.itemsize for st in stride))


def _as_strided_backward_array(g: Any, in_geom: tuple[Any, ...], out_geom: tuple[Any, ...]
                               ) -> Any:
    """:func:`_as_strided_backward` without a graph, as strided adds into the storage buffer,
    where that gives the same sums in the same order: the input's elements share no memory
    (nothing to divide), and the output's windows are added one slice at a time along a
    leading run of dimensions (the order ``put`` adds them in), or along one dimension of 2
    (a sum of two, in either order), the rest free of overlap; None otherwise."""
    (in_size, in_stride, in_off), (size, stride, off) = in_geom, out_geom
    if not all(in_size) or not all(size) or not _overlap_free(in_size, in_stride):
        return None
    nd = len(size)
    loop: tuple[int, ...] | None = None
    if _overlap_free(size, stride):
        loop = ()
    else:
        for d in range(nd):
            if size[d] == 2 and _overlap_free(size[:d] + size[d + 1:],
                                              stride[:d] + stride[d + 1:]):
                loop = (d,)
                break
        else:
            count = 1
            for k in range(1, nd):
                count *= size[k - 1]
                if count > 64:
                    break
                if _overlap_free(size[k:], stride[k:]):
                    loop = tuple(range(k))
                    break
    if loop is None:
        return None
    lo = min(in_off, off)
    hi = max(in_off + sum((n - 1) * st for n, st in zip(in_size, in_stride)),
             off + sum((n - 1) * st for n, st in zip(size, stride))) + 1
    buf = xp.zeros(hi - lo, dtype=g.dtype)
    view = _strided(buf, out_geom, lo)
    if not loop:
        view += g  # (0 + g, as put's sums: a -0 becomes +0)
    else:
        keys = [(slice(None),) * nd]
        for d in loop:
            keys = [k[:d] + (i,) + k[d + 1:] for k in keys for i in range(size[d])]
        for k in keys:
            view[k] += g[k]
    return xp.ascontiguousarray(_strided(buf, in_geom, lo))


class AsStridedBackward0(Node):
    __slots__ = ("in_geom", "out_geom")

    def backward(self, g: Tensor) -> Tensor:
        return _as_strided_backward(g, self.in_geom, self.out_geom)


def _int_list(name: str, arg: str, pos: int, v: Any) -> tuple[int, ...]:
    if isinstance(v, Tensor) or not isinstance(v, (tuple, list)):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(v).__name__}")
    return tuple(int(s) for s in v)


@register("as_strided")
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes and strides (in elements), starting
    ``storage_offset`` elements into the storage (default: ``input``'s own offset). Windows
    may overlap; the gradient adds up where they do.

    Example:
        >>> import gradsum
        >>> gradsum.arange(5.0).as_strided((3, 2), (1, 1)).tolist()
        [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    input = _tensor_arg("as_strided", "input", 0, input)
    size = _int_list("as_strided", "size", 1, size)
    stride = _int_list("as_strided", "stride", 2, stride)
    x = input._array
    item = x.itemsize
    in_off = _storage_offset_of(x)
    off = in_off if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: [{', '.join(map(str, stride))}]")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes="
                           f"[{', '.join(map(str, size))}] and strides="
                           f"[{', '.join(map(str, stride))}]")
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    root = _root(x)
    storage_bytes = int(root.nbytes)
    if all(size):
        need = item * (off + 1 + sum((n - 1) * s for n, s in zip(size, stride)))
    else:
        need = 0
    if need > storage_bytes:
        raise RuntimeError(f"setStorage: sizes [{', '.join(map(str, size))}], strides "
                           f"[{', '.join(map(str, stride))}], storage offset {off}, and "
                           f"itemsize {item} requiring a storage size of {need} are out of "
                           f"bounds for storage of size {storage_bytes}")
    interface = dict(x.__array_interface__)
    base_ptr = int(root.__array_interface__["data"][0])
    interface["data"] = (base_ptr + off * item, not x.flags.writeable)
    interface["shape"] = size
    interface["strides"] = tuple(s * item for s in stride)
    interface.pop("offset", None)
    interface.pop("mask", None)
    # (numpy.lib.stride_tricks.as_strided's own construction, from the storage's start
    # rather than from ``x``'s first element)
    out = xp.asarray(_Interface(interface, x))
    if x.flags.writeable and any(s == 0 and n > 1 for n, s in zip(size, stride)):
        out.flags.writeable = False  # (shared elements: in-place ops raise, as in torch)
    delta = off - in_off

    def view_fn(b: Tensor) -> Tensor:
        return as_strided(b, size, stride, _storage_offset_of(b._array) + delta)

    if not needs_grad(input):
        return mark_view(_make(out), input, view_fn if _state.enabled else None)
    node = AsStridedBackward0()
    in_stride = tuple(s // item for s in x.strides) if item else (0,) * x.ndim
    node.in_geom = (x.shape, in_stride, in_off)
    node.out_geom = (size, stride, off)
    return mark_view(record(node, (input,), out), input, view_fn)


class _Interface:
    """An ``__array_interface__`` holder that keeps the array it looks into alive."""

    def __init__(self, interface: dict[str, Any], base: Any) -> None:
        self.__array_interface__ = interface
        self.base = base


def _storage_offset_of(a: Any) -> int:
    r = _root(a)
    diff = a.__array_interface__["data"][0] - r.__array_interface__["data"][0]
    return int(diff // a.itemsize) if a.itemsize else 0
