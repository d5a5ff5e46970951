"""All ops, one namespace: primitives (one class each, with its backward rule) and the few
composites built from them. Tensor methods are bound here from :data:`METHODS`.

Example:
    >>> import gradsum
    >>> from gradsum.ops import OPS
    >>> "matmul" in OPS and "log_softmax" in OPS
    True
"""

# (imports interleave with the Tensor-method bindings they feed, family by family)
# ruff: noqa: E402

# (imports interleave with the Tensor-method bindings they feed, family by family)
# ruff: noqa: E402

from __future__ import annotations

import builtins
from typing import Any

import gradsum.ops as F
import gradsum.ops.arithmetic as _arithmetic
import gradsum.ops.indexing.gather_scatter as _gather_scatter
import gradsum.ops.indexing.subscript as _subscript
import gradsum.ops.inplace as _inplace
import gradsum.ops.linalg.decompositions as _decompositions
import gradsum.ops.linalg.solvers as _solvers
import gradsum.ops.pointwise as _pointwise
import gradsum.ops.rearrange as _rearrange
import gradsum.ops.sampling as _sampling
import gradsum.ops.sorting as _sorting
import gradsum.ops.views as _views
from gradsum import (
    _dtype as D,
)
from gradsum import _dtype as _D
from gradsum._autocast import (
    autocast_policy,
    excluded,
)
from gradsum._backend import (
    copy_c,
    silenced,
    xp,
)
from gradsum._backend import xp as _xp
from gradsum._creation import (
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from gradsum._fma import (
    fma,
)
from gradsum._tensor import Tensor
from gradsum.autograd.graph import (
    HOLDS_STATE,
    AccumulateGrad,
    Node,
)
from gradsum.autograd.graph import Node as _Node
from gradsum.autograd.saved import (
    hooks_active,
    hooks_state,
    on_view,
)
from gradsum.backends.mkldnn import (
    onednn_gelu_nan_at_inf,
)
from gradsum.ops import _core
from gradsum.ops._core import (
    OPS,
    as_tensor_like,
    binary_arrays,
    broadcast_error,
    broadcast_view,
    const,
    edge,
    float_dtype_for,
    guard_view,
    index_range,
    mark_view,
    needs_grad,
    quietly,
    record,
    register,
    scalar_opmath,
    scalar_value,
    set_history,
    stale_views,
    wrap_dim,
    wrap_dims,
)
from gradsum.ops._core import wrap_dim as _wrap_dim
from gradsum.ops._erf import (
    erf64,
    gelu_cdf64,
    gelu_f32,
    gelu_parts_f32,
)
from gradsum.ops.activation import (
    GeluBackward0,
    LeakyReluBackward0,
    LeakyReluBackwardBackward0,
    LogSoftmaxBackward0,
    LogSoftmaxBackwardDataBackward0,
    ReluBackward0,
    SafeSoftmaxBackward0,
    SigmoidBackward0,
    SigmoidBackwardBackward0,
    SiluBackward0,
    SoftmaxBackward0,
    SoftplusBackward0,
    ThresholdBackwardBackward0,
    gelu,
    leaky_relu,
    leaky_relu_backward,
    log_softmax,
    log_softmax_backward,
    relu,
    safe_softmax,
    sigmoid,
    sigmoid_backward,
    silu,
    softmax,
    softplus,
    threshold_backward,
)
from gradsum.ops.arithmetic import (
    AddBackward0,
    DivBackward0,
    DivBackward2,
    MulBackward0,
    MulScalarBackward,
    NegBackward0,
    PowBackward0,
    PowBackward1,
    PowBackward2,
    ReciprocalBackward0,
    RemainderBackward0,
    RemainderBackward1,
    RsubBackward1,
    SubBackward0,
    add,
    addcdiv,
    addcmul,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    div,
    floor_divide,
    invert,
    lerp,
    mul,
    neg,
    pow,
    rdiv,
    reciprocal,
    remainder,
    rfloor_divide,
    rpow,
    rremainder,
    rsub,
    select_const,
    select_grad,
    sub,
)
from gradsum.ops.blas.contractions import (
    cdist,
    einsum,
    kron,
    tensordot,
)
from gradsum.ops.blas.fused import (
    addbmm,
    addmm,
    addmv,
    baddbmm,
)
from gradsum.ops.blas.products import (
    AddmmBackward0,
    BmmBackward0,
    DotBackward0,
    LinearBackward0,
    MmBackward0,
    MmBackward1,
    MvBackward0,
    bmm,
    dot,
    linear,
    matmul,
    mm,
    mv,
    outer,
)
from gradsum.ops.comparison import (
    MaximumBackward0,
    MinimumBackward0,
    allclose,
    eq,
    equal,
    ge,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    ne,
)
from gradsum.ops.indexing.gather_scatter import (
    GatherBackward0,
    ScatterAddBackward0,
    _along,
    gather,
    scatter_add,
    take_along_dim,
)
from gradsum.ops.indexing.index import (
    IndexAddBackward0,
    IndexSelectBackward0,
    index_add,
    index_select,
    one_hot,
    tril_indices,
    triu_indices,
)
from gradsum.ops.indexing.masked import (
    MaskedFillBackward0,
    MaskedFillBackward1,
    WhereBackward0,
    masked_fill,
    where,
)
from gradsum.ops.indexing.subscript import (
    AliasBackward0,
    IndexBackward0,
    IndexGradBackward0,
    SelectBackward0,
    SliceBackward0,
    add_rows_at,
    as_node,
    expand_ellipsis,
    getitem,
    in_bounds,
    index_grad,
    index_target,
    split_key,
)
from gradsum.ops.inplace import (
    CopyBackwards,
    CopySlices,
    FillBackward2,
    FillBackward3,
    IndexPutBackward0,
    PutViewRegionBackward0,
    SqueezeBackward3,
    SqueezeBackward4,
    SqueezeBackward5,
    TBackward1,
    TransposeBackward1,
    UnsqueezeBackward1,
    ZeroBackward0,
    ZeroViewRegionBackward0,
    _op_inplace,
    abs_,
    add_,
    apply_inplace,
    ceil_,
    clamp_,
    copy_,
    cos_,
    div_,
    erf_,
    exp_,
    fill_,
    floor_,
    index_put,
    log1p_,
    log_,
    mul_,
    neg_,
    pow_,
    put_view_region,
    reciprocal_,
    refresh_views,
    relu_,
    round_,
    rsqrt_,
    setitem_,
    sigmoid_,
    sign_,
    sin_,
    sqrt_,
    squeeze_,
    sub_,
    t_,
    tanh_,
    transpose_,
    trunc_,
    unsqueeze_,
    zero_,
    zero_view_region,
)
from gradsum.ops.linalg.functions import (
    cross,
    trace,
)
from gradsum.ops.pointwise import (
    AbsBackward0,
    ClampBackward0,
    ClampBackward1,
    CloneBackward0,
    CosBackward0,
    ExpBackward0,
    Log1PBackward0,
    LogBackward0,
    RsqrtBackward0,
    SignBackward0,
    SinBackward0,
    SqrtBackward0,
    TanhBackward0,
    TanhBackwardBackward0,
    ToCopyBackward0,
    abs,
    acos,
    asin,
    atan,
    atan2,
    ceil,
    clamp,
    clone,
    copied,
    cos,
    cosh,
    exp,
    exp2,
    expm1,
    floor,
    log,
    log1p,
    log2,
    log10,
    nan_to_num,
    round,
    rsqrt,
    sign,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    tanh_backward,
    to_dtype,
    trunc,
)
from gradsum.ops.rearrange import (
    CatBackward0,
    FlipBackward0,
    StackBackward0,
    TrilBackward0,
    TriuBackward0,
    cat,
    diag,
    diag_embed,
    flip,
    fliplr,
    flipud,
    repeat_interleave,
    roll,
    rot90,
    stack,
    tril,
    triu,
)
from gradsum.ops.reduction import (
    AmaxBackward0,
    AminBackward0,
    LinalgVectorNormBackward0,
    LogsumexpBackward0,
    MaxBackward0,
    MaxBackward1,
    MeanBackward0,
    MeanBackward1,
    MinBackward0,
    MinBackward1,
    ProdBackward0,
    ProdBackward1,
    StdBackward0,
    SumBackward0,
    SumBackward1,
    SumToBackward0,
    VarBackward0,
    add_reduce,
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    std,
    sum,
    sum_to,
    values_indices,
    var,
)
from gradsum.ops.sampling import (
    bernoulli_,
    exponential_,
    normal_,
    random_,
    uniform_,
)
from gradsum.ops.scan import (
    CumsumBackward0,
    cummax,
    cummin,
    cumprod,
    cumsum,
    logcumsumexp,
)
from gradsum.ops.sorting import (
    SortBackward0,
    TopkBackward0,
)
from gradsum.ops.special.erf import (
    ErfBackward0,
    erf,
)
from gradsum.ops.views import (
    ExpandBackward0,
    PermuteBackward0,
    ReshapeAliasBackward0,
    SplitBackward0,
    SplitWithSizesBackward0,
    SqueezeBackward0,
    SqueezeBackward1,
    SqueezeBackward2,
    TBackward0,
    TransposeBackward0,
    UnbindBackward0,
    UnsafeViewBackward0,
    UnsqueezeBackward0,
    ViewBackward0,
    chunk,
    contiguous,
    diagonal,
    expand,
    expand_as,
    flatten,
    movedim,
    narrow,
    permute,
    reshape,
    reshape_as,
    select,
    split,
    squeeze,
    t,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
    view,
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
    if not sizes:
        raise TypeError(
            "repeat(): argument 'repeats' is required: pass the number of copies per "
            "dimension, e.g. t.repeat(2, 1)."
        )
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
    "expm1": expm1, "exp2": exp2, "log2": log2, "log10": log10, "tan": tan, "asin": asin,
    "arcsin": asin, "acos": acos, "arccos": acos, "atan": atan, "arctan": atan, "sinh": sinh,
    "cosh": cosh, "atan2": atan2, "arctan2": atan2, "lerp": lerp, "addcmul": addcmul,
    "addcdiv": addcdiv, "nan_to_num": nan_to_num,
})
for _name, _fn in METHODS.items():
    if _fn is not None:
        setattr(Tensor, _name, _fn)
