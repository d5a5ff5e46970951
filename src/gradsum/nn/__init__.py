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

from gradsum.nn import functional, init, parallel, utils
from gradsum.nn.activation import (
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from gradsum.nn.container import ModuleDict, ModuleList, Sequential
from gradsum.nn.layers import (
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    Unflatten,
)
from gradsum.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from gradsum.nn.module import Module
from gradsum.nn.parameter import Parameter

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding",
    "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax",
    "MSELoss", "Module", "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "ReLU", "SiLU",
    "Sequential", "Sigmoid", "Softmax", "Softplus", "Tanh", "Unflatten", "functional", "init",
    "parallel", "utils",
]
