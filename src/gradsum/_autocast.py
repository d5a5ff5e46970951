"""The autocast state and torch's CPU cast policy: the one place where ops change dtype
inside ``with gradsum.autocast("cpu"):``.

torch's CPU autocast (``aten/src/ATen/autocast_mode.cpp``) sorts ops into lists. Ops on the
*lower precision* list (matrix products, convolutions, ``linear``, ``prelu``, attention) cast
their floating inputs to the autocast dtype (bfloat16 by default, or float16); ops on the
*fp32* list (losses, ``prod``, ``trace``, ``cdist``, inverses, 3-D pools, reflection and
replication padding, ``grid_sample``, ``quantile`` ...) cast them to float32. float64 inputs
and non-floating ones are never cast. Every other op runs in the dtypes it is given. An op
on a list runs with autocast off inside it, so the ops it is built from do not cast again
(torch's kernels run below its Autocast dispatch key).

The ops carry :func:`autocast_policy` (one decorator, the cast itself lives here only), named
by their torch name; :data:`LOWER_PRECISION` and :data:`FP32` are the lists. Casts of leaf
float32 tensors that require grad (parameters) are cached until the outermost autocast region
exits, as torch's ``cache_enabled``: a weight used by two ops is cast once, and both ops'
gradients flow through that one cast.

Example:
    >>> import gradsum
    >>> w = gradsum.ones(2, 2, requires_grad=True)
    >>> with gradsum.autocast("cpu"):
    ...     y = gradsum.mm(gradsum.ones(2, 2), w)
    ...     loss = gradsum.nn.functional.mse_loss(y, gradsum.zeros(2, 2))
    >>> y.dtype, loss.dtype
    (gradsum.bfloat16, gradsum.float32)
    >>> loss.backward()
    >>> w.grad.dtype
    gradsum.float32
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state as _grad_state

FnT = TypeVar("FnT", bound=Callable[..., Any])

#: torch's CPU ``lower_precision_fp`` list (the ops gradsum has carry the decorator)
LOWER_PRECISION = frozenset({
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm",
    "linear", "_convolution", "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention",
})

#: torch's CPU ``fp32`` list
FP32 = frozenset({
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits",
    "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
    "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
    "linalg_cond", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq", "linalg_inv_ex", "grid_sampler_2d", "grid_sampler_3d",
})

#: the device types torch's autocast knows, with the default dtype of each
DEFAULT_DTYPES: dict[str, D.dtype] = {
    "cpu": D.bfloat16, "cuda": D.float16, "mps": D.float16, "xla": D.bfloat16,
    "xpu": D.float16, "hpu": D.bfloat16, "ipu": D.float16, "mtia": D.float16,
    "maia": D.float16, "privateuseone": D.float16,
}


class _State(threading.local):
    """Thread-local, as torch's: a new thread starts with autocast off."""

    cpu = False  # (the flag every decorated op reads)
    cache_enabled = True
    nesting = 0

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtypes: dict[str, D.dtype] = dict(DEFAULT_DTYPES)
        self.cache: dict[int, tuple[Tensor, Tensor]] = {}


_state = _State()


def is_enabled(device_type: str) -> bool:
    """Whether autocast is on for ``device_type`` in this thread."""
    if device_type == "cpu":
        return _state.cpu
    return _state.enabled.get(device_type, False)


def set_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` in this thread."""
    if device_type == "cpu":
        _state.cpu = bool(enabled)
    else:
        _state.enabled[device_type] = bool(enabled)


def get_dtype(device_type: str) -> D.dtype:
    """The lower-precision dtype autocast uses on ``device_type``."""
    return _state.dtypes[device_type]


def set_dtype(device_type: str, dtype: D.dtype) -> None:
    _state.dtypes[device_type] = dtype


def clear_cache() -> None:
    """Forget the cached casts of parameters (torch does so when the outermost region ends)."""
    _state.cache.clear()


def _cast(value: Any, target: D.dtype) -> Any:
    """``value`` cast to ``target`` if it is an eligible tensor (floating, not float64), or a
    list/tuple of tensors with each cast (torch casts TensorList arguments too)."""
    if isinstance(value, Tensor):
        dt = value._array.dtype
        if dt == target.np or not D.is_float_np(dt) or dt.name == "float64":
            return value
        st = _state
        # (cast in grad mode only: a cast made under no_grad has no history to reuse)
        if (st.cache_enabled and target is not D.float32 and dt.name == "float32"
                and _grad_state.enabled and value._requires_grad and value._grad_fn is None
                and getattr(value, "_base", None) is None):
            hit = st.cache.get(id(value))
            if hit is not None and hit[0] is value and hit[1].dtype is target:
                return hit[1]
            cast = value.to(target)
            st.cache[id(value)] = (value, cast)  # (holds ``value``: its id stays unique)
            return cast
        return value.to(target)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
        return type(value)(_cast(v, target) for v in value)
    return value


def cast_for(name: str, *tensors: Any) -> tuple[Any, ...]:
    """``tensors`` as op ``name``'s policy casts them inside CPU autocast (unchanged outside):
    for an op whose policy depends on its arguments (``F.pad``'s reflect and replicate modes
    are on the fp32 list, its other modes on none; ``einsum``'s products are ``bmm``'s)."""
    if not _state.cpu:
        return tensors
    target = _state.dtypes["cpu"] if name in LOWER_PRECISION else D.float32
    if name not in LOWER_PRECISION and name not in FP32:
        raise ValueError(f"{name!r} is on neither of torch's CPU autocast lists")
    return tuple([_cast(t, target) for t in tensors])


def autocast_policy(name: str) -> Callable[[FnT], FnT]:
    """Give the op ``name`` (its torch name, on :data:`LOWER_PRECISION` or :data:`FP32`)
    torch's CPU autocast behaviour. Outside autocast the op runs as written, after one test
    of a thread-local flag; the undecorated function stays at ``__wrapped__``."""
    if name in LOWER_PRECISION:
        lower = True
    elif name in FP32:
        lower = False
    else:
        raise ValueError(f"{name!r} is on neither of torch's CPU autocast lists")

    def deco(fn: FnT) -> FnT:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            st = _state
            if not st.cpu:
                return fn(*args, **kwargs)
            target = st.dtypes["cpu"] if lower else D.float32
            args = tuple([_cast(a, target) for a in args])
            if kwargs:
                kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
            st.cpu = False  # (the ops it is built from run below autocast, as in torch)
            try:
                return fn(*args, **kwargs)
            finally:
                st.cpu = True

        return run  # type: ignore[return-value]

    return deco


def excluded(fn: FnT) -> FnT:
    """Run ``fn`` with CPU autocast off: for a composite whose torch kernel is on neither list
    and does not cast (e.g. the GRU and LSTM cells), though gradsum builds it from ops that
    are on one."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        st = _state
        if not st.cpu:
            return fn(*args, **kwargs)
        st.cpu = False
        try:
            return fn(*args, **kwargs)
        finally:
            st.cpu = True

    return run  # type: ignore[return-value]
