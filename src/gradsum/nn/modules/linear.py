"""``Identity``, ``Linear``, ``Bilinear``, ``LazyLinear`` and ``NonDynamicallyQuantizableLinear``
(``MultiheadAttention.out_proj``): torch's ``torch.nn.modules.linear``, with torch's default
initialisation.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.Linear(4, 2)
    Linear(in_features=4, out_features=2, bias=True)
    >>> nn.Identity()(gradsum.ones(2)).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import math
import typing
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum.autograd.grad_mode import no_grad as _no_grad
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn import init as _init
from gradsum.nn.modules.lazy import LazyModuleMixin as _LazyModuleMixin
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.parameter import Parameter as _Parameter
from gradsum.nn.parameter import UninitializedParameter as _UninitializedParameter

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.nn.parameter import Parameter

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


def _empty(*shape: int, dtype: D.dtype | None = None) -> Tensor:
    # one tuple argument, so that an empty shape gives a 0-d tensor (LayerNorm(()))
    return _creation.empty(shape, dtype=dtype)


def _reset_weight_and_bias(weight: Parameter, bias: Parameter | None) -> None:
    """torch's default for Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) on the weight and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias."""
    _init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        _init.uniform_(bias, -bound, bound)


class Identity(_Module):
    """Returns its input unchanged (constructor arguments are ignored, like torch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(_Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised like torch: ``kaiming_uniform_(weight, a=sqrt(5))`` and ``bias`` from
    U(-1/sqrt(in_features), 1/sqrt(in_features)).

    Example:
        >>> import gradsum
        >>> lin = gradsum.nn.Linear(3, 2)
        >>> lin(gradsum.ones(5, 3)).shape
        (5, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _Parameter(_empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = _Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return _F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """torch's ``Linear`` subclass used as ``MultiheadAttention.out_proj``."""


class Bilinear(_Module):
    """``y = x1 @ weight[o] @ x2 + bias[o]``, weight ``(out, in1, in2)``; weight and bias from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)) like torch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = _Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = _Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        _init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            _init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return _F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(_LazyModuleMixin, Linear):
    """A :class:`~gradsum.nn.Linear` whose ``in_features`` is ``input.shape[-1]`` of the first
    forward; then it becomes a ``Linear`` initialised as one.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyLinear(3, bias=False)
        >>> _ = m(gradsum.ones(2, 5))
        >>> type(m).__name__, m.weight.shape
        ('Linear', (3, 5))
    """

    cls_to_become = Linear
    weight: Any
    bias: Any

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(0, 0, False)
        self.weight = _UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = _UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """``in_features = input.shape[-1]``; materialize and initialise."""
        if self.has_uninitialized_params():
            with _no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(_messages.in_features_mismatch(input, self))
            self.in_features = input.shape[-1]