for _name, _fn in {
    "expm1_": expm1, "exp2_": exp2, "log2_": log2, "log10_": log10, "tan_": tan,
    "asin_": asin, "arcsin_": asin, "acos_": acos, "arccos_": acos, "atan_": atan,
    "arctan_": atan, "sinh_": sinh, "cosh_": cosh, "atan2_": atan2, "arctan2_": atan2,
    "lerp_": lerp, "addcmul_": addcmul, "addcdiv_": addcdiv, "nan_to_num_": nan_to_num,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))

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

    x = a._array
    if x.ndim == 0:
        _wrap_dim(dim, 1)  # (a 0-d tensor takes dim 0 or -1, like torch)
        return Tensor._make(xp.zeros((), dtype=xp.int64))
    d = _wrap_dim(dim, x.ndim)
    if not descending:
        key = x
    elif x.dtype.kind in "fV":
        key = -x
    else:  # (~x decreases with x for every integer and bool dtype, with no overflow at the min)
        key = ~x
    order = xp.argsort(key, axis=d, kind="stable")
    if descending and x.dtype.kind in "fV":
        nan = xp.isnan(xp.take_along_axis(x, order, axis=d))
        if nan.any():  # torch's nan is the largest value: first when descending, in order
            order = xp.take_along_axis(order, xp.argsort(~nan, axis=d, kind="stable"), axis=d)
    return Tensor._make(order.astype(xp.int64))


