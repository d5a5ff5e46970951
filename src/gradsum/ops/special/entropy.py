"""The ``x log y`` family: ``xlogy``, ``xlog1py`` and ``entr`` (``-x log x``).

Example:
    >>> import gradsum
    >>> gradsum.xlogy(gradsum.tensor([0.0, 2.0]), gradsum.tensor([0.0, 1.0])).tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops._core import (
    _make,
    needs_grad,
    record,
    register,
    require_tensor,
    scalar_value,
)
from gradsum.ops.arithmetic import _ERR, _bcast, _unary, _unary_float
from gradsum.ops.pointwise import _masked_zero, _promoted_float, _record2


class XlogyBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        ga = gb = None
        if self.needs(0):  # torch: xlogy(grad, other), 0 where self == 0 and other <= 0
            ga = F.sum_to(_masked_zero(xlogy(g, b), (a._array == 0) & (b._array <= 0)),
                         self.shapes[0])
        if self.needs(1):
            gb = F.sum_to(F.div(F.mul(g, a), b), self.shapes[1])
        return ga, gb


class XlogyBackward1(Node):
    """``xlogy(number, tensor)``: the number is kept (torch saves it as a scalar)."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (b,) = self.saved()
        return F.sum_to(F.div(F.mul(g, self.value), b), self.shapes[1])


class XlogyBackward2(Node):
    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        mask = (a._array == 0) & (self.value <= 0)
        return F.sum_to(_masked_zero(xlogy(g, self.value), mask), self.shapes[0])


def _xlogy_array(x: Any, y: Any) -> Any:
    with xp.errstate(**_ERR):
        out = xp.where(x == 0, 0.0, x * xp.log(y))
        return xp.where(xp.isnan(y), xp.nan, out)


@register("xlogy", method=True, inplace="xlogy_")
def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is nan); either
    operand may be a number. The gradient for ``input`` is ``log(other)`` where ``input`` is
    finite, and 0 where ``input`` is 0 and ``other <= 0``, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.xlogy(gradsum.tensor([0.0, 2.0]), gradsum.tensor([0.0, 1.0])).tolist()
        [0.0, 0.0]
    """
    return xlog_op("xlogy", input, other, _xlogy_array,
                   (XlogyBackward0, XlogyBackward1, XlogyBackward2))


def xlog_op(name: str, input: Any, other: Any, array_fn: Any,
            nodes: tuple[type[Node], type[Node], type[Node]]) -> Tensor:
    """The dispatch of ``xlogy``-like ops (``x * log(...y...)``, computed by ``array_fn``):
    number and tensor (``nodes[1]``, the tensor's gradient only), tensor and tensor
    (``nodes[0]``), tensor and number (``nodes[2]``), with torch's promotion to a float."""
    if not isinstance(input, Tensor):
        require_tensor(name, "other", 2, other)
        rt = D.result_type(other, input).np
        if rt.kind not in "fV":
            rt = D.get_default_dtype().np
        y = other._array.astype(rt, copy=False)
        v = scalar_value(input)
        out = xp.asarray(array_fn(xp.asarray(v, dtype=rt), y)).astype(rt, copy=False)
        if not needs_grad(other):
            return _make(out)
        node1 = nodes[1]()
        node1.shapes, node1.value = ((), y.shape), v  # type: ignore[attr-defined]
        t = record(node1, (other,), out)
        node1.save(other)
        return t
    x, y, yt = _promoted_float(name, input, other)
    out = _bcast(array_fn(x, y), x, y)
    if not needs_grad(input, other):
        return _make(out)
    if yt:
        return _record2(nodes[0](), input, other, out, x, y, (input, other))
    node2 = nodes[2]()
    node2.shapes, node2.value = (x.shape, ()), scalar_value(other)  # type: ignore[attr-defined]
    t = record(node2, (input,), out)
    node2.save(input)
    return t


def _entr_array(x: Any) -> Any:
    with xp.errstate(**_ERR):
        out = xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1)), 0)
        out = xp.where(x < 0, -xp.inf, out)
        return xp.where(xp.isnan(x), xp.nan, out).astype(x.dtype, copy=False)


# == unary differentiable ops ==================================================================
class SpecialEntrBackward0(Node):
    __slots__ = ()

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return F.mul(g, F.neg(F.add(F.log(a), 1)))


@register("special_entr")
def entr(input: Tensor) -> Tensor:
    """The elementwise entropy ``-x log x`` (0 at 0, ``-inf`` below 0).

    Example:
        >>> import gradsum
        >>> gradsum.special.entr(gradsum.tensor([0.0, 0.5, -1.0])).tolist()
        [0.0, 0.3465735912322998, -inf]
    """
    require_tensor("special_entr", "input", 1, input)
    x = _unary_float(input)
    return _unary(input, _entr_array(x), SpecialEntrBackward0, "input")


# == binary differentiable ops =================================================================
class SpecialXlog1PyBackward0(Node):
    __slots__ = ("shapes",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        ga = gb = None
        if self.needs(0):
            ga = F.sum_to(_masked_zero(xlog1py(g, b), (a._array == 0) & (b._array <= -1)),
                         self.shapes[0])
        if self.needs(1):
            gb = F.sum_to(F.div(F.mul(g, a), F.add(b, 1)), self.shapes[1])
        return ga, gb


class SpecialXlog1PyBackward1(Node):
    """``xlog1py(number, tensor)``."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (b,) = self.saved()
        return F.sum_to(F.div(F.mul(g, self.value), F.add(b, 1)), self.shapes[1])


class SpecialXlog1PyBackward2(Node):
    """``xlog1py(tensor, number)``."""

    __slots__ = ("shapes", "value")

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        mask = (a._array == 0) & (self.value <= -1)
        return F.sum_to(_masked_zero(xlog1py(g, self.value), mask), self.shapes[0])


def _xlog1py_array(x: Any, y: Any) -> Any:
    with xp.errstate(**_ERR):
        out = xp.where(x == 0, 0.0, x * xp.log1p(y))
        return xp.where(xp.isnan(y), xp.nan, out)


@register("special_xlog1py")
def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is nan); either
    operand may be a number.

    Example:
        >>> import gradsum
        >>> x, y = gradsum.tensor([0.0, 2.0]), gradsum.tensor([-1.0, 0.0])
        >>> gradsum.special.xlog1py(x, y).tolist()
        [0.0, 0.0]
    """
    return xlog_op("special_xlog1py", input, other, _xlog1py_array,
                   (SpecialXlog1PyBackward0, SpecialXlog1PyBackward1, SpecialXlog1PyBackward2))
