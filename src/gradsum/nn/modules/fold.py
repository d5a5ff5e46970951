"""torch's ``torch.nn.modules.fold`` path: ``from torch.nn.modules.fold import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.fold.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.layers import Fold, Unfold

__all__ = ["Fold", "Unfold"]
