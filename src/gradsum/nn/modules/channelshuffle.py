"""``ChannelShuffle`` (torch's ``torch.nn.modules.channelshuffle``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.ChannelShuffle(2)(gradsum.arange(4.0).reshape(1, 4, 1, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
"""

from __future__ import annotations

import typing

from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor



__all__ = ["ChannelShuffle"]


class ChannelShuffle(_Module):
    """Shuffle ``(N, C, *)`` channels in ``groups``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return _F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
