"""torch's ``torch.nn.modules.conv`` path: ``from torch.nn.modules.conv import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.conv.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._lazy import (
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    _LazyConvXdMixin,  # noqa: F401
)
from gradsum.nn.layers import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    _ConvNd,  # noqa: F401
    _ConvTransposeNd,  # noqa: F401
)

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d"
]
