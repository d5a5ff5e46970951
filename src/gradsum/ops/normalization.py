"""Batch, group and instance normalisation: ``F.batch_norm``, ``F.group_norm`` and
``F.instance_norm`` with torch's semantics.

Batch and group norm are primitives with one node each, named like torch's
(``NativeBatchNormBackward0``, ``NativeGroupNormBackward0``). Both normalise ``x`` viewed in a
"statistics shape" over some of its axes (batch norm: the input itself over every axis but the
channels; group norm: ``(N, G, C // G * spatial)`` over the last axis), then apply a
per-channel ``weight`` and ``bias``. Their one backward rule (:func:`_norm_backward`) is
written in gradsum ops: under ``create_graph=True`` it recomputes the batch statistics from the
saved input with differentiable ops, so double backward is the autograd of that rule (no
second hand-written copy). ``instance_norm`` is torch's composition: batch norm of the input
viewed as ``(1, N * C, ...)`` with the affine parameters and running statistics repeated
``N`` times, its output viewed back (``grad_fn`` ``ViewBackward0``, like torch's).

Statistics of float32 inputs are accumulated in float64, as torch's CPU kernels do, and the
running statistics are updated with the unbiased batch variance,
``running = momentum * batch + (1 - momentum) * running``.

Example:
    >>> import gradsum
    >>> import gradsum.nn.functional as F
    >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 6.0]], requires_grad=True)
    >>> rm, rv = gradsum.zeros(2), gradsum.ones(2)
    >>> y = F.batch_norm(x, rm, rv, training=True)
    >>> [[round(v, 4) for v in row] for row in y.tolist()]
    [[-1.0, -1.0], [1.0, 1.0]]
    >>> y.grad_fn.name()
    'NativeBatchNormBackward0'
    >>> [round(v, 4) for v in rm.tolist()], [round(v, 4) for v in rv.tolist()]
    ([0.2, 0.4], [1.1, 1.7])
"""

from __future__ import annotations

from typing import Any

import gradsum.ops as ops
from gradsum import _dtype as D
from gradsum._backend import silenced, xp
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import _state, is_grad_enabled, no_grad
from gradsum.autograd.graph import Node
from gradsum.ops import _messages
from gradsum.ops._core import _make, const, needs_grad, record

__all__ = ["batch_norm", "group_norm", "instance_norm"]


# -- the primitive -----------------------------------------------------------------------------
class _NormPlan:
    """What a normalisation node's backward needs besides the saved input and weight."""

    __slots__ = ("aff_axes", "aff_shape", "axes", "b_shape", "eps", "in_shape", "invstd",
                 "mean", "stat_shape", "training", "w_shape")

    def __init__(self, in_shape: tuple[int, ...], stat_shape: tuple[int, ...],
                 axes: tuple[int, ...], eps: float, training: bool) -> None:
        self.in_shape, self.stat_shape, self.axes = in_shape, stat_shape, axes
        self.eps, self.training = eps, training
        nd = len(in_shape)
        #: per-channel parameters broadcast over the input as (1, C, 1, ...)
        self.aff_shape = (1, in_shape[1]) + (1,) * (nd - 2)
        self.aff_axes = (0,) + tuple(range(2, nd))
        self.w_shape: tuple[int, ...] = ()
        self.b_shape: tuple[int, ...] = ()
        self.mean: Any = None  # statistics in stat_shape (keepdims), in the input's dtype
        self.invstd: Any = None


