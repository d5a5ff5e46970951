"""torch's everyday top-level functions that compose from gradsum's ops: broadcasting helpers,
the ``*stack``/``*split``/``atleast_*d`` family, ``tensor_split``, ``ravel``, ``nansum`` and
``nanmean``, ``isin``, ``float_power``, ``inner``, ``cartesian_prod``, ``combinations``,
``matrix_power``, ``diagflat``, the comparison aliases and the small predicates.

Where torch composes an op from others, so does gradsum, and the ``grad_fn`` is then torch's
(``hstack`` is a ``CatBackward0``, ``tensor_split`` gives ``SliceBackward0`` views). Where torch
has a node of its own (``LogitBackward0``, ``FmaxBackward0``, ``NansumBackward0``,
``VdotBackward0``, ``DistBackward0``, ``BlockDiagBackward0``, ``ClampMinBackward0``, the
``*ScatterBackward0`` family), gradsum has one with that name, its backward written in gradsum
ops (double backward works).

Example:
    >>> import gradsum
    >>> a = gradsum.tensor([1.0, 2.0], requires_grad=True)
    >>> y = gradsum.hstack([a, a * 3])
    >>> y.grad_fn.name(), y.tolist()
    ('CatBackward0', [1.0, 2.0, 3.0, 6.0])
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import gradsum.ops as F
from gradsum import _device
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Size, Tensor
from gradsum.autograd import _messages
from gradsum.autograd.grad_mode import _state as _grad_state
from gradsum.autograd.grad_mode import no_grad
from gradsum.autograd.graph import HOLDS_STATE, Node
from gradsum.ops._core import (
    _make,
    binary_arrays,
    broadcast_error,
    needs_grad,
    record,
    register,
    wrap_dim,
)
from gradsum.ops.elementwise import _F32_F64, select_grad
from gradsum.ops.more import _require_tensor, _tname
from gradsum.ops.reduction import _check_differentiable, _dims, _expand_back

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
    "broadcast_tensors", "cartesian_prod", "clamp_max", "clamp_min", "column_stack",
    "combinations", "cosine_similarity", "diagflat", "diagonal_scatter", "dist", "dsplit",
    "dstack", "float_power", "fmax", "fmin", "greater", "greater_equal", "hsplit", "hstack",
    "index_copy", "index_fill", "inner", "is_complex", "is_same_size", "isin", "less",
    "less_equal", "logit", "logspace", "masked_select", "matrix_power", "nanmean", "nansum",
    "not_equal", "pairwise_distance", "ravel", "row_stack", "scalar_tensor", "select_scatter",
    "slice_scatter", "square_", "subtract", "swapdims", "tensor_split", "tile", "unravel_index",
    "vdot", "vsplit", "vstack",
]


def _tensor_list(name: str, tensors: Any) -> list[Tensor]:
    """The ``tensors`` argument of a ``*stack``: a non-empty sequence of tensors."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}. Pass a list, e.g. {name}([a, b]).")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of "
                            f"Tensors, but found element of type {type(t).__name__} at pos {i}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList (got an empty sequence). "
                           "Pass at least one tensor.")
    return list(tensors)


def _int_shape(s: Any) -> tuple[int, ...]:
    if isinstance(s, (int, xp.integer)):
        return (int(s),)
    return tuple(int(v) for v in s)


# -- broadcasting ---------------------------------------------------------------------------
def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (an int is a 1-D shape).

    Example:
        >>> import gradsum
        >>> gradsum.broadcast_shapes((3, 1), (4,), 1)
        (3, 4)
    """
    norm = [_int_shape(s) for s in shapes]
    for s in norm:
        if builtins.any(v < 0 for v in s):
            raise ValueError(f"Attempting to broadcast a dimension with negative length! "
                             f"(shape {s}). Sizes must be >= 0.")
    ndim = max((len(s) for s in norm), default=0)
    result = [1] * ndim
    for i, s in enumerate(norm):
        for j, v in enumerate(s):
            k = ndim - len(s) + j
            if v == 1:
                continue
            if result[k] == 1:
                result[k] = v
            elif result[k] != v:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {v} at {j - len(s)}! "
                    f"Mismatching argument at index {i} had {s}; but expected shape should be "
                    f"broadcastable to {result}"
                )
    return Size(result)



def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape (``ExpandBackward0`` views; a tensor that
    already has that shape is returned itself, as torch's).

    Example:
        >>> import gradsum
        >>> a, b = gradsum.broadcast_tensors(gradsum.zeros(2, 1), gradsum.ones(3))
        >>> tuple(a.shape), tuple(b.shape)
        ((2, 3), (2, 3))
    """
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"broadcast_tensors(): expected Tensor as element {i} in argument "
                            f"0, but got {type(t).__name__}. Wrap it with gradsum.tensor().")
    shape: tuple[int, ...] = ()
    for t in tensors:
        s = tuple(t._array.shape)
        for i in range(min(len(shape), len(s))):
            a, b = shape[len(shape) - 1 - i], s[len(s) - 1 - i]
            if a != b and a != 1 and b != 1:
                raise RuntimeError(_messages.broadcast_mismatch(shape, s, i))
        shape = tuple(xp.broadcast_shapes(shape, s))
    return tuple(t if tuple(t._array.shape) == shape else F.expand(t, shape) for t in tensors)


