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
from gradsum.nn._attention import MultiheadAttention, NonDynamicallyQuantizableLinear
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
from gradsum.nn.container import ModuleDict, ModuleList, Sequential
from gradsum.nn.layers import (
    AdaptiveAvgPool2d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    Bilinear,
    ChannelShuffle,
    Conv2d,
    CosineSimilarity,
    Dropout,
    Embedding,
    Flatten,
    Fold,
    GroupNorm,
    Identity,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    Linear,
    MaxPool1d,
    MaxPool2d,
    PairwiseDistance,
    PixelShuffle,
    PixelUnshuffle,
    Unflatten,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from gradsum.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from gradsum.nn.module import Module
from gradsum.nn.parameter import Parameter
from gradsum.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = [
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d", "BCELoss",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "BCEWithLogitsLoss", "CELU", "Conv2d",
    "CosineEmbeddingLoss", "CosineSimilarity", "CrossEntropyLoss", "Dropout", "ELU",
    "Embedding", "Flatten", "GELU", "GLU", "GaussianNLLLoss", "GroupNorm", "Hardshrink",
    "Hardsigmoid", "Hardswish", "Hardtanh", "HingeEmbeddingLoss", "HuberLoss", "Identity",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "KLDivLoss", "L1Loss", "LayerNorm",
    "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "MarginRankingLoss",
    "MaxPool1d", "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList",
    "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PReLU",
    "PairwiseDistance", "Parameter", "PoissonNLLLoss", "RReLU", "ReLU", "ReLU6", "SELU",
    "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "SoftMarginLoss", "Softmax", "Softmin",
    "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
    "TripletMarginLoss", "Unflatten", "functional", "init", "parallel", "utils",
]
__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
__all__ += [
    "Bilinear", "ChannelShuffle", "Fold", "MultiheadAttention", "NonDynamicallyQuantizableLinear",
    "PixelShuffle", "PixelUnshuffle", "Unfold", "Upsample", "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
]

# -- nn/_extra exports (ParameterList/Dict, Buffer, padding, dropout variants, RMSNorm, ...) --
from gradsum.nn._extra import (  # noqa: E402
    AlphaDropout,
    Buffer,
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    LocalResponseNorm,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    RMSNorm,
    Softmax2d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from gradsum.nn.container import ParameterDict, ParameterList  # noqa: E402

__all__ += [
    "AlphaDropout", "Buffer", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Dropout1d", "Dropout2d", "Dropout3d",
    "FeatureAlphaDropout", "LocalResponseNorm", "ParameterDict", "ParameterList", "RMSNorm",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "Softmax2d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]
# -- end nn/_extra exports --

# -- Transformer family (nn/_transformer.py) -----------------------------------------------------
from gradsum.nn._transformer import (  # noqa: E402
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
            "TransformerEncoderLayer"]
# -- end Transformer family ----------------------------------------------------------------------

# -- conv/pool layers --
from gradsum.nn.layers import (  # noqa: E402  (an appended block)
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool3d,
    AvgPool3d,
    Conv1d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)

__all__ += [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d",
    "AvgPool3d", "Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d",
]
# -- end conv/pool layers --

# -- lazy modules, EmbeddingBag, DataParallel/SyncBatchNorm, deprecated aliases (helper 9) --
from gradsum.nn import parameter  # noqa: E402
from gradsum.nn._bag import EmbeddingBag  # noqa: E402
from gradsum.nn._compat_losses import (  # noqa: E402
    Container,
    NLLLoss2d,
    TripletMarginWithDistanceLoss,
)
from gradsum.nn._lazy import (  # noqa: E402
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,
)
from gradsum.nn._parallel_compat import DataParallel, SyncBatchNorm  # noqa: E402
from gradsum.nn.parameter import UninitializedBuffer, UninitializedParameter  # noqa: E402

__all__ += [
    "Container", "DataParallel", "EmbeddingBag", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
    "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d", "LazyLinear", "NLLLoss2d", "SyncBatchNorm",
    "TripletMarginWithDistanceLoss", "UninitializedBuffer", "UninitializedParameter",
    "parameter",
]
# -- end helper 9 block --

# -- CTCLoss, AdaptiveLogSoftmaxWithLoss (nn/_ctc.py, nn/_adaptive.py) --
from gradsum.nn._adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from gradsum.nn._ctc import CTCLoss  # noqa: E402

__all__ += ["AdaptiveLogSoftmaxWithLoss", "CTCLoss"]
# -- end CTCLoss, AdaptiveLogSoftmaxWithLoss --

# torch's file layout, torch.nn.modules.<file>.<Class> (re-exports; the classes stay here),
# and torch.nn.attention (SDPBackend, sdpa_kernel: the attention kernel switches)
from gradsum.nn import attention, modules  # noqa: E402, F401
