"""gradsum: a small NumPy autograd with PyTorch's API and gradient semantics, exactly.

Its heart is the rule PyTorch users trip over: ``backward()`` adds into ``.grad``, it never
replaces it.

Example:
    >>> import gradsum
    >>> w = gradsum.tensor([1.0], requires_grad=True)
    >>> (w * 2).sum().backward()
    >>> (w * 3).sum().backward()
    >>> w.grad
    tensor([5.])
"""

from __future__ import annotations

import warnings as _warnings

# torch's kernels raise no floating-point warnings: log(0) is -inf, 0 / 0 is nan, silently.
# NumPy warns from the line that called it; this silences those warnings for lines inside
# gradsum only (a user's own NumPy code still warns). Division and every backward also run
# under np.errstate, so they stay silent even where warnings are turned into errors.
_warnings.filterwarnings(
    "ignore", r"(divide by zero|invalid value|overflow|underflow) encountered in",
    RuntimeWarning, r"gradsum\.",
)

# NumPy's temporaries from reusable heap memory, not page-faulted in anew on every call
# (``_process_settings.tune_allocator``; GRADSUM_MALLOC_TUNING=0 turns it off)
from gradsum import _process_settings as _process_settings_module

_process_settings_module.tune_allocator()
del _process_settings_module

from gradsum import _tensor
from gradsum._creation import (
    arange,
    as_tensor,
    bernoulli,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    multinomial,
    normal,
    ones,
    ones_like,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from gradsum._dtype import (
    bool_,
    double,
    dtype,
    bfloat16,
    float16,
    float32,
    float64,
    finfo,
    get_default_dtype,
    iinfo,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    can_cast,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from gradsum._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from gradsum._tensor import Size, Tensor, is_floating_point, is_nonzero, is_tensor, numel
from gradsum._legacy_types import (  # torch's legacy tensor types
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
    typename,
)
from gradsum._tensor_str import get_printoptions, set_printoptions
from gradsum.autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from gradsum.autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from gradsum import ops as _ops
from gradsum.ops import (
    abs,
    acosh,
    add,
    addr,
    all,
    allclose,
    amax,
    amin,
    angle,
    any,
    arccosh,
    arcsinh,
    arctanh,
    argmax,
    argmin,
    asinh,
    atanh,
    bitwise_left_shift,
    bitwise_right_shift,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cat,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clone,
    column_stack,
    combinations,
    corrcoef,
    cos,
    count_nonzero,
    cov,
    cumsum,
    diagflat,
    diagonal_scatter,
    dist,
    div,
    dsplit,
    dstack,
    eq,
    equal,
    erf,
    exp,
    expand,
    fix,
    flatten,
    flip,
    float_power,
    fmax,
    fmin,
    frexp,
    gather,
    gcd,
    ge,
    gelu,
    gt,
    hardshrink,
    histogram,
    hsplit,
    hstack,
    index_add,
    index_copy,
    index_fill,
    index_select,
    inner,
    is_complex,
    is_same_size,
    isclose,
    isfinite,
    isin,
    isinf,
    isnan,
    isneginf,
    isposinf,
    isreal,
    lcm,
    ldexp,
    le,
    leaky_relu,
    log,
    log1p,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logit,
    logsumexp,
    lt,
    masked_fill,
    masked_select,
    matmul,
    matrix_power,
    max,
    maximum,
    mean,
    min,
    minimum,
    msort,
    mul,
    mvlgamma,
    nanmean,
    nansum,
    narrow,
    narrow_copy,
    ne,
    neg,
    norm,
    outer,
    permute,
    pow,
    prelu,
    prod,
    put,
    ravel,
    reciprocal,
    relu,
    remainder,
    renorm,
    repeat,
    reshape,
    rsqrt,
    scatter_add,
    select,
    select_scatter,
    sigmoid,
    sign,
    silu,
    sin,
    slice_scatter,
    softmax,
    softplus,
    split,
    sqrt,
    squeeze,
    stack,
    std,
    sub,
    sum,
    swapdims,
    t,
    tanh,
    tensor_split,
    tile,
    transpose,
    tril,
    triu,
    unbind,
    unsqueeze,
    var,
    vdot,
    vsplit,
    vstack,
    where,
)
from gradsum.ops import bmm, dot, mm, mv
from gradsum.ops import scatter  # torch.scatter: the function form of Tensor.scatter
detach = Tensor.detach  # torch.detach(input): the function form of Tensor.detach
from gradsum import linalg  # torch.linalg
from gradsum.ops import mul as multiply
# torch's helpers and rarer functions that gradsum.ops does not hold (subtract, atleast_1d,
# conj, ...), from their family files
from gradsum.ops.arithmetic import (
    positive,
    square_,
    subtract,
)
from gradsum.ops.comparison import (
    greater,
    greater_equal,
    less,
    less_equal,
    not_equal,
)
from gradsum.ops.indexing.index import (
    unravel_index,
)
from gradsum.ops.pointwise import (
    logspace,
    scalar_tensor,
)
from gradsum.ops.rearrange import (
    row_stack,
)
from gradsum.ops.reduction import (
    cosine_similarity,
    pairwise_distance,
)
from gradsum.ops.views import (
    adjoint,
    as_strided,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    conj,
    conj_physical,
    is_conj,
    is_inference,
    is_neg,
    real,
    resolve_conj,
    resolve_neg,
    split_with_sizes,
    unsafe_chunk,
    unsafe_split,
)

bool = bool_
float = float32
int = int32
_tensor._F = _ops
for _name, _fn in _ops.OPS.items():  # torch aliases (clip, concat, divide, ...)
    # (``special_*``: the registry names of gradsum.special's ops, not torch top-level names)
    if not _name.endswith("_") and _name not in globals() and not _name.startswith("special_"):
        globals()[_name] = _fn

from gradsum import autograd, backends, utils
from gradsum import nn, optim  # after ops: they build on them
from gradsum import special  # torch.special (after ops: it builds on them)
import types as _types

from gradsum import random  # torch.random: the default generator's functions, fork_rng
from gradsum import func  # torch.func: functional_call (after nn)
from gradsum import amp, cpu  # torch.amp (autocast, GradScaler), torch.cpu (after optim)
from gradsum.amp.autocast_mode import (  # torch's top-level autocast state functions
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from gradsum.ops import erfc_, i0_, logit_, sinc_, xlogy_  # torch's top-level in-place
from gradsum.serialization import load, save
from gradsum import toolkit  # last: it builds on autograd, nn and optim
from gradsum import testing  # torch.testing: assert_close, make_tensor
# devices and accelerators as torch's CPU-only build answers them (gradsum._device)
from gradsum._device import (
    AcceleratorError,
    device,
    get_default_device,
    get_device,
    get_device_module,
    set_default_device,
)
from gradsum import accelerator, cuda, mps, xpu
from gradsum._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from gradsum.cuda import OutOfMemoryError
from gradsum._process_settings import (
    are_deterministic_algorithms_enabled,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    init_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from gradsum import compiler, onnx  # torch.compile runs eagerly; torch.onnx is importable
from gradsum.compiler import compile

from gradsum import version  # torch.version: cuda/hip None, as torch's CPU build
from gradsum.version import __version__

# (as torch's: the public names but the submodules, so that ``from gradsum import *`` does not
# shadow a script's own ``random``, ``version`` or ``testing``)
__all__ = [name for name, obj in globals().items()
           if not name.startswith("_") and not isinstance(obj, _types.ModuleType)
           and name != "annotations"]