@register("sort")
def sort(a: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """``(values, indices)`` sorted along ``dim``; values are differentiable (a gather)."""

    idx = argsort(a, dim, descending)
    if a.ndim == 0:
        return values_indices(a.clone(), idx)
    return values_indices(_subscript.as_node(gather(a, dim, idx), _sorting.SortBackward0), idx)


@register("topk")
def topk(a: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices."""

    d = _wrap_dim(dim, a.ndim) if a.ndim else 0
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(
            f"selected index k out of range: k={k} for a dimension of size {n}. Use a k "
            "between 0 and the size of the dimension."
        )
    if not a.ndim:
        return values_indices(a.clone(), argsort(a, d, descending=largest))
    sel = _topk_partition(a._array, k, d, largest)
    if sel is not None:
        idx = Tensor._make(sel)
    else:
        idx = narrow(argsort(a, d, descending=largest), d, 0, k)
    return values_indices(_subscript.as_node(gather(a, d, idx), _sorting.TopkBackward0), idx)


def _topk_partition(x: Any, k: int, d: int, largest: bool) -> Any:
    """topk's indices (int64) by partition, then a sort of the ``k`` picked only: the
    order a full stable sort gives (largest or smallest first, ties by position), or None
    where that needs the full sort (nan in a largest-first float input, a tie for the
    ``k``-th place that straddles the partition, a dtype partition does not take, or ``k``
    close to the size, where a sort costs no more)."""
    n = x.shape[d]
    if not 0 < k <= n // 4 or x.dtype.kind not in "fiu":
        return None
    nan = x.dtype.kind == "f" and bool(_xp.isnan(x).any())
    if nan and largest:  # (nan is the largest: full sort's rule)
        return None
    if not nan:
        sel = _topk_threshold(x, k, d, largest)
        if sel is not None:
            return sel
    key = _topk_key(x) if largest else x
    part = _xp.argpartition(key, k - 1, axis=d)
    part = part[(slice(None),) * d + (slice(0, k),)]
    part.sort(axis=d)  # (positions in order, so a stable sort of their keys breaks ties so)
    kv = _xp.take_along_axis(key, part, axis=d)
    # a tie for the k-th place: partition may have picked later positions than a full sort
    kth = kv.max(axis=d, keepdims=True)
    picked = (kv == kth).sum(axis=d, keepdims=True)
    if not picked.all() or ((key == kth).sum(axis=d, keepdims=True) > picked).any():
        return None  # (none equal: a nan picked, in a smallest-first input)
    order = _xp.argsort(kv, axis=d, kind="stable")
    return _xp.take_along_axis(part, order, axis=d).astype(_xp.int64, copy=False)


def _topk_key(x: Any) -> Any:
    """A key whose ascending order is ``x``'s descending one (``-x``; ``~x`` for integers,
    which decreases with x with no overflow at the minimum)."""
    return -x if x.dtype.kind == "f" else ~x


def _topk_threshold(x: Any, k: int, d: int, largest: bool) -> Any:
    """The positions of the ``k`` smallest (or largest) of ``x`` (no nan) along ``d``,
    in that order, ties by position, or None when too many candidates pass the bound.
    Split each line into ``k`` blocks: their ``k`` minima are ``k`` distinct entries, so
    the ``k``-th smallest is at most the largest of them, and every entry at or under that
    bound is a candidate (all ties for the ``k``-th place among them); a stable sort of the
    few candidates, in position order, gives what a full stable sort's first ``k`` are."""
    n = x.shape[d]
    b = n // k
    lead = (slice(None),) * d
    blocks = x[lead + (slice(0, k * b),)]
    blocks = blocks.reshape(x.shape[:d] + (k, b) + x.shape[d + 1:])
    if largest:
        bound = blocks.max(axis=d + 1).min(axis=d, keepdims=True)
        moved = _xp.moveaxis(x >= bound, d, -1)
    else:
        bound = blocks.min(axis=d + 1).max(axis=d, keepdims=True)
        moved = _xp.moveaxis(x <= bound, d, -1)
    rest = moved.shape[:-1]
    mask = moved.reshape(-1, n)
    flat = _xp.flatnonzero(mask)  # (several times faster than a 2-D nonzero)
    line, pos = _xp.divmod(flat, n)
    counts = _xp.bincount(line, minlength=mask.shape[0])
    width = int(counts.max()) if counts.size else 0
    if width > 4 * k + 64 and width > n // 8:  # (a sorted-like line: partition instead)
        return None
    start = _xp.cumsum(counts) - counts
    col = _xp.arange(line.size) - start[line]
    keys = _xp.moveaxis(x, d, -1)[moved]  # (in the order nonzero lists them)
    if largest:
        keys = _topk_key(keys)
    fill = _xp.inf if x.dtype.kind == "f" else _xp.iinfo(x.dtype).max
    ck = _xp.full((mask.shape[0], width), fill, dtype=x.dtype)
    cp = _xp.zeros((mask.shape[0], width), dtype=_xp.int64)
    ck[line, col] = keys  # (padding sorts after the candidates: a stable sort, placed last)
    cp[line, col] = pos
    order = _xp.argsort(ck, axis=1, kind="stable")[:, :k]
    out = _xp.take_along_axis(cp, order, axis=1).reshape(rest + (k,))
    return _xp.ascontiguousarray(_xp.moveaxis(out, -1, d))


@register("nonzero")
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


for _name, _fn in {"square": square, "argsort": argsort, "sort": sort, "topk": topk,
                   "nonzero": nonzero}.items():
    setattr(Tensor, _name, _fn)


# -- Tensor methods composed from the ops above: no node of their own, so they are not in OPS;
# their gradients are their parts' (tests/test_diff_methods.py checks them against torch) ------
def clamp_min(a: Tensor, min: Any) -> Tensor:
    """:func:`clamp` with a lower bound only (a number or a tensor).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([-1.0, 2.0]).clamp_min(0).tolist()
        [0.0, 2.0]
    """
    if min is None:
        raise TypeError("clamp_min() received an invalid combination of arguments - got "
                        "(NoneType): expected a Tensor or a Number for min. Pass a bound.")
    return clamp(a, min=min)


def clamp_max(a: Tensor, max: Any) -> Tensor:
    """:func:`clamp` with an upper bound only (a number or a tensor).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([-1.0, 2.0]).clamp_max(0).tolist()
        [-1.0, 0.0]
    """
    if max is None:
        raise TypeError("clamp_max() received an invalid combination of arguments - got "
                        "(NoneType): expected a Tensor or a Number for max. Pass a bound.")
    return clamp(a, max=max)


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
        raise RuntimeError(
            f"size {{{list(shape)}}} is not expandable to size {{{list(xs)}}}. Each size must "
            "be 1 or match the tensor's size at that (right-aligned) dimension."
        )
    return sum_to(a, shape)


def argwhere(a: Tensor) -> Tensor:
    """The indices of the nonzero entries, one row each (``nonzero()``).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([[0, 1], [2, 0]]).argwhere().tolist()
        [[0, 1], [1, 0]]
    """
    return nonzero(a)


def _slab(nd: int, d: int, s: slice) -> tuple[Any, ...]:
    return (slice(None),) * d + (s,) + (slice(None),) * (nd - d - 1)


def diff(a: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bool), after
    concatenating ``prepend`` and ``append`` along ``dim``.

    Example:
        >>> import gradsum
        >>> gradsum.tensor([1, 4, 9, 16]).diff().tolist()
        [3, 5, 7]
        >>> gradsum.tensor([1, 4, 9, 16]).diff(n=2, prepend=gradsum.tensor([0])).tolist()
        [2, 2, 2]
    """
    nd = a._array.ndim
    if nd == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional (got a 0-d "
                           "tensor). Reshape it to (1,) first.")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}. Pass n >= 0.")
    d = _wrap_dim(dim, nd)
    for other in (prepend, append):
        if other is None:
            continue
        if other.ndim != nd:
            raise RuntimeError(
                "diff expects prepend or append to be the same dimension as input: input "
                f"has {nd}, got {other.ndim}. Reshape it (prepend.reshape(...))."
            )
        if builtins.any(other.shape[i] != a.shape[i] for i in range(nd) if i != d):
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input {tuple(a.shape)}, got "
                f"{tuple(other.shape)} (dim {d})"
            )
    parts = [t for t in (prepend, a, append) if t is not None]  # noqa: F811
    out = cat(parts, d) if len(parts) > 1 else a
    if n == 0:
        return out.clone() if out is a else out
    hi, lo = _slab(nd, d, slice(1, None)), _slab(nd, d, slice(None, -1))
    for _ in range(n):
        x, y = getitem(out, hi), getitem(out, lo)
        out = logical_xor(x, y) if out._array.dtype.kind == "b" else sub(x, y)
    return out


def logit(a: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given
    (integers give the default float dtype).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([0.5, 0.0]).logit(eps=0.25).tolist()
        [0.0, -1.0986123085021973]
    """
    x = a if a._array.dtype.kind in "fV" else to_dtype(a, _D.get_default_dtype())
    if eps is not None and eps >= 0:  # (torch: a negative eps clamps nothing)
        x = clamp(x, eps, 1 - eps)
    with _xp.errstate(divide="ignore", invalid="ignore"):  # (p = 1 gives inf, silently)
        return log(div(x, rsub(x, 1)))


def sgn(a: Tensor) -> Tensor:
    """:func:`sign` (gradsum's tensors are real).

    Example:
        >>> import gradsum
        >>> gradsum.tensor([-2.0, 0.0, 3.0]).sgn().tolist()
        [-1.0, 0.0, 1.0]
    """
    return sign(a)


def _index_error_name(arr: Any) -> str:
    return _D._TORCH_SCALAR_NAMES.get(str(arr.dtype), str(arr.dtype))


def _index_of(index: Any, name: str) -> Any:
    """The array of a tensor ``index`` argument (torch refuses lists and numbers there)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}. Wrap it with gradsum.tensor(...).")
    return index._array


def scatter(a: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *,
            reduce: str | None = None) -> Tensor:
    """``a`` with ``src[i][j]`` written at ``[index[i][j]][j]`` (for ``dim=0``, and so on),
    or the number ``value`` at those positions (the reverse of :func:`gather`).

    Example:
        >>> import gradsum
        >>> idx = gradsum.tensor([[1, 0, 1]])
        >>> gradsum.zeros(2, 3).scatter(0, idx, gradsum.tensor([[7.0, 8.0, 9.0]])).tolist()
        [[0.0, 8.0, 0.0], [7.0, 0.0, 9.0]]
        >>> gradsum.zeros(2, 3).scatter(0, idx, 5).tolist()
        [[0.0, 5.0, 0.0], [5.0, 0.0, 5.0]]
    """
    if reduce is not None:
        raise NotImplementedError(
            f"scatter(reduce={reduce!r}) is not supported by gradsum. Use scatter_add for "
            "'add' (or scatter_reduce in torch)."
        )
    if src is None:
        src = value
    x = a._array
    idx = _index_of(index, "scatter")
    if idx.dtype not in (_xp.int64, _xp.int32):
        raise RuntimeError(f"scatter(): Expected dtype int32/int64 for index, got "
                           f"{_index_error_name(idx)}. Convert it with .long().")
    is_src = isinstance(src, Tensor)
    if is_src and src._array.dtype != x.dtype:
        raise RuntimeError(
            f"scatter(): Expected self.dtype to be equal to src.dtype (self "
            f"{_index_error_name(x)}, src {_index_error_name(src._array)}). Convert src."
        )
    d = _wrap_dim(dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor "
                           f"(index {idx.ndim}, self {x.ndim})")
    if is_src and idx.ndim != src._array.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor "
                           f"(index {idx.ndim}, src {src._array.ndim})")
    if builtins.any(i != d and idx.shape[i] > x.shape[i] for i in range(x.ndim)) or (
            is_src and builtins.any(n > m for n, m in zip(idx.shape, src._array.shape))):
        tail = f" and to be no larger size than src {list(src.shape)}" if is_src else ""
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {d}{tail}")
    size = x.shape[d] if x.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} "
                           f"with size {size} (negative indices are not wrapped)")
    if idx.size == 0:
        return a.clone()
    if x.ndim == 0:
        a1, idx, d = reshape(a, (1,)), idx.reshape(1), 0
        src = reshape(src, (1,)) if is_src else src
    else:
        a1 = a
    if is_src and src.shape != idx.shape:
        src = getitem(src, tuple(slice(0, n) for n in idx.shape))
    out = index_put(a1, _along(idx.astype(_xp.int64, copy=False), d), src)
    return out if x.ndim else reshape(out, ())


def masked_scatter(a: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``a`` (broadcast with ``mask``) with the first entries of ``source``, in order, written
    where ``mask`` is True.

    Example:
        >>> import gradsum
        >>> m = gradsum.tensor([True, False, True])
        >>> gradsum.zeros(3).masked_scatter(m, gradsum.tensor([1.0, 2.0])).tolist()
        [1.0, 0.0, 2.0]
    """
    m = mask._array if isinstance(mask, Tensor) else _xp.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_index_error_name(m)}. Compare first (mask = t > 0)."
        )
    if source._array.dtype != a._array.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got "
            f"{_index_error_name(a._array)} and {_index_error_name(source._array)}. Convert the "
            "source with .to(self.dtype)."
        )
    try:
        shape = _xp.broadcast_shapes(a._array.shape, m.shape)
    except ValueError:
        raise _core.broadcast_error(a._array, m) from None
    mb = _xp.broadcast_to(m, shape)
    n = int(mb.sum())
    if source._array.size < n:
        raise RuntimeError(f"Number of elements of source < number of ones in mask "
                           f"({source._array.size} < {n}). Pass a larger source.")
    src = getitem(reshape(source, (-1,)), slice(0, n))
    return index_put(expand(a, shape), (Tensor._make(mb),), src)


