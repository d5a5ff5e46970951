"""``F.gumbel_softmax``: a sample of the Gumbel-softmax (concrete) distribution, composed as
torch composes it: Gumbel noise ``-log(Exp(1))``, a softmax of ``(logits + noise) / tau``,
and for ``hard=True`` the straight-through one-hot ``y_hard - y_soft.detach() + y_soft``.
"""

from __future__ import annotations

import warnings

from gradsum._tensor import Tensor
from gradsum.nn import _messages


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Sample from the Gumbel-softmax distribution over ``dim``; with ``hard`` the sample is
    one-hot in value and differentiated as the soft sample. ``eps`` is deprecated and has no
    effect (torch warns when it is given). The noise comes from gradsum's generator, so the
    values differ from torch's for the same seed; the rules are torch's.

    Example:
        >>> import gradsum
        >>> import gradsum.nn.functional as F
        >>> y = F.gumbel_softmax(gradsum.zeros(2, 3), hard=True)
        >>> y.sum(-1).tolist()
        [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn(_messages.eps_parameter_deprecated_no_effect(), stacklevel=2)
    from gradsum._creation import empty_like, zeros_like

    gumbels = -empty_like(logits).exponential_().log()  # ~Gumbel(0, 1)
    gumbels = (logits + gumbels) / tau  # ~Gumbel(logits, tau)
    y_soft = gumbels.softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # straight through: y_soft's gradient
