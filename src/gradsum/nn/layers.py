"""Layers with parameters (``Linear``, ``Embedding``, ``LayerNorm``, ``Conv2d``, the batch,
instance and group norms) and the shape/regularisation modules ``Dropout``, ``Identity``,
``Flatten``, ``Unflatten``, with torch's default initialisation.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.Linear(4, 2)
    Linear(in_features=4, out_features=2, bias=True)
    >>> nn.Conv2d(3, 8, 3, padding=1)
    Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn import functional as F
from gradsum.nn import init
from gradsum.nn.module import Module
from gradsum.nn.parameter import Parameter


def _empty(*shape: int, dtype: D.dtype | None = None) -> Tensor:
    # one tuple argument, so that an empty shape gives a 0-d tensor (LayerNorm(()))
    return _creation.empty(shape, dtype=dtype)



def _reset_weight_and_bias(weight: Parameter, bias: Parameter | None) -> None:
    """torch's default for Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) on the weight and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)

class Identity(Module):
    """Returns its input unchanged (constructor arguments are ignored, like torch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised like torch: ``kaiming_uniform_(weight, a=sqrt(5))`` and ``bias`` from
    U(-1/sqrt(in_features), 1/sqrt(in_features)).

    Example:
        >>> import gradsum
        >>> lin = gradsum.nn.Linear(3, 2)
        >>> lin(gradsum.ones(5, 3)).shape
        (5, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: ``forward(indices)`` returns ``weight[indices]``.

    ``weight`` is initialised from N(0, 1); the ``padding_idx`` row is zeroed and never gets
    a gradient. Tie it to an output projection by assigning the same Parameter
    (``head.weight = emb.weight``): it is then listed once and its gradient sums both uses.

    Example:
        >>> import gradsum
        >>> emb = gradsum.nn.Embedding(10, 4, padding_idx=0)
        >>> emb(gradsum.tensor([[1, 0]])).shape
        (1, 2, 4)
        >>> emb.weight[0].tolist()
        [0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:  # (torch asserts this)
                raise F._ArgAssertionError(
                    f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} "
                    f"for {num_embeddings} embeddings"
                )
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise F._ArgAssertionError(  # (torch asserts this)
                    "Shape of weight does not match num_embeddings and embedding_dim: got "
                    f"{list(_weight.shape)}, expected [{num_embeddings}, {embedding_dim}]"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.ndim != 2:  # (torch asserts this)
            raise F._ArgAssertionError(
                "Embeddings parameter is expected to be 2-dimensional, got shape "
                f"{tuple(embeddings.shape)}"
            )
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def _affine_parameters(m: Module, shape: tuple[int, ...], affine: bool, bias: bool,
                       dtype: Any) -> None:
    """The ``weight`` (and ``bias``) of a normalisation layer, or registered ``None``s."""
    if affine:
        m.weight = Parameter(_empty(*shape, dtype=dtype))
        if bias:
            m.bias = Parameter(_empty(*shape, dtype=dtype))
        else:
            m.register_parameter("bias", None)
    else:
        m.register_parameter("weight", None)
        m.register_parameter("bias", None)


def _reset_affine(m: Module) -> None:
    """torch's initialisation of a normalisation layer's affine parameters: ones, zeros."""
    if m.weight is not None:
        init.ones_(m.weight)
        if m.bias is not None:
            init.zeros_(m.bias)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, then ``* weight + bias``
    (initialised to ones and zeros).

    Example:
        >>> import gradsum
        >>> ln = gradsum.nn.LayerNorm(3)
        >>> ln
        LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> ln(gradsum.tensor([[1.0, 2.0, 3.0]])).sum().abs().item() < 1e-6
        True
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, tuple(self.normalized_shape), elementwise_affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _DropoutNd(Module):
    """What every dropout module shares (torch's ``_DropoutNd``, which scripts check with
    ``isinstance`` to find dropout layers): ``p`` (checked) and ``inplace``."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` while training (scaling the rest by
    ``1 / (1 - p)``); the identity in ``eval()`` mode.

    Example:
        >>> import gradsum
        >>> d = gradsum.nn.Dropout(0.5).eval()
        >>> x = gradsum.ones(3)
        >>> d(x) is x
        True
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


#: torch's valid Conv2d padding modes (the others pad with F.pad first, as torch does)
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (the inverse of :class:`Flatten`).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.Unflatten(1, (2, 3))
        >>> m
        Unflatten(dim=1, unflattened_size=(2, 3))
        >>> m(gradsum.ones(4, 6)).shape
        (4, 2, 3)
    """

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                "unflattened_size must be a tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found element of type "
                    f"{type(elem).__name__} at pos {idx}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _pair(v: Any) -> tuple[int, int]:
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    """torch's ``_single``/``_pair``/``_triple``: a sequence as a tuple, a number repeated."""
    return tuple(int(i) for i in v) if isinstance(v, (tuple, list)) else (int(v),) * n


