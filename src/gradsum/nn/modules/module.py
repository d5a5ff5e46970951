"""torch's ``torch.nn.modules.module`` path: ``from torch.nn.modules.module import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.module.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn.module import (
    Module,
    _IncompatibleKeys,  # noqa: F401
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)

__all__ = [
    "register_module_forward_pre_hook", "register_module_forward_hook",
    "register_module_full_backward_pre_hook", "register_module_full_backward_hook", "Module"
]
