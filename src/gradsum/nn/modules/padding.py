"""The padding layers ``ZeroPad*``, ``ConstantPad*``, ``ReflectionPad*``, ``ReplicationPad*``
and ``CircularPad*`` in 1, 2 and 3 dimensions (torch's ``torch.nn.modules.padding``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.ReflectionPad1d(2)(gradsum.arange(3.0).reshape(1, 1, 3)).tolist()
    [[[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0]]]
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any

from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"
]


def _ntuple(padding: Any, n: int) -> tuple[int, ...]:
    """torch's ``_ntuple``: an iterable is taken as is, a single value repeated ``n`` times."""
    if isinstance(padding, Sequence) or hasattr(padding, "__iter__"):
        return tuple(padding)
    return (padding,) * n


class _PadNd(_Module):
    padding: tuple[int, ...]
    _mode = "constant"

    def forward(self, input: Tensor) -> Tensor:
        return _F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _n = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = _ntuple(padding, 2 * self._n)

    def forward(self, input: Tensor) -> Tensor:
        return _F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` is an int or ``(left, right)``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.ConstantPad1d((1, 2), 3.5)(gradsum.zeros(1, 2)).tolist()
        [[3.5, 0.0, 0.0, 3.5, 3.5]]
    """

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: an int or ``(left, right, top, bottom)``."""

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``: an int or
    ``(left, right, top, bottom, front, back)``."""

    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pad the last dim with zeros.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.ZeroPad1d(1)
        ZeroPad1d((1, 1))
    """


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pad the last two dims with zeros."""


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pad the last three dims with zeros."""


class _IndexPadNd(_PadNd):
    _n = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._n)


class ReflectionPad1d(_IndexPadNd):
    """Pad the last dim with its reflection (the edge not repeated)."""

    _n, _mode = 1, "reflect"


class ReflectionPad2d(_IndexPadNd):
    """Pad the last two dims with their reflection."""

    _n, _mode = 2, "reflect"


class ReflectionPad3d(_IndexPadNd):
    """Pad the last three dims with their reflection."""

    _n, _mode = 3, "reflect"


class ReplicationPad1d(_IndexPadNd):
    """Pad the last dim by repeating its edge values.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.ReplicationPad1d((2, 0))(gradsum.tensor([[1.0, 2.0]])).tolist()
        [[1.0, 1.0, 1.0, 2.0]]
    """

    _n, _mode = 1, "replicate"


class ReplicationPad2d(_IndexPadNd):
    """Pad the last two dims by repeating their edge values."""

    _n, _mode = 2, "replicate"


class ReplicationPad3d(_IndexPadNd):
    """Pad the last three dims by repeating their edge values."""

    _n, _mode = 3, "replicate"


class _CircularPadNd(_IndexPadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        lo, hi = self._n + 1, self._n + 2
        if input.ndim not in (lo, hi):
            raise ValueError(_messages.expected_lo_or_hi_dims_input(lo, hi, input))
        return _F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (values from the other end).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.CircularPad1d(1)(gradsum.tensor([[1.0, 2.0, 3.0]])).tolist()
        [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around."""

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around."""

    _n = 3
