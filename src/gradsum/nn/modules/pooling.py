"""Max, average, power-average, adaptive pooling and max unpooling in 1, 2 and 3 dimensions
(torch's ``torch.nn.modules.pooling``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.MaxPool2d(2)(gradsum.arange(16.0).reshape(1, 1, 4, 4)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
"""

from __future__ import annotations

import typing
from typing import Any

from gradsum.nn import functional as _F
from gradsum.nn.modules.conv import _ntuple
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d"
]


class _MaxPoolNd(_Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (``stride`` defaults to ``kernel_size``).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.MaxPool2d(2)
        >>> m
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> m(gradsum.ones(1, 1, 5, 5)).shape
        (1, 1, 2, 2)
    """

    def forward(self, input: Tensor) -> Any:
        return _F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""

    def forward(self, input: Tensor) -> Any:
        return _F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(_Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling (``count_include_pad``, ``ceil_mode``, ``divisor_override``)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return _F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


def _single(v: Any) -> tuple[Any, ...]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return _F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(_Module):
    """Average pooling to a fixed ``output_size`` (``None`` keeps that input size)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return _F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(_Module):
    """Max pooling to a fixed ``output_size`` (``None`` keeps that input size)."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return _F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Example:
        >>> import gradsum
        >>> gradsum.nn.MaxPool3d(2, ceil_mode=True)(gradsum.ones(1, 1, 3, 3, 3)).shape
        (1, 1, 2, 2, 2)
    """

    def forward(self, input: Tensor) -> Any:
        return _F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """3-D average pooling (``count_include_pad``, ``ceil_mode``, ``divisor_override``).

    Example:
        >>> import gradsum
        >>> gradsum.nn.AvgPool3d(2, divisor_override=1)(gradsum.ones(1, 1, 2, 2, 2)).tolist()
        [[[[[8.0]]]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        return _F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(_Module):
    _fn: Any = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of ``(N, C, L)`` or ``(C, L)`` to a fixed length.

    Example:
        >>> import gradsum
        >>> gradsum.nn.AdaptiveAvgPool1d(2)(gradsum.arange(5.0).reshape(1, 5)).tolist()
        [[1.0, 3.0]]
    """

    _fn = staticmethod(_F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of ``(N, C, D, H, W)`` to a fixed ``output_size``.

    Example:
        >>> import gradsum
        >>> gradsum.nn.AdaptiveAvgPool3d((1, None, 2))(gradsum.ones(1, 2, 3, 4, 5)).shape
        (1, 2, 1, 4, 2)
    """

    _fn = staticmethod(_F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(_Module):
    _fn: Any = None

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, L)`` or ``(C, L)`` to a fixed length (``return_indices``).

    Example:
        >>> import gradsum
        >>> y, i = gradsum.nn.AdaptiveMaxPool1d(2, return_indices=True)(
        ...     gradsum.tensor([[3.0, 1.0, 4.0, 1.0, 5.0]]))
        >>> y.tolist(), i.tolist()
        ([[4.0, 5.0]], [[2, 4]])
    """

    _fn = staticmethod(_F.adaptive_max_pool1d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, D, H, W)`` to a fixed ``output_size``.

    Example:
        >>> import gradsum
        >>> gradsum.nn.AdaptiveMaxPool3d(2)(gradsum.ones(1, 3, 3, 3)).shape
        (1, 2, 2, 2)
    """

    _fn = staticmethod(_F.adaptive_max_pool3d)


class _MaxUnpoolNd(_Module):
    _nd = 2
    _fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d``: values back at their indices, zeros elsewhere.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([[[1.0, 2.0, 3.0, 4.0]]])
        >>> y, i = gradsum.nn.MaxPool1d(2, return_indices=True)(x)
        >>> gradsum.nn.MaxUnpool1d(2)(y, i).tolist()
        [[[0.0, 2.0, 0.0, 4.0]]]
    """

    _nd = 1
    _fn = staticmethod(_F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d`` (``output_size`` resolves the ambiguous sizes).

    Example:
        >>> import gradsum
        >>> y, i = gradsum.nn.MaxPool2d(2, return_indices=True)(gradsum.ones(1, 1, 5, 5))
        >>> gradsum.nn.MaxUnpool2d(2)(y, i, output_size=[5, 5]).shape
        (1, 1, 5, 5)
    """

    _nd = 2
    _fn = staticmethod(_F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d``.

    Example:
        >>> import gradsum
        >>> y, i = gradsum.nn.MaxPool3d(2, return_indices=True)(gradsum.ones(1, 1, 2, 2, 2))
        >>> gradsum.nn.MaxUnpool3d(2)(y, i).sum().item()
        1.0
    """

    _nd = 3
    _fn = staticmethod(_F.max_unpool3d)


class _LPPoolNd(_Module):
    _fn: Any = None

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum x**p) ** (1/p)`` over ``(N, C, L)`` windows.

    Example:
        >>> import gradsum
        >>> gradsum.nn.LPPool1d(2, 2)(gradsum.tensor([[[3.0, 4.0]]])).tolist()
        [[[5.0]]]
    """

    _fn = staticmethod(_F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over ``(N, C, H, W)`` windows.

    Example:
        >>> import gradsum
        >>> gradsum.nn.LPPool2d(1, 2)(gradsum.ones(1, 1, 2, 2)).tolist()
        [[[[4.0]]]]
    """

    _fn = staticmethod(_F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over ``(N, C, D, H, W)`` windows.

    Example:
        >>> import gradsum
        >>> gradsum.nn.LPPool3d(2, 2)(gradsum.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 1, 1, 1)
    """

    _fn = staticmethod(_F.lp_pool3d)
