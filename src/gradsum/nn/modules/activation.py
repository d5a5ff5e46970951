"""torch's ``torch.nn.modules.activation`` path: ``from torch.nn.modules.activation import X``
ports unchanged. The classes are defined where gradsum keeps them and re-exported
here: ``gradsum.nn.modules.activation.X is gradsum.nn.X``."""

from __future__ import annotations

from gradsum.nn._attention import MultiheadAttention
from gradsum.nn._extra import Softmax2d
from gradsum.nn.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
    "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
    "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU", "Softsign",
    "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"
]
