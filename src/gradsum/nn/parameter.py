"""``Parameter``: a leaf tensor that a :class:`~gradsum.nn.Module` registers when assigned.

Example:
    >>> import gradsum
    >>> p = gradsum.nn.Parameter(gradsum.ones(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from gradsum._backend import xp
from gradsum._tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning it as a module attribute registers it.

    Like ``torch.nn.Parameter(data)``, the parameter shares ``data``'s buffer (and version
    counter) but is a new leaf; ``requires_grad`` defaults to True.

    Args:
        data: the initial value (default: an empty float tensor).
        requires_grad: whether the parameter requires gradient.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from gradsum._dtype import get_default_dtype

            arr = xp.empty((0,), dtype=get_default_dtype().np)
            version = [0]
        elif isinstance(data, Tensor):
            arr, version = data._array, data._vc
        else:
            raise TypeError(
                f"Parameter(data): expected a gradsum Tensor or None, got {type(data).__name__}. "
                "Wrap the values with gradsum.tensor(...) first."
            )
        p = cls._make(arr)
        p._vc = version
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ would copy the data)

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        """A new Parameter with a copy of the values and the same ``requires_grad``; like
        torch's, it leaves ``.grad`` and any Python attributes behind (so a deep-copied
        model starts without gradients)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._array.copy()), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
