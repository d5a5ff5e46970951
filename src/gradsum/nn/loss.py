"""Loss modules: ``MSELoss``, ``L1Loss``, ``NLLLoss``, ``CrossEntropyLoss``, ``BCELoss``,
``BCEWithLogitsLoss``, the regression, ranking, margin and likelihood losses
(``SmoothL1Loss`` ... ``MultiLabelSoftMarginLoss``); class weights are registered buffers, as
in torch.

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

from gradsum._tensor import Tensor
from gradsum.nn import functional as F
from gradsum.nn.module import Module


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = F._legacy_reduction(size_average, reduce)
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
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices given log-probabilities."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
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
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
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
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (``beta = 0``: the L1 loss)."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-scaled linear above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities ``input`` from ``target`` (``'batchmean'``)."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y * x))``."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class _MarginLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y * (x1 - x2) + margin)``."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``x`` for ``y = 1``, ``max(0, margin - x)`` for ``y = -1``."""

    def __init__(self, margin: float = 1.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos`` for ``y = 1``, ``max(0, cos - margin)`` for ``y = -1``."""

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
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
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with predicted variances."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` (``swap``: the harder negative distance)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (``p`` 1 or 2, ``margin``, class ``weight``)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D "
                "instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss over the target classes (listed first, then -1)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class logistic loss averaged over the classes."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)
