"""``PairwiseDistance`` and ``CosineSimilarity`` (torch's ``torch.nn.modules.distance``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.PairwiseDistance()(gradsum.zeros(2, 3), gradsum.ones(2, 3)).shape
    (2,)
"""

from __future__ import annotations

import typing

from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor



__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(_Module):
    """``norm(x1 - x2 + eps, p)`` over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return _F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(_Module):
    """Cosine similarity along ``dim`` (norms clamped to at least ``eps``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return _F.cosine_similarity(x1, x2, self.dim, self.eps)
