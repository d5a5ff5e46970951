"""The convolutions ``Conv1d``/``2d``/``3d``, ``ConvTranspose1d``/``2d``/``3d`` and their lazy forms
(torch's ``torch.nn.modules.conv``), with torch's checks, padding modes and initialisation.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.Conv2d(3, 8, 3, padding=1)
    Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
"""

from __future__ import annotations

import typing
from typing import Any

from gradsum import _device
from gradsum import _dtype as D
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.lazy import LazyModuleMixin as _LazyModuleMixin
from gradsum.nn.modules.lazy import _size
from gradsum.nn.modules.linear import _empty, _reset_weight_and_bias
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.parameter import Parameter as _Parameter
from gradsum.nn.parameter import UninitializedParameter as _UninitializedParameter

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d"
]


#: torch's valid Conv2d padding modes (the others pad with F.pad first, as torch does)
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _pair(v: Any) -> tuple[int, int]:
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    """torch's ``_single``/``_pair``/``_triple``: a sequence as a tuple, a number repeated."""
    return tuple(int(i) for i in v) if isinstance(v, (tuple, list)) else (int(v),) * n


class _ConvNd(_Module):
    """What every convolution module shares (torch's ``_ConvNd``): the checks, the
    attributes, the parameters and their initialisation, the repr."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any,
                 padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                 groups: int, bias: bool, padding_mode: str,
                 dtype: D.dtype | None = None) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError(_messages.groups_positive_integer())
        if in_channels % groups != 0:
            raise ValueError(_messages.channels_divisible_by_groups())
        if out_channels % groups != 0:
            raise ValueError(_messages.out_channels_divisible_by_groups())
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.dilation = _ntuple(dilation, nd)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(_messages.invalid_padding_string_one_valid(padding))
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(_messages.conv_same_padding_strided())
            self.padding: Any = padding
        else:
            self.padding = _ntuple(padding, nd)
        # (after the padding checks, like torch)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(_messages.padding_mode_not_one_of(_PADDING_MODES, padding_mode))
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, nd)
        # torch's F.pad-order padding (last dim first, before/after): what a non-'zeros'
        # padding_mode would pad by
        rev: list[int] | tuple[int, ...]
        if isinstance(self.padding, str):
            rev = [0, 0] * len(self.kernel_size)
            if self.padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size,
                                   range(len(self.kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i] = total // 2
                    rev[2 * i + 1] = total - total // 2
        else:
            rev = tuple(p for p in reversed(self.padding) for _ in range(2))
        self._reversed_padding_repeated_twice = rev
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups))
        self.weight = _Parameter(_empty(*shape, *self.kernel_size, dtype=dtype))
        if bias:
            self.bias = _Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        nd = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _conv: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, dtype)

    def forward(self, input: Tensor) -> Tensor:
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            return conv(_F.pad(input, list(self._reversed_padding_repeated_twice),
                              mode=self.padding_mode),
                        self.weight, self.bias, self.stride, (0,) * self._nd, self.dilation,
                        self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)


class Conv2d(_Conv):
    """2-D convolution over ``(N, C, H, W)`` (or unbatched ``(C, H, W)``) inputs, initialised
    like torch (``kaiming_uniform_(a=sqrt(5))``, bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))).

    Example:
        >>> import gradsum
        >>> conv = gradsum.nn.Conv2d(1, 2, kernel_size=3, stride=2, padding=1)
        >>> conv(gradsum.ones(1, 1, 5, 5)).shape
        (1, 2, 3, 3)
    """

    _nd = 2
    _conv = staticmethod(_F.conv2d)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C, L)`` (or unbatched ``(C, L)``) inputs, torch's
    arguments, padding modes and initialisation.

    Example:
        >>> import gradsum
        >>> conv = gradsum.nn.Conv1d(2, 4, 3, padding="same", padding_mode="circular")
        >>> conv
        Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=same, padding_mode=circular)
        >>> conv(gradsum.ones(1, 2, 5)).shape
        (1, 4, 5)
    """

    _nd = 1
    _conv = staticmethod(_F.conv1d)


