"""torch's ``torch.nn.modules.sparse`` path: ``from torch.nn.modules.sparse import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.sparse.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._bag import EmbeddingBag
from gradsum.nn.layers import Embedding

__all__ = ["Embedding", "EmbeddingBag"]
