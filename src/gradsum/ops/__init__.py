"""All ops, one namespace: primitives (one class each, with its backward rule) and the few
composites built from them. Tensor methods are bound here from :data:`METHODS`.

Example:
    >>> import gradsum
    >>> from gradsum.ops import OPS
    >>> "matmul" in OPS and "log_softmax" in OPS
    True
"""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp as _xp
from gradsum._creation import (
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from gradsum._tensor import Tensor
from gradsum.autograd.graph import Node as _Node
from gradsum.ops import _core
from gradsum.ops._core import OPS, as_tensor_like, register
from gradsum.ops._core import wrap_dim as _wrap_dim
from gradsum.ops.elementwise import *
from gradsum.ops.elementwise import (
    abs,
    invert,
    pow,
    rdiv,
    rfloor_divide,
    round,
    rpow,
    rremainder,
    rsub,
    to_dtype,
)
from gradsum.ops.inplace import *
from gradsum.ops.inplace import (
    add_,
    bernoulli_,
    clamp_,
    copy_,
    div_,
    exponential_,
    fill_,
    index_put,
    mul_,
    normal_,
    random_,
    setitem_,
    sub_,
    uniform_,
    zero_,
)
from gradsum.ops.linalg import *
from gradsum.ops.reduction import *
from gradsum.ops.reduction import all, any, max, min, sum
from gradsum.ops.shape import *
from gradsum.ops.shape import (
    expand_as,
    getitem,
    index_grad,
    reshape_as,
    sum_to,
    view_as,
)

__all__ = ["OPS", "Tensor", "as_tensor_like", "register"]
_ = (_core, _wrap_dim)


@register("masked_fill_")
def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place :func:`masked_fill`."""
    from gradsum.ops import inplace

    inplace._check_leaf(self, "masked_fill_")
    if inplace._recording(self, value):
        return inplace.apply_inplace(
            self, "masked_fill_", lambda old: masked_fill(old, mask, value), value
        )
    res = masked_fill(self.detach(), mask, value)
    inplace._write(self, res._array, "masked_fill_")
    return self


def type_as(a: Tensor, other: Tensor) -> Tensor:
    return a.to(other.dtype)


class RepeatBackward0(_Node):
    """Sum the gradient over the tiles: view it as (r0, s0, r1, s1, ...) and sum the r's."""

    __slots__ = ("in_shape", "reps")

    def backward(self, g: Tensor) -> Tensor:
        padded = (1,) * (len(self.reps) - len(self.in_shape)) + tuple(self.in_shape)
        inter: list[int] = []
        for r, s in zip(self.reps, padded):
            inter += [r, s]
        tiles = reshape(g, tuple(inter))
        return reshape(sum(tiles, tuple(range(0, len(inter), 2))), self.in_shape)


@register("repeat")
def repeat(a: Tensor, *sizes: Any) -> Tensor:
    """Tile ``a`` ``sizes`` times along each dimension (a copy, like torch's).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 2]).repeat(2).tolist()
        [1, 2, 1, 2]
    """
    reps = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    reps = tuple(int(r) for r in reps)
    if len(reps) < a.ndim:
        raise RuntimeError(
            f"Number of dimensions of repeat dims can not be smaller than number of dimensions "
            f"of tensor: repeat{reps} for a tensor of shape {tuple(a.shape)}. Pass one count "
            "per dimension."
        )
    x = a._array.reshape((1,) * (len(reps) - a.ndim) + tuple(a.shape))
    out = _xp.tile(x, reps) if reps else x.copy()
    if not _core.needs_grad(a):
        return _core._make(out)
    node = RepeatBackward0()
    node.reps, node.in_shape = reps, a.shape
    return _core.record(node, (a,), out)


def _tile_method(a: Tensor, *dims: Any) -> Tensor:
    """``repeat`` with ones prepended to ``dims`` when it names fewer dimensions (torch's
    ``tile``)."""
    reps = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return repeat(a, (1,) * (a.ndim - len(reps)) + tuple(reps))


def _where_method(a: Tensor, condition: Tensor, other: Any) -> Tensor:
    return where(condition, a, other)


def _max_method(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return max(a, dim, keepdim)


def _min_method(a: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return min(a, dim, keepdim)


_g = globals()
METHODS: dict[str, Any] = {
    name: _g[name]
    for name in (
        "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "log1p", "sqrt", "rsqrt",
        "abs", "sin", "cos", "tanh", "sigmoid", "relu", "erf", "sign", "floor", "ceil",
        "round", "trunc", "reciprocal", "gelu", "silu", "softplus", "leaky_relu",
        "softmax", "log_softmax", "clamp", "maximum", "minimum", "sum", "mean", "var",
        "std", "amax", "amin", "logsumexp", "prod", "norm", "argmax", "argmin", "all",
        "any", "cumsum", "reshape", "view", "flatten", "unflatten", "squeeze",
        "unsqueeze", "expand", "expand_as", "permute", "transpose", "contiguous", "t",
        "index_select", "gather", "scatter_add", "index_add", "masked_fill",
        "masked_fill_", "split", "chunk", "unbind", "narrow", "select", "eq", "ne", "lt",
        "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
        "isnan", "isinf", "isfinite", "add_", "sub_", "mul_", "div_", "zero_", "fill_",
        "copy_", "clamp_", "normal_", "uniform_", "bernoulli_", "exponential_", "random_",
        "relu_", "exp_", "log_", "log1p_", "sqrt_", "rsqrt_", "abs_", "neg_", "sin_", "cos_",
        "tanh_", "sigmoid_", "sign_", "floor_", "ceil_", "round_", "trunc_", "reciprocal_",
        "erf_", "pow_", "matmul", "view_as", "reshape_as", "type_as", "repeat", "flip",
        "tril", "triu",
        "outer", "equal", "allclose", "isclose", "count_nonzero", "remainder",
        "floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    )
}
METHODS.update({
    "multiply": mul, "subtract": sub, "divide": div, "true_divide": div,
    "clip": clamp, "clip_": clamp_, "mm": mm, "bmm": bmm, "mv": mv,
    "dot": dot, "swapaxes": transpose, "max": _max_method, "min": _min_method,
    "where": _where_method, "absolute": abs, "negative": neg, "tile": _tile_method,
})
for _name, _fn in METHODS.items():
    if _fn is not None:
        setattr(Tensor, _name, _fn)

# Operators whose Python signature is the op's own: bind them directly (one call frame less on
# the hottest path). The reflected forms of + and * are the same op (both are commutative and
# torch's type promotion is symmetric).
for _name, _fn in {
    "__add__": add, "__radd__": add, "__sub__": sub, "__mul__": mul, "__rmul__": mul,
    "__truediv__": div, "__neg__": neg, "__matmul__": matmul, "__pow__": pow,
    "__getitem__": getitem,
    # torch's &, |, ^ and ~ are bitwise (logical only on bool tensors, where both agree)
    "__and__": bitwise_and, "__rand__": bitwise_and, "__or__": bitwise_or,
    "__ror__": bitwise_or, "__xor__": bitwise_xor, "__rxor__": bitwise_xor,
    "__invert__": invert,
}.items():
    setattr(Tensor, _name, _fn)


# -- a few everyday composites (built from primitives above; torch names) ---------------------
@register("square")
def square(a: Tensor) -> Tensor:
    """``a ** 2`` (torch records it as ``PowBackward0`` too)."""
    return pow(a, 2)


@register("argsort")
def argsort(a: Tensor, dim: int = -1, descending: bool = False, stable: bool = False
            ) -> Tensor:
    """Indices that sort ``a`` along ``dim`` (int64, not differentiable; stable order)."""
    from gradsum._backend import xp

    x = a._array
    if x.ndim == 0:
        return Tensor._make(xp.zeros((), dtype=xp.int64))
    d = _wrap_dim(dim, x.ndim)
    key = -x if descending and x.dtype.kind != "b" else (~x if descending else x)
    return Tensor._make(xp.argsort(key, axis=d, kind="stable").astype(xp.int64))


@register("sort")
def sort(a: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``(values, indices)`` sorted along ``dim``; values are differentiable (a gather)."""
    from gradsum.ops.reduction import values_indices

    idx = argsort(a, dim, descending)
    if a.ndim == 0:
        return values_indices(a.clone(), idx)
    return values_indices(gather(a, dim, idx), idx)


@register("topk")
def topk(a: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices."""
    from gradsum.ops.reduction import values_indices

    d = _wrap_dim(dim, a.ndim) if a.ndim else 0
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(
            f"selected index k out of range: k={k} for a dimension of size {n}. Use a k "
            "between 0 and the size of the dimension."
        )
    idx = argsort(a, d, descending=largest)
    if a.ndim:
        idx = narrow(idx, d, 0, k)
        return values_indices(gather(a, d, idx), idx)
    return values_indices(a.clone(), idx)


@register("nonzero")
def nonzero(a: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the nonzero entries: an ``(n, ndim)`` int64 tensor, or a tuple per dim."""
    from gradsum._backend import xp

    idx = xp.nonzero(a._array.reshape(1) if a.ndim == 0 else a._array)
    if as_tuple:
        return tuple(Tensor._make(i.astype(xp.int64)) for i in idx)
    return Tensor._make(xp.stack(idx, axis=1).astype(xp.int64) if idx
                        else xp.zeros((0, 0), dtype=xp.int64))


@register("masked_select")
def masked_select(a: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``a`` where the (broadcast) bool ``mask`` holds, as a 1-D tensor."""
    from gradsum._backend import xp

    m = mask._array
    if m.dtype.kind != "b":
        raise RuntimeError(
            f"masked_select: expected BoolTensor for mask, got {mask.dtype.name}. Compare first "
            "(mask = t > 0)."
        )
    shape = xp.broadcast_shapes(a._array.shape, m.shape)
    return getitem(expand(a, shape), Tensor._make(xp.broadcast_to(m, shape)))


for _name, _fn in {"square": square, "argsort": argsort, "sort": sort, "topk": topk,
                   "nonzero": nonzero, "masked_select": masked_select}.items():
    setattr(Tensor, _name, _fn)
