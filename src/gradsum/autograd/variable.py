"""``Variable``: torch's legacy name for a tensor that records history.

``Variable(t, requires_grad=...)`` returns a :class:`gradsum.Tensor` (a detached alias of
``t``: same data and version counter, a leaf), and ``isinstance(x, Variable)`` holds for
every tensor, as in torch.

Example:
    >>> import gradsum
    >>> from gradsum.autograd import Variable
    >>> v = Variable(gradsum.ones(2), requires_grad=True)
    >>> type(v).__name__, v.requires_grad, v.is_leaf, isinstance(v, Variable)
    ('Tensor', True, True, True)
"""

from __future__ import annotations

from typing import Any

from gradsum.autograd import _messages


class VariableMeta(type):
    """Makes ``isinstance(t, Variable)`` true for every tensor."""

    def __instancecheck__(cls, other: Any) -> bool:
        from gradsum._tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """Calling it returns a tensor (see the module docstring); ``volatile`` is accepted and
    ignored, as torch does."""

    def __new__(cls, data: Any = None, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Any:
        from gradsum._creation import empty
        from gradsum._tensor import Tensor

        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(_messages.variable_data_not_tensor(data))
        out = data.detach()
        out.requires_grad_(requires_grad)
        return out
