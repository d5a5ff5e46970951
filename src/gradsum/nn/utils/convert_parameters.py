"""``parameters_to_vector`` / ``vector_to_parameters`` (torch's semantics).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> from gradsum.nn.utils import parameters_to_vector, vector_to_parameters
    >>> lin = nn.Linear(2, 1)
    >>> v = parameters_to_vector(lin.parameters())
    >>> v.shape
    (3,)
    >>> vector_to_parameters(gradsum.zeros(3), lin.parameters())
    >>> lin.weight.tolist(), lin.bias.tolist()
    ([[0.0, 0.0]], [0.0])
"""

from __future__ import annotations

from collections.abc import Iterable

from gradsum import ops
from gradsum._tensor import Tensor
from gradsum.nn import _messages


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    return ops.cat([ops.reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Point each parameter's data at consecutive slices of ``vec`` (like torch, the
    parameters then share ``vec``'s buffer)."""
    if not isinstance(vec, Tensor):
        raise TypeError(_messages.expected_gradsum_tensor(vec))
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = ops.reshape(vec[pointer: pointer + n], tuple(param.shape)).data
        pointer += n
