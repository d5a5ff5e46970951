"""torch's ``torch.nn.modules.dropout`` path: ``from torch.nn.modules.dropout import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.dropout.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._extra import (
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    _DropoutNd,  # noqa: F401
)
from gradsum.nn.layers import Dropout

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
