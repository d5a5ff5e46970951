"""torch's ``torch.nn.modules.batchnorm`` path: ``from torch.nn.modules.batchnorm import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.batchnorm.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._lazy import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    _LazyNormBase,  # noqa: F401
)
from gradsum.nn._parallel_compat import SyncBatchNorm
from gradsum.nn.layers import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,  # noqa: F401
    _NormBase,  # noqa: F401
)

__all__ = [
    "BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
    "LazyBatchNorm3d", "SyncBatchNorm"
]
