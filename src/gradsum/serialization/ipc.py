"""Tensors crossing process boundaries (multiprocessing queues and pools, DataLoader workers),
as torch's ``torch.multiprocessing`` reductions: a tensor travels as its plain pickle, but a
non-leaf that requires grad is refused, since autograd does not cross processes.

Example:
    >>> import gradsum
    >>> from multiprocessing.reduction import ForkingPickler
    >>> try:
    ...     ForkingPickler.dumps(gradsum.ones(2, requires_grad=True) * 2)
    ... except RuntimeError as e:
    ...     print(str(e)[:46])
    Cowardly refusing to serialize non-leaf tensor
"""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler
from typing import Any

from gradsum._tensor import Tensor

__all__ = ["register"]


def _reduce_tensor(t: Tensor) -> Any:
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., "
            "putting it on the queue)."
        )
    return t.__reduce_ex__(2)


def register() -> None:
    """Install the reduction for Tensor and Parameter in multiprocessing's pickler."""
    from gradsum.nn.parameter import Parameter

    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, _reduce_tensor)