def fill_diagonal_(a: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place (of a matrix, or of a tensor with equal sizes); with
    ``wrap``, a tall matrix's diagonal restarts after each ``N + 1`` rows, as torch's.

    Example:
        >>> import gradsum
        >>> gradsum.zeros(2, 3).fill_diagonal_(5).tolist()
        [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    """
    if isinstance(fill_value, Tensor):
        if fill_value._array.ndim != 0 or fill_value.requires_grad:
            raise TypeError("fill_diagonal_(): argument 'fill_value' (position 1) must be "
                            "Number, not Tensor. Pass fill_value.item().")
        fill_value = fill_value.item()
    shp = a._array.shape
    if len(shp) < 2:
        raise RuntimeError(f"dimensions must larger than 1 (got a {len(shp)}-d tensor). Use "
                           "a matrix, or copy_ for a vector.")
    if len(shp) > 2 and len(set(shp)) != 1:
        raise RuntimeError(f"all dimensions of input must be of equal length (got shape "
                           f"{tuple(shp)})")
    mask = _xp.zeros(shp, dtype=bool)
    _xp.fill_diagonal(mask, True, wrap=wrap)
    masked_fill_(a, Tensor._make(mask), fill_value)
    if wrap and len(shp) == 2 and shp[0] > shp[1] + 1:
        a._vc[0] += 1  # (torch fills the wrapped part in a second write)
    return a


for _name, _fn in {
    "clamp_min": clamp_min, "clamp_max": clamp_max, "broadcast_to": expand,
    "sum_to_size": sum_to_size, "argwhere": argwhere, "diff": diff, "logit": logit,
    "sgn": sgn, "scatter": scatter,
    "masked_scatter": masked_scatter, "fill_diagonal_": fill_diagonal_,
    "t_": t_, "transpose_": transpose_, "unsqueeze_": unsqueeze_, "squeeze_": squeeze_,
}.items():
    setattr(Tensor, _name, _fn)
for _name, _fn in {
    "clamp_min_": clamp_min, "clamp_max_": clamp_max, "logit_": logit, "sgn_": sgn,
    "scatter_": scatter,
    "masked_scatter_": masked_scatter,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))


# -- cumulative, diagonal, roll/rot90 and add*mm methods (no einsum, cdist, tensordot, *_indices)
for _name, _fn in {
    "cumprod": cumprod, "roll": roll, "diagonal": diagonal, "diag": diag,
    "diag_embed": diag_embed, "trace": trace, "movedim": movedim, "moveaxis": movedim,
    "repeat_interleave": repeat_interleave, "kron": kron, "cross": cross,
    "logcumsumexp": logcumsumexp, "cummax": cummax, "cummin": cummin, "fliplr": fliplr,
    "flipud": flipud, "rot90": rot90, "take_along_dim": take_along_dim, "addmm": addmm,
    "addmv": addmv, "addbmm": addbmm, "baddbmm": baddbmm,
}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
for _name, _fn in {
    "cumprod_": cumprod, "addmm_": addmm, "addmv_": addmv, "addbmm_": addbmm,
    "baddbmm_": baddbmm,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))
_ = (einsum, cdist, tensordot, triu_indices, tril_indices)

# -- in-place forms of the integer/bitwise/logical ops, and the augmented operators torch has
for _name, _fn in {
    "floor_divide_": floor_divide, "remainder_": remainder, "bitwise_and_": bitwise_and,
    "bitwise_or_": bitwise_or, "bitwise_xor_": bitwise_xor,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False, check_cast=True,
                                        elementwise=True))
for _name, _fn in {
    "logical_and_": logical_and, "logical_or_": logical_or, "logical_xor_": logical_xor,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))
for _name, _method in {
    "__ifloordiv__": "floor_divide_", "__imod__": "remainder_", "__ipow__": "pow_",
    "__iand__": "bitwise_and_", "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_",
}.items():
    setattr(Tensor, _name, getattr(Tensor, _method))


# == median ... scatter_reduce (sorting, reduction, indexing): imports and Tensor methods ==========
from gradsum.ops.indexing.gather_scatter import (
    scatter_reduce,
    take,
)
from gradsum.ops.rearrange import (
    meshgrid,
)
from gradsum.ops.reduction import (
    aminmax,
    bincount,
    histc,
    std_mean,
    var_mean,
)
from gradsum.ops.sorting import (
    bucketize,
    kthvalue,
    median,
    mode,
    nanmedian,
    nanquantile,
    quantile,
    searchsorted,
    unique,
    unique_consecutive,
)

for _name, _fn in {
    "median": median, "nanmedian": nanmedian, "kthvalue": kthvalue, "mode": mode,
    "quantile": quantile, "nanquantile": nanquantile, "aminmax": aminmax, "unique": unique,
    "unique_consecutive": unique_consecutive, "bincount": bincount, "histc": histc,
    "take": take, "scatter_reduce": scatter_reduce,
}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
Tensor.scatter_reduce_ = _op_inplace("scatter_reduce_", scatter_reduce, registered=False)
_ = (meshgrid, searchsorted, bucketize, std_mean, var_mean)
# == end median ... scatter_reduce =================================================================

# == special functions, linalg decompositions ===================================================
from gradsum.ops.arithmetic import (
    fmod,
)
from gradsum.ops.comparison import (
    signbit,
)
from gradsum.ops.linalg._base import (
    LinAlgError,
)
from gradsum.ops.linalg.decompositions import (
    cholesky_legacy as cholesky,
)
from gradsum.ops.linalg.decompositions import (
    torch_svd as svd,
)
from gradsum.ops.linalg.determinants import (
    det,
    logdet,
    slogdet,
)
from gradsum.ops.linalg.functions import (
    matrix_exp,
)
from gradsum.ops.linalg.solvers import (
    inv as inverse,
)
from gradsum.ops.linalg.solvers import (
    pinverse,
)
from gradsum.ops.pointwise import (
    copysign,
    deg2rad,
    frac,
    heaviside,
    hypot,
    logaddexp,
    logaddexp2,
    nextafter,
    rad2deg,
    sinc,
)
from gradsum.ops.special.bessel import (
    i0,
)
from gradsum.ops.special.entropy import (
    xlogy,
)
from gradsum.ops.special.erf import (
    erfc,
    erfinv,
)
from gradsum.ops.special.gamma import (
    digamma,
    lgamma,
    polygamma,
)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``t.polygamma(n)``: :func:`polygamma` with the tensor first."""
    return polygamma(n, self)


for _name, _fn in {
    "signbit": signbit, "heaviside": heaviside, "hypot": hypot, "logaddexp": logaddexp,
    "logaddexp2": logaddexp2, "xlogy": xlogy, "erfc": erfc, "erfinv": erfinv,
    "lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method, "i0": i0,
    "sinc": sinc, "frac": frac, "fmod": fmod, "copysign": copysign, "nextafter": nextafter,
    "deg2rad": deg2rad, "rad2deg": rad2deg, "det": det, "logdet": logdet, "slogdet": slogdet,
    "inverse": inverse, "pinverse": pinverse, "svd": svd, "matrix_exp": matrix_exp,
    "cholesky": cholesky,
}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
for _name, _fn in {
    "heaviside_": heaviside, "hypot_": hypot, "xlogy_": xlogy, "erfc_": erfc,
    "erfinv_": erfinv, "lgamma_": lgamma, "digamma_": digamma,
    "polygamma_": _polygamma_method, "i0_": i0, "sinc_": sinc, "frac_": frac, "fmod_": fmod,
    "copysign_": copysign, "nextafter_": nextafter, "deg2rad_": deg2rad, "rad2deg_": rad2deg,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))
_ = (LinAlgError,)
# == end special functions, linalg decompositions ===============================================

# -- torch's composites (broadcast/stack/split helpers, clamp_min/max, fmax/fmin, scatters) ---
# torch's everyday top-level functions (tile, *stack, tensor_split, nansum, fmax, dist, ...):
# imports, the existing composites torch also has at top level, and the Tensor methods. The
# new logit/clamp_min/clamp_max have torch's own nodes and replace the composite methods.
from gradsum.ops.arithmetic import (
    float_power,
)
from gradsum.ops.blas.products import (
    inner,
    vdot,
)
from gradsum.ops.comparison import (
    fmax,
    fmin,
    is_complex,
    is_same_size,
    isin,
)
from gradsum.ops.indexing.gather_scatter import (
    diagonal_scatter,
    select_scatter,
    slice_scatter,
)
from gradsum.ops.indexing.index import (
    index_copy,
    index_fill,
)
from gradsum.ops.indexing.masked import (
    masked_select,
)
from gradsum.ops.linalg.functions import (
    matrix_power,
)
from gradsum.ops.pointwise import (
    clamp_max,
    clamp_min,
    logit,
)
from gradsum.ops.rearrange import (
    block_diag,
    cartesian_prod,
    column_stack,
    combinations,
    diagflat,
    dstack,
    hstack,
    tile,
    vstack,
)
from gradsum.ops.reduction import (
    dist,
    nanmean,
    nansum,
)
from gradsum.ops.views import (
    broadcast_shapes,
    broadcast_tensors,
    dsplit,
    hsplit,
    ravel,
    swapdims,
    tensor_split,
    vsplit,
)

register("diff")(diff)
register("argwhere")(argwhere)

for _name, _fn in {
    "tile": _rearrange._tile_method, "tensor_split": tensor_split, "hsplit": hsplit,
    "vsplit": vsplit, "dsplit": dsplit, "swapdims": swapdims, "ravel": ravel,
    "nansum": nansum, "nanmean": nanmean, "logit": logit, "clamp_min": clamp_min,
    "clamp_max": clamp_max, "float_power": float_power, "fmax": fmax, "fmin": fmin,
    "inner": inner, "vdot": vdot, "matrix_power": matrix_power, "dist": dist,
    "diagflat": diagflat, "is_complex": is_complex, "is_same_size": is_same_size,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "greater": gt, "greater_equal": ge, "less": lt,
    "less_equal": le, "not_equal": ne,
}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
for _name, _fn in {
    "index_copy": index_copy, "index_fill": index_fill, "masked_select": masked_select,
}.items():
    setattr(Tensor, _name, _fn)
for _name, _fn in {
    "logit_": logit, "clamp_min_": clamp_min, "clamp_max_": clamp_max, "square_": square,
    "index_fill_": index_fill, "index_copy_": index_copy,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))
