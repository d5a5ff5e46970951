"""The batch norms ``BatchNorm1d``/``2d``/``3d``, their lazy forms and ``SyncBatchNorm``
(torch's ``torch.nn.modules.batchnorm``; ``_NormBase`` is also the instance norms' base).

``SyncBatchNorm`` normalises like a batch norm as long as no process group is initialised;
with one initialised it refuses CPU inputs in training, as torch does.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> bn = nn.BatchNorm1d(3)
    >>> bn
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> list(bn.state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum.autograd.grad_mode import no_grad as _no_grad
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.lazy import LazyModuleMixin as _LazyModuleMixin
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.modules.normalization import _affine_parameters, _reset_affine
from gradsum.nn.parameter import UninitializedBuffer as _UninitializedBuffer
from gradsum.nn.parameter import UninitializedParameter as _UninitializedParameter

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.nn.modules.module import Module

__all__ = [
    "BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
    "LazyBatchNorm3d", "SyncBatchNorm"
]


def _local_version(state_dict: Mapping[str, Any], prefix: str) -> int | None:
    """The checkpoint's ``_metadata`` version for the module at ``prefix`` (None if unknown:
    no metadata, as in a plain dict)."""
    metadata = getattr(state_dict, "_metadata", None)
    if not isinstance(metadata, Mapping):
        return None
    local = metadata.get(prefix[:-1], {})
    return local.get("version") if isinstance(local, Mapping) else None


class _NormBase(_Module):
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
            with _no_grad():
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
        out = _F.batch_norm(
            input, self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
            factor, self.eps,
        )
        if tracking:  # (counted once the batch went through: a failed call changes nothing)
            with _no_grad():
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
            raise ValueError(_messages.expected_lo_or_hi_dims_input(2, 3, input))


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
            raise ValueError(_messages.expected_dims_input(4, input))


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
            raise ValueError(_messages.expected_dims_input(5, input))


class _LazyNormBase(_LazyModuleMixin, _NormBase):
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
            self.weight = _UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = _UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = _UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = _UninitializedBuffer(device=device, dtype=dtype)
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


class SyncBatchNorm(_BatchNorm):
    """torch's ``nn.SyncBatchNorm``: batch normalisation over ``(N, C, +)`` inputs whose
    statistics would be synchronised across a process group. Without an initialised
    process group (or in evaluation) it is a batch norm; with one, a training forward raises
    ``ValueError`` as torch's does for CPU tensors.

    Args:
        num_features: ``C``.
        eps, momentum, affine, track_running_stats, bias: as :class:`~gradsum.nn.BatchNorm1d`.
        process_group: the group to synchronise over (kept, used only for the check).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.SyncBatchNorm(3)
        >>> m
        SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        >>> m(gradsum.randn(4, 3, 2)).shape
        (4, 3, 2)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None,
                 dtype: D.dtype | None = None, *, bias: bool = True) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim < 2:
            raise ValueError(_messages.expected_at_least_2d_input(input))

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.shape[1] == 0:
            raise ValueError(_messages.syncbatchnorm_number_input_channels_non())

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training:
            from gradsum import distributed

            if distributed.is_initialized():
                # (torch checks the device before the world size: a CPU tensor always fails)
                raise ValueError(
                    _messages.syncbatchnorm_expected_input_tensor_gpu())
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Replace every batch norm in ``module`` by a ``SyncBatchNorm`` that shares its
        parameters and buffers (a batch norm itself is returned converted; other modules
        are converted in place).

        Example:
            >>> from gradsum import nn
            >>> net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
            >>> bn_weight = net[1].weight
            >>> net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
            >>> type(net[1]).__name__, net[1].weight is bn_weight
            ('SyncBatchNorm', True)
        """
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(
                module.num_features, module.eps, module.momentum, module.affine,
                module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with _no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
