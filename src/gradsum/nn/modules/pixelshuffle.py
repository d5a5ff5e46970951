"""``PixelShuffle`` and ``PixelUnshuffle`` (torch's ``torch.nn.modules.pixelshuffle``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.PixelShuffle(2)(gradsum.ones(1, 4, 3, 3)).shape
    (1, 1, 6, 6)
"""

from __future__ import annotations

import typing

from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor



__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(_Module):
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return _F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(_Module):
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return _F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
