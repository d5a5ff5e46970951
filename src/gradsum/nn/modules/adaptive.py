"""``nn.AdaptiveLogSoftmaxWithLoss`` (Grave et al., 2017), as torch's: a head over the
shortlist and one token per tail cluster, each cluster a two-layer projection; parameter names,
shapes and initialisation are torch's, so a torch ``state_dict`` loads.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 8])
    >>> [(k, tuple(v.shape)) for k, v in asm.state_dict().items()]  # doctest: +NORMALIZE_WHITESPACE
    [('head.weight', (6, 16)), ('tail.0.0.weight', (4, 16)), ('tail.0.1.weight', (4, 4)),
     ('tail.1.0.weight', (1, 16)), ('tail.1.1.weight', (2, 1))]
"""

from __future__ import annotations

import itertools
import typing
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import gradsum.ops as _ops
from gradsum import _device
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.modules.container import ModuleList as _ModuleList
from gradsum.nn.modules.container import Sequential as _Sequential
from gradsum.nn.modules.linear import Linear as _Linear
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(_Module):
    """An efficient softmax approximation for large output spaces: frequent classes (below
    ``cutoffs[0]``) in the head, the rest in clusters whose hidden size shrinks by
    ``div_value`` per cluster.

    ``forward(input, target)`` returns ``_ASMoutput(output, loss)``: the target log
    probabilities and their negated mean; :meth:`log_prob` gives all classes, :meth:`predict`
    the most likely one.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> gradsum.manual_seed(0)
        <gradsum...Generator object at 0x...>
        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8], div_value=2.0)
        >>> out = asm(gradsum.randn(3, 8), gradsum.tensor([0, 5, 9]))
        >>> out.output.shape, out.loss.shape
        ((3,), ())
        >>> asm.log_prob(gradsum.randn(3, 8)).exp().sum(1).allclose(gradsum.ones(3))
        True
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError(_messages.cutoffs_sequence_length_larger_0())
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(_messages.cutoffs_sequence_unique_positive_integers())
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = _Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = _ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(_Sequential(
                _Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                _Linear(hsz, osz, bias=False, device=device, dtype=dtype),
            ))

    def reset_parameters(self) -> None:
        """Re-draw every parameter as ``__init__`` does."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(_messages.input_target_same_size_batch())
            if input_.dim() != 2:
                raise RuntimeError(_messages.adaptive_target_dims_expect_input_dims(1, 2, input_))
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(_messages.adaptive_target_dims_expect_input_dims(0, 1, input_))
        else:
            raise RuntimeError(_messages.adaptive_multi_target())
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        used_rows = 0
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target.new_empty(batch_size)
        cutoff_values = [0] + self.cutoffs
        for i in range(len(cutoff_values) - 1):
            low_idx, high_idx = cutoff_values[i], cutoff_values[i + 1]
            target_mask = (target >= low_idx) & (target < high_idx)
            row_indices = target_mask.nonzero().squeeze()
            if row_indices.numel() == 0:
                continue
            if i == 0:
                gather_inds.index_copy_(0, row_indices, target[target_mask])
            else:
                relative_target = target[target_mask] - low_idx
                cluster_output = self.tail[i - 1](input.index_select(0, row_indices))
                gather_inds.index_fill_(0, row_indices, self.shortlist_size + i - 1)
                cluster_logprob = _F.log_softmax(cluster_output, dim=1)
                local_logprob = cluster_logprob.gather(1, relative_target.unsqueeze(1))
                output.index_copy_(0, row_indices, local_logprob.squeeze(1))
            used_rows += row_indices.numel()
        if used_rows != batch_size:
            raise RuntimeError(_messages.target_values_0_values_range(self, target))
        head_logprob = _F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """The log of the full distribution from ``input`` and the head's output."""
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = _F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start_idx, stop_idx) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = _F.log_softmax(self.tail[i](input), dim=1)
            out[:, start_idx:stop_idx] = (
                cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return out

    def log_prob(self, input: Tensor) -> Tensor:
        """The log probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each example, ``(N,)``; the same as
        ``log_prob(input).argmax(dim=1)``, computing the tail only where the head's best is
        a cluster."""
        head_output = self.head(input)
        output = _ops.argmax(head_output, dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return _ops.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist],
                                           head_output[not_in_shortlist])
        output[not_in_shortlist] = _ops.argmax(log_prob, dim=1)
        return output
