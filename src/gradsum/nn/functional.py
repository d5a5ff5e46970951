"""``gradsum.nn.functional``: torch.nn.functional's names, composed from differentiable ops.

Everything here is argument handling and composition: the nn primitives with their own
backward rules (written in gradsum ops, so double backward works) are ops, one module per
family: :mod:`gradsum.ops.conv` (``im2col``/``col2im`` and ``ConvolutionBackward0``),
:mod:`gradsum.ops.pool`, :mod:`gradsum.ops.pad`, :mod:`gradsum.ops.upsample`,
:mod:`gradsum.ops.normalization` (``NativeBatchNormBackward0``, ``NativeGroupNormBackward0``,
``NativeLayerNormBackward0``, like torch's), :mod:`gradsum.ops.embedding`,
:mod:`gradsum.ops.loss` (one node per loss, e.g. ``NllLossBackward0``, whose rule is the
primitive ``_nll_backward``; that one's rule is ``nll_loss`` again), :mod:`gradsum.ops.rnn`
and :mod:`gradsum.ops.attention`.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> logits = gradsum.tensor([[2.0, 0.0, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, gradsum.tensor([0]))
    >>> round(loss.item(), 4)
    0.1698
    >>> loss.backward()
    >>> [round(v, 4) for v in logits.grad[0].tolist()]
    [-0.1562, 0.1142, 0.042]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gradsum.ops as ops
from gradsum import _dtype as D
from gradsum import _random
from gradsum._autocast import autocast_policy, excluded
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import is_grad_enabled, no_grad
from gradsum.autograd.graph import HOLDS_STATE, Node  # noqa: F401  (HOLDS_STATE: recorded surface)
from gradsum.nn import _messages
from gradsum.ops import conv as _conv
from gradsum.ops import embedding as _embedding
from gradsum.ops import inplace as _inplace
from gradsum.ops import loss as _loss
from gradsum.ops import views as _shape_views
from gradsum.ops._core import _make, index_range, needs_grad, record
from gradsum.ops.activation import (
    _CELU_NODES,
    _ELU_NODES,
    _HARDSIGMOID_NODES,
    _HARDSWISH_NODES,
    _HARDTANH_NODES,
    _RRELU_NODES,
    _SOFTSHRINK_NODES,
    _THRESHOLD_NODES,
    GluBackward0,
    LeakyReluBackward1,
    MishBackward0,
    _Act,
    _act,
    _check_floating,
    _within,
    hardshrink,
    logsigmoid,
)
from gradsum.ops.arithmetic import (
    _F32_F64,
    _INT_OF,
    select,
    select_const,
    select_grad,  # noqa: F401  (on the recorded surface)
)
from gradsum.ops.embedding import embedding_dense_backward  # noqa: F401  (F's name)
from gradsum.ops.indexing import subscript as _shape_subscript
from gradsum.ops.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    mixed_reduced,
    native_layer_norm,
)
from gradsum.ops.pad import pad
from gradsum.ops.pool import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from gradsum.ops.rearrange import (
    channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)
from gradsum.ops.reduction import cosine_similarity, pairwise_distance
from gradsum.ops.special.erf import _scalar_op

_min_reduce = xp.minimum.reduce
_add_reduce = xp.add.reduce
_max_reduce = xp.maximum.reduce

__all__ = [
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu", "conv2d",
    "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "dropout", "elu",
    "embedding", "fold", "gaussian_nll_loss", "gelu", "glu", "group_norm", "hardshrink",
    "hardsigmoid", "hardswish", "hardtanh", "hinge_embedding_loss", "huber_loss",
    "instance_norm", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax",
    "logsigmoid", "margin_ranking_loss", "max_pool1d", "max_pool2d", "mish", "mse_loss",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss",
    "normalize", "one_hot", "pad", "pairwise_distance", "poisson_nll_loss", "prelu", "relu",
    "relu6", "rrelu", "selu", "sigmoid", "silu", "smooth_l1_loss", "soft_margin_loss",
    "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh", "tanhshrink",
    "threshold", "triplet_margin_loss", "unfold",
]


# -- helpers -----------------------------------------------------------------------------------
def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    warnings.warn(_messages.size_average_reduce_args_deprecated(), UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(_messages.loss_invalid_reduction(reduction))


def _resolve(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_reduction(reduction)
    return reduction


def _run_inplace(x: Tensor, name: str, fn: Any) -> Tensor:
    """``x`` becomes ``fn(x)`` in place (recorded like gradsum's own in-place ops)."""
    _inplace._check_leaf(x, name)
    if _inplace._recording(x):
        return _inplace.apply_inplace(x, name, fn, pure=True)  # (deterministic)
    res = fn(x.detach())
    _inplace._write(x, res._array, name)
    return x


class _ArgAssertionError(AssertionError, ValueError):
    """An argument error that torch raises with ``assert`` (so an AssertionError); also a
    ValueError, which is what gradsum raised before and what callers may catch."""


def _check_no_grad(t: Tensor | None, arg: str, fn: str, end: str = ".") -> None:
    """torch's autograd refusal of an input it does not differentiate (class weights)."""
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(_messages.not_differentiable_pass_detached(fn, arg, end))


# -- linear and activations --------------------------------------------------------------------
@autocast_policy("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.linear(gradsum.ones(1, 2), gradsum.tensor([[1.0, 2.0]]), gradsum.tensor([0.5]))
        tensor([[3.5000]])
    """
    wa = weight._array
    if wa.ndim > 2 or (bias is not None and not (
            wa.ndim == 2 and bias._array.ndim == 1
            and bias._array.shape[0] in (1, wa.shape[0]))):  # (the usual weight and bias fit)
        _check_linear(input, weight, bias)
    return ops.linear(input, weight, bias)


def _check_linear(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """torch's errors for a weight of more than 2 dims and a bias that does not fit."""
    if weight.ndim > 2:
        raise RuntimeError(_messages.linear_weight_more_than_2d(weight))
    if (bias is not None and input.ndim >= 1 and weight.ndim >= 1
            and not (weight.ndim == 2 and bias.ndim == 1
                     and bias.shape[0] in (1, weight.shape[0]))):  # (the usual bias: fits)
        if weight.ndim == 1 and (input.ndim in (2, 3) or bias.ndim == 1):
            # (torch's fused addmm path: a 1-D weight is no matrix)
            raise RuntimeError(_messages.linear_1d_weight_with_bias())
        out_shape = tuple(input.shape[:-1]) + tuple(weight.shape[:-1])
        try:
            full = _shape_broadcast(tuple(bias.shape), out_shape)
        except ValueError:
            full = None
        if full != out_shape:
            # torch adds the bias into the output (addmm / add_): it may not enlarge it
            raise RuntimeError(_messages.linear_bias_broadcast_shape(out_shape, full, bias))


def _shape_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of two shapes (``ValueError`` when they do not broadcast)."""
    return tuple(xp.broadcast_shapes(a, b))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; ``inplace=True`` overwrites ``input``."""
    return _run_inplace(input, "relu_", ops.relu) if inplace else ops.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit (``approximate='tanh'`` for the tanh form)."""
    return ops.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    return _run_inplace(input, "silu_", ops.silu) if inplace else ops.silu(input)


def sigmoid(input: Tensor) -> Tensor:
    return ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return ops.tanh(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,
               inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    if inplace:
        return _run_inplace(input, "leaky_relu_", lambda t: _leaky_relu_1(t, negative_slope))
    return ops.leaky_relu(input, negative_slope)


def _leaky_relu_1(t: Tensor, slope: float) -> Tensor:
    """``leaky_relu(t, slope)`` recorded as the in-place ``LeakyReluBackward1`` (which saves
    its output: see :func:`_run_inplace`)."""
    if not needs_grad(t):
        return ops.leaky_relu(t, slope)
    with no_grad():
        out = ops.leaky_relu(t, slope)
    node = LeakyReluBackward1()
    node.slope = slope
    res = record(node, (t,), out._array)
    node.save(outputs=(res,))
    return res


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""
    return ops.softplus(input, beta, threshold)


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(
        _messages.implicit_dimension_choice_been_deprecated(name), UserWarning, stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """Softmax along ``dim`` (torch's legacy implicit ``dim`` when None, with its warning)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """Log-softmax along ``dim``."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return ops.log_softmax(input, dim, dtype)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding with a new last dimension.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.one_hot(gradsum.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    if num_classes == -1 and tensor.numel() == 0:  # (no largest index to count from)
        raise RuntimeError(_messages.one_hot_cannot_infer_num_classes())
    return ops.one_hot(tensor, num_classes)


# -- dropout -------------------------------------------------------------------------------------
def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (random numbers from gradsum's default generator). Not training, or ``p == 0``: returns
    ``input`` itself.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.ones(1000)
        >>> F.dropout(x, 0.5, training=False) is x
        True
        >>> y = F.dropout(x, 0.5)
        >>> sorted(set(y.tolist()))
        [0.0, 2.0]
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(_messages.dropout_probability(p))
    if not isinstance(training, bool):  # (torch's argument parser takes a bool only)
        raise TypeError(_messages.dropout_argument_train_position_3(training))
    if not training or p == 0.0 or input.numel() == 0:
        return input
    arr = input._array
    if p != 1.0 and arr.dtype.kind in "biu":
        # torch scales the kept values by the float 1 / (1 - p), which an integer or bool
        # tensor cannot hold (p == 1 only zeros, which it can)
        raise RuntimeError(_messages.dropout_cannot_cast_to_integer(input))
    if p == 1.0:
        noise = xp.zeros(arr.shape, dtype=arr.dtype)
    else:
        keep = _random.rng(None).random(arr.shape) < (1.0 - p)
        noise = keep.astype(arr.dtype) / (1.0 - p)
    mask = _make(noise.astype(arr.dtype, copy=False))
    if inplace:
        return input.mul_(mask)
    return ops.mul(input, mask)


# -- embedding -----------------------------------------------------------------------------------
def _embedding_renorm_(weight: Tensor, idx: Any, max_norm: float, norm_type: float) -> None:
    with no_grad():
        arr = weight._array
        rows = xp.unique(idx.reshape(-1))
        sub = arr[rows]
        if norm_type == math.inf:
            norms = xp.abs(sub).max(axis=1)
        else:
            norms = (xp.abs(sub) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
        over = norms > max_norm
        if over.any():
            scale = (max_norm / (norms[over] + 1e-7)).astype(arr.dtype)
            arr[rows[over]] = sub[over] * scale[:, None]
            weight._vc[0] += 1


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer indices ``input`` (shape ``input.shape + (dim,)``).

    The row ``padding_idx`` receives no gradient (its forward value is still read), like
    torch; ``scale_grad_by_freq`` divides each row's gradient by its count in ``input``;
    ``max_norm`` renormalises the used rows of ``weight`` in place first.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> w = gradsum.ones(3, 2, requires_grad=True)
        >>> F.embedding(gradsum.tensor([0, 2, 0]), w, padding_idx=2).sum().backward()
        >>> w.grad.tolist()
        [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
    """
    if sparse:
        raise ValueError(_messages.no_sparse_embedding())
    n = weight.shape[0] if weight.ndim else 0
    if padding_idx is not None:
        if padding_idx >= n or padding_idx < -n:  # (torch asserts this)
            raise _ArgAssertionError(_messages.embedding_padding_idx_out_of_range(padding_idx, n))
        if padding_idx < 0:
            padding_idx += n
    if weight.ndim != 2:
        raise RuntimeError(_messages.embedding_weight_not_2d(weight))
    idx = input._array if isinstance(input, Tensor) else xp.asarray(input)
    if idx.dtype != xp.int64 and idx.dtype != xp.int32:
        name = input.dtype.name if isinstance(input, Tensor) else str(idx.dtype)
        raise RuntimeError(_messages.embedding_indices_dtype(name))
    if not _shape_subscript.in_bounds(idx, n):
        raise IndexError(_messages.index_out_range_self_embedding(n, idx))
    if max_norm is not None:
        _embedding_renorm_(weight, idx, max_norm, norm_type)
    return _embedding.embedding(weight, idx, padding_idx, scale_grad_by_freq)


# -- normalisation -----------------------------------------------------------------------------
def layer_norm(input: Tensor, normalized_shape: Sequence[int] | int,
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then scale
    and shift: one ``NativeLayerNormBackward0`` node, as torch's.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> y = F.layer_norm(gradsum.tensor([[1.0, 3.0]]), (2,))
        >>> [round(v, 3) for v in y[0].tolist()]
        [-1.0, 1.0]
    """
    if isinstance(normalized_shape, int):  # (nn.LayerNorm takes an int; F.layer_norm doesn't)
        raise TypeError(_messages.layer_norm_argument_normalized_shape(normalized_shape))
    ns = tuple(normalized_shape)
    k = len(ns)
    if not input.is_floating_point():
        raise NotImplementedError(_messages.kernel_not_floating_input("LayerNormKernelImpl", input))
    if mixed_reduced(input, weight, bias):  # (torch's mixed type: in float32; raises)
        return layer_norm(ops.to_dtype(input, D.float32), normalized_shape, weight, bias,
                          eps).to(input.dtype)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != ns:
        raise RuntimeError(_messages.layer_norm_input_shape(ns, input))
    return native_layer_norm(input, ns, weight, bias, eps)


# -- convolution -------------------------------------------------------------------------------
def _pair(v: Any, name: str) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:  # (torch's argument parser expands a 1-element list)
            return int(v[0]), int(v[0])
        if len(v) != 2:
            raise RuntimeError(_messages.expected_int_or_pair(name, v))
        return int(v[0]), int(v[1])
    return int(v), int(v)


_warned_asymmetric_same = False


def _warn_asymmetric_same_padding() -> None:
    """torch's ``TORCH_WARN_ONCE`` (once per process) for ``padding='same'`` that needs more
    padding after than before (an even kernel extent ``dilation * (k - 1)`` is odd)."""
    global _warned_asymmetric_same
    if _warned_asymmetric_same:
        return
    _warned_asymmetric_same = True
    warnings.warn(_messages.using_padding_same_even_kernel(), UserWarning, stacklevel=4)


@autocast_policy("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation (torch's ``conv2d``): ``im2col`` then one matmul per group.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.ones(1, 1, 3, 3)
        >>> F.conv2d(x, gradsum.ones(1, 1, 2, 2), padding=1).shape
        (1, 1, 4, 4)
    """
    return _conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, 2,
                         _warn_asymmetric_same_padding)


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding local blocks of a ``(N, C, H, W)`` input as columns ``(N, C*kh*kw, L)``."""
    unbatched = input.ndim == 3
    x = ops.unsqueeze(input, 0) if unbatched else input
    if x.ndim != 4:
        raise RuntimeError(_messages.input_error_only_3d_or(input))
    k = _pair(kernel_size, "kernel_size")
    ph, pw = _pair(padding, "padding")
    geo = _conv.Geometry.make(tuple(x.shape), k, _pair(dilation, "dilation"), (ph, ph, pw, pw),
                              _pair(stride, "stride"))
    out = _conv.im2col(x, geo)
    return ops.squeeze(out, 0) if unbatched else out


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sum columns ``(N, C*kh*kw, L)`` back into an image ``(N, C, H, W)`` (unfold's
    adjoint)."""
    unbatched = input.ndim == 2
    cols = ops.unsqueeze(input, 0) if unbatched else input
    if cols.ndim != 3:
        raise RuntimeError(_messages.input_error_only_unbatched_2d(input))
    kh, kw = _pair(kernel_size, "kernel_size")
    h, w = _pair(output_size, "output_size")
    if cols.shape[1] % (kh * kw):
        raise RuntimeError(_messages.expected_size_input_dimension_1(cols, kh, kw))
    ph, pw = _pair(padding, "padding")
    c = cols.shape[1] // (kh * kw)
    geo = _conv.Geometry.make((cols.shape[0], c, h, w), (kh, kw), _pair(dilation, "dilation"),
                              (ph, ph, pw, pw), _pair(stride, "stride"))
    if geo.out_hw[0] * geo.out_hw[1] != cols.shape[2]:
        raise RuntimeError(_messages.given_output_size_kernel_size(h, w, kh, kw, geo, cols))
    out = _conv.col2im(cols, geo)
    return ops.squeeze(out, 0) if unbatched else out


# -- losses ------------------------------------------------------------------------------------
@autocast_policy("mse_loss")
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Mean squared error ``(input - target) ** 2`` reduced by ``reduction``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.mse_loss(gradsum.tensor([1.0, 3.0]), gradsum.tensor([0.0, 0.0]))
        tensor(5.)
    """
    reduction = _resolve(size_average, reduce, reduction)
    _warn_size(input, target)
    dt = _promote(input.dtype, target.dtype)
    if not dt.is_floating_point:  # (torch's mse kernel is defined for floating types only)
        raise NotImplementedError(_messages.mse_loss_not_floating(dt))
    with no_grad():
        d = ops.sub(input, target)
        loss = ops.mul(d, d)
    node = _loss.MseLossBackward0()
    res = _loss._loss_node(node, (input, target), loss, reduction)
    if res.grad_fn is node:
        node.save(input, target)
    return res


def _promote(a: Any, b: Any) -> Any:
    from gradsum import promote_types

    return promote_types(a, b)


@autocast_policy("l1_loss")
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Mean absolute error ``|input - target|`` reduced by ``reduction``."""
    reduction = _resolve(size_average, reduce, reduction)
    _warn_size(input, target)
    return _loss._reduce(ops.abs(ops.sub(input, target)), reduction)


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            _messages.target_size_broadcast_warning(target, input), UserWarning, stacklevel=3,
        )


def _class_weight_check(weight: Tensor | None, c: int, prefix: str = "") -> None:
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
        raise RuntimeError(_messages.weight_tensor_defined_either_all(prefix, c, weight))


def _nll(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
         reduction: str) -> Tensor:
    x = input._array  # (the array's own attributes: the Tensor properties cost a call each)
    nd = x.ndim
    if nd < 1:
        raise ValueError(_messages.expected_1_or_more_dimensions(nd))
    t = target._array
    if nd != 1 and t.ndim and t.shape[0] != x.shape[0]:  # (torch checks this first)
        raise ValueError(_messages.batch_size_mismatch(x.shape[0], t.shape[0]))
    # torch's kernels take int64 (Long) targets, and uint8 (Byte) ones for inputs of <= 2 dims
    if t.dtype != xp.int64 and t.dtype != xp.uint8:
        raise RuntimeError(_messages.expected_target_dtype_long_or(target))
    kernel = "nll_loss2d_forward" if nd > 2 else "nll_loss_forward"
    one_d = nd == 1
    if one_d:
        if t.ndim > 1:
            raise RuntimeError(_messages.nll_multi_target(t))
        if t.ndim == 1 and t.shape[0] != 1:
            raise ValueError(_messages.expected_1d_input_1d_target_size(t))
        t = t.reshape(1)  # (a target of shape (1,) counts as the 0-d one, like torch)
    shape = (1,) + x.shape if one_d else x.shape
    n, c = shape[0], shape[1]
    if t.ndim == 0 or t.shape[0] != n:
        raise ValueError(_messages.batch_size_mismatch(n, t.shape[0] if t.ndim else 0))
    expected = (n,) + shape[2:]
    if tuple(t.shape) != expected:
        raise RuntimeError(_messages.expected_target_size(expected, t))
    if x.dtype.kind not in "fV":
        frame = "nll_loss2d_forward_out_frame" if nd > 2 else "nll_loss_out_frame"
        raise NotImplementedError(_messages.nll_loss_not_floating(frame, input))
    if nd > 2 and t.dtype == xp.uint8:
        raise RuntimeError(_messages.expected_scalar_type_long_found())
    _class_weight_check(weight, c)
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError(_messages.expected_scalar_type_found_class(input, weight))
        _check_no_grad(weight, "weight", kernel, ".")
    dt = x.dtype
    if (t.size and _min_reduce(t, None) >= 0 and _max_reduce(t, None) < c
            and not 0 <= ignore_index < c):
        # the common case: every target counts and is in range (nothing to mask)
        safe = t.astype(xp.int64, copy=False)
        w_arr = None  # all ones
        plain = weight is None
        ignored = None
    else:
        valid = t != ignore_index
        bad = valid & ((t < 0) | (t >= c))
        if bad.any():
            raise IndexError(_messages.target_out_bounds(t, bad, c))
        safe = xp.where(valid, t, 0).astype(xp.int64)
        w_arr = valid.astype(dt)
        plain = False
        ignored = None if valid.all() else ~valid
    if weight is not None:  # class weights are constants (torch does not differentiate them)
        cw = weight._array[safe]
        w_arr = cw if w_arr is None else cw * w_arr
    elif w_arr is None and t.size >= 1 << 24:
        w_arr = xp.ones(t.shape, dtype=dt)  # (summed below)
    # 'mean' divides by the total weight of the targets that count (not by their number);
    # all ignored: 0 / 0 = nan, like torch. (All weights 1: their sum is the count, exactly
    # below 2**24, without summing.)
    denom = None
    if reduction == "mean":
        denom = xp.asarray(t.size if plain and t.size < 1 << 24 else w_arr.sum(), dtype=dt)
    # key: input[key] is the target's entry for each position, shaped like the target
    key: list[Any] = []
    for i, size in enumerate(safe.shape):
        key.append(index_range(size, i, safe.ndim))
    key.insert(1, safe)
    # (all weights 1: the multiplications by w are skipped, x * 1.0 == x exactly)
    plan = _loss._NllPlan(tuple(key), None if plain else w_arr, reduction, denom,
                          x.shape, one_d)
    plan.ignored = ignored
    return _loss._nll_forward(input, plan)


@autocast_policy("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``
    of shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.

    ``'mean'`` divides by the summed ``weight`` of the non-ignored targets (their count
    without ``weight``); targets equal to ``ignore_index`` contribute nothing.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> logp = gradsum.tensor([[-1.0, -2.0], [-3.0, -0.5]])
        >>> F.nll_loss(logp, gradsum.tensor([0, 1]))
        tensor(0.7500)
        >>> F.nll_loss(logp, gradsum.tensor([0, 1]), weight=gradsum.tensor([1.0, 3.0]))
        tensor(0.6250)
    """
    reduction = _resolve(size_average, reduce, reduction)
    return _nll(input, target, weight, ignore_index, reduction)


def _class_view(weight: Tensor, ndim: int) -> Tensor:
    if ndim <= 1:
        return weight
    return ops.reshape(weight, (1, weight.shape[0]) + (1,) * (ndim - 2))


@autocast_policy("cross_entropy_loss")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, class_dim), target)`` with torch's options.

    ``target`` is either class indices (shape of ``input`` without the class dim; supports
    ``weight``, ``ignore_index``, ``label_smoothing``) or class probabilities of ``input``'s
    shape (soft targets; ``'mean'`` divides by the number of samples). Inputs may be
    ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.tensor([[1.0, 2.0, 3.0]])
        >>> round(F.cross_entropy(x, gradsum.tensor([2]), label_smoothing=0.1).item(), 4)
        0.5076
        >>> round(F.cross_entropy(x, gradsum.tensor([[0.0, 0.0, 1.0]])).item(), 4)
        0.4076
    """
    reduction = _resolve(size_average, reduce, reduction)
    class_dim = 0 if input.ndim == 1 else 1
    # torch decides between soft and class-index targets by the shapes alone, first
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction,
                                    label_smoothing, class_dim)
    if input.ndim < 1:
        raise IndexError(_messages.dimension_out_range_expected_range_1())
    c = input.shape[class_dim]
    logp = ops.log_softmax(input, class_dim)
    if label_smoothing <= 0.0:
        return _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(_messages.label_smoothing_between_0_0(label_smoothing))
    if input.ndim == 1 and target.ndim == 1:
        # torch's smoothing term of a (C,) input is 0-d and cannot take the (1,) target's shape
        raise RuntimeError(_messages.label_smoothing_1d_input_0d_target())
    nll = _nll(logp, target, weight, ignore_index, reduction)
    if weight is not None:
        smooth = ops.neg(ops.sum(ops.mul(logp, _class_view(weight.detach(), logp.ndim)),
                                 class_dim))
    else:
        smooth = ops.neg(ops.sum(logp, class_dim))
    t = target._array
    ignore = t == ignore_index
    smooth = ops.masked_fill(smooth, _make(ignore), 0.0)
    if reduction == "mean":
        if weight is not None:
            denom = weight._array[t[~ignore]].sum()
        else:
            denom = (~ignore).sum()
        with xp.errstate(invalid="ignore", divide="ignore"):
            ret = ops.div(ops.sum(smooth), _make(xp.asarray(denom, dtype=logp._array.dtype)))
    elif reduction == "sum":
        ret = ops.sum(smooth)
    else:
        ret = smooth
    if logp._array.dtype.char in "fd":  # (torch's graph: products by a scalar, MulBackward1)
        return ops.add(_scalar_op(nll, 1.0 - label_smoothing, True),
                       _scalar_op(ret, label_smoothing / c, True))
    return ops.add(ops.mul(nll, 1.0 - label_smoothing), ops.mul(ret, label_smoothing / c))


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None,
                         ignore_index: int, reduction: str, label_smoothing: float,
                         class_dim: int) -> Tensor:
    if not target.is_floating_point():
        raise RuntimeError(_messages.expected_floating_point_type_target(target))
    if ignore_index >= 0:
        raise RuntimeError(_messages.ignore_index_with_probabilities())
    if input.ndim < 1:
        raise IndexError(_messages.dimension_specified_1_tensor_no())
    c = input.shape[class_dim]
    _class_weight_check(weight, c, "cross_entropy: ")
    logp = ops.log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(_messages.label_smoothing_between_0_0(label_smoothing))
        target = ops.add(ops.mul(target, 1.0 - label_smoothing), label_smoothing / c)
    prod = ops.mul(logp, target)
    if weight is not None:  # (composed in torch: the weight is differentiated here)
        prod = ops.mul(prod, _class_view(weight, logp.ndim))
    if reduction == "none":
        return ops.neg(ops.sum(prod, class_dim))
    total = ops.neg(ops.sum(prod))
    if reduction == "sum":
        return total
    return ops.div(total, input.numel() // c if input.numel() else float("nan"))


def _check_weight_fits(weight: Tensor | None, input: Tensor, arg: str) -> None:
    """torch multiplies the loss by (pos_)weight in place: it must broadcast to the input's
    shape without enlarging it."""
    if weight is None:
        return
    shape = tuple(input.shape)
    try:
        full = _shape_broadcast(tuple(weight.shape), shape)
    except ValueError:
        full = None
    if full is None:
        raise RuntimeError(_messages.loss_weight_not_broadcastable(arg, weight, shape))
    if full != shape:
        raise RuntimeError(_messages.loss_weight_broadcast_shape(shape, full, arg, weight))


@autocast_policy("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor,
                         weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` with the logs clamped at -100, like
    torch (``input`` are probabilities in [0, 1]).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.binary_cross_entropy(gradsum.tensor([0.5, 1.0]), gradsum.tensor([1.0, 1.0]))
        tensor(0.3466)
    """
    reduction = _resolve(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(_messages.bce_target_size_deprecated(target, input))
    if target.dtype != input.dtype:
        raise RuntimeError(_messages.found_dtype_expected_binary_cross(target, input))
    if not input.is_floating_point():
        raise NotImplementedError(_messages.binary_cross_entropy_not_floating(input))
    _check_no_grad(weight, "weight", "binary_cross_entropy")
    _check_weight_fits(weight, input, "weight")
    xa = input._array
    # (written so that nan fails too, as torch's check does)
    if xa.size and not bool(((xa >= 0) & (xa <= 1)).all()):
        raise RuntimeError(_messages.all_elements_input_between_0())
    ta = target._array
    if ta.size and not bool(((ta >= 0) & (ta <= 1)).all()):
        raise RuntimeError(_messages.all_elements_target_between_0())
    loss = _loss._bce_elementwise(input, target)
    w = None
    if weight is not None:  # (torch multiplies in place: the loss keeps the input's dtype)
        w = weight.detach().to(input.dtype)
        loss = ops.mul(loss, w)
    node = _loss.BinaryCrossEntropyBackward0()
    node.weight = w
    res = _loss._loss_node(node, (input, target), loss, reduction)
    if res.grad_fn is node:
        node.save(input, target)
    return res


@autocast_policy("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor, target: Tensor, weight: Tensor | None = None,
    size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from logits:
    ``(1 - t) * x - lw * log_sigmoid(x)`` with ``lw = 1 + (pos_weight - 1) * t``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.tensor([0.0, 2.0])
        >>> F.binary_cross_entropy_with_logits(x, gradsum.tensor([1.0, 0.0]))
        tensor(1.4100)
    """
    reduction = _resolve(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(_messages.target_size_same_input_size(target, input))
    if not target.is_floating_point():
        if target.dtype.name == "bool":
            raise RuntimeError(_messages.bool_subtraction_not_supported())
        raise RuntimeError(_messages.bce_with_logits_cannot_cast(input, target))
    _check_no_grad(weight, "weight", "binary_cross_entropy_with_logits")
    _check_no_grad(pos_weight, "pos_weight", "binary_cross_entropy_with_logits", "")
    _check_weight_fits(pos_weight, input, "pos_weight")
    _check_weight_fits(weight, input, "weight")
    xa, ta = input._array, target._array
    dt = xa.dtype
    if (dt.char in "fd" and ta.dtype == dt and (weight is None or weight._array.dtype == dt)
            and (pos_weight is None or pos_weight._array.dtype == dt)):
        loss_a, e = _loss._bce_logits_arrays(
            xa, ta, None if weight is None else weight._array,
            None if pos_weight is None else pos_weight._array)
        loss = _make(loss_a)
    else:
        loss, e = _loss._bce_logits_composed(input, target, weight, pos_weight), None
    node = _loss.BinaryCrossEntropyWithLogitsBackward0()
    node.weight = None if weight is None else weight.detach()
    node.pos_weight = None if pos_weight is None else pos_weight.detach()
    res = _loss._loss_node(node, (input, target), loss, reduction)
    if res.grad_fn is node:  # (exp(-|x|) too, when computed: the backward's sigmoid)
        node.save(input, target, *(() if e is None else (_make(e),)))
    return res


# -- more activations (torch's formulas; the gradient masks at the kinks are torch's) ---------
# (logsigmoid, hardshrink, _within and the floating-input check are ops: ops/activation.py)
def _const_like(value: Any, ref: Tensor) -> Tensor:
    return _make(xp.asarray(value, dtype=ref._array.dtype))


#: torch's hardsigmoid_backward multiplies by 1/6 as a float32 constant, in every dtype
_ONE_SIXTH = float(xp.float32(1.0 / 6.0))


def _elu(input: Tensor, alpha: float, scale: float, input_scale: float,
         celu: bool = False) -> Tensor:
    """torch's ``elu(x, alpha, scale, input_scale)``: ``scale * x`` for ``x > 0``, else
    ``alpha * scale * expm1(x * input_scale)`` (the negative branch's gradient at 0);
    ``celu``: recorded as torch's ``celu`` (``CeluBackward0``, whatever ``alpha``)."""
    _check_floating(input, "elu_cpu")
    x = input._array
    # (the exponential sees only the non-positive part: no overflow where x is large)
    neg = xp.minimum(x, 0)
    if neg.__class__ is xp.ndarray and neg.dtype in _F32_F64:  # (in place)
        if input_scale != 1.0:
            neg *= input_scale
        xp.expm1(neg, out=neg)
        a_s = alpha * scale
        neg *= a_s
        if not (math.isfinite(a_s) and scale > 0 and (
                a_s >= 0 < input_scale or a_s < 0 > input_scale)):
            out = select(x > 0, x if scale == 1.0 else x * scale, neg)
            return _act(input, out, _elu_act(alpha, scale, input_scale, celu))
        # (x > 0 ? x * scale : neg as the bits of max(x, 0) * scale or-ed with neg's: where
        # x > 0 neg is expm1(0 * input_scale) * alpha * scale, +0 for these signs; elsewhere
        # max(x, 0) * scale is a zero, +0 (the same values as that select); a nan x gives its
        # nan in both)
        it = _INT_OF[x.dtype.itemsize]
        pos = xp.maximum(x, 0)
        if scale != 1.0:
            pos *= scale
        pi = pos.view(it)
        pi |= neg.view(it)
        return _act(input, pos, _elu_act(alpha, scale, input_scale, celu))
    if input_scale != 1.0:
        neg = neg * input_scale
    neg = xp.expm1(neg) * (alpha * scale)
    out = xp.asarray(xp.where(x > 0, x if scale == 1.0 else x * scale, neg), dtype=x.dtype)
    return _act(input, out, _elu_act(alpha, scale, input_scale, celu))


def _elu_act(alpha: float, scale: float, input_scale: float, celu: bool = False) -> _Act:
    """torch's ``elu_backward`` (``x <= 0``: ``input_scale * alpha * scale * exp(x *
    input_scale)``, else ``scale``; nan takes ``scale``) and its double backward, which sends
    ``x`` the second derivative only where ``x < 0`` strictly."""
    coef = alpha * scale * input_scale

    def deriv(x: Any) -> Any:
        if x.__class__ is not xp.ndarray or x.dtype not in _F32_F64 or not x.ndim:
            return xp.where(x <= 0, coef * xp.exp(xp.minimum(x, 0) * input_scale), scale)
        # (fmin: 0 at nan, whose derivative is scale; where x > 0, exp(0) * coef = coef,
        # which is scale itself when coef == scale: then nothing to select)
        e = xp.fmin(x, 0)
        if input_scale != 1.0:
            e *= input_scale
        xp.exp(e, out=e)
        e *= coef
        if coef == scale:
            return e
        # (where x > 0 or nan, e is exp(0) * coef = coef exactly: its bits xor-ed with those
        # of coef ^ scale give scale's; the mask widened, times that)
        it = _INT_OF[x.dtype.itemsize]
        sc = xp.asarray([coef, scale], dtype=x.dtype).view(it)
        m = (~(x <= 0)).astype(it)
        m *= sc[0] ^ sc[1]
        ei = e.view(it)
        ei ^= m
        return e

    def second(gg: Tensor, g: Tensor, x: Tensor) -> Tensor:
        neg = _make(x._array < 0)
        zero = _const_like(0.0, x)
        e = ops.mul(ops.exp(ops.mul(ops.where(neg, x, zero), input_scale)),
                    coef * input_scale)
        return ops.mul(ops.mul(gg, g), ops.where(neg, e, zero))

    nodes = _CELU_NODES if celu else _ELU_NODES
    return _Act(nodes[0], nodes[1], deriv, second)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Exponential linear unit: ``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> [round(v, 4) for v in F.elu(gradsum.tensor([-1.0, 0.0, 2.0])).tolist()]
        [-0.6321, 0.0, 2.0]
    """
    fn = lambda t: _elu(t, alpha, 1.0, 1.0)  # noqa: E731
    return _run_inplace(input, "elu_", fn) if inplace else fn(input)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with torch's self-normalising constants."""
    fn = lambda t: _elu(t, _SELU_ALPHA, _SELU_SCALE, 1.0)  # noqa: E731
    return _run_inplace(input, "selu_", fn) if inplace else fn(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError(_messages.celu_zero_alpha())
    fn = lambda t: _elu(t, alpha, 1.0, 1.0 / alpha, celu=True)  # noqa: E731
    return _run_inplace(input, "celu_", fn) if inplace else fn(input)


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    with no_grad():
        clamped = ops.clamp(input, min_val, max_val)
    if not needs_grad(input):
        return clamped

    def blocked(x: Any) -> Any:
        # torch's hardtanh_backward: 0 where x <= min_val or x >= max_val, else g (clamp's
        # is inclusive); a nan x passes the gradient
        out = xp.less_equal(x, min_val)
        out |= xp.greater_equal(x, max_val)
        return out

    return _act(input, clamped._array, _Act(*_HARDTANH_NODES, None, blocked=blocked))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)`` whose gradient is zero at and beyond the bounds."""
    if min_val > max_val:
        raise ValueError(_messages.hardtanh_min_greater_than_max(min_val, max_val))
    fn = lambda t: _hardtanh(t, min_val, max_val)  # noqa: E731
    return _run_inplace(input, "hardtanh_", fn) if inplace else fn(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x + 3, 0), 6) / 6``; gradient ``1/6`` strictly inside (-3, 3)."""
    _check_floating(input, "hardsigmoid_cpu")

    def fn(t: Tensor) -> Tensor:
        with no_grad():
            x = t._array
            if x.dtype in _F32_F64 and x.ndim:  # (add and clamp in place: the same values)
                u = x + 3.0
                xp.clip(u, 0.0, 6.0, out=u)
                u /= 6.0
                const = _make(u)
            else:
                const = ops.div(ops.clamp(ops.add(t, 3.0), 0.0, 6.0), 6.0)
        if not needs_grad(t):
            return const
        act = _Act(*_HARDSIGMOID_NODES, lambda x: (x > -3) & (x < 3), "not implemented",
                   _ONE_SIXTH)
        return _act(t, const._array, act)

    return _run_inplace(input, "hardsigmoid_", fn) if inplace else fn(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * min(max(x + 3, 0), 6) / 6`` (torch's gradient: 0 up to -3, ``x / 3 + 1/2``
    strictly inside (-3, 3), 1 from 3 on)."""
    _check_floating(input, "hardswish_cpu")

    def fn(t: Tensor) -> Tensor:
        x = t._array
        # (torch's kernel: x * min(max(x + 3, 0), 6) / 6, so -inf gives nan)
        with xp.errstate(invalid="ignore"):
            if x.dtype in _F32_F64 and x.ndim:  # (in place, the same operations)
                out = x + 3
                xp.clip(out, 0, 6, out=out)  # (one pass: max then min, nan kept)
                out *= x
                out /= 6
            else:
                out = xp.asarray(x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6, dtype=x.dtype)
        return _act(t, out, _Act(*_HARDSWISH_NODES, _hardswish_deriv, _hardswish_second,
                                 rule=_hardswish_rule))

    return _run_inplace(input, "hardswish_", fn) if inplace else fn(input)


def _hardswish_deriv(x: Any) -> tuple[Any, Any]:
    # torch's hardswish_backward selects: 0 up to -3 (an inf or nan g too), g * (x / 3 + 1/2)
    # inside, g from 3 on (and at nan)
    if x.dtype in _F32_F64 and x.ndim:
        v = x / 3
        v += 0.5
        return ~(x <= -3), select(x < 3, v, xp.ones_like(v))
    return ~(x <= -3), xp.where(x < 3, x / 3 + 0.5, 1.0)


def _hardswish_rule(g: Any, x: Any) -> Any:
    """:func:`_hardswish_deriv`'s gradient on the bits, in fewer passes: ``g * (x / 3 + 1/2)``
    and-ed with an all-ones mask inside (-3, 3), or-ed with ``g`` and-ed with one from 3 on
    (nan included); up to -3 both masks are zero, so 0 (+0) whatever ``g`` is, as torch's
    select. The masks negated as int8 and widened with their sign, the second into the
    first's buffer (one full-size temporary)."""
    it = _INT_OF[x.dtype.itemsize]
    inside = xp.less(x, 3)
    above = ~inside
    inside &= xp.greater(x, -3)
    i8, a8 = inside.view(xp.int8), above.view(xp.int8)
    xp.negative(i8, out=i8)
    xp.negative(a8, out=a8)
    d = xp.divide(x, 3)  # (a fresh array: the result owns its buffer)
    d += 0.5
    d *= g
    di = d.view(it)
    m = i8.astype(it)
    di &= m
    xp.copyto(m, a8, casting="unsafe")
    m &= g.view(it)
    di |= m
    return d


def _hardswish_second(gg: Tensor, g: Tensor, x: Tensor) -> Tensor:
    inside = _make((x._array > -3) & (x._array < 3))
    return ops.where(inside, ops.div(ops.mul(gg, g), 3.0), _const_like(0.0, x))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``, one ``MishBackward0`` node like torch's."""
    _check_floating(input, "mish_cpu")

    def fn(t: Tensor) -> Tensor:
        x = t._array
        with xp.errstate(over="ignore"):
            if x.dtype in _F32_F64 and x.ndim:
                # (in place; tanh(sp) is 1 where x > 20 as tanh(x) is, in both dtypes, so
                # the linear branch needs no select)
                e = xp.abs(x)
                xp.negative(e, out=e)
                xp.exp(e, out=e)
                xp.log1p(e, out=e)
                out = xp.maximum(x, 0)
                out += e
                xp.tanh(out, out=out)
                out *= x
            else:
                sp = xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))
                out = xp.asarray(x * xp.tanh(xp.where(x > 20, x, sp)), dtype=x.dtype)
        if not needs_grad(t):
            return _make(out)
        node = MishBackward0()
        res = record(node, (t,), out)
        node.save(t)
        return res

    return _run_inplace(input, "mish_", fn) if inplace else fn(input)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` (torch's composition)."""
    return ops.div(input, ops.add(ops.abs(input), 1))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` (torch's composition)."""
    return ops.sub(input, ops.tanh(input))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 in between."""
    _check_floating(input, "softshrink_check")
    if lambd < 0 or math.isnan(lambd):
        raise RuntimeError(_messages.softshrink_negative_lambda(input, lambd))
    x = input._array
    # (torch's kernel: x * 0 in between, so nan stays nan and -0.5 + 0.5 style zeros keep
    # their sign)
    out = xp.asarray(xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0)),
                     dtype=x.dtype)
    # (torch's softshrink_backward: 0 on [-lambd, lambd], else g; a nan x passes it)
    return _act(input, out, _Act(*_SOFTSHRINK_NODES, None, blocked=lambda a: _within(a, lambd)))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, else ``x``."""
    def fn(t: Tensor) -> Tensor:
        x = t._array
        if x.dtype in _F32_F64 and x.ndim:
            # (x > threshold ? x : value on the bits: value ^ ((x ^ value) & keep), the keep
            # mask (nan kept) negated as int8 and widened with its sign)
            it = _INT_OF[x.dtype.itemsize]
            vi = xp.asarray(value, dtype=x.dtype).view(it)
            keep = ~(x <= threshold)
            k8 = keep.view(xp.int8)
            xp.negative(k8, out=k8)
            m = k8.astype(it)
            if vi:
                m &= xp.bitwise_xor(x.view(it), vi)
                m ^= vi
            else:  # (value +0: the kept bits only)
                m &= x.view(it)
            out = m.view(x.dtype)
        else:
            out = xp.asarray(xp.where(x <= threshold, xp.asarray(value, dtype=x.dtype), x),
                             dtype=x.dtype)
        # torch's threshold_backward: 0 where x <= threshold (nan passes the gradient)
        return _act(t, out, _Act(*_THRESHOLD_NODES, None,
                                 blocked=lambda a: xp.less_equal(a, threshold)))

    return _run_inplace(input, "threshold_", fn) if inplace else fn(input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-x, dim)``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return ops.softmax(ops.neg(input), dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``, one
    ``GluBackward0`` node like torch's."""
    if input.ndim == 0:
        raise RuntimeError(_messages.glu_scalar())
    d = dim + input.ndim if dim < 0 else dim
    if not 0 <= d < input.ndim:
        raise IndexError(_messages.wrap_dim_out_of_range(-input.ndim, input.ndim - 1, dim))
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(_messages.glu_odd_halving_dim(d, size))
    x = input._array
    a, b = xp.split(x, [size // 2], axis=d)
    with xp.errstate(over="ignore"):
        out = xp.asarray(a / (1.0 + xp.exp(-b)), dtype=x.dtype)
    if not needs_grad(input):
        return _make(out)
    node = GluBackward0()
    node.dim = d
    res = record(node, (input,), out)
    node.save(input)
    return res


@autocast_policy("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` has one element or one per
    channel (dim 1). One implementation with ``Tensor.prelu`` / ``gradsum.prelu``
    (torch's ``PreluKernelBackward0`` node, differentiable twice).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.prelu(gradsum.tensor([-2.0, 3.0]), gradsum.tensor([0.25])).tolist()
        [-0.5, 3.0]
    """
    return ops.prelu(input, weight)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomised leaky ReLU: training draws each negative element's slope from
    U(lower, upper) (gradsum's generator); otherwise the slope is ``(lower + upper) / 2``."""
    if lower > upper:
        raise RuntimeError(_messages.rrelu_bounds(lower, upper))

    def fn(t: Tensor) -> Tensor:
        x = t._array
        if training:
            r = _random.rng(None).uniform(lower, upper, x.shape)
            noise = xp.where(x <= 0, r, 1.0).astype(x.dtype)
            act = _Act(*_RRELU_NODES, lambda a: noise)
        else:
            slope = (lower + upper) / 2
            if x.dtype in _F32_F64 and x.ndim:
                # x * (x <= 0 ? slope : 1), and the derivative x > 0 ? 1 : slope, selected
                out = select_const(x <= 0, slope, 1.0, x.dtype)
                out *= x
                return _act(t, out, _Act(*_RRELU_NODES, lambda a: select_const(
                    a > 0, 1.0, slope, a.dtype)))
            noise = xp.where(x <= 0, slope, 1.0).astype(x.dtype)
            # (torch's leaky_relu_backward: the slope wherever x > 0 is false, nan included)
            act = _Act(*_RRELU_NODES, lambda a: xp.where(a > 0, 1.0, slope))
        return _act(t, x * noise, act)

    _check_floating(input, "rrelu_with_noise_cpu")
    return _run_inplace(input, "rrelu_", fn) if inplace else fn(input)


# torch's in-place spellings: ``F.relu_(x)`` is ``F.relu(x, inplace=True)`` and so on
def relu_(input: Tensor) -> Tensor:
    """``relu(input, inplace=True)``."""
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu(input, alpha, inplace=True)``."""
    return elu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """``selu(input, inplace=True)``."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``celu(input, alpha, inplace=True)``."""
    return celu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu(input, negative_slope, inplace=True)``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh(input, min_val, max_val, inplace=True)``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold(input, threshold, value, inplace=True)``."""
    return _threshold(input, threshold, value, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """``rrelu(input, lower, upper, training, inplace=True)``."""
    return rrelu(input, lower, upper, training, inplace=True)


_threshold = threshold

__all__ += ["celu_", "elu_", "hardtanh_", "leaky_relu_", "relu_", "rrelu_", "selu_",
            "threshold_"]


# -- normalisation (the distances are ops: ops/reduction.py) -----------------------------------
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(norm(input, p, dim), eps)`` (torch's composition).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.normalize(gradsum.tensor([[3.0, 4.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    denom = ops.clamp(ops.norm(input, p, dim, keepdim=True), min=eps).expand_as(input)
    res = ops.div(input, denom)
    if out is not None:
        with no_grad():
            out.copy_(res)
        return out
    return res


# -- more losses -------------------------------------------------------------------------------


def _abs_diff(input: Tensor, target: Tensor, kernel: str) -> Any:
    dt = _promote(input.dtype, target.dtype)
    if not dt.is_floating_point:
        raise NotImplementedError(_messages.kernel_not_floating(kernel, dt))
    with xp.errstate(invalid="ignore"):
        return xp.abs(input._array - target._array)


@autocast_policy("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``d = input -
    target``), one ``SmoothL1LossBackward0`` node like torch's; ``beta = 0`` is torch's
    ``l1_loss`` composition.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.smooth_l1_loss(gradsum.tensor([0.5, 3.0]), gradsum.zeros(2), reduction="none")
        tensor([0.1250, 2.5000])
    """
    _warn_size(input, target)
    reduction = _resolve(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError(_messages.smooth_l1_negative_beta(beta))
    if beta == 0.0:
        return _loss._reduce(ops.abs(ops.sub(input, target)), reduction)
    z = _abs_diff(input, target, "smooth_l1_cpu")
    with xp.errstate(invalid="ignore"):
        loss = xp.asarray(xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), dtype=z.dtype)
    return _loss._piecewise_loss(
        input, target, reduction, loss,
        (_loss.SmoothL1LossBackward0, _loss.SmoothL1LossBackwardBackward0), 1.0 / beta, 1.0, beta)


@autocast_policy("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``: one
    ``HuberLossBackward0`` node like torch's (with ``weight``: torch's composition, the
    unreduced loss times the weight, then reduced)."""
    _warn_size(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError(_messages.huber_non_positive_delta(delta))
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ValueError(_messages.weights_input_same_size_weight(weight, input))
    z = _abs_diff(input, target, "huber_cpu")
    with xp.errstate(invalid="ignore"):
        loss = xp.asarray(xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)),
                          dtype=z.dtype)
    nodes = (_loss.HuberLossBackward0, _loss.HuberLossBackwardBackward0)
    if weight is None:
        return _loss._piecewise_loss(input, target, reduction, loss, nodes, 1.0, delta, delta)
    unreduced = _loss._piecewise_loss(input, target, "none", loss, nodes, 1.0, delta, delta)
    return _loss._reduce(ops.mul(unreduced, weight), reduction)


@autocast_policy("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Pointwise KL divergence ``target * (log(target) - input)`` (``input`` holds
    log-probabilities; ``log_target``: so does ``target``). ``'batchmean'`` divides the sum
    by the batch size; ``'mean'`` (which divides by the element count) warns, like torch."""
    if size_average is not None or reduce is not None:
        red = _legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(_messages.reduction_mean_divides_total_loss(), UserWarning, stacklevel=2)
        red = "sum" if reduction == "batchmean" else reduction
        _check_reduction(red)
    if log_target:
        loss = ops.mul(ops.exp(target), ops.sub(target, input))
    else:
        # (torch's composite: xlogy's rule gives the target ``log(t) + t / t - input``,
        # nan at a zero target)
        loss = ops.sub(ops.xlogy(target, target), ops.mul(target, input))
    out = _loss._reduce(loss, red)
    if reduction == "batchmean" and input.ndim != 0:
        out = ops.div(out, input.shape[0])
    return out


def _not_differentiable(t: Tensor | None, arg: str, fn: str) -> None:
    """torch's check for an argument its derivative table marks non-differentiable."""
    if t is not None and is_grad_enabled() and t.requires_grad:
        raise RuntimeError(_messages.not_differentiable(fn, arg))


@autocast_policy("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, one ``SoftMarginLossBackward0`` node like torch's
    (whose target is not differentiable: a target that requires grad raises)."""
    reduction = _resolve(size_average, reduce, reduction)
    _not_differentiable(target, "target", "soft_margin_loss")
    with no_grad():
        loss = ops.log1p(ops.exp(ops.mul(ops.neg(input), target)))
    node = _loss.SoftMarginLossBackward0()
    res = _loss._loss_node(node, (input,), loss, reduction)
    if res.grad_fn is node:
        node.target = target.detach().to(loss.dtype)
        node.save(input)
    return res


@autocast_policy("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _resolve(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(_messages.margin_ranking_loss_all_input(input1, input2, target))
    d = ops.add(ops.mul(ops.neg(target), ops.sub(input1, input2)), margin)
    return _loss._reduce(ops.clamp(d, min=0), reduction)


@autocast_policy("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    reduction = _resolve(size_average, reduce, reduction)
    ta = target._array
    zeros = _make(xp.zeros(input._array.shape, dtype=input._array.dtype))
    margin_clamp = ops.clamp(ops.rsub(input, margin), min=0)
    out_margin = ops.where(_make(ta != 1), margin_clamp, zeros)
    out_self = ops.where(_make(ta != -1), input, zeros)
    return _loss._reduce(ops.add(out_margin, out_self), reduction)


@autocast_policy("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (torch's formula, with 1e-12 added to each squared norm)."""
    reduction = _resolve(size_average, reduce, reduction)
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError(_messages.cosine_embedding_multi_target(target))
    if td == 1 and not (input1.ndim == 2 and input2.ndim == 2):
        raise RuntimeError(_messages.target_dims_expect_input_dims(1, 2, input1, input2))
    if td == 0 and not (input1.ndim == 1 and input2.ndim == 1):
        raise RuntimeError(_messages.target_dims_expect_input_dims(0, 1, input1, input2))
    prod_sum = ops.sum(ops.mul(input1, input2), td)
    mag1 = ops.add(ops.sum(ops.mul(input1, input1), td), 1e-12)
    mag2 = ops.add(ops.sum(ops.mul(input2, input2), td), 1e-12)
    cos = ops.div(prod_sum, ops.sqrt(ops.mul(mag1, mag2)))
    zeros = _make(xp.zeros(cos._array.shape, dtype=cos._array.dtype))
    ta = target._array
    pos = ops.where(_make(ta == 1), ops.rsub(cos, 1), zeros)
    neg = ops.where(_make(ta == -1), ops.clamp(ops.sub(cos, margin), min=0), zeros)
    return _loss._reduce(ops.add(pos, neg), reduction)


@autocast_policy("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term where ``target >
    1``."""
    reduction = _resolve(size_average, reduce, reduction)
    if log_input:
        loss = ops.sub(ops.exp(input), ops.mul(target, input))
    else:
        loss = ops.sub(input, ops.mul(target, ops.log(ops.add(input, eps))))
    if full:
        ta = target._array
        with xp.errstate(divide="ignore", invalid="ignore"):
            st = (ta * xp.log(ta) - ta + 0.5 * xp.log(2 * math.pi * ta))
        big = ta > 1
        if target.requires_grad and is_grad_enabled():
            t = target
            stirling = ops.add(ops.sub(ops.mul(t, ops.log(t)), t),
                               ops.mul(ops.log(ops.mul(t, 2 * math.pi)), 0.5))
            stirling = ops.masked_fill(stirling, _make(~big), 0.0)
        else:
            stirling = _make(xp.where(big, st, 0).astype(ta.dtype, copy=False))
        loss = ops.add(loss, stirling)
    return _loss._reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``0.5 * (log(var) + (input - target)**2 / var)`` (+ ``0.5 * log(2 pi)`` when
    ``full``), ``var`` clamped to ``eps`` without recording; ``var`` may lack the last dim or
    differ from the input's shape in one size-1 dim (torch's homoscedastic cases)."""
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(_messages.var_negative_entry_entries())
        var = ops.mul(_creation_ones_like(input), float(var))
    elif bool((var._array < 0).any()):
        raise ValueError(_messages.var_negative_entry_entries())
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = ops.unsqueeze(var, -1)
        elif input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError(_messages.var_incorrect_size_var_input(var, input))
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(_messages.reduction_not_valid(reduction))
    var = ops.clone(var)
    with no_grad():
        var.clamp_(min=eps)
    d = ops.sub(input, target)
    loss = ops.mul(ops.add(ops.log(var), ops.div(ops.pow(d, 2), var)), 0.5)
    if full:
        loss = ops.add(loss, 0.5 * math.log(2 * math.pi))
    return _loss._reduce(loss, reduction)


def _creation_ones_like(t: Tensor) -> Tensor:
    return _make(xp.ones(t._array.shape, dtype=t._array.dtype))


@autocast_policy("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the pairwise distance (``swap``:
    ``d(a, n)`` becomes ``min(d(a, n), d(p, n))``)."""
    reduction = _resolve(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(_messages.margin_greater_0(margin))
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            _messages.triplet_dims_mismatch(anchor.ndim, positive.ndim, negative.ndim)
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _loss._reduce(ops.clamp(ops.sub(ops.add(d_pos, margin), d_neg), min=0), reduction)


def _margin_target(input: Tensor, target: Tensor, fn: str) -> tuple[Tensor, Any, bool]:
    one_d = input.ndim <= 1
    x = ops.reshape(input, (1, -1)) if one_d else input
    if x.ndim != 2:
        raise RuntimeError(_messages.expected_non_empty_vector_or(input, fn))
    return x, target._array, one_d


@autocast_policy("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per sample
    (times ``weight[y]``): one ``MultiMarginLossBackward0`` node like torch's (the weight is
    not differentiable, and neither is the gradient)."""
    reduction = _resolve(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError(_messages.only_p_1_p_2())
    if weight is not None and weight.ndim != 1:
        raise ValueError(_messages.weight_one_dimensional())
    x, t, one_d = _margin_target(input, target, "multi_margin_loss")
    n, c = x.shape
    t = t.reshape(-1)
    if t.shape[0] != n:
        raise RuntimeError(_messages.inconsistent_target_size_expected(n, target))
    if t.size and (t.min() < 0 or t.max() >= c):
        raise IndexError(_messages.target_out_range_targets_0(c))
    if weight is not None and weight.shape[0] != c:
        raise RuntimeError(_messages.inconsistent_weight_size_expected(c, weight))
    _not_differentiable(weight, "weight", "multi_margin_loss")
    xa = x._array
    rows = xp.arange(n)
    t = t.astype(xp.int64)
    with xp.errstate(invalid="ignore"):
        z = margin - xa[rows, t][:, None] + xa
        hit = z > 0
    hit[rows, t] = False
    h = xp.where(hit, z if p == 1 else z * z, 0)
    dh = xp.where(hit, 1.0 if p == 1 else 2 * z, 0)
    if weight is not None:
        wy = weight._array.astype(xa.dtype, copy=False)[t][:, None]
        h, dh = h * wy, dh * wy
    loss = xp.asarray(h.sum(1) / c, dtype=xa.dtype)
    coef = dh / c
    coef[rows, t] = -coef.sum(1)
    return _loss._margin_loss(input, loss, coef, reduction, one_d,
                              _loss.MultiMarginLossBackward0(), "multi_margin_loss_backward")


@autocast_policy("multilabel_margin_loss")
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``sum_{j, i} max(0, 1 - (x[y_j] - x[i])) / C`` over the target classes ``y_j`` (up to
    the first -1) and the other classes ``i``: one ``MultilabelMarginLossBackward0`` node
    like torch's (whose gradient has no derivative)."""
    reduction = _resolve(size_average, reduce, reduction)
    x, t, one_d = _margin_target(input, target, "multilabel_margin_loss")
    n, c = x.shape
    t = t.reshape(n, c) if t.size == n * c else t
    if tuple(t.shape) != (n, c):
        raise RuntimeError(_messages.inconsistent_target_size_input_size(target, input))
    valid = xp.cumprod(t >= 0, axis=1).astype(bool)  # (slots before the first -1)
    if (t[valid] >= c).any():
        raise IndexError(_messages.target_out_range_targets_0_or(c))
    safe = xp.where(valid, t, 0).astype(xp.int64)
    is_target = xp.zeros((n, c), dtype=bool)
    rows = xp.repeat(xp.arange(n), c).reshape(n, c)
    is_target[rows[valid], safe[valid]] = True
    xa = x._array
    xy = xp.take_along_axis(xa, safe, 1)  # (N, slots)
    with xp.errstate(invalid="ignore"):
        z = 1.0 - xy[:, :, None] + xa[:, None, :]  # (N, slots, C)
        hit = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    loss = xp.asarray(xp.where(hit, z, 0).sum((1, 2)) / c, dtype=xa.dtype)
    coef = hit.sum(1).astype(xa.dtype)  # each class i: +1 per target slot it violates
    xp.add.at(coef, (rows, safe), -hit.sum(2).astype(xa.dtype))  # each target: -1 per i
    coef = coef / c
    return _loss._margin_loss(input, loss, coef, reduction, one_d,
                              _loss.MultilabelMarginLossBackward0(),
                              "multilabel_margin_loss_backward")


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """``-(t * logsigmoid(x) + (1 - t) * logsigmoid(-x))`` averaged over the classes."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = ops.neg(ops.add(ops.mul(target, logsigmoid(input)),
                           ops.mul(ops.rsub(target, 1), logsigmoid(ops.neg(input)))))
    if weight is not None:
        loss = ops.mul(loss, weight)
    class_dim = input.ndim - 1
    c = input.shape[class_dim]
    loss = ops.div(ops.sum(loss, class_dim), c)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    raise ValueError(_messages.reduction_not_valid(reduction))


# -- attention, resampling and rearrangement (the fifth nn sweep) ------------------------------
__all__ += [
    "bilinear", "channel_shuffle", "interpolate", "multi_head_attention_forward",
    "pixel_shuffle", "pixel_unshuffle", "scaled_dot_product_attention", "upsample",
]


@autocast_policy("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` (torch's math backend; a bool
    ``attn_mask`` keeps its True entries; fully masked rows give zeros).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> q = gradsum.ones(2, 3, 4)
        >>> y = F.scaled_dot_product_attention(q, q, gradsum.arange(12.0).reshape(1, 3, 4))
        >>> [round(v, 4) for v in y[0, 0].tolist()]
        [4.0, 5.0, 6.0, 7.0]
    """
    from gradsum.nn._attention import scaled_dot_product_attention as sdpa

    return sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def multi_head_attention_forward(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor | None]:
    """torch's ``F.multi_head_attention_forward`` (see
    :func:`gradsum.nn._attention.multi_head_attention_forward`)."""
    from gradsum.nn._attention import multi_head_attention_forward as mha

    return mha(*args, **kwargs)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize by ``size`` or ``scale_factor`` (see :func:`gradsum.ops.upsample.interpolate`).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.interpolate(gradsum.tensor([[[1.0, 3.0]]]), size=3, mode="linear",
        ...               align_corners=True).tolist()
        [[[1.0, 2.0, 3.0]]]
    """
    from gradsum.ops.upsample import interpolate as interp

    return interp(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                  antialias)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The deprecated alias of :func:`interpolate` (torch warns; so does gradsum)."""
    warnings.warn(_messages.upsample_deprecated("upsample"), stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


@excluded  # (torch's _trilinear is on neither autocast list: its einsum does not cast)
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]``."""
    if weight.ndim != 3:
        raise RuntimeError(_messages.bilinear_weight_three_dimensional_d(weight))
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(_messages.bilinear_batch_dims_mismatch(input1, input2))
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(_messages.bilinear_input_sizes_mismatch(input1, input2, weight))
    y = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else ops.add(y, bias)


# -- dropout variants, rms_norm, local_response_norm --
# torch's composite kernels, written in differentiable ops (so every order of derivative works
# and the output's grad_fn is torch's: MulBackward0 / AddBackward0 / DivBackward0 /
# SqueezeBackward1). The random masks come from gradsum's generator.
_ALPHA = 1.7580993408473766  # -SELU's scale * alpha: the value alpha dropout saturates to


def _check_dropout_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(_messages.dropout_probability(p))


def _dropout_kernel(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,
                    alpha: bool) -> Tensor:
    """ATen's ``_dropout_impl``: the feature variants draw one Bernoulli(1 - p) per (sample,
    channel) (the first two dims), the alpha variants keep SELU's mean and variance by
    sending dropped values to ``-alpha'`` and applying the affine map ``a * y + b``."""
    _check_dropout_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    arr = input._array
    if p == 1.0:
        zero = _make(xp.zeros((), dtype=arr.dtype))
        return input.mul_(zero) if inplace else ops.mul(input, zero)
    if arr.dtype.kind in "biu":
        raise RuntimeError(_messages.dropout_cannot_cast_to_integer(input))
    if feature:
        if arr.ndim < 2:
            raise RuntimeError(_messages.feature_dropout_requires_at_least(arr))
        shape = arr.shape[:2] + (1,) * (arr.ndim - 2)
    else:
        shape = arr.shape
    noise = (_random.rng(None).random(shape) < (1.0 - p)).astype(arr.dtype)
    if not alpha:
        mask = _make(noise / arr.dtype.type(1.0 - p))
        return input.mul_(mask) if inplace else ops.mul(input, mask)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = _make((noise - 1) * arr.dtype.type(_ALPHA * a) + arr.dtype.type(_ALPHA * a * p))
    mask = _make(noise * arr.dtype.type(a))
    if inplace:
        return input.mul_(mask).add_(b)
    return ops.add(ops.mul(input, mask), b)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                     unbatched: bool) -> Tensor:
    """torch's dropout1d/3d: an unbatched input gets a batch dim of 1 for the kernel."""
    if not unbatched:
        return _dropout_kernel(input, p, training, inplace, True, False)
    if inplace:
        # (torch: unsqueeze_, feature_dropout_, squeeze_; the same values written into input)
        x = input.unsqueeze_(0)
        _dropout_kernel(x, p, training, True, True, False)
        return x.squeeze_(0)
    out = _dropout_kernel(ops.unsqueeze(input, 0), p, training, False, True, False)
    return ops.squeeze(out, 0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels (``input[n, c, :]``) with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; a 2-D input is one unbatched ``(C, L)`` sample.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> y = F.dropout1d(gradsum.ones(2, 100, 4), 0.5)
        >>> bool(((y == 0).all(-1) | (y == 2).all(-1)).all())   # one draw per channel
        True

    Raises:
        RuntimeError: the input is not 2-D or 3-D.
    """
    _check_dropout_p(p)
    inp_dim = input.ndim
    if inp_dim not in (2, 3):
        raise RuntimeError(_messages.dropout1d_expected_2d_or_3d(inp_dim))
    return _feature_dropout(input, p, training, inplace, inp_dim == 2)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels (``input[n, c]``) with probability ``p`` and scale the rest by
    ``1 / (1 - p)``. Like torch, a 3-D input is read as ``(N, C, L)`` (with a warning) and
    other ranks than 3-D/4-D warn that they are deprecated.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.ones(2, 3, 4, 4)
        >>> F.dropout2d(x, 0.5, training=False) is x
        True
    """
    _check_dropout_p(p)
    inp_dim = input.ndim
    if inp_dim not in (3, 4):
        warnings.warn(_messages.dropout_nd_deprecated_input(2, inp_dim), UserWarning, stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            _messages.dropout2d_received_3d_input_dropout2d(),
            UserWarning, stacklevel=2,
        )
    return _dropout_kernel(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels (``input[n, c]``) of a 5-D ``(N, C, D, H, W)`` input (or a 4-D
    unbatched one) with probability ``p`` and scale the rest by ``1 / (1 - p)``; other ranks
    warn that they are deprecated, like torch.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.dropout3d(gradsum.ones(2, 3, 2, 2, 2), 0.5).shape
        (2, 3, 2, 2, 2)
    """
    _check_dropout_p(p)
    inp_dim = input.ndim
    if inp_dim not in (4, 5):
        warnings.warn(_messages.dropout_nd_deprecated_input(3, inp_dim), UserWarning, stacklevel=2)
    return _feature_dropout(input, p, training, inplace, inp_dim != 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Alpha dropout (for SELU networks): dropped elements become SELU's negative
    saturation value, then an affine map restores zero mean and unit variance. Note the
    default ``training=False``, as torch.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.zeros(4)
        >>> F.alpha_dropout(x, 0.5) is x
        True
    """
    return _dropout_kernel(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (one draw per ``input[n, c]``); default
    ``training=False``, as torch.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> y = F.feature_alpha_dropout(gradsum.zeros(2, 50, 3), 0.5, training=True)
        >>> len(set(y.flatten().tolist())) <= 2
        True
    """
    return _dropout_kernel(input, p, training, inplace, True, True)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``input * rsqrt(mean(input**2) + eps) * weight`` over the trailing
    ``normalized_shape`` dims; ``eps=None`` is the machine epsilon of the computation dtype
    (float32 for half/bfloat16 inputs, which are computed in float32). The result has
    ``input``'s dtype.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.rms_norm(gradsum.tensor([[3.0, 4.0]]), [2], eps=0.0).tolist()
        [[0.8485281467437744, 1.1313709020614624]]

    Raises:
        RuntimeError: ``input`` does not end with ``normalized_shape``, or ``weight`` has
            another shape.
        NotImplementedError: ``input`` is not floating point.
    """
    if isinstance(normalized_shape, int):
        raise TypeError(_messages.rms_norm_argument_normalized_shape(normalized_shape))
    ns = tuple(int(s) for s in normalized_shape)
    k = len(ns)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != ns:
        raise RuntimeError(_messages.rms_norm_input_shape(ns, input))
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(_messages.expected_weight_same_shape_normalized(weight, ns))
    if not input.is_floating_point():
        raise NotImplementedError(_messages.kernel_not_floating_input("rms_norm", input))
    if weight is not None and weight.dtype != input.dtype:
        warnings.warn(
            _messages.mismatch_dtype_between_input_weight(input, weight),
            UserWarning, stacklevel=2,
        )
    in_dtype = input.dtype
    x = input
    if input.dtype.itemsize < 4:  # (half and bfloat16 compute in float32, torch's opmath)
        x = input.float()
    if eps is None:
        eps = float(xp.finfo(x._array.dtype).eps)
    dims = tuple(range(-k, 0))
    r = ops.rsqrt(ops.add(ops.mean(ops.mul(x, x), dims, keepdim=True), eps))
    out = ops.mul(x, r)
    if out.dtype != in_dtype:
        out = out.to(in_dtype)
    if weight is not None:
        out = ops.mul(out, weight)
        if out.dtype != in_dtype:
            out = out.to(in_dtype)
    return out


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Divide each element by ``(k + alpha * mean of squares over size neighbouring
    channels) ** beta`` (channels are dim 1; the window is zero-padded, ``size // 2``
    channels before and ``(size - 1) // 2`` after, as torch).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> y = F.local_response_norm(gradsum.ones(1, 3, 2), 2, alpha=1.0, beta=1.0, k=0.0)
        >>> y[0, :, 0].tolist()
        [2.0, 1.0, 1.0]

    Raises:
        ValueError: the input has fewer than 3 dims.
    """
    dim = input.ndim
    if dim < 3:
        raise ValueError(_messages.expected_3d_or_higher_dimensionality(dim))
    if input.numel() == 0:
        return input
    sq = ops.mul(input, input)
    channels = input.shape[1]
    padded = pad(sq, [0, 0] * (dim - 2) + [size // 2, (size - 1) // 2])
    total = _shape_views.narrow(padded, 1, 0, channels)
    for j in range(1, size):
        total = ops.add(total, _shape_views.narrow(padded, 1, j, channels))
    div = ops.pow(ops.add(ops.mul(ops.div(total, size), alpha), k), beta)
    return ops.div(input, div)
# -- end of dropout variants, rms_norm, local_response_norm --


# -- conv/pool functional --
from gradsum.ops.pool import (  # noqa: E402  (the block is appended, see the report)
    adaptive_avg_pool1d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool3d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)

__all__ += [
    "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "avg_pool3d", "conv1d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
]


@autocast_policy("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation over ``(N, C, L)`` or ``(C, L)`` (torch's ``conv1d``).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.conv1d(gradsum.ones(1, 1, 4), gradsum.ones(1, 1, 3), padding="same").tolist()
        [[[2.0, 3.0, 3.0, 2.0]]]
    """
    return _conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, 1,
                         _warn_asymmetric_same_padding)


@autocast_policy("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.conv3d(gradsum.ones(1, 1, 3, 3, 3), gradsum.ones(2, 1, 2, 2, 2)).shape
        (1, 2, 2, 2, 2)
    """
    return _conv.conv_nd(input, weight, bias, stride, padding, dilation, groups, 3,
                         _warn_asymmetric_same_padding)


@autocast_policy("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The adjoint of :func:`conv1d` in its input; ``weight`` is ``(C_in, C_out / groups,
    k)``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.conv_transpose1d(gradsum.ones(1, 1, 2), gradsum.ones(1, 1, 2), stride=2).tolist()
        [[[1.0, 1.0, 1.0, 1.0]]]
    """
    return _conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding,
                                   groups, dilation, 1)


@autocast_policy("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The adjoint of :func:`conv2d` in its input; ``weight`` is ``(C_in, C_out / groups,
    kH, kW)``."""
    return _conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding,
                                   groups, dilation, 2)


@autocast_policy("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The adjoint of :func:`conv3d` in its input."""
    return _conv.conv_transpose_nd(input, weight, bias, stride, padding, output_padding,
                                   groups, dilation, 3)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool1d` and its indices (``return_indices`` is ignored, as torch)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool2d` and its indices (``return_indices`` is ignored, as torch)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`max_pool3d` and its indices (``return_indices`` is ignored, as torch)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool1d` and its indices."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool2d` and its indices."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool3d` and its indices."""
    return adaptive_max_pool3d(input, output_size, True)
# -- end conv/pool functional --

# -- embedding_bag (nn/_bag.py), triplet_margin_with_distance_loss --
from gradsum.nn._bag import embedding_bag  # noqa: E402  (an appended block)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (default: the pairwise
    Euclidean distance); ``swap`` uses ``min(d(a, n), d(p, n))`` (torch's functional form).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> a, p, n = gradsum.zeros(1, 2), gradsum.ones(1, 2), gradsum.zeros(1, 2)
        >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y:
        ...     (x - y).abs().sum(-1))
        tensor(3.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(_messages.loss_invalid_reduction(reduction))
    if margin <= 0:
        raise ValueError(_messages.margin_greater_0(margin))
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            _messages.triplet_dims_mismatch(a_dim, p_dim, n_dim))
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = ops.minimum(dist_neg, distance_function(positive, negative))
    loss = ops.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return ops.sum(loss)
    if reduction == "mean":
        return ops.mean(loss)
    return loss



__all__ += ["embedding_bag", "triplet_margin_with_distance_loss"]
# -- end embedding_bag --

# -- ctc_loss (nn/_ctc.py) --
from gradsum.nn._ctc import ctc_loss  # noqa: E402  (an appended block)

__all__ += ["ctc_loss"]
# -- end ctc_loss --

# -- affine_grid, gumbel_softmax (nn/_affine_grid.py, nn/_gumbel_softmax.py) --
from gradsum.nn._affine_grid import affine_grid  # noqa: E402  (an appended block)
from gradsum.nn._gumbel_softmax import gumbel_softmax  # noqa: E402

__all__ += ["affine_grid", "gumbel_softmax"]
# -- end affine_grid, gumbel_softmax --

# -- pdist, upsample_nearest, upsample_bilinear (compositions of the ops above) --
def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between every pair of rows of an ``(N, M)`` input, in the order
    of the upper triangle (``i < j``): ``N * (N - 1) / 2`` values, as torch's ``pdist``. A zero
    distance has gradient 0 (torch's rule), whatever ``p``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> F.pdist(gradsum.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])).tolist()
        [5.0, 0.0, 5.0]
    """
    if input.dim() != 2:
        raise RuntimeError(_messages.pdist_only_supports_2d_tensors(input))
    if not input.is_floating_point():
        raise RuntimeError(_messages.pdist_only_supports_floating_point(input))
    if p < 0:
        raise RuntimeError(_messages.pdist_only_supports_non_negative(p))
    from gradsum import _creation, linalg

    n = input.shape[0]
    i, j = ops.triu_indices(n, n, 1)
    d = input[i] - input[j]
    zero = (d == 0).all(dim=1, keepdim=True)
    d = ops.where(zero, _creation.ones_like(d), d)  # (no norm gradient at a zero distance)
    if p == 0:  # a count of the differing coordinates: torch's gradient is 0, with a graph
        out = (d != 0).sum(dim=1).to(input.dtype) + (d * 0).sum(dim=1)
    else:
        out = linalg.vector_norm(d, ord=p, dim=1)
    return ops.where(zero.squeeze(1), _creation.zeros_like(out), out)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated (torch warns): ``interpolate(input, size, scale_factor, mode='nearest')``."""
    warnings.warn(_messages.upsample_deprecated("upsample_nearest"), stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated (torch warns): ``interpolate(input, size, scale_factor, mode='bilinear',
    align_corners=True)``."""
    warnings.warn(_messages.upsample_deprecated("upsample_bilinear"), stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ += ["pdist", "upsample_bilinear", "upsample_nearest"]
# -- end pdist, upsample_nearest, upsample_bilinear --

# -- grid_sample (nn/_grid_sample.py) --
from gradsum.nn._grid_sample import grid_sample  # noqa: E402  (an appended block)

__all__ += ["grid_sample"]
# -- end grid_sample --