# -- tile, stacks, atleast_*d ---------------------------------------------------------------
@register("tile")
def tile(input: Tensor, dims: Any) -> Tensor:
    """``input`` repeated ``dims`` times along each dimension; ``dims`` shorter than
    ``input.ndim`` is padded with ones at the front (a ``RepeatBackward0`` copy).

    Example:
        >>> import gradsum
        >>> gradsum.tile(gradsum.tensor([[1, 2]]), (2,)).tolist()
        [[1, 2, 1, 2]]
    """
    reps = _int_shape(dims)
    return F.repeat(input, (1,) * (input.ndim - len(reps)) + reps)


def _tile_method(self: Tensor, *dims: Any) -> Tensor:
    """``t.tile(*dims)``: :func:`tile` with the dims as arguments or one sequence."""
    return tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)


def _atleast(n: int, name: str, tensors: tuple[Any, ...]) -> Any:
    seq = len(tensors) == 1 and isinstance(tensors[0], (list, tuple))
    items = tuple(tensors[0]) if seq else tensors
    out = []
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(t).__name__}): expected a Tensor or a tuple of Tensors. "
                            "Wrap it with gradsum.tensor().")
        nd = t._array.ndim
        if nd >= n:
            out.append(t)
        elif nd == 0:
            out.append(F.reshape(t, (1,) * n))
        elif nd == 1:
            out.append(F.unsqueeze(F.unsqueeze(t, 0), -1) if n == 3 else F.unsqueeze(t, 0))
        else:
            out.append(F.unsqueeze(t, -1))
    if len(tensors) == 1 and not seq:
        return out[0]
    return tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension (a 0-d one becomes shape ``(1,)``, a view);
    one tensor in, one tensor out, otherwise a tuple.

    Example:
        >>> import gradsum
        >>> gradsum.atleast_1d(gradsum.tensor(3.0)).shape
        (1,)
    """
    return _atleast(1, "atleast_1d", tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (a 1-D one of size ``n`` becomes ``(1, n)``).

    Example:
        >>> import gradsum
        >>> gradsum.atleast_2d(gradsum.tensor([1, 2])).shape
        (1, 2)
    """
    return _atleast(2, "atleast_2d", tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (``(n,)`` -> ``(1, n, 1)``, ``(m, n)`` ->
    ``(m, n, 1)``, as NumPy's).

    Example:
        >>> import gradsum
        >>> gradsum.atleast_3d(gradsum.ones(2, 3)).shape
        (2, 3, 1)
    """
    return _atleast(3, "atleast_3d", tensors)


@register("hstack")
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1 (dim 0 for 1-D tensors; 0-d ones count as 1-D).

    Example:
        >>> import gradsum
        >>> gradsum.hstack([gradsum.tensor([1, 2]), gradsum.tensor([3])]).tolist()
        [1, 2, 3]
    """
    ts = atleast_1d(_tensor_list("hstack", tensors))
    return F.cat(list(ts), 0 if ts[0].ndim == 1 else 1)


@register("vstack", "row_stack")
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack rows: concatenate along dim 0 after :func:`atleast_2d` (``row_stack`` too).

    Example:
        >>> import gradsum
        >>> gradsum.vstack([gradsum.tensor([1, 2]), gradsum.tensor([3, 4])]).tolist()
        [[1, 2], [3, 4]]
    """
    return F.cat(list(atleast_2d(_tensor_list("vstack", tensors))), 0)


row_stack = vstack


@register("dstack")
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along the third dimension after :func:`atleast_3d`.

    Example:
        >>> import gradsum
        >>> gradsum.dstack([gradsum.tensor([1, 2]), gradsum.tensor([3, 4])]).tolist()
        [[[1, 3], [2, 4]]]
    """
    return F.cat(list(atleast_3d(_tensor_list("dstack", tensors))), 2)


@register("column_stack")
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenate along dim 1, each 0-d or 1-D tensor taken as one column.

    Example:
        >>> import gradsum
        >>> gradsum.column_stack([gradsum.tensor([1, 2]), gradsum.tensor([3, 4])]).tolist()
        [[1, 3], [2, 4]]
    """
    ts = _tensor_list("column_stack", tensors)
    cols = [F.reshape(t, (t._array.size, 1)) if t._array.ndim <= 1 else t for t in ts]
    return F.cat(cols, 1)


# -- tensor_split and the *split helpers ------------------------------------------------------
def _slice_dim(input: Tensor, d: int, start: int, stop: int) -> Tensor:
    lo, hi, _ = slice(start, stop).indices(input._array.shape[d])
    key = (slice(None),) * d + (slice(lo, max(lo, hi)),)
    return F.getitem(input, key)


@register("tensor_split")
def tensor_split(input: Tensor, indices_or_sections: Any = None, dim: int = 0, *,
                 sections: int | None = None, indices: Sequence[int] | None = None
                 ) -> tuple[Tensor, ...]:
    """Split into ``sections`` near-equal parts (the first ``size % sections`` one longer) or
    at the ``indices`` along ``dim``; the parts are views (``SliceBackward0``).

    Example:
        >>> import gradsum
        >>> [p.tolist() for p in gradsum.arange(5).tensor_split(2)]
        [[0, 1, 2], [3, 4]]
        >>> [p.tolist() for p in gradsum.arange(5).tensor_split([1, 4])]
        [[0], [1, 2, 3], [4]]
    """
    spec = indices_or_sections
    if spec is None:
        spec = sections if sections is not None else indices
    if spec is None:
        raise TypeError("tensor_split() missing required argument 'indices_or_sections': pass "
                        "a number of sections or a list of split indices.")
    nd = input._array.ndim
    if nd == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims. Reshape it to (1,) first.")
    if isinstance(spec, Tensor):
        arr = spec._array
        if arr.dtype != xp.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_tname(arr.dtype)}. Convert it with .long().")
        if arr.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arr.ndim} dims")
        spec = int(arr) if arr.ndim == 0 else [int(v) for v in arr]
    d = wrap_dim(dim, nd)
    size = input._array.shape[d]
    if isinstance(spec, (int, xp.integer)):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        bounds, start = [], 0
        for i in range(n):
            stop = start + base + (1 if i < extra else 0)
            bounds.append((start, stop))
            start = stop
    else:
        cuts = [int(v) for v in spec]
        starts = [0, *cuts]
        stops = [*cuts, size]
        bounds = list(zip(starts, stops))
    return tuple(_slice_dim(input, d, a, b) for a, b in bounds)


def _split_helper(name: str, min_dim: int, input: Tensor, spec: Any) -> tuple[Tensor, ...]:
    nd = input._array.ndim
    if nd < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension"
                           f", but got a tensor with {nd} "
                           "dimensions!")
    d = {"hsplit": 1 if nd > 1 else 0, "vsplit": 0, "dsplit": 2}[name]
    if isinstance(spec, (int, xp.integer)):
        n, size = int(spec), input._array.shape[d]
        if n == 0 or size % n:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {size} is not divisible by the "
                               f"split_size {n}!")
    return tensor_split(input, spec, d)


@register("hsplit")
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 1 (dim 0 for 1-D); a number of sections must divide
    the size.

    Example:
        >>> import gradsum
        >>> [p.tolist() for p in gradsum.tensor([[1, 2, 3, 4]]).hsplit(2)]
        [[[1, 2]], [[3, 4]]]
    """
    return _split_helper("hsplit", 1, input, indices_or_sections)


@register("vsplit")
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 0 of a tensor of at least 2 dimensions.

    Example:
        >>> import gradsum
        >>> [p.shape[0] for p in gradsum.zeros(4, 2).vsplit([1])]
        [1, 3]
    """
    return _split_helper("vsplit", 2, input, indices_or_sections)


@register("dsplit")
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """:func:`tensor_split` along dim 2 of a tensor of at least 3 dimensions.

    Example:
        >>> import gradsum
        >>> [tuple(p.shape) for p in gradsum.zeros(1, 2, 4).dsplit(2)]
        [(1, 2, 2), (1, 2, 2)]
    """
    return _split_helper("dsplit", 3, input, indices_or_sections)


@register("swapdims")
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """:func:`transpose` under NumPy's other name (a view).

    Example:
        >>> import gradsum
        >>> gradsum.swapdims(gradsum.zeros(2, 3), 0, 1).shape
        (3, 2)
    """
    return F.transpose(input, dim0, dim1)


@register("ravel")
def ravel(input: Tensor) -> Tensor:
    """The tensor as 1-D: a view when it is contiguous, otherwise a view of a contiguous copy
    (torch's ``contiguous().view(-1)``).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([[1, 2], [3, 4]]).t().ravel().tolist()
        [1, 3, 2, 4]
    """
    return F.reshape(F.contiguous(input), (-1,))


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


@register("nansum")
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


@register("nanmean")
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
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_tname(input._array.dtype)}. Convert it with .float().")
    count = F.sum(_make(~xp.isnan(input._array)), dim, keepdim)
    return F.div(nansum(input, dim, keepdim, dtype=dtype), count)


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
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}): at "
                        "least one of elements and test_elements must be a Tensor.")
    arrs = [v._array if isinstance(v, Tensor) else xp.asarray(v)
            for v in (elements, test_elements)]
    for a in arrs:
        if a.dtype.kind == "b":
            raise RuntimeError("Unsupported input type encountered for isin(): Bool. Convert "
                               "the bool tensor with .long() first.")
    out = xp.isin(arrs[0], arrs[1], assume_unique=assume_unique, invert=invert)
    return _make(xp.asarray(out, dtype=bool))


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype (never, in gradsum: its dtypes are real).

    Example:
        >>> import gradsum
        >>> gradsum.is_complex(gradsum.zeros(2))
        False
    """
    _require_tensor("is_complex", "input", 1, input)
    return input._array.dtype.kind == "c"


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether two tensors have the same shape.

    Example:
        >>> import gradsum
        >>> gradsum.is_same_size(gradsum.zeros(2, 3), gradsum.ones(2, 3))
        True
    """
    _require_tensor("is_same_size", "input", 1, input)
    _require_tensor("is_same_size", "other", 2, other)
    return tuple(input._array.shape) == tuple(other._array.shape)


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


@register("logit")
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
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, NoneType): expected a Tensor or a Number for "
                        f"{'min' if is_min else 'max'}. Pass a bound.")
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


@register("clamp_min")
def clamp_min(input: Tensor, min: Any) -> Tensor:
    """:func:`clamp` with a lower bound only (a number or a tensor); its own node, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.clamp_min(gradsum.tensor([-1.0, 2.0]), 0).tolist()
        [0.0, 2.0]
    """
    return _clamp_one(input, min, True)


@register("clamp_max")
def clamp_max(input: Tensor, max: Any) -> Tensor:
    """:func:`clamp` with an upper bound only (a number or a tensor).

    Example:
        >>> import gradsum
        >>> gradsum.clamp_max(gradsum.tensor([-1.0, 2.0]), 0).tolist()
        [-1.0, 0.0]
    """
    return _clamp_one(input, max, False)


# -- float_power, fmax / fmin ---------------------------------------------------------------
@register("float_power")
def float_power(input: Any, exponent: Any) -> Tensor:
    """:func:`pow` computed in float64 (both operands are converted first).

    Example:
        >>> import gradsum
        >>> y = gradsum.float_power(gradsum.tensor([2, 3]), 2)
        >>> y.dtype, y.tolist()
        (gradsum.float64, [4.0, 9.0])
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}): at least one "
                        "of input and exponent must be a Tensor.")

    def f64(v: Any) -> Any:
        if isinstance(v, Tensor):
            return v if v._array.dtype == xp.float64 else F.to_dtype(v, D.float64)
        return float(v)

    return F.pow(f64(input), f64(exponent))


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place :func:`float_power`: only a float64 tensor can hold the result."""
    if self._array.dtype != xp.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_tname(self._array.dtype)}"
                           " but the operation's result requires dtype Double. Convert it "
                           "with .double() first.")
    from gradsum.ops.inplace import _op_inplace

    return _op_inplace("float_power_", float_power, registered=False)(self, exponent)


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
    _require_tensor(name, "input", 1, input)
    _require_tensor(name, "other", 2, other)
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


@register("fmax")
def fmax(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum that ignores nan (nan only where both are nan).

    Example:
        >>> import gradsum
        >>> gradsum.fmax(gradsum.tensor([1.0, float("nan")]), gradsum.tensor([2.0, 0.0])).tolist()
        [2.0, 0.0]
    """
    return _fextremum("fmax", input, other)


