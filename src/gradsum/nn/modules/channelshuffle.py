"""torch's ``torch.nn.modules.channelshuffle`` path: ``from torch.nn.modules.channelshuffle
import X`` ports unchanged. The classes are defined where gradsum keeps them and
re-exported here: ``gradsum.nn.modules.channelshuffle.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.layers import ChannelShuffle

__all__ = ["ChannelShuffle"]
