"""The instance norms ``InstanceNorm1d``/``2d``/``3d`` and their lazy forms (torch's
``torch.nn.modules.instancenorm``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.InstanceNorm2d(4)
    InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Mapping
from typing import Any

from gradsum import _device
from gradsum import _dtype as D
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.batchnorm import _LazyNormBase, _local_version, _NormBase

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.nn.modules.module import Module

__all__ = [
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d"
]


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
        return _F.instance_norm(
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
                errors.append(_messages.unexpected_running_stats(keys, klass))
                state_dict = {k: v for k, v in state_dict.items() if k not in keys}
        super()._plan_load(state_dict, prefix, missing, unexpected, errors, actions)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.ndim - self._get_no_batch_dim()
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(_messages.expected_input_size_at_dim(feature_dim, self, input))
            warnings.warn(
                _messages.batch_norm_size_mismatch_warning(feature_dim),
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
            raise ValueError(_messages.expected_lo_or_hi_dims_input(2, 3, input))


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
            raise ValueError(_messages.expected_lo_or_hi_dims_input(3, 4, input))


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
            raise ValueError(_messages.expected_lo_or_hi_dims_input(4, 5, input))


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
