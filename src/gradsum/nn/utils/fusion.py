"""Folding an eval-mode batch norm into the preceding convolution or linear layer (torch's
``nn.utils.fuse_conv_bn_eval`` family): ``bn(conv(x)) == fused(x)`` up to rounding.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.nn.utils import fuse_linear_bn_eval
    >>> lin, bn = nn.Linear(3, 2).eval(), nn.BatchNorm1d(2).eval()
    >>> bn.running_mean.fill_(0.5); bn.running_var.fill_(4.0)
    tensor([0.5000, 0.5000])
    tensor([4., 4.])
    >>> x = gradsum.randn(5, 3)
    >>> fused = fuse_linear_bn_eval(lin, bn)
    >>> bool(((fused(x) - bn(lin(x))).abs() < 1e-5).all())
    True
"""

from __future__ import annotations

import copy
from typing import TypeVar

from gradsum import _creation, ops
from gradsum._tensor import Tensor
from gradsum.nn import _messages
from gradsum.nn.modules.module import Module
from gradsum.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]

ModuleT = TypeVar("ModuleT", bound=Module)


def _check_eval(layer: Module, bn: Module) -> None:
    if layer.training or bn.training:
        raise AssertionError(_messages.fusion_only_for_eval())
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError(_messages.fuse_bn_without_running_stats())


def fuse_conv_bn_eval(conv: ModuleT, bn: Module, transpose: bool = False) -> ModuleT:
    """A deep copy of ``conv`` whose weight and bias absorb ``bn``'s running statistics and
    affine parameters (both modules in eval mode).

    Raises:
        AssertionError: a module is in training mode, or ``bn`` tracks no running stats
            (torch's exception type).
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose,
    )
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """``(conv_w * scale, (conv_b - mean) * scale' + bn_b)`` with ``scale = bn_w /
    sqrt(var + eps)`` broadcast over the output channels (dim 1 when ``transpose``), as new
    Parameters in the conv's dtypes (recorded in the graph, like torch).

    Example:
        >>> import gradsum
        >>> from gradsum.nn.utils import fuse_conv_bn_weights
        >>> w, b = fuse_conv_bn_weights(gradsum.ones(2, 1, 1, 1), None, gradsum.zeros(2),
        ...                             gradsum.full((2,), 3.0), 1.0, None, None)
        >>> w.flatten().tolist(), b.tolist()
        ([0.5, 0.5], [0.0, 0.0])
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _creation.zeros_like(bn_rm)
    bn_var_rsqrt = ops.rsqrt(ops.add(bn_rv, bn_eps))
    rest = [1] * (conv_w.ndim - 2)
    shape = [1, -1, *rest] if transpose else [-1, 1, *rest]
    fused_w = ops.mul(conv_w, ops.reshape(ops.mul(bn_w, bn_var_rsqrt), tuple(shape)))
    fused_b = ops.add(ops.mul(ops.mul(ops.sub(conv_b, bn_rm), bn_var_rsqrt), bn_w), bn_b)
    return (Parameter(fused_w.to(w_dtype), conv_w.requires_grad),
            Parameter(fused_b.to(b_dtype), conv_b.requires_grad))


def fuse_linear_bn_eval(linear: ModuleT, bn: Module) -> ModuleT:
    """A deep copy of ``linear`` whose weight and bias absorb ``bn`` (both in eval mode;
    ``bn.num_features`` is ``linear.out_features`` or 1).

    Raises:
        AssertionError: a module is in training mode, the feature counts differ, or ``bn``
            tracks no running stats (torch's exception type).
    """
    if linear.training or bn.training:
        raise AssertionError(_messages.fusion_only_for_eval())
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(_messages.fuse_linear_out_features_bn(linear, bn))
    _check_eval(linear, bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
    )
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """``(linear_w * scale[:, None], (linear_b - mean) * scale + bn_b)`` with ``scale =
    bn_w / sqrt(var + eps)``, as new Parameters in the linear layer's dtypes."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _creation.zeros_like(bn_rm)
    bn_scale = ops.mul(bn_w, ops.rsqrt(ops.add(bn_rv, bn_eps)))
    fused_w = ops.mul(linear_w, ops.unsqueeze(bn_scale, -1).to(w_dtype))
    fused_b = ops.add(ops.mul(ops.sub(linear_b, bn_rm), bn_scale), bn_b).to(b_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
