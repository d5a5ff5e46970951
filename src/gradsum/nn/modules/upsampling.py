"""torch's ``torch.nn.modules.upsampling`` path: ``from torch.nn.modules.upsampling import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.upsampling.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.layers import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
