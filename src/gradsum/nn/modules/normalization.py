"""``LayerNorm``, ``GroupNorm``, ``RMSNorm`` and ``LocalResponseNorm`` (torch's
``torch.nn.modules.normalization``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    >>> nn.LayerNorm(3)(gradsum.tensor([1.0, 2.0, 3.0])).shape
    (3,)
"""

from __future__ import annotations

import numbers
import typing
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn import init as _init
from gradsum.nn.modules.linear import _empty
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.parameter import Parameter as _Parameter

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.nn.modules.module import Module

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]


def _affine_parameters(m: Module, shape: tuple[int, ...], affine: bool, bias: bool,
                       dtype: Any) -> None:
    """The ``weight`` (and ``bias``) of a normalisation layer, or registered ``None``s."""
    if affine:
        m.weight = _Parameter(_empty(*shape, dtype=dtype))
        if bias:
            m.bias = _Parameter(_empty(*shape, dtype=dtype))
        else:
            m.register_parameter("bias", None)
    else:
        m.register_parameter("weight", None)
        m.register_parameter("bias", None)


def _reset_affine(m: Module) -> None:
    """torch's initialisation of a normalisation layer's affine parameters: ones, zeros."""
    if m.weight is not None:
        _init.ones_(m.weight)
        if m.bias is not None:
            _init.zeros_(m.bias)


class LayerNorm(_Module):
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``
    (initialised to ones and zeros).

    Example:
        >>> import gradsum
        >>> ln = gradsum.nn.LayerNorm(3)
        >>> ln
        LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> ln(gradsum.tensor([[1.0, 2.0, 3.0]])).sum().abs().item() < 1e-6
        True
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, tuple(self.normalized_shape), elementwise_affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return _F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(_Module):
    """Group normalisation: the ``num_channels`` channels are split into ``num_groups``
    groups, each sample's group normalised over its channels and spatial positions, then a
    per-channel ``weight`` and ``bias`` (ones and zeros) when ``affine``.

    Example:
        >>> import gradsum
        >>> gn = gradsum.nn.GroupNorm(2, 4)
        >>> gn
        GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
        >>> gn(gradsum.randn(3, 4, 5)).shape
        (3, 4, 5)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: D.dtype | None = None, *,
                 bias: bool = True) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(_messages.num_channels_divisible_by_num(num_channels, num_groups))
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return _F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(_Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, times a
    ``weight`` initialised to ones (no bias); ``eps=None`` is the dtype's machine epsilon.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.RMSNorm([2])
        >>> [round(v, 4) for v in m(gradsum.tensor([[3.0, 4.0]]))[0].tolist()]
        [0.8485, 1.1314]
        >>> [n for n, _ in m.named_parameters()]
        ['weight']
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _Parameter(_creation.empty(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            _init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return _F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(_Module):
    """Local response normalisation across channels (see
    :func:`gradsum.nn.functional.local_response_norm`).

    Example:
        >>> from gradsum import nn
        >>> nn.LocalResponseNorm(2)
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return _F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
