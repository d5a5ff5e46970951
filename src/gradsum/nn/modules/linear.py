"""torch's ``torch.nn.modules.linear`` path: ``from torch.nn.modules.linear import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.linear.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._attention import NonDynamicallyQuantizableLinear  # noqa: F401
from gradsum.nn._lazy import LazyLinear
from gradsum.nn.layers import Bilinear, Identity, Linear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