class _NativeNormBackward(Node):
    """Shared rule of the normalisation nodes: inputs ``(input, weight, bias)``."""

    __slots__ = ("plan",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        ga = g._array
        if not _state.enabled and ga.dtype in _F32_64:
            xa, wa = self.saved_arrays()  # (nothing to record: the same arithmetic on arrays)
            if xa.dtype is ga.dtype and (wa is None or wa.dtype is ga.dtype):
                gx, gw, gb = _norm_backward_arrays(ga, xa, wa, self.plan, self.needs(0),
                                                   self.needs(1), self.needs(2))
                return (None if gx is None else _make(gx), None if gw is None else _make(gw),
                        None if gb is None else _make(gb))
        x, w = self.saved()
        assert x is not None
        return _norm_backward(g, x, w, self.plan, self.needs(0), self.needs(1), self.needs(2))


class NativeBatchNormBackward0(_NativeNormBackward):
    """``batch_norm`` (training and evaluation), torch's node name."""

    __slots__ = ()


class NativeGroupNormBackward0(_NativeNormBackward):
    """``group_norm``, torch's node name."""

    __slots__ = ()


def _reshape(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    return t if tuple(t.shape) == shape else ops.reshape(t, shape)


def _norm_backward(g: Tensor, x: Tensor, w: Tensor | None, plan: _NormPlan, nx: bool,
                   nw: bool, nb: bool) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """Gradients of ``xhat * w + b`` (``xhat = (x - mean) * invstd`` in the statistics shape)
    for ``(input, weight, bias)``, in gradsum ops. With batch statistics the input gradient is
    ``invstd * (gy - mean(gy) - xhat * mean(gy * xhat))`` for ``gy = g * w``; when recording
    (``create_graph=True``) the statistics are recomputed from ``x`` so that the rule is
    differentiable in ``x`` too; otherwise the forward's saved statistics are used."""
    axes = plan.axes
    xs = _reshape(x, plan.stat_shape)
    if plan.training and is_grad_enabled() and needs_grad(x):
        mean = ops.mean(xs, axes, keepdim=True)
        xc = ops.sub(xs, mean)
        invstd = ops.rsqrt(ops.add(ops.mean(ops.mul(xc, xc), axes, keepdim=True), plan.eps))
    else:
        xc = ops.sub(xs, _make(plan.mean))
        invstd = _make(plan.invstd)
    xhat = ops.mul(xc, invstd)
    gx = gw = gb = None
    if nw:
        gw = ops.sum(ops.mul(g, _reshape(xhat, plan.in_shape)), plan.aff_axes)
        gw = _reshape(gw, plan.w_shape)
    if nb:
        gb = _reshape(ops.sum(g, plan.aff_axes), plan.b_shape)
    if nx:
        gy = g if w is None else ops.mul(g, _reshape(w, plan.aff_shape))
        gy = _reshape(gy, plan.stat_shape)
        if plan.training:
            gy = ops.sub(ops.sub(gy, ops.mean(gy, axes, keepdim=True)),
                         ops.mul(xhat, ops.mean(ops.mul(gy, xhat), axes, keepdim=True)))
        gx = _reshape(ops.mul(gy, invstd), plan.in_shape)
    return gx, gw, gb


_F32_64 = (xp.dtype("float32"), xp.dtype("float64"))
_EXACT = 1 << 24  # (counts up to this are exact in float32: the mean's divisor as an array)


def _norm_backward_arrays(ga: Any, xa: Any, wa: Any, plan: _NormPlan, nx: bool, nw: bool,
                          nb: bool) -> tuple[Any, Any, Any]:
    """:func:`_norm_backward` on arrays when nothing is recorded (the saved statistics): the
    same operations in the same order, without the temporaries' tensors."""
    axes = plan.axes
    xhat = xa.reshape(plan.stat_shape) - plan.mean
    xhat *= plan.invstd
    gx = gw = gb = None
    if nw:
        gw = _add_reduce(ga * xhat.reshape(plan.in_shape), plan.aff_axes).reshape(plan.w_shape)
    if nb:
        gb = _add_reduce(ga, plan.aff_axes).reshape(plan.b_shape)
    if nx:
        gy = (ga if wa is None else ga * wa.reshape(plan.aff_shape)).reshape(plan.stat_shape)
        if plan.training:
            count = 1
            for ax in axes:
                count *= gy.shape[ax]
            div = const(gy.dtype, count) if 0 < count < _EXACT else count
            with xp.errstate(invalid="ignore", divide="ignore"):
                m1 = _add_reduce(gy, axes, None, None, True) / div
                m2 = _add_reduce(gy * xhat, axes, None, None, True) / div
            gy = gy - m1
            xhat *= m2
            gy -= xhat
            gy *= plan.invstd
            gx = gy.reshape(plan.in_shape)
        else:
            gx = (gy * plan.invstd).reshape(plan.in_shape)
    return gx, gw, gb


def _acc(a: Any) -> Any:
    """float64 view of the data for accumulating statistics (torch's CPU ``acc_type``)."""
    return a if a.dtype == xp.float64 else a.astype(xp.float64)


def _normalize(node: _NativeNormBackward, x: Tensor, w: Tensor | None, b: Tensor | None,
               plan: _NormPlan) -> Tensor:
    """The forward ``(x - mean) * invstd * w + b`` from ``plan``'s statistics, recorded."""
    xa = x._array
    dt = xa.dtype
    with xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = xa.reshape(plan.stat_shape) - plan.mean
        if out.dtype == dt:  # (in place: the same operations, no temporaries)
            out *= plan.invstd
            out = out.reshape(plan.in_shape)
            if w is not None and w._array.dtype == dt:
                out *= w._array.reshape(plan.aff_shape)
            elif w is not None:
                out = out * w._array.reshape(plan.aff_shape)
            if b is not None and out.dtype == dt and b._array.dtype == dt:
                out += b._array.reshape(plan.aff_shape)
            elif b is not None:
                out = out + b._array.reshape(plan.aff_shape)
        else:
            out = (out * plan.invstd).reshape(plan.in_shape)
            if w is not None:
                out = out * w._array.reshape(plan.aff_shape)
            if b is not None:
                out = out + b._array.reshape(plan.aff_shape)
    out = out.astype(dt, copy=False)
    if not needs_grad(x, w, b):
        return _make(out)
    plan.w_shape = () if w is None else tuple(w.shape)
    plan.b_shape = () if b is None else tuple(b.shape)
    node.plan = plan
    res = record(node, (x, w, b), out)
    node.save(x, w)
    return res


def _batch_stats(xs: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any, Any, int]:
    """``(mean, invstd, var_sum, n)`` over ``axes`` (keepdims), accumulated in float64."""
    a = _acc(xs)
    n = 1
    for ax in axes:
        n *= xs.shape[ax]
    with xp.errstate(invalid="ignore", divide="ignore"):
        mean = a.sum(axis=axes, keepdims=True) / n
        xc = a - mean
        var_sum = (xc * xc).sum(axis=axes, keepdims=True)
        invstd = 1.0 / xp.sqrt(var_sum / n + eps)
    return mean, invstd, var_sum, n


# -- checks ------------------------------------------------------------------------------------
def mixed_reduced(input: Tensor, *params: Tensor | None) -> bool:
    """torch's CPU "mixed type" check of a normalisation: True for a half or bfloat16 input
    whose parameters (and running statistics) are all float32, which is normalised in
    float32 and returned in its own dtype (the usual case under autocast: a bfloat16 conv
    output into a float32 BatchNorm); False when every dtype is the input's. Other mixes
    raise torch's RuntimeError."""
    dt = input._array.dtype
    for p in params:  # (the common case, every dtype the input's: no list, no Tensor.dtype)
        if p is not None and p._array.dtype != dt:
            break
    else:
        return False
    other = [p.dtype for p in params if p is not None and p.dtype != input.dtype]
    if not other or not input.is_floating_point():
        return False
    if input.dtype.name not in ("float32", "float16", "bfloat16"):
        raise RuntimeError(_messages.norm_mixed_dtype(input, other))
    bad = [d for p in params if p is not None and (d := p.dtype) is not D.float32]
    if bad or input.dtype is D.float32:
        raise RuntimeError(_messages.norm_mixed_dtype_parameter_not_float(bad, other, input))
    return True


def _check_dtypes(kernel: str, input: Tensor, *params: Tensor | None) -> None:
    if not input.is_floating_point():
        raise NotImplementedError(_messages.norm_kernel_not_floating_input(kernel, input))
    mixed_reduced(input, *params)  # (raises for the mixes torch refuses)


def _verify_batch_size(size: list[int]) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(_messages.norm_one_value_per_channel(size))


def _check_features(name: str, c: int, t: Tensor | None) -> None:
    if t is not None and t.numel() != c:
        raise RuntimeError(_messages.norm_feature_count_mismatch(name, c, t))


# -- batch norm --------------------------------------------------------------------------------
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of ``input`` (``(N, C)``, ``(N, C, L)``,
    ``(N, C, H, W)`` or ``(N, C, D, H, W)``) by its mean and biased variance over the batch
    and spatial dims (``training=True``) or by ``running_mean`` / ``running_var``
    (``training=False``), then scale by ``weight`` and shift by ``bias``.

    In training, ``running_mean`` and ``running_var`` (if given) are updated in place with
    ``momentum`` and the *unbiased* batch variance. ``grad_fn`` is
    ``NativeBatchNormBackward0`` in both modes, like torch's.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.tensor([[0.0, 1.0], [2.0, 5.0]])
        >>> F.batch_norm(x, gradsum.tensor([1.0, 1.0]), gradsum.tensor([4.0, 4.0]), eps=0.0)
        tensor([[-0.5000,  0.0000],
                [ 0.5000,  2.0000]])
    """
    if momentum is None or isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(_messages.batch_norm_momentum_not_float(momentum))
    size = tuple(input.shape)
    if training:
        if not size:
            raise IndexError(_messages.batch_norm_input_without_channels())
        _verify_batch_size(list(size))
    if training and eps <= 0.0:
        raise ValueError(_messages.batch_norm_eps_not_positive_training(eps))
    if eps < 0.0:
        raise ValueError(_messages.batch_norm_eps_negative(eps))
    return _native_batch_norm(input, running_mean, running_var, weight, bias, training,
                              float(momentum), float(eps))


def _native_batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                       weight: Tensor | None, bias: Tensor | None, training: bool,
                       momentum: float, eps: float) -> Tensor:
    """torch's ``at::batch_norm`` (no Python-level checks; also instance norm's): the
    native checks, then the statistics, the running update and the recorded forward."""
    size = tuple(input.shape)
    if mixed_reduced(input, weight, bias, running_mean, running_var):  # (in float32)
        return _native_batch_norm(ops.to_dtype(input, D.float32), running_mean, running_var,
                                  weight, bias, training, momentum, eps).to(input.dtype)
    _check_dtypes("batch_norm", input, weight, bias, running_mean, running_var)
    if input.numel() == 0 and input.ndim >= 2:  # torch: a clone, scaled by weight[0] etc.
        out = ops.clone(input)
        if weight is not None:
            out = ops.mul(out, ops.reshape(weight, (-1,))[0])
        if bias is not None:
            out = ops.add(out, ops.reshape(bias, (-1,))[0])
        return out
    c = size[1] if len(size) >= 2 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None and not training:
            raise RuntimeError(_messages.batch_norm_running_stat_missing(name))
        _check_features(name, c, t)
    _check_features("weight", c, weight)
    _check_features("bias", c, bias)
    if (running_mean is None) != (running_var is None):
        raise ValueError(_messages.batch_norm_running_stats_one_none())
    if len(size) < 2:
        raise IndexError(_messages.batch_norm_input_without_channel_dim(size))
    plan = _NormPlan(size, size, (0,) + tuple(range(2, len(size))), eps, training)
    dt = input._array.dtype
    if training:
        mean, invstd, var_sum, n = _batch_stats(input._array, plan.axes, eps)
        if running_mean is not None and running_var is not None:
            # (torch's kernel writes the buffers directly: their versions do not change)
            rm, rv = running_mean._array, running_var._array
            bm = mean.reshape(rm.shape)
            with xp.errstate(invalid="ignore", divide="ignore"):
                unbiased = (var_sum / (n - 1)).reshape(rv.shape)
            rm[...] = (momentum * bm + (1.0 - momentum) * _acc(rm)).astype(rm.dtype)
            rv[...] = (momentum * unbiased + (1.0 - momentum) * _acc(rv)).astype(rv.dtype)
    else:
        assert running_mean is not None and running_var is not None
        mean = running_mean._array.reshape(plan.aff_shape)
        with xp.errstate(invalid="ignore", divide="ignore"):
            invstd = 1.0 / xp.sqrt(_acc(running_var._array).reshape(plan.aff_shape) + eps)
    plan.mean = mean.astype(dt, copy=False)
    plan.invstd = invstd.astype(dt, copy=False)
    return _normalize(NativeBatchNormBackward0(), input, weight, bias, plan)


# -- group norm --------------------------------------------------------------------------------
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Split the channels (dim 1) of an ``(N, C, *)`` input into ``num_groups`` groups and
    normalise each sample's group by its mean and biased variance, then apply the
    per-channel ``weight`` and ``bias``. ``grad_fn`` is ``NativeGroupNormBackward0``.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.tensor([[1.0, 3.0, 0.0, 4.0]])
        >>> F.group_norm(x, 2, eps=0.0)
        tensor([[-1.,  1., -1.,  1.]])
    """
    if input.ndim < 2:
        raise RuntimeError(_messages.group_norm_input_wrong_rank(input))
    size = tuple(input.shape)
    if num_groups == 0:
        raise ZeroDivisionError(_messages.group_norm_zero_groups())
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups, *size[2:]])
    n, c = size[0], size[1]
    if num_groups < 0:
        raise RuntimeError(_messages.group_norm_groups_not_positive(num_groups))
    if c % num_groups:
        raise RuntimeError(_messages.group_norm_channels_not_divisible(size, num_groups))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(_messages.group_norm_parameter_size_mismatch(name, t, size))
    if mixed_reduced(input, weight, bias):  # (in float32, returned in the input's dtype)
        return group_norm(ops.to_dtype(input, D.float32), num_groups, weight, bias,
                          eps).to(input.dtype)
    _check_dtypes("GroupNormKernelImpl", input, weight, bias)
    m = c // num_groups
    for s in size[2:]:
        m *= s
    plan = _NormPlan(size, (n, num_groups, m), (2,), float(eps), True)
    mean, invstd, _, _ = _batch_stats(input._array.reshape(plan.stat_shape), (2,), eps)
    dt = input._array.dtype
    plan.mean = mean.astype(dt, copy=False)
    plan.invstd = invstd.astype(dt, copy=False)
    return _normalize(NativeGroupNormBackward0(), input, weight, bias, plan)


