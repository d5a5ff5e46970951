"""Comparisons and predicates: ``eq``/``ne``/``lt``/``le``/``gt``/``ge`` (and torch's long
names), the logical ops, ``isnan``/``isinf``/``isfinite``/``isposinf``/``isneginf``/``isreal``,
``signbit``, ``equal``/``allclose``/``isclose``, ``isin`` and the elementwise extrema
``maximum``/``minimum``/``fmax``/``fmin`` (torch's "comparison ops").

Example:
    >>> import gradsum
    >>> gradsum.maximum(gradsum.tensor([1.0, 5.0]), gradsum.tensor([3.0, 2.0])).tolist()
    [3.0, 5.0]
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as F
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    binary_arrays,
    broadcast_error,
    needs_grad,
    record,
    register,
    require_tensor,
    tensor_method,
    twin,
)
from gradsum.ops.arithmetic import _arrays


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
            ga = F.sum_to(F.masked_fill(shared, _make(xp.broadcast_to(a_loses, g.shape)), 0.0),
                         self.a_shape)
        if self.needs(1):
            gb = F.sum_to(F.masked_fill(shared, _make(xp.broadcast_to(b_loses, g.shape)), 0.0),
                         self.b_shape)
        return ga, gb


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


def _extremum(a: Any, b: Any, sign: int) -> Tensor:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        name = "maximum" if sign > 0 else "minimum"
        pos, bad = (2, b) if isinstance(a, Tensor) else (1, a)
        raise TypeError(_messages.extremum_argument_not_tensor(name, pos, bad))
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


@register("maximum", method=True)
def maximum(a: Any, b: Any) -> Tensor:
    """Elementwise maximum; ties split the gradient equally (torch's rule)."""
    return _extremum(a, b, 1)


@register("minimum", method=True)
def minimum(a: Any, b: Any) -> Tensor:
    """Elementwise minimum; ties split the gradient equally."""
    return _extremum(a, b, -1)


# -- comparisons and logic (not differentiable) ------------------------------------------------
def _compare(name: str, fn: Any, **surface: Any) -> Any:
    """The comparison op ``name`` (``fn`` on the promoted arrays), registered with its
    ``surface`` (see :func:`register`)."""
    logical = name.startswith("logical")

    def op(a: Any, b: Any) -> Tensor:
        if not isinstance(a, Tensor):  # (torch: only the methods take a number)
            raise TypeError(_messages.argument_not_tensor(name, "input", 1, a))
        if logical and not isinstance(b, Tensor):
            raise TypeError(_messages.argument_not_tensor(name, "other", 2, b))
        x, y, _ = _arrays(a, b)
        try:
            return _make(fn(x, y))
        except ValueError:
            raise broadcast_error(x, y) from None

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` comparison, a bool tensor (not differentiable)."
    return register(name, **surface)(op)


eq = _compare("eq", xp.equal, method=True, inplace=twin("eq_", cmp="Eq"))
ne = _compare("ne", xp.not_equal, method=("ne", "not_equal"),
              inplace=(twin("ne_", cmp="Ne"), twin("not_equal_", cmp="Ne")))
lt = _compare("lt", xp.less, method=("lt", "less"),
              inplace=(twin("lt_", cmp="Lt"), twin("less_", cmp="Lt")))
le = _compare("le", xp.less_equal, method=("le", "less_equal"),
              inplace=(twin("le_", cmp="Le"), twin("less_equal_", cmp="Le")))
gt = _compare("gt", xp.greater, method=("gt", "greater"),
              inplace=(twin("gt_", cmp="Gt"), twin("greater_", cmp="Gt")))
ge = _compare("ge", xp.greater_equal, method=("ge", "greater_equal"),
              inplace=(twin("ge_", cmp="Ge"), twin("greater_equal_", cmp="Ge")))
logical_and = _compare("logical_and", xp.logical_and, method=True, inplace="logical_and_")
logical_or = _compare("logical_or", xp.logical_or, method=True, inplace="logical_or_")
logical_xor = _compare("logical_xor", xp.logical_xor, method=True, inplace="logical_xor_")


@register("logical_not", method=True, inplace=twin("logical_not_", untracked=True))
def logical_not(a: Tensor) -> Tensor:
    """Elementwise not (bool result)."""
    return _make(xp.logical_not(a._array))


def _predicate(name: str, kernel: Any) -> Any:
    """The registered one-input predicate ``name(a)``: the array op ``kernel`` (bool result)."""

    def fn(a: Tensor) -> Tensor:
        return _make(kernel(a._array))

    fn.__name__ = fn.__qualname__ = name
    return register(name, method=True)(fn)


isnan, isinf, isfinite = (_predicate(name, kernel) for name, kernel in (
    ("isnan", xp.isnan), ("isinf", xp.isinf), ("isfinite", xp.isfinite)))


@register("equal", method=True)
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


@register("allclose", method=True)
def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    """Whether all elements are close (``|a - b| <= atol + rtol * |b|``)."""
    _same_dtype(a, b, "allclose")
    return bool(xp.allclose(a._array, b._array, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _same_dtype(a: Tensor, b: Tensor, name: str) -> None:
    """torch's isclose (and allclose) takes tensors only and does not promote: the dtypes must
    be equal."""
    require_tensor(name, "input", 1, a)
    require_tensor(name, "other", 2, b)
    x, y = a._array.dtype, b._array.dtype
    if x != y:
        raise RuntimeError(_messages.isclose_dtype_mismatch(x, y))


@register("isclose", method=True)
def isclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
            equal_nan: bool = False) -> Tensor:
    _same_dtype(a, b, "isclose")
    return _make(xp.isclose(a._array, b._array, rtol=rtol, atol=atol, equal_nan=equal_nan))



@register("signbit", method=True)
def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0 and negative numbers); a bool tensor that
    never requires grad.

    Example:
        >>> import gradsum
        >>> gradsum.signbit(gradsum.tensor([-1.0, -0.0, 0.0, 2.0])).tolist()
        [True, True, False, False]
    """
    x = input._array
    return _make(xp.asarray(xp.signbit(x) if x.dtype.kind in "fV" else x < 0))


# -- isin and the predicates ----------------------------------------------------------------
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """A bool tensor of ``elements``' shape: whether each entry is in ``test_elements`` (either
    may be a number; not differentiable).

    Example:
        >>> import gradsum
        >>> gradsum.isin(gradsum.tensor([1, 2, 3]), gradsum.tensor([2, 5])).tolist()
        [False, True, False]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(_messages.isin_needs_a_tensor(elements, test_elements))
    arrs = [v._array if isinstance(v, Tensor) else xp.asarray(v)
            for v in (elements, test_elements)]
    for a in arrs:
        if a.dtype.kind == "b":
            raise RuntimeError(_messages.isin_bool_input())
    out = xp.isin(arrs[0], arrs[1], assume_unique=assume_unique, invert=invert)
    return _make(xp.asarray(out, dtype=bool))


@tensor_method("is_complex")
def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype (never, in gradsum: its dtypes are real).

    Example:
        >>> import gradsum
        >>> gradsum.is_complex(gradsum.zeros(2))
        False
    """
    require_tensor("is_complex", "input", 1, input)
    return input._array.dtype.kind == "c"


@tensor_method("is_same_size")
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether two tensors have the same shape.

    Example:
        >>> import gradsum
        >>> gradsum.is_same_size(gradsum.zeros(2, 3), gradsum.ones(2, 3))
        True
    """
    require_tensor("is_same_size", "input", 1, input)
    require_tensor("is_same_size", "other", 2, other)
    return tuple(input._array.shape) == tuple(other._array.shape)


class FmaxBackward0(Node):
    """torch's rule: ``input`` gets ``g`` where ``input >= other`` or ``other`` is nan (ties
    go to ``input``), ``other`` everywhere else."""

    __slots__ = ("a_shape", "b_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        x, y = a._array, b._array
        with xp.errstate(invalid="ignore"):
            first = ((x >= y) if type(self) is FmaxBackward0 else (x <= y)) | xp.isnan(y)
        first = xp.broadcast_to(first, g.shape)
        ga = gb = None
        if self.needs(0):
            ga = F.sum_to(F.masked_fill(g, _make(~first), 0.0), self.a_shape)
        if self.needs(1):
            gb = F.sum_to(F.masked_fill(g, _make(first), 0.0), self.b_shape)
        return ga, gb


class FminBackward0(FmaxBackward0):
    """As :class:`FmaxBackward0`, with ``input <= other``."""

    __slots__ = ()


def _fextremum(name: str, input: Any, other: Any) -> Tensor:
    require_tensor(name, "input", 1, input)
    require_tensor(name, "other", 2, other)
    x, y, _ = binary_arrays(input, other)
    try:
        out = xp.fmax(x, y) if name == "fmax" else xp.fmin(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None
    if not needs_grad(input, other):
        return _make(out)
    node = FmaxBackward0() if name == "fmax" else FminBackward0()
    node.a_shape, node.b_shape = x.shape, y.shape
    t = record(node, (input, other), out)
    node.save(input, other)
    return t


@register("fmax", method=True)
def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores nan (nan only where both are nan).

    Example:
        >>> import gradsum
        >>> gradsum.fmax(gradsum.tensor([1.0, float("nan")]), gradsum.tensor([2.0, 0.0])).tolist()
        [2.0, 0.0]
    """
    return _fextremum("fmax", input, other)


@register("fmin", method=True)
def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores nan (nan only where both are nan).

    Example:
        >>> import gradsum
        >>> gradsum.fmin(gradsum.tensor([1.0, float("nan")]), gradsum.tensor([2.0, 0.0])).tolist()
        [1.0, 0.0]
    """
    return _fextremum("fmin", input, other)
greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne


# -- predicates and identities of real tensors -----------------------------------------------
@register("isposinf", method=True)
def isposinf(input: Tensor) -> Tensor:
    """Where the values are ``+inf`` (bool; always False for integers).

    Example:
        >>> import gradsum
        >>> gradsum.isposinf(gradsum.tensor([1.0, float("inf"), -float("inf")])).tolist()
        [False, True, False]
    """
    x = input._array
    return _make(xp.isposinf(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, dtype=bool))


@register("isneginf", method=True)
def isneginf(input: Tensor) -> Tensor:
    """Where the values are ``-inf`` (bool; always False for integers).

    Example:
        >>> import gradsum
        >>> gradsum.isneginf(gradsum.tensor([1.0, -float("inf")])).tolist()
        [False, True]
    """
    x = input._array
    return _make(xp.isneginf(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, dtype=bool))


@register("isreal", method=True)
def isreal(input: Tensor) -> Tensor:
    """Where the values are real: everywhere, for gradsum's real dtypes.

    Example:
        >>> import gradsum
        >>> gradsum.isreal(gradsum.tensor([1.0, 2.0])).tolist()
        [True, True]
    """
    return _make(xp.ones(input._array.shape, dtype=bool))
