"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d`` (torch's
``torch.nn.modules.upsampling``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.Upsample(scale_factor=2)(gradsum.ones(1, 1, 2)).shape
    (1, 1, 4)
"""

from __future__ import annotations

import typing
from typing import Any

from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(_Module):
    """``F.interpolate`` as a module (``size`` or ``scale_factor``, ``mode``,
    ``align_corners``, ``recompute_scale_factor``).

    Example:
        >>> import gradsum
        >>> up = gradsum.nn.Upsample(scale_factor=2, mode="nearest")
        >>> up
        Upsample(scale_factor=2.0, mode='nearest')
        >>> up(gradsum.ones(1, 1, 2, 3)).shape
        (1, 1, 4, 6)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return _F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` for ``(N, C, H, W)`` inputs."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
