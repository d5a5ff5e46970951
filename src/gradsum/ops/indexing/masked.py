"""Selection by mask: ``where``, ``masked_fill`` and ``masked_select``.

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([1.0, -2.0])
    >>> x.masked_fill(x < 0, 0.0).tolist()
    [1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _core, _messages
from gradsum.ops._core import (
    _make,
    binary_arrays,
    broadcast_error,
    needs_grad,
    record,
    register,
    require_tensor,
    scalar_value,
    tensor_method,
)
from gradsum.ops.arithmetic import _checked, _left
from gradsum.ops.reduction import sum_to


def _wrapped(v: Any, dt: Any) -> Any:
    """A Python number converted to float16 unchecked (too large a number is inf)."""
    with xp.errstate(over="ignore"):
        return xp.float16(v)


class WhereBackward0(Node):
    __slots__ = ("a_shape", "b_shape", "cond")

    def backward(self, g: Tensor) -> tuple[None, Tensor | None, Tensor | None]:
        cond = _make(self.cond)
        zero = F.zeros_like(g)
        ga = F.sum_to(F.where(cond, g, zero), self.a_shape) if self.needs(1) else None
        gb = F.sum_to(F.where(cond, zero, g), self.b_shape) if self.needs(2) else None
        return None, ga, gb


@register("where")
def where(condition: Tensor, a: Any = None, b: Any = None) -> Any:
    """``a`` where ``condition`` holds, else ``b`` (broadcast). One argument: nonzero indices."""
    if a is None and b is None:
        return tuple(_make(i) for i in xp.nonzero(condition._array))
    cond = condition._array if isinstance(condition, Tensor) else xp.asarray(condition)
    if cond.dtype.kind != "b":
        raise RuntimeError(_messages.where_condition_not_bool(cond))
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


@tensor_method("where")
def _where_method(a: Tensor, condition: Tensor, other: Any) -> Tensor:
    """``t.where(condition, other)``: :func:`where` with the tensor as the values taken
    where ``condition`` holds."""
    return where(condition, a, other)


class MaskedFillBackward0(Node):
    __slots__ = ("in_shape", "mask")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        m = _make(self.mask)
        # a mask larger than ``a`` broadcast the output: a's gradient is summed back down
        ga = sum_to(F.where(m, F.zeros_like(g), g), self.in_shape) if self.needs(0) else None
        gv = None
        if self.needs(1):
            gv = F.sum(F.where(m, g, F.zeros_like(g)))
        return ga, gv


class MaskedFillBackward1(MaskedFillBackward0):
    """masked_fill with a 0-d tensor value (which gets the sum of the masked gradient)."""

    __slots__ = ()


@register("masked_fill", method=True)
def masked_fill(a: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``a`` with ``value`` where ``mask`` is True (``value`` a number or a 0-d tensor)."""
    m = mask._array if isinstance(mask, Tensor) else xp.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(_messages.masked_fill_mask_not_bool(m))
    x = a._array
    v_t = value if isinstance(value, Tensor) else None
    if v_t is not None and v_t._array.ndim != 0:
        raise RuntimeError(_messages.masked_fill_value_not_0d(v_t))
    v = v_t._array.astype(x.dtype) if v_t is not None else value
    try:
        # out of place, torch broadcasts ``a`` and the mask together (the result may be
        # larger than ``a``); masked_fill_ refuses a result that would grow its tensor
        out = xp.where(m, xp.asarray(v, dtype=x.dtype), x)
    except ValueError:
        raise F._core.broadcast_error(m, x) from None
    if not needs_grad(a, v_t):
        return _make(out)
    node = MaskedFillBackward0() if v_t is None else MaskedFillBackward1()
    node._saved = HOLDS_STATE  # (torch saves the mask)
    node.mask = xp.broadcast_to(m, out.shape)
    node.in_shape = x.shape
    return record(node, (a, v_t), out)


class MaskedSelectBackward0(Node):
    """``g`` written back, in order, where the broadcast mask holds (zeros elsewhere), then
    summed down to the input's shape (the mask may have broadcast it)."""

    __slots__ = ("in_shape", "mask")

    def backward(self, g: Tensor) -> Tensor:
        z = F.zeros(self.mask.shape, dtype=g.dtype)
        return F.sum_to(F.index_put(z, (_make(self.mask),), g), self.in_shape)


