"""Loss modules: ``MSELoss``, ``L1Loss``, ``NLLLoss``, ``CrossEntropyLoss``, ``BCELoss``,
``BCEWithLogitsLoss``, the regression, ranking, margin and likelihood losses
(``SmoothL1Loss`` ... ``MultiLabelSoftMarginLoss``); class weights are registered buffers, as
in torch; ``TripletMarginWithDistanceLoss``, ``CTCLoss`` and torch's deprecated ``NLLLoss2d``.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> loss_fn = nn.CrossEntropyLoss(ignore_index=0)
    >>> x = gradsum.tensor([[0.0, 1.0], [1.0, 0.0]])
    >>> round(loss_fn(x, gradsum.tensor([1, 0])).item(), 4)
    0.3133
    >>> nn.MSELoss(reduction="sum")
    MSELoss()
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable

from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.distance import PairwiseDistance as _PairwiseDistance
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss",
    "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss",
    "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss", "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "CTCLoss"
]


class _Loss(_Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _F._legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices given log-probabilities."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """``log_softmax`` + ``nll_loss``, with class-index or class-probability targets."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (stable), with optional ``pos_weight``."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Tensor | None
        self.pos_weight: Tensor | None

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (``beta = 0``: the L1 loss)."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-scaled linear above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities ``input`` from ``target`` (``'batchmean'``)."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y * x))``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.soft_margin_loss(input, target, reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y * (x1 - x2) + margin)``."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return _F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``x`` for ``y = 1``, ``max(0, margin - x)`` for ``y = -1``."""

    def __init__(self, margin: float = 1.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos`` for ``y = 1``, ``max(0, cos - margin)`` for ``y = -1``."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return _F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (``log_input``, ``full`` Stirling term, ``eps``)."""

    def __init__(self, log_input: bool = True, full: bool = False,
                 size_average: bool | None = None, eps: float = 1e-8,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return _F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with predicted variances."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return _F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` (``swap``: the harder negative distance)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(_messages.tripletmarginloss_expected_margin_greater_0(margin))
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return _F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (``p`` 1 or 2, ``margin``, class ``weight``)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError(_messages.only_p_1_p_2())
        if weight is not None and weight.ndim != 1:
            raise ValueError(_messages.multimarginloss_expected_weight_none_or(weight))
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss over the target classes (listed first, then -1)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over the classes."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return _F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


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
            _messages.nllloss2d_been_deprecated_please_use(), FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


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
                _messages.triplet_distance_module_margin(margin))
        self.distance_function = (distance_function if distance_function is not None
                                  else _PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return _F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss
    (:func:`~gradsum.nn.functional.ctc_loss` as a module).

    Args:
        blank: the index of the blank label.
        reduction: 'none', 'mean' (each loss divided by its target length, then averaged) or
            'sum'.
        zero_infinity: replace infinite losses and their gradients by zero.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> ctc = nn.CTCLoss(reduction="sum")
        >>> lp = gradsum.full((3, 1, 2), 0.5).log()
        >>> round(ctc(lp, gradsum.tensor([[1]]), gradsum.tensor([3]), gradsum.tensor([1])).item(),
        ...       4)
        0.2877
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor,
                target_lengths: Tensor) -> Tensor:
        return _F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)
