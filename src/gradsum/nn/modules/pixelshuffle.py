"""torch's ``torch.nn.modules.pixelshuffle`` path: ``from torch.nn.modules.pixelshuffle import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.pixelshuffle.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.layers import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