@register("fmin")
def fmin(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum that ignores nan (nan only where both are nan).

    Example:
        >>> import gradsum
        >>> gradsum.fmin(gradsum.tensor([1.0, float("nan")]), gradsum.tensor([2.0, 0.0])).tolist()
        [1.0, 0.0]
    """
    return _fextremum("fmin", input, other)


# -- products -------------------------------------------------------------------------------
@register("inner")
def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dimensions (a product when either is 0-d).

    Example:
        >>> import gradsum
        >>> gradsum.inner(gradsum.tensor([[1.0, 2.0]]), gradsum.tensor([3.0, 4.0])).tolist()
        [11.0]
    """
    _require_tensor("inner", "input", 1, input)
    _require_tensor("inner", "other", 2, other)
    if input._array.ndim == 0 or other._array.ndim == 0:
        return F.mul(input, other)
    if input._array.dtype != other._array.dtype:
        raise RuntimeError(f"both inputs should have same dtype (got "
                           f"{_tname(input._array.dtype)} and {_tname(other._array.dtype)}). "
                           "Convert one with .to(other.dtype).")
    if input._array.shape[-1] != other._array.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input._array.shape)} and "
                           f"{list(other._array.shape)}")
    return F.tensordot(input, other, ([-1], [-1]))


class VdotBackward0(Node):
    """``input`` gets ``g * other``, ``other`` gets ``g * input`` (real tensors)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        a, b = self.saved()
        return (F.mul(g, b) if self.needs(0) else None,
                F.mul(g, a) if self.needs(1) else None)


@register("vdot")
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors of one dtype (the first conjugated, which changes
    nothing for gradsum's real dtypes).

    Example:
        >>> import gradsum
        >>> gradsum.vdot(gradsum.tensor([1, 2]), gradsum.tensor([3, 4])).item()
        11
    """
    _require_tensor("vdot", "input", 1, input)
    _require_tensor("vdot", "other", 2, other)
    x, y = input._array, other._array
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors. "
                           "Flatten them (t.reshape(-1)) first.")
    if x.dtype != y.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_tname(x.dtype)} and {_tname(y.dtype)}")
    if x.size != y.size:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.size}] and src "
                           f"[{y.size}] to have the same number of elements, but got {x.size} "
                           f"and {y.size} elements respectively")
    out = xp.asarray(xp.dot(x, y), dtype=x.dtype)
    if not needs_grad(input, other):
        return _make(out)
    node = VdotBackward0()
    t = record(node, (input, other), out)
    node.save(input, other)
    return t


