"""torch.utils.hooks names: :class:`RemovableHandle`, the handle every ``register_*hook``
returns.

Example:
    >>> import gradsum
    >>> from gradsum.utils.hooks import RemovableHandle
    >>> h = gradsum.ones(1, requires_grad=True).register_hook(lambda g: None)
    >>> isinstance(h, RemovableHandle)
    True
"""

from __future__ import annotations

from gradsum.autograd.graph import RemovableHandle

__all__ = ["RemovableHandle"]
