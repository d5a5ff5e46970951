"""torch's ``torch.nn.modules._functions``: :class:`BackwardHookFunction`, the autograd
function a module's full backward hooks hang on (see ``Module.register_full_backward_hook``).

Example:
    >>> import gradsum
    >>> from gradsum.nn.modules._functions import BackwardHookFunction
    >>> x = gradsum.ones(2, requires_grad=True)
    >>> (y,) = BackwardHookFunction.apply(x)
    >>> y.grad_fn.name()
    'BackwardHookFunctionBackward'
"""

from __future__ import annotations

from typing import Any

from gradsum._tensor import Tensor
from gradsum.autograd.function import Function


class BackwardHookFunction(Function):
    """The identity torch puts around a hooked module's tensor inputs and outputs: its node
    (``BackwardHookFunctionBackward``) is where the module's backward hooks run."""

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple[Tensor, ...]:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *args: Tensor | None) -> tuple[Tensor | None, ...]:
        return args