class BlockDiagBackward0(Node):
    """Each input gets its block of the gradient."""

    __slots__ = ("blocks",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, ...]:
        out: list[Tensor | None] = []
        for i, (r0, c0, shape, dt) in enumerate(self.blocks):
            if not self.needs(i):
                out.append(None)
                continue
            rows = 1 if len(shape) < 2 else shape[0]
            cols = 1 if not shape else shape[-1]
            part = F.getitem(g, (slice(r0, r0 + rows), slice(c0, c0 + cols)))
            part = F.reshape(part, shape)
            if part._array.dtype != dt:
                part = F.to_dtype(part, D.from_numpy_dtype(dt))
            out.append(part)
        return tuple(out)


@register("block_diag")
def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the inputs (0-d ones are 1x1 blocks, 1-D ones rows), of their
    promoted dtype.

    Example:
        >>> import gradsum
        >>> gradsum.block_diag(gradsum.tensor([[1, 2]]), gradsum.tensor(3)).tolist()
        [[1, 2, 0], [0, 0, 3]]
    """
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument 'tensors' must be Tensors, but found "
                            f"element of type {type(t).__name__} at pos {i}")
        if t._array.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._array.ndim} dimensions")
    if not tensors:
        return _make(xp.zeros((1, 0), dtype=D.get_default_dtype().np))
    dt = D.result_type(*tensors).np if len(tensors) > 1 else tensors[0]._array.dtype
    mats = [t._array.reshape((1, -1) if t._array.ndim < 2 else t._array.shape)
            for t in tensors]
    out = xp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype=dt)
    blocks, r, c = [], 0, 0
    for t, m in zip(tensors, mats):
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        blocks.append((r, c, tuple(t._array.shape), t._array.dtype))
        r, c = r + m.shape[0], c + m.shape[1]
    if not needs_grad(*tensors):
        return _make(out)
    node = BlockDiagBackward0()
    node.blocks = blocks
    return record(node, tensors, out)


def _require_1d(t: Any, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): expected Tensors, got {type(t).__name__}. Wrap it with "
                        "gradsum.tensor().")
    if t._array.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._array.shape)}. "
                           "Flatten it first.")


@register("cartesian_prod")
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors, one row per combination (one tensor: itself).

    Example:
        >>> import gradsum
        >>> gradsum.cartesian_prod(gradsum.tensor([1, 2]), gradsum.tensor([3])).tolist()
        [[1, 3], [2, 3]]
    """
    for t in tensors:
        _require_1d(t, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList (cartesian_prod got no "
                           "tensors). Pass at least one 1-D tensor.")
    if len({t._array.dtype for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype (got "
                           f"{', '.join(_tname(t._array.dtype) for t in tensors)}). Convert "
                           "them first.")
    grids = F.meshgrid(*tensors, indexing="ij")
    return F.stack([F.reshape(g, (-1,)) for g in grids], 1)


def _combination_indices(n: int, r: int, with_replacement: bool) -> Any:
    """``(N, r)`` int64 rows of ``itertools.combinations(range(n), r)`` (or of
    ``combinations_with_replacement``), in its order, built one column at a time: each row
    is repeated once per larger (or not smaller) next index."""
    idx = xp.arange(n, dtype=xp.int64)[:, None]
    for _ in range(1, r):
        last = idx[:, -1]
        counts = n - last - (0 if with_replacement else 1)
        total = int(counts.sum())
        starts = xp.cumsum(counts) - counts
        nxt = (xp.arange(total, dtype=xp.int64) - xp.repeat(starts, counts)
               + xp.repeat(last + (0 if with_replacement else 1), counts))
        idx = xp.concatenate([xp.repeat(idx, counts, axis=0), nxt[:, None]], axis=1)
    return idx


@register("combinations")
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's entries, one per row (as Python's
    ``itertools.combinations``, or ``combinations_with_replacement``).

    Example:
        >>> import gradsum
        >>> gradsum.combinations(gradsum.tensor([1, 2, 3])).tolist()
        [[1, 2], [1, 3], [2, 3]]
    """
    _require_1d(input, "combinations")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _make(xp.empty((0,), dtype=input._array.dtype))
    n = input._array.shape[0]
    idx = _combination_indices(n, r, with_replacement)
    cols = [F.index_select(input, 0, _make(xp.ascontiguousarray(idx[:, k]))) for k in range(r)]
    return F.stack(cols, 1)


@register("matrix_power")
def matrix_power(input: Tensor, n: int) -> Tensor:
    """The ``n``-th power of a (batch of) square matrix by repeated squaring; ``n = 0`` gives
    the identity, a negative ``n`` a power of the inverse.

    Example:
        >>> import gradsum
        >>> gradsum.matrix_power(gradsum.tensor([[1, 1], [0, 1]]), 3).tolist()
        [[1, 3], [0, 1]]
    """
    _require_tensor("matrix_power", "input", 1, input)
    shape = input._array.shape
    if len(shape) < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           f"dimensions (got shape {tuple(shape)}).")
    if shape[-1] != shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {shape[-2]} by {shape[-1]} matrices")
    n = int(n)
    if n == 0:
        out = F.clone(input)
        eye = xp.broadcast_to(xp.eye(shape[-1], dtype=input._array.dtype), shape)
        return out.copy_(_make(eye))
    if n < 0:
        if n == -1:
            return F.inverse(input)  # (torch's node: LinalgInvExBackward0, no clone)
        input, n = F.inverse(input), -n
    if n == 1:
        return F.clone(input)
    if n == 2:
        return F.matmul(input, input)
    if n == 3:
        return F.matmul(F.matmul(input, input), input)
    z: Tensor | None = None
    result: Tensor | None = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = input if z is None else F.matmul(z, z)
        if bit:
            result = z if result is None else F.matmul(result, z)
    assert result is not None  # (n > 0 has a set bit)
    return result


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


@register("dist")
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), over all entries.

    Example:
        >>> import gradsum
        >>> gradsum.dist(gradsum.tensor([0.0, 0.0]), gradsum.tensor([3.0, 4.0])).item()
        5.0
    """
    _require_tensor("dist", "input", 1, input)
    _require_tensor("dist", "other", 2, other)
    x, y, _ = binary_arrays(input, other)
    if x.dtype.kind not in "fV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. Got "
                           f"{_tname(x.dtype)} instead. Convert the inputs with .float().")
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
    """``torch.cosine_similarity``: :func:`gradsum.nn.functional.cosine_similarity`.

    Example:
        >>> import gradsum
        >>> a = gradsum.tensor([[1.0, 0.0]])
        >>> gradsum.cosine_similarity(a, gradsum.tensor([[2.0, 0.0]])).tolist()
        [1.0]
    """
    from gradsum.nn import functional as NF

    return NF.cosine_similarity(x1, x2, dim, eps)


@register("pairwise_distance")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``torch.pairwise_distance``: :func:`gradsum.nn.functional.pairwise_distance`.

    Example:
        >>> import gradsum
        >>> a = gradsum.tensor([[0.0, 0.0]])
        >>> round(gradsum.pairwise_distance(a, gradsum.tensor([[3.0, 4.0]])).item(), 4)
        5.0
    """
    from gradsum.nn import functional as NF

    return NF.pairwise_distance(x1, x2, p, eps, keepdim)


# -- diagflat and the *_scatter family ------------------------------------------------------
@register("diagflat")
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix with the flattened input on its ``offset`` diagonal (``DiagEmbedBackward0``).

    Example:
        >>> import gradsum
        >>> gradsum.diagflat(gradsum.tensor([[1, 2]])).tolist()
        [[1, 0], [0, 2]]
    """
    return F.diag_embed(F.reshape(input, (-1,)), offset)


def _check_src(src: Tensor, want: tuple[int, ...]) -> None:
    have = tuple(src._array.shape)
    if have != tuple(want):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(have)}, slice size = {list(want)}")


