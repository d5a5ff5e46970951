"""Lazy modules (torch's ``nn.LazyLinear``, ``nn.LazyConv*d``, ``nn.LazyConvTranspose*d``,
``nn.LazyBatchNorm*d``, ``nn.LazyInstanceNorm*d``): the input size is inferred at the first
forward, then the module turns into its regular class (``cls_to_become``).

Until then the parameters are :class:`~gradsum.nn.parameter.UninitializedParameter` (and
the running statistics :class:`~gradsum.nn.parameter.UninitializedBuffer`); the first forward
materializes them in place (their identity survives, so an optimizer built before sees them)
and applies the regular class's default initialisation.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> m = nn.LazyLinear(2)
    >>> m
    LazyLinear(in_features=0, out_features=2, bias=True)
    >>> m(gradsum.ones(4, 3)).shape
    (4, 2)
    >>> m
    Linear(in_features=3, out_features=2, bias=True)
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn.layers import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    Linear,
    _BatchNorm,
    _InstanceNorm,
    _NormBase,
)
from gradsum.nn.module import Module
from gradsum.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = [
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear",
    "LazyModuleMixin",
]


class LazyModuleMixin:
    """torch's ``LazyModuleMixin``: a forward pre-hook calls :meth:`initialize_parameters`
    with the first input, checks nothing is left uninitialized, removes itself and turns the
    module into ``cls_to_become``. ``state_dict()`` holds the uninitialized tensors as they
    are; ``load_state_dict`` of an initialized checkpoint materializes them with its shapes.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.LazyLinear(2)
        >>> m.has_uninitialized_params(), list(m.state_dict().values())
        (True, [<UninitializedParameter>, <UninitializedParameter>])
        >>> _ = m.load_state_dict(nn.Linear(5, 2).state_dict())
        >>> m.weight.shape, m.has_uninitialized_params()
        ((2, 5), False)
    """

    cls_to_become: type | None = None
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent_buffers_set: set[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        # (torch: uninitialized tensors go in as they are, the others detached)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _plan_load(self, state_dict: Mapping[str, Any], prefix: str, missing: list[str],
                   unexpected: list[str], errors: list[str],
                   actions: list[tuple[Module, str, Any, Any]]) -> None:
        # torch's _lazy_load_hook: an initialized checkpoint entry materializes the
        # uninitialized tensor with its shape (before any check, as torch's pre-hook); an
        # uninitialized entry loaded into an uninitialized tensor is a no-op copy
        skipped: list[str] = []
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(value.shape)
                else:
                    skipped.append(key)
        if skipped:
            state_dict = {k: v for k, v in state_dict.items() if k not in skipped}
        n = len(missing)
        super()._plan_load(state_dict, prefix, missing, unexpected,  # type: ignore[misc]
                           errors, actions)
        missing[n:] = [k for k in missing[n:] if k not in skipped]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Infer the shapes from the input batch and materialize (overridden per class)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple[Any, ...],
                          kwargs: dict[str, Any] | None = None) -> None:
        kwargs = kwargs or {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully "  # type: ignore
                               "initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )


# -- Linear ---------------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`~gradsum.nn.Linear` whose ``in_features`` is ``input.shape[-1]`` of the first
    forward; then it becomes a ``Linear`` initialised as one.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyLinear(3, bias=False)
        >>> _ = m(gradsum.ones(2, 5))
        >>> type(m).__name__, m.weight.shape
        ('Linear', (3, 5))
    """

    cls_to_become = Linear
    weight: Any
    bias: Any

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """``in_features = input.shape[-1]``; materialize and initialise."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]


# -- convolutions ---------------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    _nd: int
    groups: int
    transposed: bool
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    weight: Any
    bias: Any

    def _lazy_setup(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any,  # type: ignore[override]
                              **kwargs: Any) -> None:
        """``in_channels`` from the input's channel dimension; materialize and initialise."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
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
            raise RuntimeError(
                f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {_size(input.shape)}"
            )
        return int(input.shape[1] if input.ndim == no_batch + 1 else input.shape[0])


def _size(shape: tuple[int, ...]) -> str:
    return f"gradsum.Size({list(shape)})"


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


# -- normalisation --------------------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin, _NormBase):
    weight: Any
    bias: Any
    running_mean: Any
    running_var: Any

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None,
                 dtype: D.dtype | None = None, *, bias: bool = True) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=D.int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """``num_features = input.shape[1]`` (as torch, also for an unbatched instance-norm
        input); materialize and initialise."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A :class:`~gradsum.nn.BatchNorm1d` whose ``num_features`` is ``input.shape[1]`` of the
    first forward.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyBatchNorm1d()
        >>> m  # doctest: +NORMALIZE_WHITESPACE
        LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=True, bias=True,
                        track_running_stats=True)
        >>> _ = m(gradsum.randn(4, 3))
        >>> m.running_mean.shape, int(m.num_batches_tracked)
        ((3,), 1)
    """

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A :class:`~gradsum.nn.BatchNorm2d` whose ``num_features`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyBatchNorm2d(affine=False)
        >>> _ = m(gradsum.randn(2, 3, 2, 2))
        >>> m
        BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)
    """

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A :class:`~gradsum.nn.BatchNorm3d` whose ``num_features`` comes from the first input.

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyBatchNorm3d()
        >>> m(gradsum.randn(2, 3, 2, 2, 2)).shape, m.weight.shape
        ((2, 3, 2, 2, 2), (3,))
    """

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An :class:`~gradsum.nn.InstanceNorm1d` whose ``num_features`` is ``input.shape[1]``
    of the first forward. Note torch's defaults here: ``affine=True``,
    ``track_running_stats=True`` (unlike ``InstanceNorm1d``).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyInstanceNorm1d()
        >>> _ = m(gradsum.randn(2, 3, 5))
        >>> m.weight.shape, m.running_var.shape
        ((3,), (3,))
    """

    cls_to_become = InstanceNorm1d
    _get_no_batch_dim = InstanceNorm1d._get_no_batch_dim
    _check_input_dim = InstanceNorm1d._check_input_dim


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An :class:`~gradsum.nn.InstanceNorm2d` whose ``num_features`` comes from the first
    input (torch's lazy defaults: ``affine=True``, ``track_running_stats=True``).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyInstanceNorm2d(track_running_stats=False)
        >>> m(gradsum.randn(2, 3, 4, 4)).shape, list(m.state_dict())
        ((2, 3, 4, 4), ['weight', 'bias'])
    """

    cls_to_become = InstanceNorm2d
    _get_no_batch_dim = InstanceNorm2d._get_no_batch_dim
    _check_input_dim = InstanceNorm2d._check_input_dim


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An :class:`~gradsum.nn.InstanceNorm3d` whose ``num_features`` comes from the first
    input (torch's lazy defaults: ``affine=True``, ``track_running_stats=True``).

    Example:
        >>> import gradsum
        >>> m = gradsum.nn.LazyInstanceNorm3d()
        >>> m(gradsum.randn(1, 2, 2, 2, 2)).shape
        (1, 2, 2, 2, 2)
    """

    cls_to_become = InstanceNorm3d
    _get_no_batch_dim = InstanceNorm3d._get_no_batch_dim
    _check_input_dim = InstanceNorm3d._check_input_dim
