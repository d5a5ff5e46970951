"""torch's ``torch.nn.modules.distance`` path: ``from torch.nn.modules.distance import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.distance.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.layers import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