class SelectScatterBackward0(Node):
    """``input`` gets ``g`` with the slot zeroed, ``src`` gets ``g.select(dim, index)``."""

    __slots__ = ("dim", "index", "src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = gs = None
        if self.needs(0):
            ga = select_scatter(g, F.zeros(self.src_shape, dtype=g.dtype), self.dim, self.index)
        if self.needs(1):
            gs = F.select(g, self.dim, self.index)
            if gs._array.dtype != self.src_dtype:
                gs = F.to_dtype(gs, D.from_numpy_dtype(self.src_dtype))
        return ga, gs


def _scatter_out(input: Tensor, src: Tensor, key: Any) -> Any:
    out = input._array.copy()
    out[key] = src._array
    return out


@register("select_scatter")
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim`` (the reverse of
    :func:`select`).

    Example:
        >>> import gradsum
        >>> gradsum.select_scatter(gradsum.zeros(2, 2), gradsum.ones(2), 0, 1).tolist()
        [[0.0, 0.0], [1.0, 1.0]]
    """
    _require_tensor("select_scatter", "input", 1, input)
    _require_tensor("select_scatter", "src", 2, src)
    shape = input._array.shape
    d = wrap_dim(dim, len(shape))
    size = shape[d] if shape else 1
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {d}")
    idx = index + size if index < 0 else index
    _check_src(src, shape[:d] + shape[d + 1:])
    out = _scatter_out(input, src, (slice(None),) * d + (idx,))
    if not needs_grad(input, src):
        return _make(out)
    node = SelectScatterBackward0()
    node.dim, node.index = d, idx
    node.src_shape, node.src_dtype = tuple(src._array.shape), src._array.dtype
    return record(node, (input, src), out)


class SliceScatterBackward0(Node):
    """``input`` gets ``g`` with the slice zeroed, ``src`` gets the slice of ``g``."""

    __slots__ = ("dim", "sl", "src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        ga = gs = None
        s = self.sl
        if self.needs(0):
            ga = slice_scatter(g, F.zeros(self.src_shape, dtype=g.dtype), self.dim, s.start,
                               s.stop, s.step)
        if self.needs(1):
            gs = F.getitem(g, (slice(None),) * self.dim + (s,))
            if gs._array.dtype != self.src_dtype:
                gs = F.to_dtype(gs, D.from_numpy_dtype(self.src_dtype))
        return ga, gs


@register("slice_scatter")
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input[start:end:step]`` along ``dim``.

    Example:
        >>> import gradsum
        >>> gradsum.slice_scatter(gradsum.zeros(4), gradsum.ones(2), 0, 0, 4, 2).tolist()
        [1.0, 0.0, 1.0, 0.0]
    """
    _require_tensor("slice_scatter", "input", 1, input)
    _require_tensor("slice_scatter", "src", 2, src)
    shape = input._array.shape
    d = wrap_dim(dim, len(shape))
    if step <= 0:
        raise RuntimeError(f"slice step must be positive (got {step}). Reverse with flip().")
    size = shape[d] if shape else 1
    lo, hi, _ = slice(start, end, step).indices(size)
    sl = slice(lo, max(lo, hi), step)
    key = (slice(None),) * d + (sl,)
    want = xp.empty(shape, dtype=bool)[key].shape
    _check_src(src, want)
    out = _scatter_out(input, src, key)
    if not needs_grad(input, src):
        return _make(out)
    node = SliceScatterBackward0()
    node.dim, node.sl = d, sl
    node.src_shape, node.src_dtype = tuple(src._array.shape), src._array.dtype
    return record(node, (input, src), out)


class DiagonalScatterBackward0(Node):
    """``input`` gets ``g`` with the diagonal zeroed, ``src`` gets ``g``'s diagonal."""

    __slots__ = ("dims", "src_dtype", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        offset, d1, d2 = self.dims
        ga = gs = None
        if self.needs(0):
            ga = diagonal_scatter(g, F.zeros(self.src_shape, dtype=g.dtype), offset, d1, d2)
        if self.needs(1):
            gs = F.diagonal(g, offset, d1, d2)
            if gs._array.dtype != self.src_dtype:
                gs = F.to_dtype(gs, D.from_numpy_dtype(self.src_dtype))
        return ga, gs


@register("diagonal_scatter")
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written on the ``offset`` diagonal of dims
    ``dim1``/``dim2`` (the reverse of :func:`diagonal`).

    Example:
        >>> import gradsum
        >>> gradsum.diagonal_scatter(gradsum.zeros(2, 2), gradsum.ones(2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    _require_tensor("diagonal_scatter", "input", 1, input)
    _require_tensor("diagonal_scatter", "src", 2, src)
    x = input._array
    d1, d2 = wrap_dim(dim1, x.ndim), wrap_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}. Pass two "
                           "different dims.")
    _check_src(src, xp.diagonal(x, offset, d1, d2).shape)
    out = x.copy()
    n = src._array.shape[-1]
    rows = xp.arange(n) + builtins.max(-offset, 0)
    cols = xp.arange(n) + builtins.max(offset, 0)
    xp.moveaxis(out, (d1, d2), (-2, -1))[..., rows, cols] = src._array
    if not needs_grad(input, src):
        return _make(out)
    node = DiagonalScatterBackward0()
    node.dims = (offset, d1, d2)
    node.src_shape, node.src_dtype = tuple(src._array.shape), src._array.dtype
    return record(node, (input, src), out)


# -- index_copy, index_fill, masked_select ----------------------------------------------------
def _tname_of(arr: Any) -> str:
    return D._TORCH_SCALAR_NAMES.get(str(arr.dtype), str(arr.dtype))


def _index_arg(index: Any, name: str) -> Any:
    """The array of a tensor ``index`` argument (torch refuses lists and numbers there)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}. Wrap it with gradsum.tensor(...).")
    return index._array


def _along(d: int, idx: Any) -> tuple[Any, ...]:
    return (slice(None),) * d + (idx,)


class IndexCopyBackward0(Node):
    """``self`` gets ``g`` with the copied slices zeroed; ``source`` gets the slices of ``g``
    at ``index`` (each one, so a repeated index hands the same slice to every copy, as
    torch's ``index_select``)."""

    __slots__ = ("dim", "index", "src_shape")

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None]:
        idx = _make(self.index)
        ga = index_fill(g, self.dim, idx, 0) if self.needs(0) else None
        gs = None
        if self.needs(1):
            g1 = g if g._array.ndim else F.reshape(g, (1,))
            gs = F.reshape(F.index_select(g1, self.dim, idx), self.src_shape)
        return ga, gs


@register("index_copy")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with the slices of ``source`` copied to positions ``index`` along ``dim`` (for
    a repeated index the last slice wins).

    Example:
        >>> import gradsum
        >>> src = gradsum.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> gradsum.zeros(2, 3).index_copy(1, gradsum.tensor([2, 0]), src).tolist()
        [[2.0, 0.0, 1.0], [4.0, 0.0, 3.0]]
    """
    x, s = input._array, source._array
    idx = _index_arg(index, "index_copy")
    d = wrap_dim(dim, x.ndim)
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim}). "
                         "Flatten it first.")
    if s.ndim == 0 and idx.size != 1:
        raise IndexError("index_copy_(): When source is scalar, index should have one element "
                         f"(got {idx.size})")
    if s.ndim != x.ndim and s.ndim != 0 and x.ndim != 0:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({s.ndim}), destination dimensionality "
            f"({x.ndim})"
        )
    if idx.dtype != xp.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{_tname_of(idx)}. Convert it with .long().")
    if x.dtype != s.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_tname_of(x)} and (source) {_tname_of(s)}. Convert the source "
            "with .to(self.dtype)."
        )
    xs = [n for i, n in enumerate(x.shape) if i != d]
    ss = [n for i, n in enumerate(s.shape) if i != d]
    if xs != ss:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"shape {tuple(x.shape)}, source shape {tuple(s.shape)} (dim {d})."
        )
    if s.ndim and idx.size != s.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to "
                         f"source.size(dim) ({s.shape[d]})")
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1)
    bad = flat[(flat < 0) | (flat >= size)]
    if bad.size:
        raise IndexError(f"index_copy_(): index {int(bad[0])} is out of bounds for "
                         f"dimension {d} with size {size} (negative indices are not wrapped)")
    out = x.copy()
    o1 = out if x.ndim else out.reshape(1)
    s1 = s.reshape((1,) * o1.ndim) if s.ndim == 0 else s.reshape(s.shape or (1,))
    # a repeated index keeps its last slice (torch's CPU loop); NumPy's fancy assignment does
    # not promise an order, so only the last occurrence of each index is written
    _, last = xp.unique(flat[::-1], return_index=True)
    keep = flat.size - 1 - last
    o1[_along(d, flat[keep])] = xp.take(s1, keep, axis=d)
    if not needs_grad(input, source):
        return _make(out)
    node = IndexCopyBackward0()
    node._saved = HOLDS_STATE  # (torch saves the index: a second backward raises)
    node.dim, node.index, node.src_shape = d, flat, s.shape
    return record(node, (input, source), out)


class IndexFillBackward0(Node):
    """``self`` gets ``g`` with the filled slices zeroed (the fill value is a number)."""

    __slots__ = ("dim", "index", "value_dtype")

    def backward(self, g: Tensor) -> Any:
        return index_fill(g, self.dim, _make(self.index), 0)


class IndexFillBackward1(IndexFillBackward0):
    """A 0-d tensor value: it also gets the sum of ``g`` over the filled slices, each counted
    once (torch's ``index_select`` of the unique indices; as torch's, a negative index makes
    that ``index_select`` raise)."""

    __slots__ = ()

    def backward(self, g: Tensor) -> Any:
        ga = index_fill(g, self.dim, _make(self.index), 0) if self.needs(0) else None
        gv = None
        if self.needs(1):
            g1 = g if g._array.ndim else F.reshape(g, (1,))
            gv = F.sum(F.index_select(g1, self.dim, _make(xp.unique(self.index))))
            if gv._array.dtype != self.value_dtype:
                gv = F.to_dtype(gv, D.from_numpy_dtype(self.value_dtype))
        return ga, gv


@register("index_fill")
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` (a number or a 0-d tensor) at positions ``index`` along
    ``dim`` (negative indices count from the end).

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 3).index_fill(1, gradsum.tensor([0, 2]), 7).tolist()
        [[7.0, 0.0, 7.0], [7.0, 0.0, 7.0]]
    """
    idx = _index_arg(index, "index_fill")
    if idx.dtype != xp.int64:
        raise IndexError(
            f"index_fill_(): Expected dtype int64 for index. Got {_tname_of(idx)}; "
            "convert it with .long()."
        )
    if idx.ndim > 1:
        raise RuntimeError(f"Index has to be a vector/scalar (got shape {tuple(idx.shape)}). "
                           "Flatten it first.")
    v_t = value if isinstance(value, Tensor) else None
    if v_t is not None and v_t._array.ndim != 0:
        raise RuntimeError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{v_t._array.ndim} dimension(s). Pass a number or a 0-d tensor."
        )
    x = input._array
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1)
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise IndexError(
            f"index {int(bad[0])} is out of bounds for dimension {d} with size "
            f"{size}: indices must lie in [{-size}, {size - 1}]"
        )
    out = x.copy()
    v = v_t._array if v_t is not None else value
    with xp.errstate(invalid="ignore"):  # (nan/inf into an int tensor: torch's cast, silently)
        (out if x.ndim else out.reshape(1))[_along(d, flat)] = xp.asarray(v).astype(x.dtype)
    if not needs_grad(input, v_t):
        return _make(out)
    node = IndexFillBackward0() if v_t is None else IndexFillBackward1()
    node._saved = HOLDS_STATE  # (torch saves the index)
    node.dim, node.index = d, flat
    node.value_dtype = v_t._array.dtype if v_t is not None else None
    return record(node, (input, v_t) if v_t is not None else (input,), out)