@register("masked_select", method=True)
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``input`` where the (broadcast) bool ``mask`` holds, as a 1-D tensor.

    Example:
        >>> import gradsum
        >>> m = gradsum.tensor([True, False, True])
        >>> gradsum.arange(6.0).reshape(2, 3).masked_select(m).tolist()
        [0.0, 2.0, 3.0, 5.0]
    """
    require_tensor("masked_select", "input", 1, input)
    require_tensor("masked_select", "mask", 2, mask)
    x, m = input._array, mask._array
    if m.dtype.kind != "b":
        raise RuntimeError(_messages.masked_select_mask_not_bool(mask))
    try:
        shape = xp.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise RuntimeError(_messages.masked_select_size_mismatch(x, m)) from None
    mb = xp.broadcast_to(m, shape)
    out = xp.broadcast_to(x, shape)[mb]
    if not needs_grad(input):
        return _make(out)
    node = MaskedSelectBackward0()
    node._saved = HOLDS_STATE  # (torch saves the mask)
    node.in_shape, node.mask = x.shape, mb
    return record(node, (input,), out)


# -- nonzero, argwhere and masked_scatter (bound as Tensor methods in gradsum.ops) -----------------
@register("nonzero", method=True)
def nonzero(a: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the nonzero entries: an ``(n, ndim)`` int64 tensor, or a tuple per dim."""

    if a.ndim == 0 and not as_tuple:  # torch: one row per nonzero entry, zero columns
        return Tensor._make(xp.zeros((int(a._array != 0), 0), dtype=xp.int64))
    x = a._array
    idx = (_nonzero_by_rows(x) if x.ndim and x.size >= _NONZERO_BY_ROWS and x.dtype.kind in "biufc"
           else xp.nonzero(x.reshape(1) if a.ndim == 0 else x))
    if as_tuple:  # (nonzero's index arrays are new: no copy for the dtype)
        return tuple(Tensor._make(i.astype(xp.int64, copy=False)) for i in idx)
    return Tensor._make(xp.stack(idx, axis=1).astype(xp.int64, copy=False) if idx
                        else xp.zeros((0, 0), dtype=xp.int64))

#: from this many elements :func:`nonzero` finds its indices by :func:`_nonzero_by_rows`
_NONZERO_BY_ROWS = 4096

def _nonzero_by_rows(x: Any) -> tuple[Any, ...]:
    """``xp.nonzero(x)`` (the same indices, int64, in C order): NumPy's 1-D ``flatnonzero``
    of the mask ``x != 0`` runs about ten times faster than its N-D ``nonzero``; the last
    index is the flat position less its row's start, the others each row's coordinates
    repeated by the row's count (short arrays: no division per element)."""

    mask = x != 0
    flat = xp.flatnonzero(mask)
    if x.ndim == 1:
        return (flat,)
    last = x.shape[-1]
    counts = xp.count_nonzero(mask.reshape(-1, last), axis=1)
    row = xp.repeat(xp.arange(counts.size, dtype=xp.int64), counts)
    col = xp.multiply(row, last)
    xp.subtract(flat, col, out=col)
    if x.ndim == 2:
        return row, col
    return (*(xp.repeat(c.reshape(-1), counts) for c in xp.indices(x.shape[:-1])), col)

@register("argwhere", method=True)
def argwhere(a: Tensor) -> Tensor:
    """The indices of the nonzero entries, one row each (``nonzero()``).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([[0, 1], [2, 0]]).argwhere().tolist()
        [[0, 1], [1, 0]]
    """
    return nonzero(a)

@tensor_method("masked_scatter", inplace="masked_scatter_")
def masked_scatter(a: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``a`` (broadcast with ``mask``) with the first entries of ``source``, in order, written
    where ``mask`` is True.

    Example:
        >>> import gradsum
        >>> m = gradsum.tensor([True, False, True])
        >>> gradsum.zeros(3).masked_scatter(m, gradsum.tensor([1.0, 2.0])).tolist()
        [1.0, 0.0, 2.0]
    """
    m = mask._array if isinstance(mask, Tensor) else xp.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(_messages.masked_scatter_mask_not_bool(m))
    if source._array.dtype != a._array.dtype:
        raise RuntimeError(_messages.masked_scatter_dtype_mismatch(a, source))
    try:
        shape = xp.broadcast_shapes(a._array.shape, m.shape)
    except ValueError:
        raise _core.broadcast_error(a._array, m) from None
    mb = xp.broadcast_to(m, shape)
    n = int(mb.sum())
    if source._array.size < n:
        raise RuntimeError(_messages.masked_scatter_source_too_small(source, n))
    src = F.getitem(F.reshape(source, (-1,)), slice(0, n))
    return F.index_put(F.expand(a, shape), (Tensor._make(mb),), src)
