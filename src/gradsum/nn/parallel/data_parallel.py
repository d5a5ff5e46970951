"""``nn.DataParallel`` (torch's ``torch.nn.parallel.data_parallel``) as torch runs it on a
CPU-only machine.

Without accelerators torch's ``DataParallel`` keeps ``device_ids = []`` and its forward is
the wrapped module's forward; the wrapped module is the child ``module`` (so the state_dict
keys carry the ``module.`` prefix).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> dp = nn.DataParallel(nn.Linear(2, 3))
    >>> list(dp.state_dict()), dp.device_ids
    (['module.weight', 'module.bias'], [])
    >>> dp(gradsum.ones(4, 2)).shape
    (4, 3)
"""

from __future__ import annotations

from typing import Any

from gradsum.nn.modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """torch's ``nn.DataParallel`` on a machine without accelerators: the wrapped module
    runs as is (``device_ids`` is ``[]``; ``output_device`` and ``dim`` are not kept, as in
    torch's CPU path).

    Args:
        module: the module to wrap (registered as the child ``module``).
        device_ids: ignored without accelerators.
        output_device: ignored without accelerators.
        dim: ignored without accelerators.

    Example:
        >>> from gradsum import nn
        >>> nn.DataParallel(nn.ReLU())
        DataParallel(
          (module): ReLU()
        )
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[int] = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
