"""torch's deprecated aliases ``nn.Container`` and ``nn.NLLLoss2d`` and the
``TripletMarginWithDistanceLoss`` (module and functional form).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> loss = nn.TripletMarginWithDistanceLoss(margin=0.5)
    >>> a = gradsum.zeros(2, 3)
    >>> float(loss(a, a, a + 1.0))
    0.0
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import gradsum.ops as ops
from gradsum._tensor import Tensor
from gradsum.nn import functional as F
from gradsum.nn.layers import PairwiseDistance
from gradsum.nn.loss import NLLLoss, _Loss
from gradsum.nn.module import Module

__all__ = ["Container", "NLLLoss2d", "TripletMarginWithDistanceLoss",
           "triplet_margin_with_distance_loss"]


class Container(Module):
    """Deprecated (torch's ``nn.Container``): a module whose keyword arguments become its
    children; warns ``FutureWarning`` at construction. Subclass :class:`Module` instead.

    Example:
        >>> import warnings
        >>> from gradsum import nn
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     nn.Container(fc=nn.Linear(1, 1))
        Container(
          (fc): Linear(in_features=1, out_features=1, bias=True)
        )
    """

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class NLLLoss2d(NLLLoss):
    """Deprecated (torch's ``nn.NLLLoss2d``): :class:`~gradsum.nn.NLLLoss` under another name;
    warns ``FutureWarning`` at construction.

    Example:
        >>> import warnings
        >>> from gradsum import nn
        >>> with warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     loss = nn.NLLLoss2d(ignore_index=0)
        >>> loss, w[0].category.__name__
        (NLLLoss2d(), 'FutureWarning')
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
            "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
            "more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (default: the pairwise
    Euclidean distance); ``swap`` uses ``min(d(a, n), d(p, n))`` (torch's functional form).

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> a, p, n = gradsum.zeros(1, 2), gradsum.ones(1, 2), gradsum.zeros(1, 2)
        >>> F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y:
        ...     (x - y).abs().sum(-1))
        tensor(3.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
            f"{n_dim}D inputs")
    if distance_function is None:
        distance_function = F.pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = ops.minimum(dist_neg, distance_function(positive, negative))
    loss = ops.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return ops.sum(loss)
    if reduction == "mean":
        return ops.mean(loss)
    return loss


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet margin loss with a custom distance (torch's module): see
    :func:`triplet_margin_with_distance_loss`. The default distance is a
    :class:`~gradsum.nn.PairwiseDistance` child module.

    Example:
        >>> from gradsum import nn
        >>> nn.TripletMarginWithDistanceLoss()
        TripletMarginWithDistanceLoss(
          (distance_function): PairwiseDistance()
        )
    """

    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                 margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead")
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
