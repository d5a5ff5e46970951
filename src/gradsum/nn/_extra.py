"""More torch.nn modules: ``Buffer``, the padding layers (``ZeroPad*``, ``ConstantPad*``,
``ReflectionPad*``, ``ReplicationPad*``, ``CircularPad*``), the channel-wise and alpha
dropouts, ``RMSNorm``, ``LocalResponseNorm`` and ``Softmax2d`` (torch's arguments, defaults,
reprs and behaviour; the computations are in :mod:`gradsum.nn.functional`).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.ReflectionPad1d(2)(gradsum.arange(3.0).reshape(1, 1, 3)).tolist()
    [[[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0]]]
    >>> nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.nn import functional as F
from gradsum.nn import init
from gradsum.nn.layers import _DropoutNd  # (the base of Dropout and its variants)
from gradsum.nn.module import Module
from gradsum.nn.parameter import Buffer, Parameter  # (Buffer: torch.nn.parameter's)

__all__ = [
    "AlphaDropout", "Buffer", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Dropout1d", "Dropout2d", "Dropout3d",
    "FeatureAlphaDropout", "LocalResponseNorm", "RMSNorm", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "Softmax2d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


# -- padding -------------------------------------------------------------------------------------
def _ntuple(padding: Any, n: int) -> tuple[int, ...]:
    """torch's ``_ntuple``: an iterable is taken as is, a single value repeated ``n`` times."""
    if isinstance(padding, Sequence) or hasattr(padding, "__iter__"):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    padding: tuple[int, ...]
    _mode = "constant"

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _n = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = _ntuple(padding, 2 * self._n)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

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
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.ndim}D input)")
        return F.pad(input, self.padding, "circular")


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


# -- dropout -------------------------------------------------------------------------------------
class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` (or ``(C, L)``) inputs while training.

    Example:
        >>> from gradsum import nn
        >>> nn.Dropout1d(0.2)
        Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` inputs while training."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs while
    training."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout while training (keeps SELU's self-normalisation); identity in eval.
    ``inplace`` is accepted and, like torch's module, not used."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Channel-wise alpha dropout while training; identity in eval."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)


# -- normalisation -------------------------------------------------------------------------------
class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, times a
    ``weight`` initialised to ones (no bias); ``eps=None`` is the dtype's machine epsilon.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.RMSNorm([2])
        >>> [round(v, 4) for v in m(gradsum.tensor([[3.0, 4.0]]))[0].tolist()]
        [0.8485, 1.1314]
        >>> [n for n, _ in m.named_parameters()]
        ['weight']
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalisation across channels (see
    :func:`gradsum.nn.functional.local_response_norm`).

    Example:
        >>> from gradsum import nn
        >>> nn.LocalResponseNorm(2)
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.Softmax2d()(gradsum.zeros(2, 1, 1)).flatten().tolist()
        [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)
