"""All ops, one namespace: primitives (one class each, with its backward rule) and the few
composites built from them. The Tensor methods, operators and in-place twins are declared with
each op in its family file (``register`` / ``tensor_method`` in ``ops/_core.py``) and bound
here once, by ``_core.bind_surface()``.

Example:
    >>> import gradsum
    >>> from gradsum.ops import OPS
    >>> "matmul" in OPS and "log_softmax" in OPS
    True
"""

# (imports interleave with the names they feed, family by family)
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


from gradsum.ops.arithmetic import square
from gradsum.ops.indexing.gather_scatter import scatter
from gradsum.ops.indexing.masked import argwhere, masked_scatter, nonzero
from gradsum.ops.inplace import fill_diagonal_, masked_fill_
from gradsum.ops.pointwise import sgn, type_as
from gradsum.ops.rearrange import RepeatBackward0, repeat
from gradsum.ops.reduction import sum_to_size
from gradsum.ops.scan import diff
from gradsum.ops.sorting import argsort, sort, topk

_ = (einsum, cdist, tensordot, triu_indices, tril_indices)


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

_ = (meshgrid, searchsorted, bucketize, std_mean, var_mean)

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

_ = (LinAlgError,)

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

_ = (block_diag, broadcast_shapes, broadcast_tensors, cartesian_prod, column_stack,
     combinations, dstack, hstack, isin, vstack)

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
from gradsum.ops.indexing.index import (
    index_reduce,
)
from gradsum.ops.linalg.functions import (
    chain_matmul,
)
from gradsum.ops.linalg.lu import (
    lu_unpack,
)
from gradsum.ops.linalg.norms import (
    renorm,
)
from gradsum.ops.linalg.solvers import (
    cholesky_inverse,
    cholesky_solve,
    triangular_solve,
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
    igamma,
    igammac,
    mvlgamma,
)

_ = (chain_matmul, lu_unpack)

# -- the Tensor surface: every method, operator and in-place twin the family files declare --
_core.bind_surface()
#: the Tensor methods bound from the registry (name -> function), a view of ``_core.SPECS``
METHODS: dict[str, Any] = {n: s.fn for s in _core.SPECS.values() for n in s.methods}
# torch's top-level in-place functions (``torch.i0_(t)`` is ``t.i0_()``)
i0_ = Tensor.i0_
sinc_ = Tensor.sinc_
erfc_ = Tensor.erfc_
logit_ = Tensor.logit_
xlogy_ = Tensor.xlogy_
