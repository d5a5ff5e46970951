"""torch's ``torch.nn.modules.lazy`` path: ``from torch.nn.modules.lazy import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.lazy.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
