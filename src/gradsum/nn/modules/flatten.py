"""``Flatten`` and ``Unflatten`` (torch's ``torch.nn.modules.flatten``).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.Flatten()(gradsum.ones(2, 3, 4)).shape
    (2, 12)
"""

from __future__ import annotations

import typing

from gradsum.nn import _messages
from gradsum.nn.modules.module import Module as _Module

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor



__all__ = ["Flatten", "Unflatten"]


class Flatten(_Module):
    """Flatten dims ``start_dim..end_dim`` (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(_Module):
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
            raise TypeError(_messages.unflattened_size_tuple_ints_found_type(unflattened_size))
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(_messages.unflattened_size_tuple_ints_found_element(elem, idx))
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
