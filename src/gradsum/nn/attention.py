"""``gradsum.nn.attention``: torch's attention-kernel selection (``SDPBackend``,
``sdpa_kernel``).

On the CPU torch has two kernels for ``F.scaled_dot_product_attention``, its math backend and
its flash kernel; gradsum reproduces which one torch picks (the flash kernel's single
backward node where torch uses it) and honours these switches as torch's CPU does: with only
``SDPBackend.MATH`` the math graph is recorded, and with neither math nor a usable flash kernel
enabled the call raises torch's "No viable backend" RuntimeError. The GPU kernels
(``EFFICIENT_ATTENTION``, ``CUDNN_ATTENTION``) are accepted and never used.

Example:
    >>> import gradsum
    >>> from gradsum.nn.attention import SDPBackend, sdpa_kernel
    >>> q = gradsum.ones(1, 1, 2, 4, requires_grad=True)
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     out = gradsum.nn.functional.scaled_dot_product_attention(q, q, q)
    >>> out.grad_fn.name()
    'UnsafeViewBackward0'
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from gradsum.backends.cuda import _sdp
from gradsum.nn import _messages

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The scaled-dot-product-attention kernels, numbered as torch's."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
           SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends: Any, set_priority: bool = False) -> Iterator[dict[str, Any]]:
    """Enable only ``backends`` (one ``SDPBackend`` or a list) inside the block; the previous
    switches are restored afterwards. ``set_priority`` is accepted (gradsum's CPU choice
    between math and flash is torch's, not an order)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(_messages.backend_instance_sdpbackend_or_list(backends))
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    prev = dict(_sdp)
    for backend, name in _SWITCH.items():
        _sdp[name] = backend in chosen
    try:
        yield {}
    finally:
        _sdp.clear()
        _sdp.update(prev)