Tensor.float_power_ = _arithmetic._float_power_
Tensor.swapdims_ = Tensor.swapaxes_ = Tensor.transpose_
Tensor.subtract_ = Tensor.sub_
Tensor.negative_ = Tensor.neg_
_ = (block_diag, broadcast_shapes, broadcast_tensors, cartesian_prod, column_stack,
     combinations, dstack, hstack, isin, vstack)
# -- end composites ----------------------------------------------------------------------------

# == torch.Tensor's remaining methods: acosh ... unfold, put, cov ===============================
from gradsum._creation import bernoulli as _creation_bernoulli
from gradsum._creation import multinomial as _creation_multinomial
from gradsum.ops.activation import (
    hardshrink,
    prelu,
)
from gradsum.ops.arithmetic import (
    bitwise_left_shift,
    bitwise_right_shift,
    frexp,
    gcd,
    lcm,
    ldexp,
)
from gradsum.ops.blas.fused import (
    addr,
)
from gradsum.ops.comparison import (
    isneginf,
    isposinf,
    isreal,
)
from gradsum.ops.indexing.gather_scatter import (
    put,
)
from gradsum.ops.linalg.norms import (
    renorm,
)
from gradsum.ops.pointwise import (
    acosh,
    angle,
    arccosh,
    arcsinh,
    arctanh,
    asinh,
    atanh,
    fix,
)
from gradsum.ops.rearrange import (
    narrow_copy,
)
from gradsum.ops.reduction import (
    corrcoef,
    cov,
    histogram,
)
from gradsum.ops.sorting import (
    msort,
)
from gradsum.ops.special.gamma import (
    mvlgamma,
)

