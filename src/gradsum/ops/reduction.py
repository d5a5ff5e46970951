"""Reductions: ``sum``, ``mean``, ``var``/``std`` (and their ``*_mean`` pairs), ``amax``/``amin``,
``max``/``min`` with and without ``dim``, ``argmax``/``argmin``, ``aminmax``, ``logsumexp``,
``prod``, ``norm``, ``all``/``any``, ``count_nonzero``, ``nansum``/``nanmean``, ``sum_to``, the
distances (``dist``, ``cosine_similarity``, ``pairwise_distance``) and the counting ops
(``bincount``, ``histc``, ``histogram``, ``cov``, ``corrcoef``).

Example:
    >>> import gradsum
    >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x.sum(0).tolist()
    [4.0, 6.0]
    >>> gradsum.logsumexp(x, 1).grad_fn.name()
    'LogsumexpBackward0'
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _dtype as D
from gradsum._autocast import autocast_policy
from gradsum._backend import dot as _xp_dot  # (2-D products: less dispatch than matmul)
from gradsum._backend import silenced, xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state, no_grad
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops import _messages
from gradsum.ops._core import (
    _make,
    binary_arrays,
    broadcast_error,
    const,
    needs_grad,
    quietly,
    record,
    register,
    require_tensor,
    tensor_method,
    wrap_dim,
    wrap_dims,
)
from gradsum.ops.indexing.subscript import as_node
from gradsum.ops.special.erf import _scalar_op

_ndarray = xp.ndarray
_add_reduce = xp.add.reduce
_empty = xp.empty
_ALL_DIMS = [tuple(range(n)) for n in range(8)]  # (dims of a reduction over all, by ndim)
_EXACT = 1 << 24  # (integers up to this are exact in float32)
_F32_64 = (xp.dtype("float32"), xp.dtype("float64"))

values_indices = namedtuple("values_indices", ["values", "indices"])


def _kept_shape(in_shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    """``in_shape`` with the reduced ``dims`` kept as 1: the shape a ``keepdim=False``
    reduction's result (or gradient) takes again to broadcast against the input."""
    shape = list(in_shape)
    for d in dims:
        shape[d] = 1
    return tuple(shape)


def _expand_back(g: Tensor, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool
                 ) -> Tensor:
    """Broadcast a reduced gradient back to the input's shape."""
    if not keepdim and dims and g._array.ndim:
        g = F.reshape(g, _kept_shape(in_shape, dims))
    return F.expand(g, in_shape)


def _dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """The dims a reduction reduces: all for ``None`` or an empty tuple/list (torch's rule),
    validated even on a 0-d tensor (which accepts only 0 and -1, and reduces nothing)."""
    if dim is None and ndim < 8:
        return _ALL_DIMS[ndim]
    if dim is not None and not isinstance(dim, (int, xp.integer)) and len(dim) == 0:
        dim = None
    dims = wrap_dims(dim, ndim)
    if not ndim:
        if len(dims) > 1:  # (0 and -1 both name the one dim of a 0-d tensor)
            raise RuntimeError(_messages.reduction_dim_repeated_0d(dim))
        return ()
    return dims


