"""``gradsum.amp`` (``torch.amp``): autocast regions and gradient scaling, as torch's CPU build.

Example:
    >>> import gradsum
    >>> scaler = gradsum.amp.GradScaler("cpu")
    >>> with gradsum.amp.autocast("cpu"):
    ...     y = gradsum.nn.functional.linear(gradsum.ones(2, 3), gradsum.ones(4, 3))
    >>> y.dtype, scaler.get_scale()
    (gradsum.bfloat16, 65536.0)
"""

from gradsum.amp import autocast_mode, grad_scaler
from gradsum.amp.autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from gradsum.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "autocast_mode", "custom_bwd", "custom_fwd",
           "grad_scaler", "is_autocast_available"]