class Conv3d(_Conv):
    """3-D convolution over ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``) inputs.

    Example:
        >>> import gradsum
        >>> conv = gradsum.nn.Conv3d(1, 2, (1, 3, 3), stride=(1, 2, 2))
        >>> conv(gradsum.ones(1, 1, 2, 5, 5)).shape
        (1, 2, 2, 2, 2)
    """

    _nd = 3
    _conv = staticmethod(_F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _conv: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        if padding_mode != "zeros":
            raise ValueError(_messages.only_zeros_padding_mode_supported(self))
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, dtype)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """torch's: the ``output_padding`` that gives ``output_size`` (if given)."""
        nd = self._nd
        if output_size is None:
            return self.output_padding
        lead = 2 if input.ndim == nd + 2 else 1
        size = [int(v) for v in output_size]
        if len(size) == lead + nd:
            size = size[lead:]
        if len(size) != nd:
            raise ValueError(_messages.convtranspose_d_d_input_output(nd, input, lead, size))
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        hi = [m + s - 1 for m, s in zip(lo, self.stride)]
        for v, a, b in zip(size, lo, hi):
            if v < a or v > b:
                raise ValueError(
                    _messages.requested_output_size_valid_sizes(size, lo, hi, input, lead)
                )
        return tuple(v - a for v, a in zip(size, lo))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        if isinstance(self.padding, str):
            raise TypeError(_messages.conv_transpose_d_argument_padding(self))
        op = self._output_padding(input, output_size)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding, op,
                                self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the adjoint of ``Conv1d`` in its input); ``weight`` is
    ``(in_channels, out_channels / groups, k)``.

    Example:
        >>> import gradsum
        >>> up = gradsum.nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1)
        >>> up(gradsum.ones(1, 4, 5), output_size=[10]).shape
        (1, 2, 10)
    """

    _nd = 1
    _conv = staticmethod(_F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; ``forward(input, output_size=None)`` picks the
    ``output_padding`` that gives ``output_size``.

    Example:
        >>> import gradsum
        >>> up = gradsum.nn.ConvTranspose2d(3, 1, 2, stride=2)
        >>> up
        ConvTranspose2d(3, 1, kernel_size=(2, 2), stride=(2, 2))
        >>> up(gradsum.ones(1, 3, 4, 4)).shape
        (1, 1, 8, 8)
    """

    _nd = 2
    _conv = staticmethod(_F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution.

    Example:
        >>> import gradsum
        >>> up = gradsum.nn.ConvTranspose3d(2, 2, 3, padding=1, output_padding=1, dilation=2)
        >>> up(gradsum.ones(2, 3, 3, 3)).shape
        (2, 6, 6, 6)
    """

    _nd = 3
    _conv = staticmethod(_F.conv_transpose3d)


class _LazyConvXdMixin(_LazyModuleMixin):
    _nd: int
    groups: int
    transposed: bool
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def _lazy_setup(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = _UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = _UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any,  # type: ignore[override]
                              **kwargs: Any) -> None:
        """``in_channels`` from the input's channel dimension; materialize and initialise."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError(_messages.channels_divisible_by_groups())
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        no_batch = self._nd + 1
        if input.ndim not in (no_batch, no_batch + 1):
            raise RuntimeError(_messages.conv_input_dims(no_batch, self, _size(input.shape)))
        return int(input.shape[1] if input.ndim == no_batch + 1 else input.shape[0])


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        # (bias=False: no tensor that would be replaced at once, as torch)
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_setup(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_setup(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A :class:`~gradsum.nn.Conv1d` whose ``in_channels`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyConv1d(4, 3)
        >>> m(gradsum.ones(2, 5, 7)).shape, m
        ((2, 4, 5), Conv1d(5, 4, kernel_size=(3,), stride=(1,)))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A :class:`~gradsum.nn.Conv2d` whose ``in_channels`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyConv2d(4, 3, padding=1)
        >>> m
        LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        >>> m(gradsum.ones(1, 2, 5, 5)).shape
        (1, 4, 5, 5)
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A :class:`~gradsum.nn.Conv3d` whose ``in_channels`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyConv3d(2, 1)
        >>> m(gradsum.ones(3, 2, 2, 2)).shape, m.weight.shape
        ((2, 2, 2, 2), (2, 3, 1, 1, 1))
    """

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A :class:`~gradsum.nn.ConvTranspose1d` whose ``in_channels`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyConvTranspose1d(2, 3)
        >>> m(gradsum.ones(1, 4, 5)).shape, m.weight.shape
        ((1, 2, 7), (4, 2, 3))
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A :class:`~gradsum.nn.ConvTranspose2d` whose ``in_channels`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyConvTranspose2d(2, 2, stride=2)
        >>> m(gradsum.ones(1, 3, 4, 4)).shape
        (1, 2, 8, 8)
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A :class:`~gradsum.nn.ConvTranspose3d` whose ``in_channels`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyConvTranspose3d(1, 2)
        >>> m(gradsum.ones(1, 2, 2, 2, 2)).shape
        (1, 1, 3, 3, 3)
    """

    cls_to_become = ConvTranspose3d
