"""``gradsum.nn.utils``: gradient clipping, parameter/vector conversion, conv/linear + batch
norm fusion, ``skip_init``, the legacy ``weight_norm`` / ``spectral_norm`` hooks and the
submodules ``rnn`` (packed sequences), ``parametrize``, ``parametrizations`` and
``stateless``.

Example:
    >>> import gradsum
    >>> from gradsum.nn.utils import clip_grad_norm_
    >>> p = gradsum.nn.Parameter(gradsum.zeros(2))
    >>> p.grad = gradsum.tensor([3.0, 4.0])
    >>> clip_grad_norm_([p], max_norm=1.0)
    tensor(5.)
    >>> [round(v, 4) for v in p.grad.tolist()]
    [0.6, 0.8]
"""

from __future__ import annotations

from gradsum.nn.utils import parametrizations, parametrize, rnn, stateless
from gradsum.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from gradsum.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from gradsum.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from gradsum.nn.utils.init import skip_init
from gradsum.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from gradsum.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init", "parametrizations", "parametrize", "rnn",
           "stateless", "remove_spectral_norm", "spectral_norm", "remove_weight_norm",
           "weight_norm"]
