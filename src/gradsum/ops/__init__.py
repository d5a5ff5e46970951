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


from gradsum.ops.inplace import fill_diagonal_, masked_fill_
from gradsum.ops.pointwise import sgn, type_as
from gradsum.ops.rearrange import RepeatBackward0, repeat


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


from gradsum.ops.arithmetic import square
from gradsum.ops.indexing.masked import argwhere, masked_scatter, nonzero
from gradsum.ops.sorting import argsort, sort, topk

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


from gradsum.ops.reduction import sum_to_size
from gradsum.ops.scan import diff


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


from gradsum.ops.indexing.gather_scatter import scatter

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
    setattr(Tensor, _name, _inplace._no_overlap(_name, getattr(Tensor, _name), _pos, _kw))
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
