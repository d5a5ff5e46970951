"""torch's ``torch.nn.modules.flatten`` path: ``from torch.nn.modules.flatten import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.flatten.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.layers import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