for _name, _fn in {
    "acosh": acosh, "asinh": asinh, "atanh": atanh, "arccosh": arccosh, "arcsinh": arcsinh,
    "arctanh": arctanh, "bitwise_left_shift": bitwise_left_shift,
    "bitwise_right_shift": bitwise_right_shift, "gcd": gcd, "lcm": lcm, "ldexp": ldexp,
    "frexp": frexp, "isposinf": isposinf, "isneginf": isneginf, "isreal": isreal,
    "positive": _arithmetic.positive, "fix": fix, "msort": msort, "angle": angle,
    "adjoint": _views.adjoint, "hardshrink": hardshrink, "prelu": prelu, "addr": addr,
    "renorm": renorm, "mvlgamma": mvlgamma, "unfold": _views.unfold,
    "narrow_copy": narrow_copy, "split_with_sizes": _views.split_with_sizes,
    "unsafe_split": _views.unsafe_split, "unsafe_chunk": _views.unsafe_chunk,
    "put": put, "index_put": _gather_scatter.index_put, "cov": cov, "corrcoef": corrcoef,
    "histogram": histogram, "ger": outer, "conj": _views.conj,
    "conj_physical": _views.conj_physical, "resolve_conj": _views.resolve_conj,
    "resolve_neg": _views.resolve_neg, "is_conj": _views.is_conj,
    "is_neg": _views.is_neg, "is_inference": _views.is_inference,
    "as_strided": _views.as_strided,
}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
for _name, _fn in {
    "acosh_": _pointwise._acosh_inplace, "asinh_": _pointwise._asinh_inplace,
    "atanh_": _pointwise._atanh_inplace, "arccosh_": _pointwise._acosh_inplace,
    "arcsinh_": _pointwise._asinh_inplace, "arctanh_": _pointwise._atanh_inplace, "fix_": trunc,
    "cumsum_": cumsum, "tril_": tril, "triu_": triu,
    "index_add_": index_add, "scatter_add_": scatter_add, "renorm_": renorm,
    "mvlgamma_": mvlgamma, "put_": put, "addr_": addr, "index_put_": _gather_scatter.index_put,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False))
