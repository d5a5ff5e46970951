"""``nn.DataParallel`` and ``nn.SyncBatchNorm`` as torch runs them on a CPU-only machine.

Without accelerators torch's ``DataParallel`` keeps ``device_ids = []`` and its forward is
the wrapped module's forward; the wrapped module is the child ``module`` (so the state_dict
keys carry the ``module.`` prefix). ``SyncBatchNorm`` normalises like a batch norm as long as
no process group is initialised; with one initialised it refuses CPU inputs in training, as
torch does.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> dp = nn.DataParallel(nn.Linear(2, 3))
    >>> list(dp.state_dict()), dp.device_ids
    (['module.weight', 'module.bias'], [])
    >>> dp(gradsum.ones(4, 2)).shape
    (4, 3)
"""

from __future__ import annotations

from typing import Any

from gradsum import _device
from gradsum import _dtype as D
from gradsum._tensor import Tensor
from gradsum.autograd.grad_mode import no_grad
from gradsum.nn.layers import _BatchNorm
from gradsum.nn.module import Module

__all__ = ["DataParallel", "SyncBatchNorm"]


class DataParallel(Module):
    """torch's ``nn.DataParallel`` on a machine without accelerators: the wrapped module
    runs as is (``device_ids`` is ``[]``; ``output_device`` and ``dim`` are not kept, as in
    torch's CPU path).

    Args:
        module: the module to wrap (registered as the child ``module``).
        device_ids: ignored without accelerators.
        output_device: ignored without accelerators.
        dim: ignored without accelerators.

    Example:
        >>> from gradsum import nn
        >>> nn.DataParallel(nn.ReLU())
        DataParallel(
          (module): ReLU()
        )
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[int] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


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
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def _check_non_zero_input_channels(self, input: Tensor) -> None:
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training:
            from gradsum import distributed

            if distributed.is_initialized():
                # (torch checks the device before the world size: a CPU tensor always fails)
                raise ValueError(
                    "SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
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
                with no_grad():
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