# -- instance norm -----------------------------------------------------------------------------
def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample of an ``(N, C, *)`` input over its spatial dims
    (``use_input_stats=True``) or by the running statistics, then apply ``weight`` and
    ``bias``. Torch's composition: batch norm of the input viewed as ``(1, N * C, *)``, so
    ``grad_fn`` is ``ViewBackward0``; the running statistics (if given) are updated with the
    batch average of the per-instance statistics.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> x = gradsum.tensor([[[1.0, 3.0], [2.0, 6.0]]])
        >>> F.instance_norm(x, eps=0.0)
        tensor([[[-1.,  1.],
                 [-1.,  1.]]])
    """
    size = tuple(input.shape)
    if use_input_stats:
        prod = 1
        for s in size[2:]:
            prod *= s
        if prod == 1:
            raise ValueError(_messages.instance_norm_one_spatial_element(size))
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(_messages.instance_norm_running_stats_missing())
    n, c = size[0], size[1]
    shape = (1, n * c) + size[2:]

    def rep(t: Tensor | None) -> Tensor | None:
        return None if t is None else ops.repeat(t, n)

    with no_grad():
        rm_, rv_ = rep(running_mean), rep(running_var)
    out = _native_batch_norm(ops.reshape(input, shape), rm_, rv_, rep(weight), rep(bias),
                             use_input_stats, float(momentum), float(eps))
    with no_grad():
        if running_mean is not None and rm_ is not None:
            running_mean.copy_(ops.mean(ops.reshape(rm_, (n, c)), 0))
        if running_var is not None and rv_ is not None:
            running_var.copy_(ops.mean(ops.reshape(rv_, (n, c)), 0))
    return ops.reshape(out, size)


# -- layer norm --------------------------------------------------------------------------------
class _LayerNormPlan:
    """What the layer-norm nodes need: the normalised trailing dims (``axes``, ``m``
    elements per row), ``eps`` and the forward's row statistics (keepdims arrays)."""

    __slots__ = ("axes", "eps", "m", "mean", "rstd")

    def __init__(self, axes: tuple[int, ...], m: int, eps: float, mean: Any,
                 rstd: Any) -> None:
        self.axes, self.m, self.eps, self.mean, self.rstd = axes, m, eps, mean, rstd