class _ConvNd(Module):
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
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.dilation = _ntuple(dilation, nd)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _ntuple(padding, nd)
        # (after the padding checks, like torch)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
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
        self.weight = Parameter(_empty(*shape, *self.kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
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
            return conv(F.pad(input, list(self._reversed_padding_repeated_twice),
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
    _conv = staticmethod(F.conv2d)


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
    _conv = staticmethod(F.conv1d)


class Conv3d(_Conv):
    """3-D convolution over ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``) inputs.

    Example:
        >>> import gradsum
        >>> conv = gradsum.nn.Conv3d(1, 2, (1, 3, 3), stride=(1, 2, 2))
        >>> conv(gradsum.ones(1, 1, 2, 5, 5)).shape
        (1, 2, 2, 2, 2)
    """

    _nd = 3
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _conv: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
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
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
                f"{lead + nd} elements (got {len(size)})"
            )
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        hi = [m + s - 1 for m, s in zip(lo, self.stride)]
        for v, a, b in zip(size, lo, hi):
            if v < a or v > b:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from {lo} to "
                    f"{hi} (for an input of {list(input.shape[lead:])})"
                )
        return tuple(v - a for v, a in zip(size, lo))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        if isinstance(self.padding, str):
            raise TypeError(
                f"conv_transpose{self._nd}d(): argument 'padding' must be tuple of ints, not "
                "str"
            )
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
    _conv = staticmethod(F.conv_transpose1d)


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
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution.

    Example:
        >>> import gradsum
        >>> up = gradsum.nn.ConvTranspose3d(2, 2, 3, padding=1, output_padding=1, dilation=2)
        >>> up(gradsum.ones(2, 3, 3, 3)).shape
        (2, 6, 6, 6)
    """

    _nd = 3
    _conv = staticmethod(F.conv_transpose3d)


# -- pooling -----------------------------------------------------------------------------------
class _MaxPoolNd(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (``stride`` defaults to ``kernel_size``).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.MaxPool2d(2)
        >>> m
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> m(gradsum.ones(1, 1, 5, 5)).shape
        (1, 1, 2, 2)
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling (``count_include_pad``, ``ceil_mode``, ``divisor_override``)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


def _single(v: Any) -> tuple[Any, ...]:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed ``output_size`` (``None`` keeps that input size)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed ``output_size`` (``None`` keeps that input size)."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Example:
        >>> import gradsum
        >>> gradsum.nn.MaxPool3d(2, ceil_mode=True)(gradsum.ones(1, 1, 3, 3, 3)).shape
        (1, 1, 2, 2, 2)
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """3-D average pooling (``count_include_pad``, ``ceil_mode``, ``divisor_override``).

    Example:
        >>> import gradsum
        >>> gradsum.nn.AvgPool3d(2, divisor_override=1)(gradsum.ones(1, 1, 2, 2, 2)).tolist()
        [[[[[8.0]]]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    _fn: Any = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of ``(N, C, L)`` or ``(C, L)`` to a fixed length.

    Example:
        >>> import gradsum
        >>> gradsum.nn.AdaptiveAvgPool1d(2)(gradsum.arange(5.0).reshape(1, 5)).tolist()
        [[1.0, 3.0]]
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of ``(N, C, D, H, W)`` to a fixed ``output_size``.

    Example:
        >>> import gradsum
        >>> gradsum.nn.AdaptiveAvgPool3d((1, None, 2))(gradsum.ones(1, 2, 3, 4, 5)).shape
        (1, 2, 1, 4, 2)
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPool(Module):
    _fn: Any = None

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, L)`` or ``(C, L)`` to a fixed length (``return_indices``).

    Example:
        >>> import gradsum
        >>> y, i = gradsum.nn.AdaptiveMaxPool1d(2, return_indices=True)(
        ...     gradsum.tensor([[3.0, 1.0, 4.0, 1.0, 5.0]]))
        >>> y.tolist(), i.tolist()
        ([[4.0, 5.0]], [[2, 4]])
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling of ``(N, C, D, H, W)`` to a fixed ``output_size``.

    Example:
        >>> import gradsum
        >>> gradsum.nn.AdaptiveMaxPool3d(2)(gradsum.ones(1, 3, 3, 3)).shape
        (1, 2, 2, 2)
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    _nd = 2
    _fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d``: values back at their indices, zeros elsewhere.

    Example:
        >>> import gradsum
        >>> x = gradsum.tensor([[[1.0, 2.0, 3.0, 4.0]]])
        >>> y, i = gradsum.nn.MaxPool1d(2, return_indices=True)(x)
        >>> gradsum.nn.MaxUnpool1d(2)(y, i).tolist()
        [[[0.0, 2.0, 0.0, 4.0]]]
    """

    _nd = 1
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d`` (``output_size`` resolves the ambiguous sizes).

    Example:
        >>> import gradsum
        >>> y, i = gradsum.nn.MaxPool2d(2, return_indices=True)(gradsum.ones(1, 1, 5, 5))
        >>> gradsum.nn.MaxUnpool2d(2)(y, i, output_size=[5, 5]).shape
        (1, 1, 5, 5)
    """

    _nd = 2
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d``.

    Example:
        >>> import gradsum
        >>> y, i = gradsum.nn.MaxPool3d(2, return_indices=True)(gradsum.ones(1, 1, 2, 2, 2))
        >>> gradsum.nn.MaxUnpool3d(2)(y, i).sum().item()
        1.0
    """

    _nd = 3
    _fn = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    _fn: Any = None

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum x**p) ** (1/p)`` over ``(N, C, L)`` windows.

    Example:
        >>> import gradsum
        >>> gradsum.nn.LPPool1d(2, 2)(gradsum.tensor([[[3.0, 4.0]]])).tolist()
        [[[5.0]]]
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over ``(N, C, H, W)`` windows.

    Example:
        >>> import gradsum
        >>> gradsum.nn.LPPool2d(1, 2)(gradsum.ones(1, 1, 2, 2)).tolist()
        [[[[4.0]]]]
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over ``(N, C, D, H, W)`` windows.

    Example:
        >>> import gradsum
        >>> gradsum.nn.LPPool3d(2, 2)(gradsum.ones(1, 1, 2, 2, 2)).shape
        (1, 1, 1, 1, 1)
    """

    _fn = staticmethod(F.lp_pool3d)


# -- distances ---------------------------------------------------------------------------------
class PairwiseDistance(Module):
    """``norm(x1 - x2 + eps, p)`` over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity along ``dim`` (norms clamped to at least ``eps``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


# -- batch / instance / group normalisation ----------------------------------------------------
def _local_version(state_dict: Mapping[str, Any], prefix: str) -> int | None:
    """The checkpoint's ``_metadata`` version for the module at ``prefix`` (None if unknown:
    no metadata, as in a plain dict)."""
    metadata = getattr(state_dict, "_metadata", None)
    if not isinstance(metadata, Mapping):
        return None
    local = metadata.get(prefix[:-1], {})
    return local.get("version") if isinstance(local, Mapping) else None


class _NormBase(Module):
    """Common state of the batch and instance norms: ``weight`` / ``bias`` (ones / zeros)
    when ``affine``, and the buffers ``running_mean`` (zeros), ``running_var`` (ones) and
    ``num_batches_tracked`` (int64 0) when ``track_running_stats`` (else registered as None)."""

    _version = 2  # (version 2 added num_batches_tracked: older checkpoints load without it)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: D.dtype | None = None, *, bias: bool = True) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=D.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _plan_load(self, state_dict: Mapping[str, Any], prefix: str, missing: list[str],
                   unexpected: list[str], errors: list[str],
                   actions: list[tuple[Module, str, Any, Any]]) -> None:
        # torch's _NormBase._load_from_state_dict: a checkpoint from before version 2 may lack
        # num_batches_tracked; the module keeps its own (the caller's mapping is not changed)
        version = _local_version(state_dict, prefix)
        key = prefix + "num_batches_tracked"
        if ((version is None or version < 2) and self.track_running_stats
                and key not in state_dict):
            state_dict = dict(state_dict)
            nbt = self.num_batches_tracked
            state_dict[key] = nbt if nbt is not None else _creation.tensor(0, dtype=D.int64)
        super()._plan_load(state_dict, prefix, missing, unexpected, errors, actions)


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        tracking = (self.training and self.track_running_stats
                    and self.num_batches_tracked is not None)
        if tracking and self.momentum is None:  # cumulative moving average
            factor = 1.0 / float(int(self.num_batches_tracked.item()) + 1)
        # batch statistics in training, and in evaluation when there are no running ones
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        out = F.batch_norm(
            input, self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
            factor, self.eps,
        )
        if tracking:  # (counted once the batch went through: a failed call changes nothing)
            with no_grad():
                self.num_batches_tracked.add_(1)
        return out


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs over the batch (and length):
    ``(x - mean) / sqrt(var + eps) * weight + bias`` per channel.

    Training uses the batch statistics (biased variance) and updates ``running_mean`` /
    ``running_var`` with ``momentum`` and the unbiased batch variance (``momentum=None``: a
    cumulative average over ``num_batches_tracked`` batches); evaluation uses the running
    statistics (the batch's when ``track_running_stats=False``).

    Example:
        >>> import gradsum
        >>> bn = gradsum.nn.BatchNorm1d(2)
        >>> bn
        BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        >>> y = bn(gradsum.tensor([[1.0, 2.0], [3.0, 6.0]]))
        >>> [round(v, 4) for v in bn.running_mean.tolist()], bn.num_batches_tracked.item()
        ([0.2, 0.4], 1)
        >>> list(bn.state_dict())
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` inputs per channel (see :class:`BatchNorm1d`).

    Example:
        >>> import gradsum
        >>> bn = gradsum.nn.BatchNorm2d(3)
        >>> bn
        BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        >>> bn(gradsum.randn(4, 3, 5, 5)).shape
        (4, 3, 5, 5)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of ``(N, C, D, H, W)`` inputs per channel (see
    :class:`BatchNorm1d`).

    Example:
        >>> import gradsum
        >>> bn = gradsum.nn.BatchNorm3d(2, momentum=None).eval()
        >>> bn(gradsum.ones(1, 2, 2, 2, 2)).shape
        (1, 2, 2, 2, 2)
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _InstanceNorm(_NormBase):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: D.dtype | None = None, *, bias: bool = True) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps,
        )

    def _plan_load(self, state_dict: Mapping[str, Any], prefix: str, missing: list[str],
                   unexpected: list[str], errors: list[str],
                   actions: list[tuple[Module, str, Any, Any]]) -> None:
        # torch: checkpoints from before 0.4 stored running stats that are no longer tracked
        if _local_version(state_dict, prefix) is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var")
                    if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                errors.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before "
                    "0.4.0, this may be expected because {klass} does not track running stats "
                    "by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True "
                    "in {klass} to enable them. See the documentation of {klass} for "
                    "details.".format(names=" and ".join(f'"{k}"' for k in keys), klass=klass)
                )
                state_dict = {k: v for k, v in state_dict.items() if k not in keys}
        super()._plan_load(state_dict, prefix, missing, unexpected, errors, actions)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._get_no_batch_dim()
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        if input.ndim == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` (or unbatched ``(C, L)``) inputs: each
    channel of each sample normalised over its length. No affine parameters and no running
    statistics by default (``affine=False``, ``track_running_stats=False``).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.InstanceNorm1d(2)
        >>> m  # doctest: +NORMALIZE_WHITESPACE
        InstanceNorm1d(2, eps=1e-05, momentum=0.1, affine=False, bias=False,
                       track_running_stats=False)
        >>> [round(v, 3) for v in m(gradsum.tensor([[1.0, 3.0], [0.0, 4.0]]))[0].tolist()]
        [-1.0, 1.0]
    """

    def _get_no_batch_dim(self) -> int:
        return 2

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` (or unbatched ``(C, H, W)``) inputs (see
    :class:`InstanceNorm1d`).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.InstanceNorm2d(3, affine=True)
        >>> m(gradsum.randn(2, 3, 4, 4)).shape
        (2, 3, 4, 4)
    """

    def _get_no_batch_dim(self) -> int:
        return 3

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.ndim}D input)")


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``) inputs
    (see :class:`InstanceNorm1d`).

    Example:
        >>> import gradsum
        >>> gradsum.nn.InstanceNorm3d(2)(gradsum.randn(1, 2, 2, 2, 2)).shape
        (1, 2, 2, 2, 2)
    """

    def _get_no_batch_dim(self) -> int:
        return 4

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.ndim}D input)")


class GroupNorm(Module):
    """Group normalisation: the ``num_channels`` channels are split into ``num_groups``
    groups, each sample's group normalised over its channels and spatial positions, then a
    per-channel ``weight`` and ``bias`` (ones and zeros) when ``affine``.

    Example:
        >>> import gradsum
        >>> gn = gradsum.nn.GroupNorm(2, 4)
        >>> gn
        GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
        >>> gn(gradsum.randn(3, 4, 5)).shape
        (3, 4, 5)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: D.dtype | None = None, *,
                 bias: bool = True) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


# -- resampling, rearrangement and bilinear layers (the fifth nn sweep) -------------------------
class Upsample(Module):
    """``F.interpolate`` as a module (``size`` or ``scale_factor``, ``mode``,
    ``align_corners``, ``recompute_scale_factor``).

    Example:
        >>> import gradsum
        >>> up = gradsum.nn.Upsample(scale_factor=2, mode="nearest")
        >>> up
        Upsample(scale_factor=2.0, mode='nearest')
        >>> up(gradsum.ones(1, 1, 2, 3)).shape
        (1, 1, 4, 6)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` for ``(N, C, H, W)`` inputs."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Shuffle ``(N, C, *)`` channels in ``groups``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Unfold(Module):
    """``F.unfold`` as a module: sliding blocks as columns ``(N, C*kh*kw, L)``."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """``F.fold`` as a module: sum columns back into ``(N, C, *output_size)``."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Bilinear(Module):
    """``y = x1 @ weight[o] @ x2 + bias[o]``, weight ``(out, in1, in2)``; weight and bias from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)) like torch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