class MaskedSelectBackward0(Node):
    """``g`` written back, in order, where the broadcast mask holds (zeros elsewhere), then
    summed down to the input's shape (the mask may have broadcast it)."""

    __slots__ = ("in_shape", "mask")

    def backward(self, g: Tensor) -> Tensor:
        z = F.zeros(self.mask.shape, dtype=g.dtype)
        return F.sum_to(F.index_put(z, (_make(self.mask),), g), self.in_shape)


@register("masked_select")
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``input`` where the (broadcast) bool ``mask`` holds, as a 1-D tensor.

    Example:
        >>> import gradsum
        >>> m = gradsum.tensor([True, False, True])
        >>> gradsum.arange(6.0).reshape(2, 3).masked_select(m).tolist()
        [0.0, 2.0, 3.0, 5.0]
    """
    _require_tensor("masked_select", "input", 1, input)
    _require_tensor("masked_select", "mask", 2, mask)
    x, m = input._array, mask._array
    if m.dtype.kind != "b":
        raise RuntimeError(
            f"masked_select: expected BoolTensor for mask, got {mask.dtype.name}. Compare first "
            "(mask = t > 0)."
        )
    try:
        shape = xp.broadcast_shapes(x.shape, m.shape)
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({x.shape}) must match the size of tensor b "
            f"({m.shape}): masked_select broadcasts the input and the mask to one shape."
        ) from None
    mb = xp.broadcast_to(m, shape)
    out = xp.broadcast_to(x, shape)[mb]
    if not needs_grad(input):
        return _make(out)
    node = MaskedSelectBackward0()
    node._saved = HOLDS_STATE  # (torch saves the mask)
    node.in_shape, node.mask = x.shape, mb
    return record(node, (input,), out)



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
        raise RuntimeError(f"number of steps must be non-negative (got {steps})")
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
        raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not Tensor. "
                        "Pass s.item().")
    _device.check_factory(device, "scalar_tensor")
    dt = (dtype or D.get_default_dtype()).np
    t = _make(xp.asarray(s, dtype=dt))
    t.requires_grad_(requires_grad)
    return t


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices`` (int64 tensors, one per
    dimension; as torch, indices are taken modulo the size, so -1 is the last element).

    Example:
        >>> import gradsum
        >>> [t.tolist() for t in gradsum.unravel_index(gradsum.tensor([5, 7]), (3, 4))]
        [[1, 1], [1, 3]]
    """
    _require_tensor("unravel_index", "indices", 1, indices)
    arr = indices._array
    if arr.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got gradsum."
                        f"{arr.dtype.name}. Convert them with .long().")
    dims = _int_shape(shape)
    if builtins.any(s < 0 for s in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(dims)}")
    arr = arr.astype(xp.int64)
    coords = []
    stride = 1
    for s in reversed(dims):
        coords.append(xp.floor_divide(arr, stride) % s if s else xp.zeros_like(arr))
        stride *= s
    return tuple(_make(xp.asarray(c, dtype=xp.int64)) for c in reversed(coords))


# -- torch's alias names --------------------------------------------------------------------
subtract = F.sub
greater = F.gt
greater_equal = F.ge
less = F.lt
less_equal = F.le
not_equal = F.ne


def square_(input: Tensor) -> Tensor:
    """In-place :func:`square` (``input.square_()``).

    Example:
        >>> import gradsum
        >>> gradsum.square_(gradsum.tensor([3.0])).tolist()
        [9.0]
    """
    return input.square_()
