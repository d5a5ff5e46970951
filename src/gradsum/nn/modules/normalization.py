"""torch's ``torch.nn.modules.normalization`` path: ``from torch.nn.modules.normalization import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.normalization.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._extra import LocalResponseNorm, RMSNorm
from gradsum.nn.layers import GroupNorm, LayerNorm

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]
