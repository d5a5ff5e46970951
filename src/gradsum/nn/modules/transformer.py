"""torch's ``torch.nn.modules.transformer`` path: ``from torch.nn.modules.transformer import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.transformer.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer"
]
