"""torch's ``torch.nn.modules.container`` path: ``from torch.nn.modules.container import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.container.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._compat_losses import Container
from gradsum.nn.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
