"""``gradsum.nn``: modules, layers, losses, initialisers and functional ops with torch.nn's
names and semantics.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> _ = gradsum.manual_seed(0)
    >>> model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    >>> model
    Sequential(
      (0): Linear(in_features=3, out_features=4, bias=True)
      (1): ReLU()
      (2): Linear(in_features=4, out_features=2, bias=True)
    )
    >>> loss = nn.CrossEntropyLoss()(model(gradsum.ones(5, 3)), gradsum.tensor([0, 1, 0, 1, 1]))
    >>> loss.backward()
    >>> sum(p.grad is not None for p in model.parameters())
    4
"""

from __future__ import annotations

# (attention: torch.nn.attention's SDPBackend and sdpa_kernel; modules: torch.nn.modules)
from gradsum.nn import attention, functional, init, modules, parallel, parameter, utils  # noqa: F401
from gradsum.nn.modules import *  # noqa: F403  (torch's torch.nn: every module class)
from gradsum.nn.modules import __all__ as _modules_all
from gradsum.nn.modules.linear import NonDynamicallyQuantizableLinear
from gradsum.nn.parallel.data_parallel import DataParallel
from gradsum.nn.parameter import (
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)

__all__ = [
    *_modules_all, "Buffer", "DataParallel", "NonDynamicallyQuantizableLinear", "Parameter",
    "UninitializedBuffer", "UninitializedParameter", "functional", "init", "parallel",
    "parameter", "utils",
]