def _numel(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _check_differentiable(out: Any, name: str) -> None:
    """torch refuses to attach a grad_fn to an integer or bool output (its set_history): a
    reduction to an explicit non-floating ``dtype`` of an input that requires grad raises."""
    if out.dtype.kind not in "fV":
        raise RuntimeError(_messages.autograd_not_support_dtype(out.dtype, name))


class SumBackward0(Node):
    __slots__ = ("dims", "in_shape", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        return _expand_back(g, self.in_shape, self.dims, self.keepdim)


class SumBackward1(SumBackward0):
    __slots__ = ()


#: NumPy sums short rows (a C-contiguous array's last axis, 2 to this many elements) 20-30
#: times slower than it adds columns; up to here its pairwise summation adds them in order
#: from 0 (from 8 on it groups them differently, and the reduction is fast enough)
_SHORT_LAST = 7


def add_reduce(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """``xp.add.reduce(x, axes, keepdims=keepdims)`` (a float or integer array), the same
    bits: along short last rows of a C-contiguous float32/float64 array (see
    :data:`_SHORT_LAST`, such as the gradient of ``repeat_interleave`` or of an expand of
    a trailing axis) as adds of its columns in order, then ``+ 0.0`` (NumPy's sum starts
    from +0.0: a row of -0.0 sums to +0.0)."""
    n = x.shape[-1] if x.ndim else 0
    if (2 <= n <= _SHORT_LAST and len(axes) == 1 and axes[0] == x.ndim - 1
            and x.size >= 1024 and x.dtype.char in "fd" and x.flags.c_contiguous):
        out = _add_columns(x, n)
        return out[..., None] if keepdims else out
    return xp.add.reduce(x, axis=axes, keepdims=keepdims)


@silenced  # (inf + -inf and overflow: quiet, as NumPy's reduction is here and torch's)
def _add_columns(x: Any, n: int) -> Any:
    out = xp.add(x[..., 0], x[..., 1])
    for i in range(2, n):
        out += x[..., i]
    out += 0.0
    return out


@register("sum", method=True)
def sum(a: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: D.dtype | None = None
        ) -> Tensor:
    """Sum over ``dim`` (all dimensions by default). Integers and bools sum to int64."""
    x = a._array
    dims = _dims(dim, x.ndim)
    if dtype is not None:
        # (the sum's own dtype too: NumPy would widen small integers to int64, bool to int)
        x = x.astype(dtype.np)
        out = x.sum(axis=dims, keepdims=keepdim, dtype=x.dtype)
    else:
        if x.dtype.kind in "biu":
            x = x.astype(xp.int64)
        if x.dtype == D._BF16_NP:  # (torch accumulates bfloat16 in float32, then rounds)
            out = xp.add.reduce(x.astype(xp.float32), axis=dims, keepdims=keepdim
                                ).astype(x.dtype)
        else:
            # (the ufunc itself, not ndarray.sum's Python wrapper: NumPy then attributes an
            # inf - inf warning to this line, which gradsum's warning filter silences as torch)
            out = add_reduce(x, dims, keepdim)
    if not isinstance(out, xp.ndarray):
        out = xp.asarray(out)
    if not needs_grad(a):
        return _make(out)
    if dtype is not None:
        _check_differentiable(out, "sum")
    node = SumBackward0() if dim is None else SumBackward1()
    node.dims, node.in_shape, node.keepdim = dims, a._array.shape, keepdim
    return record(node, (a,), out)


class MeanBackward0(Node):
    __slots__ = ("count", "dims", "in_shape", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        x = g._array
        if _state.enabled or x.dtype.kind not in "fV":  # recorded: torch's expand, then divide
            return F.div(_expand_back(g, self.in_shape, self.dims, self.keepdim), self.count)
        # Nothing to record: the same division done once on the reduced gradient and written
        # over the input's shape (each element the same quotient, bit for bit; the walk runs
        # with NumPy's warnings off, so the count 0 of an empty input gives nan silently).
        if not self.keepdim and self.dims and x.ndim:
            x = x.reshape(_kept_shape(self.in_shape, self.dims))
        out = _empty(self.in_shape, x.dtype)
        out[...] = x / self.count
        return _make(out)


class MeanBackward1(MeanBackward0):
    __slots__ = ()


def _require_float(a: Tensor, name: str) -> None:
    if a._array.dtype.kind not in "fV":
        raise RuntimeError(_messages.could_not_infer_output_dtype(name, a.dtype))


@register("mean", method=True)
def mean(a: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: D.dtype | None = None
         ) -> Tensor:
    """Mean over ``dim`` (all dimensions by default); floating tensors only."""
    if dtype is not None:
        a = a.to(dtype)
    x = a._array
    if x.dtype.kind != "f":
        _require_float(a, "mean")  # (raises, but for bfloat16)
        # bfloat16: torch's mean accumulates and divides in float32, then rounds
        out = mean(_make(x.astype(xp.float32)), dim, keepdim)._array.astype(x.dtype)
        if not needs_grad(a):
            return _make(out)
        dims = _dims(dim, x.ndim)
        node = MeanBackward0() if dim is None else MeanBackward1()
        node.dims, node.in_shape, node.keepdim = dims, x.shape, keepdim
        node.count = _numel(x.shape, dims)
        return record(node, (a,), out)
    dims = _dims(dim, x.ndim)
    count = x.size if dim is None else _numel(x.shape, dims)
    # NumPy's own ``mean`` is this sum and division (same bits) behind a Python wrapper
    # that costs five times the arithmetic on a small tensor.
    if count:
        out = _add_reduce(x, dims, None, None, keepdim)
        out = out / (const(out.dtype, count) if count < _EXACT and out.dtype in _F32_64
                     else count)
    else:
        with xp.errstate(invalid="ignore", divide="ignore"):  # mean of nothing: nan
            out = _add_reduce(x, dims, None, None, keepdim) / count
    if out.__class__ is not _ndarray:
        out = xp.asarray(out)
    if not needs_grad(a):
        return _make(out)
    node = MeanBackward0() if dim is None else MeanBackward1()
    node.dims, node.in_shape, node.keepdim = dims, x.shape, keepdim
    node.count = count
    return record(node, (a,), out)


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        if unbiased is not None:
            raise RuntimeError(_messages.var_std_unbiased_and_correction())
        return float(correction)
    if unbiased is None or unbiased is True:
        return 1.0
    return 0.0


def _var_backward(g: Tensor, a: Tensor, node: VarBackward0 | StdBackward0) -> Tensor:
    """torch's ``var_backward``: ``2 / (n - correction) * g * (a - mean)``. Over all elements
    (or a 0-d input) with ``n <= correction`` the factor is infinite, and torch returns
    ``g * where(a == mean, nan, inf)`` rather than the signed infinities of the formula."""
    n = _numel(node.in_shape, node.dims)
    dof = n - node.correction
    ge = _expand_back(g, node.in_shape, node.dims, node.keepdim)
    x = a._array
    if node.full and dof <= 0:
        with xp.errstate(invalid="ignore"):
            w = xp.where(x == x.mean(), math.nan, math.inf).astype(ge._array.dtype)
        return F.mul(ge, _make(w))  # (a constant factor: its derivative is zero)
    centered = F.sub(a, F.mean(a, node.dims, keepdim=True))
    return F.mul(F.mul(ge, centered), 2.0 / dof if dof else math.inf)


class VarBackward0(Node):
    __slots__ = ("correction", "dims", "full", "in_shape", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        return _var_backward(g, a, self)


def _var_array(x: Any, dims: tuple[int, ...], corr: float, keepdim: bool) -> Any:
    n = _numel(x.shape, dims)
    m = x.mean(axis=dims, keepdims=True)
    with xp.errstate(invalid="ignore", divide="ignore"):
        ss = ((x - m) ** 2).sum(axis=dims, keepdims=keepdim)
        out = ss / builtins.max(n - corr, 0)
    return xp.asarray(out, dtype=x.dtype)


@register("var", method=True)
def var(a: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance over ``dim``; ``correction=1`` (Bessel's) by default, as torch."""
    return _var_or_std(a, dim, unbiased, keepdim, correction, False)


def _var_or_std(a: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,
                is_std: bool) -> Tensor:
    """var, or std (``is_std``: the square root, whose node saves the output too)."""
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    _require_float(a, "std" if is_std else "var")
    corr = _correction(unbiased, correction)
    x = a._array
    dims = _dims(dim, x.ndim)
    out = _var_array(x, dims, corr, keepdim)
    if is_std:
        out = xp.sqrt(out)
    if not needs_grad(a):
        return _make(out)
    node = StdBackward0() if is_std else VarBackward0()
    node.dims, node.in_shape, node.keepdim, node.correction = dims, x.shape, keepdim, corr
    node.full = dim is None or x.ndim == 0
    t = record(node, (a,), out)
    node.save(a, outputs=(t,) if is_std else ())
    return t


class StdBackward0(Node):
    """torch's ``std_backward``: var's rule applied to ``g / (2 * std)``, which is set to 0
    where the std is 0 (constant input: a zero gradient, not nan)."""

    __slots__ = ("correction", "dims", "full", "in_shape", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        with xp.errstate(divide="ignore", invalid="ignore"):
            g_var = F.div(g, F.mul(out, 2))
        g_var = F.where(_make(out._array == 0), F.zeros((), dtype=g.dtype), g_var)
        return _var_backward(g_var, a, self)


@register("std", method=True)
def std(a: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Standard deviation over ``dim`` (``correction=1`` by default)."""
    return _var_or_std(a, dim, unbiased, keepdim, correction, True)


class AmaxBackward0(Node):
    """Gradient split evenly among the tied extreme values (torch's rule for amax/amin and the
    full max()/min())."""

    __slots__ = ("dims", "in_shape", "keepdim")

    #: whether a nan result counts the nan inputs as its ties: torch's rule for the full
    #: max()/min() (evenly_distribute_backward); amax/amin compare with ``==`` only
    nan_ties = False

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        o = out._array
        if not self.keepdim and self.dims:
            o = o.reshape(_kept_shape(self.in_shape, self.dims))
        mask = a._array == o
        if self.nan_ties:
            mask |= xp.isnan(a._array) & xp.isnan(o)
        ga = g._array
        if not _state.enabled and ga.dtype == a._array.dtype and ga.dtype.char in "fd":
            # (no graph: the rule on arrays, its bits: g * (mask / count) where the weight is
            # 1 / count rounded to g's dtype, or 0; mask * (g * w) is the same product)
            count = xp.count_nonzero(mask, axis=self.dims or None, keepdims=True)
            gk = ga.reshape(count.shape) if ga.ndim != count.ndim else ga
            if self.nan_ties:
                with xp.errstate(divide="ignore", invalid="ignore"):
                    share = gk / count.astype(ga.dtype)
                return _make(xp.where(mask, share, const(ga.dtype, 0)))
            with xp.errstate(divide="ignore", invalid="ignore"):
                w = (1.0 / count).astype(ga.dtype)
            return _make(xp.multiply(mask, gk * w, dtype=ga.dtype))
        count = mask.sum(axis=self.dims, keepdims=True)
        gx = _expand_back(g, self.in_shape, self.dims, self.keepdim)
        if self.nan_ties:
            # torch's CPU evenly_distribute_backward: zeros masked_fill'ed with g / count, a
            # selection (an inf g leaves the other inputs 0); amax/amin multiply by the mask
            dt = g._array.dtype
            return F.where(_make(mask), F.div(gx, _make(count.astype(dt))),
                           F.zeros((), dtype=g.dtype))
        w = _make((mask / count).astype(g._array.dtype))
        return F.mul(gx, w)


class AminBackward0(AmaxBackward0):
    __slots__ = ()


class MaxBackward1(AmaxBackward0):
    __slots__ = ()
    nan_ties = True


class MinBackward1(AmaxBackward0):
    __slots__ = ()
    nan_ties = True


def _record_saving_both(node: Any, a: Tensor, out: Any, dims: tuple[int, ...],
                        in_shape: tuple[int, ...], keepdim: bool) -> Tensor:
    """Record ``node``, the backward of a reduction of ``a`` over ``dims`` (amax/amin, the
    full max/min, logsumexp, prod, norm), saving ``a`` and the output."""
    node.dims, node.in_shape, node.keepdim = dims, in_shape, keepdim
    t = record(node, (a,), out)
    node.save(a, outputs=(t,))
    return t


def _extreme(a: Tensor, dim: Any, keepdim: bool, is_max: bool, cls: type[AmaxBackward0],
             name: str) -> Tensor:
    x = a._array
    dims = _dims(dim, x.ndim)
    if x.size == 0:
        if dim is None:
            raise RuntimeError(_messages.extreme_empty_needs_dim(name))
        # Reducing only non-empty dims of an empty tensor is fine (an empty result).
        for d_given, d in zip(_as_tuple(dim), dims):
            if x.shape[d] == 0:
                raise IndexError(_messages.extreme_dim_empty(name, d_given))
    fn = xp.max if is_max else xp.min
    out = xp.asarray(fn(x, axis=dims, keepdims=keepdim))
    if not needs_grad(a):
        return _make(out)
    return _record_saving_both(cls(), a, out, dims, x.shape, keepdim)


def _given(dim: Any) -> bool:
    """Whether ``dim`` names dims (an int or a non-empty sequence), not "all of them"."""
    return dim is not None and (isinstance(dim, (int, xp.integer)) or len(dim) > 0)


def _as_tuple(dim: Any) -> tuple[Any, ...]:
    return (dim,) if isinstance(dim, (int, xp.integer)) else tuple(dim)


@register("amax", method=True)
def amax(a: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims when empty); ties share the gradient evenly."""
    return _extreme(a, dim if _given(dim) else None, keepdim, True, AmaxBackward0, "amax")


@register("amin", method=True)
def amin(a: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims when empty); ties share the gradient evenly."""
    return _extreme(a, dim if _given(dim) else None, keepdim, False, AminBackward0, "amin")


class MaxBackward0(Node):
    """max/min along a dim: the gradient goes to the returned index only."""

    __slots__ = ("dim", "in_shape", "indices", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        if not self.in_shape:
            return g
        idx = self.indices
        if not self.keepdim:
            g = F.unsqueeze(g, self.dim)
            idx = F.unsqueeze(idx, self.dim)
        return F.scatter_add(F.zeros(self.in_shape, dtype=g.dtype), self.dim, idx, g)


class MinBackward0(MaxBackward0):
    __slots__ = ()


def _max_dim(a: Tensor, dim: int, keepdim: bool, is_max: bool) -> values_indices:
    x = a._array
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:  # a 0-d tensor is its own max along dim 0 (index 0)
        idx0 = _make(xp.asarray(0, dtype=xp.int64))
        if not needs_grad(a):
            return values_indices(_make(x.copy()), idx0)
        node0 = MaxBackward0() if is_max else MinBackward0()
        node0.dim, node0.indices, node0.in_shape, node0.keepdim = 0, idx0, (), keepdim
        node0._saved = HOLDS_STATE  # (torch saves the indices)
        return values_indices(record(node0, (a,), x.copy()), idx0)
    if x.shape[d] == 0:
        raise IndexError(_messages.max_min_dim_empty(is_max, d))
    idx = (xp.argmax if is_max else xp.argmin)(x, axis=d, keepdims=True)
    vals = xp.take_along_axis(x, idx, axis=d)
    if not keepdim:
        vals = vals.squeeze(d)
        idx = idx.squeeze(d)
    idx_t = _make(idx.astype(xp.int64))
    if not needs_grad(a):
        return values_indices(_make(vals), idx_t)
    node = MaxBackward0() if is_max else MinBackward0()
    node.dim, node.indices, node.in_shape, node.keepdim = d, idx_t, x.shape, keepdim
    node._saved = HOLDS_STATE  # (torch saves the indices)
    return values_indices(record(node, (a,), vals), idx_t)


@register("max")
def max(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``max(a)``: the largest value; ``max(a, dim)``: (values, indices); ``max(a, b)``:
    elementwise maximum."""
    return _max_or_min(a, dim, keepdim, True)


@register("min")
def min(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``min(a)``, ``min(a, dim)`` -> (values, indices), or ``min(a, b)`` elementwise."""
    return _max_or_min(a, dim, keepdim, False)


def _max_or_min(a: Tensor, dim: Any, keepdim: bool, is_max: bool) -> Any:
    """max's or min's three forms: against a tensor (elementwise), over all (one value), or
    along ``dim`` (values, indices)."""
    if isinstance(dim, Tensor):
        return (F.maximum if is_max else F.minimum)(a, dim)
    if dim is None:
        if is_max:
            return _extreme(a, None, False, True, MaxBackward1, "max")
        return _extreme(a, None, False, False, MinBackward1, "min")
    return _max_dim(a, dim, keepdim, is_max)


@tensor_method("max")
def _max_method(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``Tensor.max``: :func:`max` with the tensor first."""
    return max(a, dim, keepdim)


@tensor_method("min")
def _min_method(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """``Tensor.min``: :func:`min` with the tensor first."""
    return min(a, dim, keepdim)


def _arg_extreme(a: Tensor, dim: int | None, keepdim: bool, name: str) -> Tensor:
    x = a._array
    fn = xp.argmax if name == "argmax" else xp.argmin
    if x.dtype.kind == "b":
        raise RuntimeError(_messages.arg_extreme_bool_input(name))
    if dim is None:
        if x.size == 0:
            raise IndexError(_messages.arg_extreme_empty_needs_dim(name))
        out = xp.asarray(fn(x))
        if keepdim:
            out = out.reshape((1,) * x.ndim)
        return _make(out.astype(xp.int64))
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:  # a 0-d tensor is its own extreme along dim 0 (index 0)
        return _make(xp.zeros((), dtype=xp.int64))
    if x.shape[d] == 0:
        raise IndexError(_messages.arg_extreme_dim_empty(name, d))
    return _make(fn(x, axis=d, keepdims=keepdim).astype(xp.int64))


@register("argmax", method=True)
def argmax(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the maximum (first one on ties), int64, not differentiable."""
    return _arg_extreme(a, dim, keepdim, "argmax")


@register("argmin", method=True)
def argmin(a: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the minimum (first one on ties), int64, not differentiable."""
    return _arg_extreme(a, dim, keepdim, "argmin")


class LogsumexpBackward0(Node):
    __slots__ = ("dims", "in_shape", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        a, out = self.saved()
        o = out
        if not self.keepdim and self.dims:
            o = F.reshape(out, _kept_shape(self.in_shape, self.dims))
        return F.mul(_expand_back(g, self.in_shape, self.dims, self.keepdim),
                     F.exp(F.sub(a, o)))


@register("logsumexp", method=True)
def logsumexp(a: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(a), dim))``, computed stably."""
    x = a._array
    if x.dtype.kind not in "fV":
        x = x.astype(D.get_default_dtype().np)
    dims = _dims(dim, x.ndim)
    if not keepdim and x.size and x.ndim and not _given(dim):
        # torch reduces all dims for dim=() but adds back its kept max of shape (1,) * ndim
        # unsqueezed, and that broadcast into the 0-d result fails (torch 2.13's behaviour)
        raise RuntimeError(_messages.logsumexp_all_dims_broadcast(dim, x.shape))
    m = xp.max(x, axis=dims, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, x.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    with xp.errstate(divide="ignore"):
        out = xp.log(xp.exp(x - m).sum(axis=dims, keepdims=True)) + m
    if not keepdim:
        out = out.squeeze(dims) if dims else out
    out = xp.asarray(out, dtype=x.dtype)
    if not needs_grad(a):
        return _make(out)
    return _record_saving_both(LogsumexpBackward0(), a, out, dims, x.shape, keepdim)


class ProdBackward0(Node):
    """torch's ``prod_backward``: ``g * (out / a)`` when the input has no zero; with zeros,
    the product of the other elements from two exclusive cumprods (``prod_safe_zeros``), or,
    for the full product of an input with two or more zeros when the backward is not itself
    recorded, zeros (whatever ``g`` holds: an inf or nan gradient gives 0 there)."""

    __slots__ = ("dims", "in_shape", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        if not self.in_shape:  # torch: a 0-d input's gradient is g itself (even at inf/nan)
            return g
        a, out = self.saved()
        x = a._array
        zeros = int(xp.count_nonzero(x == 0))
        if not zeros:
            ge = _expand_back(g, self.in_shape, self.dims, self.keepdim)
            oe = _expand_back(out, self.in_shape, self.dims, self.keepdim)
            return F.mul(ge, F.div(oe, a))
        if isinstance(self, ProdBackward1):
            (d,) = self.dims
            gk = g if self.keepdim else F.unsqueeze(g, d)
            return _prod_safe_zeros(gk, a, d)
        if zeros > 1 and not _state.enabled:
            return F.zeros(self.in_shape, dtype=g.dtype)
        flat = F.reshape(a, (x.size,))
        return F.reshape(_prod_safe_zeros(F.reshape(g, ()), flat, 0), self.in_shape)


class ProdBackward1(ProdBackward0):
    """prod along one dim (torch names it ProdBackward1)."""

    __slots__ = ()


def _prod_safe_zeros(g: Tensor, a: Tensor, d: int) -> Tensor:
    """torch's ``prod_safe_zeros_backward``: ``g`` times the product of the other elements
    along ``d``, as ``cumprod([1, a_0 .. a_{n-2}]) * flip(cumprod([1, a_{n-1} .. a_1]))``
    (exact with zeros; ``g`` has size 1 along ``d``)."""
    n = a.shape[d]
    if n == 1:
        return g
    ones = F.ones(a.shape[:d] + (1,) + a.shape[d + 1:], dtype=a.dtype)
    normal = F.cumprod(F.cat([ones, F.narrow(a, d, 0, n - 1)], d), d)
    rev = F.flip(F.narrow(a, d, 1, n - 1), (d,))
    reverse = F.flip(F.cumprod(F.cat([ones, rev], d), d), (d,))
    return F.mul(g, F.mul(normal, reverse))


@register("prod", method=True)
@autocast_policy("prod")
def prod(a: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: D.dtype | None = None) -> Tensor:
    """Product over ``dim`` (all elements by default)."""
    if dim is not None and not isinstance(dim, (int, xp.integer)):
        raise TypeError(_messages.prod_dim_not_int(dim))
    x = a._array if dtype is None else a._array.astype(dtype.np)
    if dtype is None and x.dtype.kind in "biu":
        x = x.astype(xp.int64)
    dims = _dims(dim, x.ndim)
    # (dtype= keeps an explicit small integer or bool dtype: NumPy would widen it)
    out = xp.asarray(quietly(x.prod, dims, x.dtype, None, keepdim))  # (silent, as torch)
    if not needs_grad(a):
        return _make(out)
    _check_differentiable(out, "prod")
    node = ProdBackward0() if dim is None else ProdBackward1()
    return _record_saving_both(node, a, out, dims, x.shape, keepdim)


class LinalgVectorNormBackward0(Node):
    """Vector p-norm, torch's rule for every p: ``g * sign(a) * |a|^(p-1) / norm^(p-1)`` (for
    p = 2: ``g * a / norm``), zero where the norm is zero; p = inf/-inf split the gradient
    evenly among the tied extreme elements; p = 0 has zero gradient."""

    __slots__ = ("dims", "in_shape", "keepdim", "p")

    def backward(self, g: Tensor) -> Tensor:
        p = self.p
        if p == 0:  # torch returns an undefined gradient: the input's .grad stays None
            return None
        if p == 2 and not _state.enabled:  # (no graph: the rule's ops on arrays, its bits)
            xa, oa = self.saved_arrays()
            ga = g._array
            if ga.dtype == xa.dtype == oa.dtype and xa.dtype.char in "fd" and xa.ndim:
                kept = _kept_shape(self.in_shape, self.dims)
                ok, gk = oa.reshape(kept), ga.reshape(kept)
                zero = ok == 0
                with xp.errstate(divide="ignore", invalid="ignore"):
                    q = xp.divide(xa, ok)
                if zero.any():
                    q = xp.where(zero, const(xa.dtype, 0), q)
                q *= gk
                return _make(q)
        a, out = self.saved()
        ge = _expand_back(g, self.in_shape, self.dims, self.keepdim)
        if p == 1:
            return F.mul(ge, F.sign(a))
        oe = _expand_back(out, self.in_shape, self.dims, self.keepdim)
        if p in (math.inf, -math.inf):
            # torch's mask: |a| == norm, or |a| is nan (whose sign() is 0: no gradient)
            abs_a = xp.abs(a._array)
            mask = (abs_a == oe._array) | xp.isnan(abs_a)
            count = mask.sum(axis=self.dims, keepdims=True)
            w = _make((mask / count).astype(g._array.dtype))
            return F.mul(F.mul(ge, F.sign(a)), w)
        # torch's norm_backward, op for op: a zero norm masks the quotient (a masked_fill, not
        # a where on a safe divisor), so its double backward gives nan there as torch's does
        # (0/0 reaches the divisor's gradient); p < 1 masks the zero entries of a instead
        zero = _make(oe._array == 0)
        if p == 2:
            return F.mul(ge, F.masked_fill(F.div(a, oe), zero, 0))
        if p < 1:
            scaled = F.masked_fill(F.mul(F.sign(a), F.pow(F.abs(a), p - 1)),
                                   _make(a._array == 0), 0)
            return F.mul(F.mul(scaled, ge), F.pow(oe, 1 - p))
        if p < 2:
            scaled = F.mul(F.sign(a), F.pow(F.abs(a), p - 1))
        else:
            scaled = F.mul(a, F.pow(F.abs(a), p - 2))
        return F.mul(scaled, F.masked_fill(F.div(ge, F.pow(oe, p - 1)), zero, 0))


def _norm_array(x: Any, p: float, dims: tuple[int, ...], keepdim: bool) -> Any:
    if p == 2:
        return xp.sqrt((x * x).sum(axis=dims, keepdims=keepdim))
    ax = xp.abs(x)
    if p == math.inf:
        return ax.max(axis=dims, keepdims=keepdim)
    if p == -math.inf:
        return ax.min(axis=dims, keepdims=keepdim)
    if p == 0:
        return (x != 0).sum(axis=dims, keepdims=keepdim)
    if p == 1:
        return ax.sum(axis=dims, keepdims=keepdim)
    if p == 2:
        return xp.sqrt((x * x).sum(axis=dims, keepdims=keepdim))
    return (ax**p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)


@register("norm", method=True)
def norm(a: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: D.dtype | None = None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default): p = 2/'fro', 1, inf, -inf, 0, or
    any other number.

    Example:
        >>> import gradsum
        >>> gradsum.tensor([3.0, -4.0]).norm().item()
        5.0
    """
    if isinstance(p, str):
        # torch.norm: 'fro' over at most two dims is the vector 2-norm; anything else string
        # goes to linalg.matrix_norm, which takes exactly two dims (all of them by default)
        short = dim is None or isinstance(dim, (int, xp.integer)) or len(dim) <= 2
        if p != "fro" or not short:
            mdims = ([dim] if isinstance(dim, (int, xp.integer)) else
                     list(range(a._array.ndim)) if dim is None else list(dim))
            if len(mdims) != 2:
                raise RuntimeError(_messages.matrix_norm_dim_not_pair(mdims, p))
            if p != "fro":
                raise RuntimeError(_messages.norm_unsupported_p(p))
        p = 2
    if dtype is not None:
        a = a.to(dtype)
    _require_float(a, "norm")
    p = 2.0 if p is None else float(p)  # (torch: p=None is the 2-norm)
    x = a._array
    dims = _dims(dim, x.ndim)
    if x.size == 0 and p in (math.inf, -math.inf):
        name = "inf" if p > 0 else "-inf"
        if not _given(dim):
            raise RuntimeError(_messages.vector_norm_inf_of_empty(name, x.shape))
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(_messages.vector_norm_inf_over_empty_dim(name, d, x.shape))
    with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = xp.asarray(_norm_array(x, p, dims, keepdim)).astype(x.dtype, copy=False)
    if not needs_grad(a):
        return _make(out)
    node = LinalgVectorNormBackward0()
    node.p = p
    return _record_saving_both(node, a, out, dims, x.shape, keepdim)


def _logical_axes(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """NumPy axes for all/any: unlike sum, an empty dim tuple reduces nothing (torch's rule);
    a 0-d tensor accepts dim 0 / -1 and reduces nothing (NumPy has no axis 0 there)."""
    if dim is None:
        return None
    dims = wrap_dims(dim, ndim)
    return dims if ndim else ()


@register("all", method=True)
def all(a: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    x = a._array
    return _make(xp.asarray(x.all(axis=_logical_axes(dim, x.ndim), keepdims=keepdim)))


@register("any", method=True)
def any(a: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    x = a._array
    return _make(xp.asarray(x.any(axis=_logical_axes(dim, x.ndim), keepdims=keepdim)))


@register("count_nonzero", method=True)
def count_nonzero(a: Tensor, dim: Any = None) -> Tensor:
    """Non-zero entries counted over ``dim`` (all dims for None or an empty tuple, as in
    torch; a 0-d tensor accepts dim 0 / -1)."""
    x = a._array
    return _make(xp.asarray(xp.count_nonzero(
        x, axis=None if dim is None else _dims(dim, x.ndim))).astype(xp.int64))


# -- sum_to / expand ---------------------------------------------------------------------------
class SumToBackward0(Node):
    __slots__ = ("in_shape",)

    def backward(self, g: Tensor) -> Tensor:
        return F.expand(g, self.in_shape)


_ONES: dict[tuple[int, Any], Any] = {}


def _sum_leading(x: Any, lead: int) -> Any:
    """``x.sum(axis=range(lead))``. For a C-contiguous float array it is the vector-matrix
    product ``ones @ x`` (BLAS), which on the column sums of a bias gradient is 2-3 times
    faster than NumPy's reduction across rows (the summation order differs: the result may
    differ in the last bit, as between any two libraries)."""
    rows = 1
    for s in x.shape[:lead]:
        rows *= s
    if rows < 2 or x.dtype.char not in "fd" or not x.flags.c_contiguous or x.size == 0:
        out = x.sum(axis=tuple(range(lead)))
        return out if out.__class__ is xp.ndarray else xp.asarray(out)
    ones = _ONES.get((rows, x.dtype.char))
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[(rows, x.dtype.char)] = xp.ones(rows, dtype=x.dtype)
        ones.flags.writeable = False
    tail = x.shape[lead:]
    out = xp.matmul(ones, x.reshape(rows, -1))
    return out.reshape(tail) if len(tail) != 1 else out


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def sum_to(a: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``a`` down to ``shape`` (the reverse of broadcasting): the one unbroadcast helper."""
    x = a._array
    xs = x.shape
    if xs == shape or xs == tuple(shape):
        return a
    lead = x.ndim - len(shape)
    if lead > 0 and xs[lead:] == tuple(shape):  # only leading dimensions to sum (a bias)
        # (the bias gradient of a 2-D activation: one product with a row of ones)
        ones = _ONES.get((xs[0], x.dtype.char)) if lead == 1 and x.ndim == 2 else None
        if ones is not None and x.flags.c_contiguous:
            out = _xp_dot(ones, x)
        else:
            out = _sum_leading(x, lead)
        if not needs_grad(a):
            return _make(out)
        node = SumToBackward0()
        node.in_shape = xs
        return record(node, (a,), out)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1
    )
    out = add_reduce(x, axes, True) if axes else x
    if lead > 0:
        out = out.reshape(-1) if out.size != _prod(shape) else out.reshape(shape)
    if out.shape != tuple(shape):  # (torch's engine refuses a gradient that shape cannot
        # be broadcast to, e.g. after an unsqueeze_ in no_grad mode)
        raise RuntimeError(_messages.sum_to_invalid_gradient(xs, shape))
    if not needs_grad(a):
        return _make(out)
    node = SumToBackward0()
    node.in_shape = x.shape
    return record(node, (a,), out)


def _contig(a: Any, dtype: Any = None) -> Any:
    """``a`` as a C-contiguous array of ``dtype`` (0-d stays 0-d, unlike ascontiguousarray)."""
    a = xp.asarray(a, dtype=dtype)
    return a if a.flags.c_contiguous else a.copy()
aminmax_t = namedtuple("aminmax", ["min", "max"])


# -- std_mean / var_mean / aminmax: one node, two outputs --------------------------------------
class _TwoOut(Node):
    __slots__ = ("correction", "dims", "full", "in_shape", "keepdim")
    num_outputs = 2

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads  # (the rules take a None gradient for an unused output)


class VarMeanBackward0(_TwoOut):
    """torch's ``var_mean`` rule: var's gradient plus mean's."""

    __slots__ = ()

    def backward(self, gv: Tensor | None, gm: Tensor | None) -> Tensor | None:
        (a,) = self.saved()[:1]
        res = None if gv is None else _var_backward(gv, a, self)
        return _add_mean_grad(res, gm, self)


class StdMeanBackward0(_TwoOut):
    """torch's ``std_mean`` rule: std's gradient (0 where the std is 0) plus mean's."""

    __slots__ = ()

    def backward(self, gs: Tensor | None, gm: Tensor | None) -> Tensor | None:
        a, out = self.saved()
        res = None
        if gs is not None:
            with xp.errstate(divide="ignore", invalid="ignore"):
                g_var = F.div(gs, F.mul(out, 2))
            g_var = F.where(_make(out._array == 0), F.zeros((), dtype=gs.dtype), g_var)
            res = _var_backward(g_var, a, self)
        return _add_mean_grad(res, gm, self)


def _add_mean_grad(res: Tensor | None, gm: Tensor | None, node: _TwoOut) -> Tensor | None:
    if gm is None:
        return res
    n = 1
    for d in node.dims:
        n *= node.in_shape[d]
    gmean = F.div(_expand_back(gm, node.in_shape, node.dims, node.keepdim), n)
    return gmean if res is None else F.add(res, gmean)


def _welford_nonfinite_mean(x: Any, m: Any, dims: tuple[int, ...]) -> Any:
    """The mean ``m`` (reduced with keepdims) as torch's Welford kernel gives it where a slice
    holds an inf or nan: each step adds ``(x - mean) / k``, so after an infinite mean any
    further element gives ``inf - inf``: the mean is +-inf only when the slice's one
    non-finite element is an infinity at its end (in the reduction's order), otherwise nan."""
    rest = [d for d in range(x.ndim) if d not in dims]
    flat = x.transpose(rest + list(dims)).reshape([x.shape[d] for d in rest] + [-1])
    bad = ~xp.isfinite(flat)
    keep_inf = (bad.sum(axis=-1) == 1) & xp.isinf(flat[..., -1])
    nan_at = (bad.any(axis=-1) & ~keep_inf).reshape(m.shape)
    return xp.where(nan_at, math.nan, m).astype(m.dtype, copy=False)


def _stat_mean(name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,
               correction: Any, is_std: bool) -> tuple[Tensor, Tensor]:
    require_tensor(name, "input", 1, input)
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    x = input._array
    if x.dtype.kind not in "fV":
        raise RuntimeError(_messages.var_std_not_floating(name, x.dtype))
    corr = _correction(unbiased, correction)
    dims = _dims(dim, x.ndim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    with xp.errstate(invalid="ignore", divide="ignore"):
        m = x.mean(axis=dims, keepdims=True)
        v = ((x - m) ** 2).sum(axis=dims, keepdims=keepdim) / builtins.max(n - corr, 0)
        if n and not xp.isfinite(m).all():
            m = _welford_nonfinite_mean(x, m, dims)
        first = xp.sqrt(v) if is_std else v
        mean = m if keepdim else m.reshape(xp.sum(x, axis=dims).shape)
    first = _contig(xp.asarray(first, dtype=x.dtype))
    mean = _contig(xp.asarray(mean, dtype=x.dtype))
    if not needs_grad(input):
        return (_make(first), _make(mean))
    node: _TwoOut = StdMeanBackward0() if is_std else VarMeanBackward0()
    node.dims, node.in_shape, node.keepdim, node.correction = dims, x.shape, keepdim, corr
    node.full = dim is None or x.ndim == 0
    t0 = record(node, (input,), first)
    t1 = Tensor._make(mean, False, node, 1)
    if is_std:
        node.save(input, outputs=(t0,))
    else:
        node.save(input)
    return (t0, t1)


@register("var_mean")
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` in one node (``correction=1`` by default).

    Example:
        >>> import gradsum
        >>> v, m = gradsum.var_mean(gradsum.tensor([1.0, 2.0, 3.0]), correction=0)
        >>> round(v.item(), 4), m.item()
        (0.6667, 2.0)
    """
    return _stat_mean("var_mean", input, dim, unbiased, keepdim, correction, False)


@register("std_mean")
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` in one node (``correction=1`` by default)."""
    return _stat_mean("std_mean", input, dim, unbiased, keepdim, correction, True)


class AminmaxBackward0(_TwoOut):
    """Each of min and max shares its gradient evenly among its tied elements (amin/amax)."""

    __slots__ = ()

    def backward(self, gmin: Tensor | None, gmax: Tensor | None) -> Tensor | None:
        a, lo, hi = self.saved()
        res = None
        for g, out in ((gmin, lo), (gmax, hi)):
            if g is None:
                continue
            o = out._array
            if not self.keepdim and self.dims:
                o = o.reshape(_kept_shape(self.in_shape, self.dims))
            mask = a._array == o
            w = _make((mask / mask.sum(axis=self.dims, keepdims=True)).astype(g._array.dtype))
            part = F.mul(_expand_back(g, self.in_shape, self.dims, self.keepdim), w)
            res = part if res is None else F.add(res, part)
        return res


@register("aminmax", method=True)
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """The named tuple ``(min, max)`` over ``dim`` (all elements by default); ties share the
    gradient evenly, as amin/amax.

    Example:
        >>> import gradsum
        >>> gradsum.aminmax(gradsum.tensor([[1, 5], [3, 2]]), dim=1)
        aminmax(min=tensor([1, 2]), max=tensor([5, 3]))
    """
    require_tensor("aminmax", "input", 1, input)
    x = input._array
    if dim is None:
        dims = tuple(range(x.ndim))
        if x.size == 0:
            raise RuntimeError(_messages.aminmax_of_empty(x.shape))
    else:
        d = wrap_dim(dim, x.ndim)
        dims = (d,) if x.ndim else ()
        if x.ndim and x.shape[d] == 0:
            raise IndexError(_messages.aminmax_dim_empty(d, x.shape))
    kd = keepdim and dim is not None  # (torch: keepdim applies only with a dim)
    if dim is None and keepdim and x.ndim:
        kd = True
    lo = _contig(xp.asarray(xp.min(x, axis=dims, keepdims=kd), dtype=x.dtype))
    hi = _contig(xp.asarray(xp.max(x, axis=dims, keepdims=kd), dtype=x.dtype))
    if not needs_grad(input):
        return aminmax_t(_make(lo), _make(hi))
    node = AminmaxBackward0()
    node.dims, node.in_shape, node.keepdim = dims, x.shape, kd
    t0 = record(node, (input,), lo)
    t1 = Tensor._make(hi, False, node, 1)
    node.save(input, outputs=(t0, t1))
    return aminmax_t(t0, t1)


# -- bincount / histc --------------------------------------------------------------------------
class _NoDerivative(Node):
    """The node torch attaches where an op has no derivative formula (its backward raises)."""

    __slots__ = ("op",)

    def backward(self, g: Tensor) -> Tensor:
        raise RuntimeError(_messages.derivative_not_implemented(self.op))


_NoDerivative.__name__ = _NoDerivative.__qualname__ = "NotImplemented"  # (torch's node name)


@register("bincount", method=True)
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0 .. max`` occurs in a 1-D non-negative integer tensor (at
    least ``minlength`` bins), or the sums of ``weights`` per value.

    Example:
        >>> import gradsum
        >>> gradsum.bincount(gradsum.tensor([1, 1, 3]), minlength=5).tolist()
        [0, 2, 0, 1, 0]
    """
    require_tensor("bincount", "input", 1, input)
    x = input._array
    if x.dtype.kind not in "iu" and x.dtype.kind != "b":
        raise D.not_implemented("bincount_cpu", x.dtype, "Convert the input with .long().")
    if minlength < 0:
        raise RuntimeError(_messages.bincount_negative_minlength(minlength))
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError(_messages.bincount_input_not_1d_nonnegative(x.shape))
    if weights is not None:
        w = weights._array
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError(_messages.bincount_weights_mismatch(x.shape, w.shape))
        odt = xp.float32 if w.dtype == xp.float32 else xp.float64
        out = xp.bincount(x, w.astype(xp.float64), minlength).astype(odt)
        if needs_grad(weights):
            node = _NoDerivative()
            node.op = "bincount"
            return record(node, (weights,), _contig(out))
        return _make(_contig(out))
    return _make(xp.bincount(x.astype(xp.int64, copy=False), minlength=minlength
                             ).astype(xp.int64, copy=False))  # (no copies of int64 arrays)


@register("histc", method=True)
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``bins`` equal-width bins between ``min`` and ``max`` (the data's range
    when both are 0; values outside are ignored). Not differentiable.

    Example:
        >>> import gradsum
        >>> gradsum.histc(gradsum.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
        [0.0, 2.0, 1.0, 0.0]
    """
    require_tensor("histc", "input", 1, input)
    x = input._array
    if x.dtype.kind not in "fV":
        raise D.not_implemented("histogram_cpu", x.dtype, "Convert the input with .float().")
    if bins <= 0:
        raise RuntimeError(_messages.histc_bins_not_positive(bins))
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(_messages.histc_max_below_min(min, max))
    flat = x.reshape(-1).astype(xp.float64)
    keep = flat[(flat >= lo) & (flat <= hi)]
    pos = xp.floor((keep - lo) * bins / (hi - lo)).astype(xp.int64)
    pos = xp.minimum(pos, bins - 1)
    return _make(xp.bincount(pos, minlength=bins).astype(x.dtype))


# -- nansum / nanmean -----------------------------------------------------------------------
class NansumBackward0(Node):
    """torch's ``nansum_backward``: the sum's gradient, zero where the input is nan."""

    __slots__ = ("dims", "in_dtype", "keepdim")

    def backward(self, g: Tensor) -> Tensor:
        (a,) = self.saved()
        if g._array.dtype != self.in_dtype:
            g = F.to_dtype(g, D.from_numpy_dtype(self.in_dtype))
        ge = _expand_back(g, a._array.shape, self.dims, self.keepdim)
        return F.mul(ge, _make(~xp.isnan(a._array)))


@register("nansum", method=True)
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           dtype: D.dtype | None = None) -> Tensor:
    """Sum over ``dim`` (all by default) with nan counted as zero (integers and bools give
    int64, as :func:`sum`).

    Example:
        >>> import gradsum
        >>> gradsum.nansum(gradsum.tensor([1.0, float("nan"), 2.0])).item()
        3.0
    """
    x = input._array
    dims = _dims(dim, x.ndim)
    if dtype is not None:
        x = x.astype(dtype.np)
    elif x.dtype.kind in "biu":
        x = x.astype(xp.int64)
    if x.dtype.kind in "fV":
        x = xp.where(xp.isnan(x), xp.zeros((), x.dtype), x)
    out = xp.asarray(xp.add.reduce(x, axis=dims, keepdims=keepdim, dtype=x.dtype))
    if not needs_grad(input):
        return _make(out)
    _check_differentiable(out, "nansum")
    node = NansumBackward0()
    node.dims, node.keepdim, node.in_dtype = dims, keepdim, input._array.dtype
    t = record(node, (input,), out)
    node.save(input)
    return t


@register("nanmean", method=True)
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: D.dtype | None = None) -> Tensor:
    """The mean over ``dim`` of the entries that are not nan (nan where all are; floating
    inputs only). torch composes it as ``nansum / count``, so its node is ``DivBackward0``.

    Example:
        >>> import gradsum
        >>> gradsum.nanmean(gradsum.tensor([1.0, float("nan"), 2.0])).item()
        1.5
    """
    if input._array.dtype.kind not in "fV":
        raise RuntimeError(_messages.nanmean_not_floating(input._array.dtype))
    count = F.sum(_make(~xp.isnan(input._array)), dim, keepdim)
    return F.div(nansum(input, dim, keepdim, dtype=dtype), count)


# -- distances ------------------------------------------------------------------------------
class DistBackward0(Node):
    """torch's ``norm_backward`` of ``input - other`` (then summed back to each shape, with
    the sign for ``other``)."""

    __slots__ = ("a_shape", "b_shape", "p")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b, norm = self.saved()
        d = F.sub(a, b)
        p, x, nrm = self.p, F.sub(a, b)._array, norm._array
        zero = F.zeros((), dtype=g.dtype)
        with xp.errstate(divide="ignore", invalid="ignore"):
            if p == 0:
                gd = F.mul(d, zero)
            elif p == 1:
                gd = F.mul(F.sign(d), g)
            elif p == 2:
                gd = F.mul(d, F.masked_fill(F.div(g, norm), _make(nrm == 0), 0.0))
            elif math.isinf(p):
                mask = (xp.abs(x) == nrm) | xp.isnan(x)
                cnt = _make(xp.asarray(mask.sum(), dtype=x.dtype))
                gd = F.mul(F.sign(d), F.mul(F.div(g, cnt), _make(mask.astype(x.dtype))))
            elif p < 1:
                scaled = F.masked_fill(F.mul(F.sign(d), F.pow(F.abs(d), p - 1)),
                                       _make(x == 0), 0.0)
                gd = F.mul(F.mul(scaled, g), F.pow(norm, 1 - p))
            elif p < 2:
                scale = F.masked_fill(F.div(g, F.pow(norm, p - 1)), _make(nrm == 0), 0.0)
                gd = F.mul(F.mul(F.sign(d), F.pow(F.abs(d), p - 1)), scale)
            else:
                scale = F.masked_fill(F.div(g, F.pow(norm, p - 1)), _make(nrm == 0), 0.0)
                gd = F.mul(F.mul(d, F.pow(F.abs(d), p - 2)), scale)
        return (F.sum_to(gd, self.a_shape) if self.needs(0) else None,
                F.sum_to(F.neg(gd), self.b_shape) if self.needs(1) else None)


@register("dist", method=True)
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), over all entries.

    Example:
        >>> import gradsum
        >>> gradsum.dist(gradsum.tensor([0.0, 0.0]), gradsum.tensor([3.0, 4.0])).item()
        5.0
    """
    require_tensor("dist", "input", 1, input)
    require_tensor("dist", "other", 2, other)
    x, y, _ = binary_arrays(input, other)
    if x.dtype.kind not in "fV":
        raise RuntimeError(_messages.dist_not_floating(x.dtype))
    try:
        d = xp.abs(x - y).reshape(-1)
    except ValueError:
        raise broadcast_error(x, y) from None
    p = float(p)
    with xp.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if d.size == 0:
            val = 0.0 if p >= 0 or math.isnan(p) else math.inf
            val = val if p != -math.inf else math.inf
        elif p == 0:
            val = (d != 0).sum()
        elif p == math.inf:
            val = d.max()
        elif p == -math.inf:
            val = d.min()
        else:
            val = (d ** p).sum() ** (1.0 / p)
    out = xp.asarray(val, dtype=x.dtype)
    if not needs_grad(input, other):
        return _make(out)
    node = DistBackward0()
    node.a_shape, node.b_shape, node.p = x.shape, y.shape, p
    t = record(node, (input, other), out)
    node.save(input, other, outputs=(t,))
    return t


@register("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``torch.cosine_similarity`` and ``nn.functional.cosine_similarity``: ``sum(x1 /
    max(|x1|, eps) * x2 / max(|x2|, eps), dim)`` after broadcasting; the norms are clamped
    without recording (torch's gradient: that of the unclamped norm).

    Example:
        >>> import gradsum
        >>> a = gradsum.tensor([[1.0, 0.0]])
        >>> gradsum.cosine_similarity(a, gradsum.tensor([[2.0, 0.0]])).tolist()
        [1.0]
    """
    dt = D.promote_types(x1.dtype, x2.dtype)
    if not dt.is_floating_point:
        raise RuntimeError(_messages.expected_common_dtype_floating_point(dt))
    if x1.dtype != dt:
        x1 = x1.to(dt)
    if x2.dtype != dt:
        x2 = x2.to(dt)
    try:
        shape = tuple(xp.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except ValueError:
        raise RuntimeError(_messages.size_tensor_match_size_tensor_b_cosine(x1, x2)) from None
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    n1 = F.clone(norm(x1, 2, dim, keepdim=True))
    n2 = F.clone(norm(x2, 2, dim, keepdim=True))
    with no_grad():
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return sum(F.mul(F.div(x1, n1), F.div(x2, n2)), dim)


class NormBackward1(LinalgVectorNormBackward0):
    """torch's ``norm(input, p, dim)`` overload (what ``pairwise_distance`` calls): the rule
    of ``linalg.vector_norm``."""

    __slots__ = ()


@register("pairwise_distance")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``torch.pairwise_distance`` and ``nn.functional.pairwise_distance``: ``norm(x1 - x2 +
    eps, p)`` over the last dim of the broadcast inputs.

    torch composes it in C++, so its nodes are those of the ATen overloads:
    ``NormBackward1`` over ``AddBackward1`` (a tensor plus a scalar) over ``SubBackward0``.

    Example:
        >>> import gradsum
        >>> a = gradsum.tensor([[0.0, 0.0]])
        >>> round(gradsum.pairwise_distance(a, gradsum.tensor([[3.0, 4.0]])).item(), 4)
        5.0
    """
    out_dim = builtins.max(x1.ndim, x2.ndim)
    diff = F.sub(x1, x2)
    diff = _scalar_op(diff, eps, False) if diff.is_floating_point() else F.add(diff, eps)
    out = norm(diff, p, None if out_dim == 0 else out_dim - 1, keepdim)
    return as_node(out, NormBackward1)


histogram_result = namedtuple("histogram", ["hist", "bin_edges"])


# -- cov, corrcoef, histogram ---------------------------------------------------------------------
def _check_cov_weights(weights: Tensor, which: str, kinds: str, kind: str, n_obs: int) -> None:
    """cov's checks of ``fweights`` (integral) and ``aweights`` (floating): at most 1-D, of a
    dtype kind in ``kinds`` (``kind`` names it in the text), one per observation, none
    negative."""
    w = weights._array
    if w.ndim > 1:
        raise RuntimeError(_messages.cov_weights_too_many_dims(which, w.ndim))
    if w.dtype.kind not in kinds:
        raise RuntimeError(_messages.cov_weights_wrong_dtype(which, kind, w.dtype))
    if w.size != n_obs:
        raise RuntimeError(_messages.cov_weights_numel_mismatch(which, w.size, n_obs))
    if n_obs and w.min() < 0:
        raise RuntimeError(_messages.cov_weights_negative(which))


@tensor_method("cov")
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
        raise RuntimeError(_messages.cov_corrcoef_too_many_dims("cov", x.ndim))
    if x.dtype.kind == "b":
        raise RuntimeError(_messages.cov_bool_input())
    inp = F.reshape(input, (1, -1)) if x.ndim < 2 else input
    n_obs = inp._array.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        _check_cov_weights(fweights, "fweights", "iu", "integral", n_obs)
        w = fweights
    if aweights is not None:
        _check_cov_weights(aweights, "aweights", "fV", "floating point", n_obs)
        w = aweights if w is None else F.mul(w, aweights)
    if w is None:
        w_sum: Tensor = _make(xp.asarray(n_obs, dtype=xp.int64))
    else:
        w_sum = F.sum(w)
        if w_sum.item() == 0:
            raise RuntimeError(_messages.cov_weights_sum_zero())
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

        warnings.warn(_messages.cov_degrees_of_freedom(), UserWarning, stacklevel=2)
        norm_factor = F.zeros_like(norm_factor)
    centered = F.sub(inp, F.unsqueeze(avg, 1))
    c = F.mm(centered, F.t(centered if w is None else F.mul(centered, w)))
    return F.squeeze(F.div(c, norm_factor))


@tensor_method("corrcoef")
def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input`` (clipped to
    ``[-1, 1]``), as ``torch.corrcoef``.

    Example:
        >>> import gradsum
        >>> gradsum.corrcoef(gradsum.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
    """
    if input._array.ndim > 2:
        raise RuntimeError(_messages.cov_corrcoef_too_many_dims("corrcoef", input._array.ndim))
    c = cov(input)
    if c._array.ndim == 0:
        return F.div(c, c)
    std = F.sqrt(F.diagonal(c))
    c = F.div(c, F.reshape(std, (-1, 1)))
    c = F.div(c, F.reshape(std, (1, -1)))
    return F.clamp(c, -1, 1)


@tensor_method("histogram")
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
            raise RuntimeError(_messages.histogram_bins_tensor_not_1d(edges.ndim))
        edges_in: Any = edges.astype(xp.float64)
    else:
        if int(bins) <= 0:
            raise RuntimeError(_messages.histogram_bins_not_positive(bins))
        edges_in = int(bins)
    w = None if weight is None else weight._array.astype(xp.float64).reshape(-1)
    if w is not None and weight is not None and weight._array.shape != x.shape:
        raise RuntimeError(_messages.histogram_weight_shape_mismatch(x.shape,
                                                                     weight._array.shape))
    rng = None if range is None else (float(range[0]), float(range[1]))
    if rng is not None and rng[0] > rng[1]:
        raise RuntimeError(_messages.histogram_range_reversed(rng[0], rng[1]))
    h, e = xp.histogram(x.reshape(-1).astype(xp.float64), edges_in, range=rng, weights=w,
                        density=density)
    return histogram_result(_make(xp.asarray(h, dtype=x.dtype)),
                            _make(xp.asarray(e, dtype=x.dtype)))


# -- sum_to_size (bound as Tensor methods in gradsum.ops) ------------------------------------------
@tensor_method("sum_to_size")
def sum_to_size(a: Tensor, *size: Any) -> Tensor:
    """Sum ``a`` down to ``size``, which must broadcast to ``a.shape`` (``a`` itself when the
    shapes are equal).

    Example:
        >>> import gradsum
        >>> gradsum.ones(2, 3).sum_to_size(1, 3).tolist()
        [[2.0, 2.0, 2.0]]
    """
    shape = tuple(int(s) for s in (size[0] if len(size) == 1 and isinstance(
        size[0], (tuple, list)) else size))
    xs = a._array.shape
    if len(shape) > len(xs) or builtins.any(
            s != 1 and s != xs[len(xs) - len(shape) + i] for i, s in enumerate(shape)):
        raise RuntimeError(_messages.sum_to_size_not_expandable(shape, xs))
    return sum_to(a, shape)