class NativeLayerNormBackward0(Node):
    """``layer_norm`` (torch's node; inputs ``input, weight, bias``): its rule is
    :func:`_layer_norm_backward`, one op whose outputs are the three gradients. The array
    path (float32/float64) also saves the normalised input ``(x - mean) * rstd`` as
    ``(rows, m)`` when it is not the output itself, so that the backward need not recompute
    it (released with the other saved tensors)."""

    __slots__ = ("plan",)

    def backward(self, g: Tensor) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        saved = self.saved()
        x, w, b = saved[0], saved[1], saved[2]
        assert x is not None
        xh = saved[3] if len(saved) > 3 else None
        return _layer_norm_backward(g, x, w, b, self.plan,
                                    (self.needs(0), self.needs(1), self.needs(2)),
                                    None if xh is None else xh._array)


class NativeLayerNormBackwardBackward0(Node):
    """The rule of :func:`_layer_norm_backward`, torch's ``layer_norm_double_backward``:
    inputs ``(g, input, mean, rstd, weight, bias)`` as torch's (the statistics and the bias
    get no gradient), outputs the three gradients. With ``xh = (x - mean) rstd``, ``r =
    rstd``, ``gy = g w``, ``P(u) = u - mean(u) - xh mean(u xh)`` (row means) and the incoming
    gradients ``ggx, ggw, ggb``: ``g`` gets ``w r P(ggx) + ggw xh + ggb``, ``w`` gets
    ``sum(g r P(ggx))`` and ``x`` gets ``r P(v) - C r**2 xh / m`` with ``v = ggw g - r (<ggx,
    xh> gy + <gy, xh> ggx) / m`` and ``C = <ggx, gy> - mean(gy) sum(ggx) - <gy, xh> <ggx, xh>
    / m`` (the derivative of ``<ggx, gx> + <ggw, gw>`` through ``xh`` and ``r``). The row
    statistics are recomputed from ``x`` in gradsum ops, so this rule is differentiable too."""

    __slots__ = ("plan",)
    num_outputs = 3

    def _materialize(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return grads  # (a missing output gradient is a zero term: left out below)

    def backward(self, ggx: Tensor | None, ggw: Tensor | None, ggb: Tensor | None
                 ) -> tuple[Tensor | None, ...]:
        g, x, w, _b = self.saved()
        assert g is not None and x is not None
        plan = self.plan
        axes, m = plan.axes, plan.m
        lead = tuple(range(x.ndim - len(axes)))

        def rsum(t: Tensor) -> Tensor:
            return ops.sum(t, axes, keepdim=True)

        mu = ops.mean(x, axes, keepdim=True)
        xc = ops.sub(x, mu)
        r = ops.rsqrt(ops.add(ops.mean(ops.mul(xc, xc), axes, keepdim=True), plan.eps))
        xh = ops.mul(xc, r)

        def proj(u: Tensor) -> Tensor:
            return ops.sub(ops.sub(u, ops.mean(u, axes, keepdim=True)),
                           ops.mul(xh, ops.mean(ops.mul(u, xh), axes, keepdim=True)))

        gy = g if w is None else ops.mul(g, w)
        rp = ops.mul(r, proj(ggx)) if ggx is not None else None
        d_g = d_x = d_w = None
        if self.needs(0):
            terms = []
            if rp is not None:
                terms.append(rp if w is None else ops.mul(rp, w))
            if ggw is not None:
                terms.append(ops.mul(ggw, xh))
            if ggb is not None:
                terms.append(ggb)
            d_g = terms[0]
            for t in terms[1:]:
                d_g = ops.add(d_g, t)
            if tuple(d_g.shape) != tuple(g.shape):
                d_g = ops.expand(d_g, tuple(g.shape))
        if self.needs(4):
            d_w = (ops.zeros_like(w) if rp is None  # type: ignore[arg-type]
                   else ops.sum(ops.mul(g, rp), lead) if lead else ops.mul(g, rp))
        if self.needs(1):
            v = None if ggw is None else ops.mul(ggw, g)
            c = None
            if ggx is not None:
                gy_xh, ggx_xh = rsum(ops.mul(gy, xh)), rsum(ops.mul(ggx, xh))
                t = ops.div(ops.mul(r, ops.add(ops.mul(ggx_xh, gy), ops.mul(gy_xh, ggx))), m)
                v = ops.neg(t) if v is None else ops.sub(v, t)
                c = ops.sub(ops.sub(rsum(ops.mul(ggx, gy)),
                                    ops.mul(ops.mean(gy, axes, keepdim=True), rsum(ggx))),
                            ops.div(ops.mul(gy_xh, ggx_xh), m))
            d_x = ops.zeros_like(x) if v is None else ops.mul(r, proj(v))
            if c is not None:
                d_x = ops.sub(d_x, ops.div(ops.mul(ops.mul(c, ops.mul(r, r)), xh), m))
        return d_g, d_x, None, None, d_w, None


def _layer_norm_backward(g: Tensor, x: Tensor, w: Tensor | None, b: Tensor | None,
                         plan: _LayerNormPlan, mask: tuple[bool, bool, bool], xh: Any = None
                         ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """torch's ``native_layer_norm_backward``: ``(r P(g w), sum(g xh), sum(g))`` (see
    :class:`NativeLayerNormBackwardBackward0`) for the outputs ``mask`` asks for, from the
    forward's statistics; one op recorded with ``g, x, w, b`` as inputs, so under
    ``create_graph`` every gradient requires grad when any of them does (as torch's)."""
    axes = plan.axes
    xa, ga = x._array, g._array
    dt = xa.dtype
    lead = tuple(range(xa.ndim - len(axes)))
    if (dt.char in "fd" and ga.dtype == dt and plan.m and xa.size
            and (w is None or (w._array.dtype == dt
                               and w._array.shape == xa.shape[xa.ndim - len(axes):]))):
        outs = _layer_norm_backward_fast(ga, xa, None if w is None else w._array, b is not None,
                                         plan, mask, xh)
    else:
        outs = _layer_norm_backward_arrays(ga, xa, w, b, plan, mask, axes, lead, dt)
    if not needs_grad(g, x, w, b):
        return tuple(None if o is None else _make(o) for o in outs)  # type: ignore[return-value]
    node = NativeLayerNormBackwardBackward0()
    node.plan = plan
    ins = (g, x, None, None, w, b)
    res = tuple(None if o is None else record(node, ins, o, i) for i, o in enumerate(outs))
    node.save(g, x, w, b)
    return res  # type: ignore[return-value]


@silenced
def _layer_norm_backward_fast(ga: Any, xa: Any, wa: Any, has_b: bool, plan: _LayerNormPlan,
                              mask: tuple[bool, bool, bool], xh: Any) -> list[Any]:
    """:func:`_layer_norm_backward`'s arrays for float32/float64 (one dtype): on the rows
    ``(n, m)`` the same arithmetic (row sums: :func:`_row_sums`), the normalised input from
    the forward when it kept it, the input gradient written in place into ``g w``."""
    m = plan.m
    g2 = ga.reshape(-1, m)
    if xh is None:
        xh = xa.reshape(-1, m) - plan.mean.reshape(-1, 1)
        xh *= plan.rstd.reshape(-1, 1)
    outs: list[Any] = [None, None, None]
    gxh = g2 * xh if (mask[0] and wa is None) or (mask[1] and wa is not None) else None
    if mask[1] and wa is not None:
        outs[1] = _add_reduce(gxh, 0).reshape(wa.shape)
    if mask[0]:
        gy = g2 if wa is None else g2 * wa.reshape(-1)
        s1 = _row_sums(gy)
        if wa is not None:  # (g w xh, into g xh's buffer once the weight's gradient summed it)
            gxh = gy * xh if gxh is None else xp.multiply(gy, xh, out=gxh)
        s2 = _row_sums(gxh)
        gx = gy - s1 / m if wa is None else gy
        if wa is not None:
            gx -= s1 / m
        s2 /= m
        gx -= xp.multiply(xh, s2, out=gxh)  # (g xh is summed: its buffer is free)
        gx *= plan.rstd.reshape(-1, 1)
        outs[0] = gx.reshape(xa.shape)
    if mask[2] and has_b:
        outs[2] = _add_reduce(g2, 0).reshape(xa.shape[xa.ndim - len(plan.axes):])
    return outs


_add_reduce = xp.add.reduce


def _layer_norm_backward_arrays(ga: Any, xa: Any, w: Tensor | None, b: Tensor | None,
                                plan: _LayerNormPlan, mask: tuple[bool, bool, bool],
                                axes: tuple[int, ...], lead: tuple[int, ...],
                                dt: Any) -> list[Any]:
    """:func:`_layer_norm_backward`'s arrays, the general way (any dtype, empty rows)."""
    with xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        xh = (xa - plan.mean) * plan.rstd
        outs: list[Any] = [None, None, None]
        if mask[0]:
            gy = ga if w is None else ga * w._array
            proj = (gy - gy.mean(axis=axes, keepdims=True)
                    - xh * (gy * xh).mean(axis=axes, keepdims=True))
            outs[0] = xp.asarray(plan.rstd * proj, dtype=dt)
        if mask[1] and w is not None:
            outs[1] = xp.asarray((ga * xh).sum(axis=lead), dtype=dt)
        if mask[2] and b is not None:
            outs[2] = xp.asarray(ga.sum(axis=lead), dtype=dt)
    return outs


def native_layer_norm(input: Tensor, normalized_shape: tuple[int, ...], weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> Tensor:
    """Layer normalisation over the trailing ``normalized_shape`` dims (biased variance),
    scaled and shifted: one ``NativeLayerNormBackward0`` node, as torch's (arguments checked
    by :func:`gradsum.nn.functional.layer_norm`)."""
    k = len(normalized_shape)
    xa = input._array
    axes = tuple(range(xa.ndim - k, xa.ndim))
    m = 1
    for s in normalized_shape:
        m *= s
    wa = None if weight is None else weight._array
    ba = None if bias is None else bias._array
    dt = xa.dtype
    ns = xa.shape[xa.ndim - k:]
    if (dt.char in "fd" and m and xa.size
            and (wa is None or (wa.dtype == dt and wa.shape == ns))
            and (ba is None or (ba.dtype == dt and ba.shape == ns))):
        return _native_layer_norm_fast(input, xa, wa, ba, weight, bias, axes, m, eps)
    with xp.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mean = xa.mean(axis=axes, keepdims=True) if m else xp.zeros_like(xa[..., :1])
        xc = xa - mean
        var = (xc * xc).mean(axis=axes, keepdims=True) if m else mean
        rstd = xp.asarray(1.0 / xp.sqrt(var + eps), dtype=xa.dtype)
        out = xc * rstd
        if weight is not None:
            out = out * weight._array
        if bias is not None:
            out = out + bias._array
    out = xp.asarray(out, dtype=xa.dtype)
    if not needs_grad(input, weight, bias):
        return _make(out)
    node = NativeLayerNormBackward0()
    node.plan = _LayerNormPlan(axes, m, eps, mean, rstd)
    res = record(node, (input, weight, bias), out)
    node.save(input, weight, bias)
    return res


def _native_layer_norm_fast(input: Tensor, xa: Any, wa: Any, ba: Any, weight: Tensor | None,
                            bias: Tensor | None, axes: tuple[int, ...], m: int,
                            eps: float) -> Tensor:
    """:func:`native_layer_norm` for float32/float64 (one dtype, non-empty rows): see
    :func:`_layer_norm_arrays`; the normalised input is kept for the backward when the output
    is not it."""
    out, xc, mean, rstd = _layer_norm_arrays(xa.reshape(-1, m), wa, ba, eps)
    kept = None if out is xc else xc
    out = out.reshape(xa.shape)
    if not needs_grad(input, weight, bias):
        return _make(out)
    keep = xa.shape[:xa.ndim - len(axes)] + (1,) * len(axes)  # (the statistics as torch's)
    node = NativeLayerNormBackward0()
    node.plan = _LayerNormPlan(axes, m, eps, mean.reshape(keep), rstd.reshape(keep))
    res = record(node, (input, weight, bias), out)
    node.save(input, weight, bias, None if kept is None else _make(kept))
    return res


@silenced
def _layer_norm_arrays(x2: Any, wa: Any, ba: Any, eps: float) -> tuple[Any, Any, Any, Any]:
    """Layer norm of the rows of ``x2`` ``(n, m)`` (float32/float64, one dtype): ``(out,
    xhat, mean, rstd)``, the statistics ``(n, 1)`` (row sums: :func:`_row_sums`); the
    normalised input and the output are each written in place into one temporary."""
    m = x2.shape[1]
    mean = _row_sums(x2)
    mean /= m
    xc = x2 - mean
    sq = xc * xc  # (its buffer becomes the output's)
    var = _row_sums(sq)
    var /= m
    var += eps
    rstd = xp.sqrt(var, out=var)
    xp.reciprocal(rstd, out=rstd)  # (1 / sqrt(var + eps), correctly rounded as 1.0 / v)
    xc *= rstd  # (now the normalised input)
    if wa is not None:
        out = xp.multiply(xc, wa.reshape(-1), out=sq)
        if ba is not None:
            out += ba.reshape(-1)
    elif ba is not None:
        out = xp.add(xc, ba.reshape(-1), out=sq)
    else:
        out = xc
    return out, xc, mean, rstd


#: rows up to this long are summed as a matrix-vector product with ones (BLAS, several
#: times faster than NumPy's reduction along short rows, and as accurate there); longer
#: ones by NumPy's pairwise reduction (fast enough there, and more accurate)
_SHORT_ROW = 128


def _row_sums(a: Any) -> Any:
    """Sums ``(n, 1)`` of the rows of a 2-D float32/float64 array (see :data:`_SHORT_ROW`)."""
    m = a.shape[1]
    if m <= _SHORT_ROW:
        return xp.matmul(a, _ones(m, a.dtype))[:, None]
    return _add_reduce(a, 1, None, None, True)


_ONES: dict[tuple[int, Any], Any] = {}


def _ones(m: int, dt: Any) -> Any:
    """A read-only vector of ``m`` ones of dtype ``dt`` (cached: the row sums' operand)."""
    key = (m, dt)
    o = _ONES.get(key)
    if o is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        o = _ONES[key] = xp.ones(m, dtype=dt)
        o.flags.writeable = False
    return o
