"""``Dropout``, the channel-wise ``Dropout1d``/``2d``/``3d``, ``AlphaDropout`` and
``FeatureAlphaDropout`` (torch's ``torch.nn.modules.dropout``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> d = nn.Dropout(0.5).eval()
    >>> d(gradsum.ones(3)).tolist()
    [1.0, 1.0, 1.0]
"""

from __future__ import annotations

import typing

from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor



__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(_Module):
    """What every dropout module shares (torch's ``_DropoutNd``, which scripts check with
    ``isinstance`` to find dropout layers): ``p`` (checked) and ``inplace``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(_messages.dropout_probability(p))
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` while training (scaling the rest by
    ``1 / (1 - p)``); the identity in ``eval()`` mode.

    Example:
        >>> import gradsum
        >>> d = gradsum.nn.Dropout(0.5).eval()
        >>> x = gradsum.ones(3)
        >>> d(x) is x
        True
    """

    def forward(self, input: Tensor) -> Tensor:
        return _F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) inputs while training.

    Example:
        >>> from gradsum import nn
        >>> nn.Dropout1d(0.2)
        Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return _F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` inputs while training."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs while
    training."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout while training (keeps SELU's self-normalisation); identity in eval.
    ``inplace`` is accepted and, like torch's module, not used."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Channel-wise alpha dropout while training; identity in eval."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.feature_alpha_dropout(input, self.p, self.training)