for _name, _pos, _kw in [("index_add_", 2, "source"), ("scatter_add_", 2, "src"),
                         ("put_", 1, "source"), ("index_put_", 1, "values")]:
    setattr(Tensor, _name, _views._no_overlap(_name, getattr(Tensor, _name), _pos, _kw))
for _name, _fn in {
    "gcd_": gcd, "lcm_": lcm, "ldexp_": ldexp, "bitwise_left_shift_": bitwise_left_shift,
    "bitwise_right_shift_": bitwise_right_shift,
}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False, check_cast=True,
                                        elementwise=True))
for _name, _fn, _node in [
    ("eq_", eq, "Eq"), ("ne_", ne, "Ne"), ("lt_", lt, "Lt"), ("le_", le, "Le"),
    ("gt_", gt, "Gt"), ("ge_", ge, "Ge"), ("greater_", gt, "Gt"),
    ("greater_equal_", ge, "Ge"), ("less_", lt, "Lt"), ("less_equal_", le, "Le"),
    ("not_equal_", ne, "Ne"),
]:
    setattr(Tensor, _name, _inplace._cmp_inplace(_name, _fn, _node))
Tensor.bitwise_not_ = _inplace._untracked_inplace("bitwise_not_", bitwise_not)
Tensor.logical_not_ = _inplace._untracked_inplace("logical_not_", logical_not)
Tensor.absolute_ = Tensor.abs_
Tensor.divide_ = Tensor.true_divide_ = Tensor.div_
Tensor.multiply_ = Tensor.mul_
Tensor.__lshift__ = bitwise_left_shift
Tensor.__rshift__ = bitwise_right_shift
Tensor.__rlshift__ = lambda self, other: bitwise_left_shift(other, self)
Tensor.__rrshift__ = lambda self, other: bitwise_right_shift(other, self)
Tensor.__ilshift__ = Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_
Tensor.apply_ = _inplace.apply_
Tensor.map_ = _inplace.map_
Tensor.resize_ = _inplace.resize_
Tensor.resize_as_ = _inplace.resize_as_
Tensor.geometric_ = _sampling.geometric_
Tensor.cauchy_ = _sampling.cauchy_
Tensor.log_normal_ = _sampling.log_normal_
Tensor.qr = _decompositions._qr_method
Tensor.bernoulli = _creation_bernoulli
Tensor.multinomial = _creation_multinomial
for _name in ("data_ptr", "storage_offset", "get_device", "is_pinned", "is_shared"):
    setattr(Tensor, _name, getattr(_views, _name))
