"""``Embedding`` and ``EmbeddingBag`` (torch's ``torch.nn.modules.sparse``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> emb = nn.Embedding(10, 3, padding_idx=0)
    >>> emb(gradsum.tensor([0, 4])).shape
    (2, 3)
"""

from __future__ import annotations

import typing
from typing import Any

from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum.autograd.grad_mode import no_grad as _no_grad
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn import init as _init
from gradsum.nn.modules.linear import _empty
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.parameter import Parameter as _Parameter

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(_Module):
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
                raise _F._ArgAssertionError(
                    _messages.embedding_padding_idx_out_of_range(padding_idx, num_embeddings)
                )
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = _Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise _F._ArgAssertionError(  # (torch asserts this)
                    _messages.embedding_weight_shape(_weight, num_embeddings, embedding_dim)
                )
            self.weight = _Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        _init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with _no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        return _F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
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
            raise _F._ArgAssertionError(_messages.embedding_pretrained_not_2d(embeddings))
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_Module):
    """Sums, means or maxima of bags of embeddings (torch's ``nn.EmbeddingBag``): a
    ``weight`` of shape ``(num_embeddings, embedding_dim)`` from N(0, 1), its
    ``padding_idx`` row zeroed.

    Args:
        num_embeddings: the size of the dictionary.
        embedding_dim: the size of each embedding vector.
        max_norm: renormalise the used rows to this norm at each forward.
        norm_type: the p of the p-norm for ``max_norm``.
        scale_grad_by_freq: divide gradients by the indices' frequency in the batch.
        mode: ``"sum"``, ``"mean"`` (default) or ``"max"``.
        sparse: sparse gradients (gradsum has none: only False).
        include_last_offset: whether ``offsets`` ends with the end of the last bag.
        padding_idx: entries excluded from the reduction, with no gradient.

    Example:
        >>> import gradsum
        >>> bag = gradsum.nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag
        EmbeddingBag(10, 3, mode='sum')
        >>> bag(gradsum.tensor([1, 2, 4, 5, 4, 3]), gradsum.tensor([0, 4])).shape
        (2, 3)
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError(_messages.padding_idx_within_num_embeddings())
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError(_messages.padding_idx_within_num_embeddings())
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = _Parameter(_creation.empty((num_embeddings, embedding_dim),
                                                    dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    _messages.embedding_bag_weight_shape())
            self.weight = _Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        _init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with _no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return _F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (frozen unless ``freeze=False``).

        Example:
            >>> import gradsum
            >>> w = gradsum.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
            >>> bag = gradsum.nn.EmbeddingBag.from_pretrained(w)
            >>> bag(gradsum.tensor([[1, 0]])), bag.weight.requires_grad
            (tensor([[2.5000, 3.7000, 4.6500]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError(_messages.embedding_bag_pretrained_not_2d())
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
