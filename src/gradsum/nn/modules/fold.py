"""``Unfold`` and ``Fold`` (torch's ``torch.nn.modules.fold``): sliding blocks to columns and back.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.Unfold(kernel_size=2)(gradsum.ones(1, 1, 3, 3)).shape
    (1, 4, 4)
"""

from __future__ import annotations

import typing
from typing import Any

from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["Fold", "Unfold"]


class Unfold(_Module):
    """``F.unfold`` as a module: sliding blocks as columns ``(N, C*kh*kw, L)``."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return _F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(_Module):
    """``F.fold`` as a module: sum columns back into ``(N, C, *output_size)``."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return _F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
