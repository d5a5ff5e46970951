"""torch's ``torch.nn.modules.instancenorm`` path: ``from torch.nn.modules.instancenorm import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.instancenorm.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from gradsum.nn.layers import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _InstanceNorm,  # noqa: F401
)

__all__ = [
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d"
]
