"""``gradsum.nn.utils``: gradient clipping and parameter/vector conversion.

Example:
    >>> import gradsum
    >>> from gradsum.nn.utils import clip_grad_norm_
    >>> p = gradsum.nn.Parameter(gradsum.zeros(2))
    >>> p.grad = gradsum.tensor([3.0, 4.0])
    >>> clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> [round(v, 4) for v in p.grad.tolist()]
    [0.6, 0.8]
"""

from __future__ import annotations

from gradsum.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from gradsum.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters"]