for _name in ("solve", "lstsq", "eig", "symeig"):
    setattr(Tensor, _name, _solvers._removed(_name))
# == end remaining methods ========================================================================

# == torch.special's remaining functions: igamma/igammac and in-place aliases ====================
from gradsum.ops.special.gamma import (
    igamma,
    igammac,
)

for _name, _fn in {"igamma": igamma, "igammac": igammac}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
for _name, _fn in {"igamma_": igamma, "igammac_": igammac}.items():
    setattr(Tensor, _name, _op_inplace(_name, _fn, registered=False, check_cast=True,
                                        elementwise=True))
# torch's top-level in-place functions (``torch.i0_(t)`` is ``t.i0_()``)
i0_ = Tensor.i0_
sinc_ = Tensor.sinc_
erfc_ = Tensor.erfc_
logit_ = Tensor.logit_
xlogy_ = Tensor.xlogy_
# == end igamma/igammac ===========================================================================

# == triangular/LU solves, lstsq, cond, ..., index_reduce ========================================
from gradsum.ops.indexing.index import (
    index_reduce,
)
from gradsum.ops.linalg.functions import (
    chain_matmul,
)
from gradsum.ops.linalg.lu import (
    lu_unpack,
)
from gradsum.ops.linalg.solvers import (
    cholesky_inverse,
    cholesky_solve,
    triangular_solve,
)

for _name, _fn in {
    "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
    "triangular_solve": triangular_solve, "index_reduce": index_reduce,
}.items():
    METHODS[_name] = _fn
    setattr(Tensor, _name, _fn)
Tensor.index_reduce_ = _op_inplace("index_reduce_", index_reduce, registered=False)
_ = (chain_matmul, lu_unpack)
# == end triangular/LU solves =====================================================================
