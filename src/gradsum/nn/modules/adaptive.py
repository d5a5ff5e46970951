"""torch's ``torch.nn.modules.adaptive`` path: ``from torch.nn.modules.adaptive import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.adaptive.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._adaptive import (
    AdaptiveLogSoftmaxWithLoss,
    _ASMoutput,  # noqa: F401
)

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
