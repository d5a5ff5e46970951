"""``gradsum.backends.mha``: the inference fast path of MultiheadAttention and
TransformerEncoder(Layer).

gradsum reproduces the results of torch's fused inference kernels where torch takes them
(see :mod:`gradsum.nn.modules.transformer`); ``set_fastpath_enabled(False)`` turns that path off, as
in torch, so the composed (training) computation is used everywhere.

Example:
    >>> import gradsum
    >>> gradsum.backends.mha.get_fastpath_enabled()
    True
"""

from __future__ import annotations

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_state = {"enabled": True}


def get_fastpath_enabled() -> bool:
    """Whether the fused inference path may be taken (default True)."""
    return _state["enabled"]


def set_fastpath_enabled(value: bool) -> None:
    """Allow (or not) the fused inference path."""
    _state["enabled"] = value
