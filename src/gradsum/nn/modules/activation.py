"""Activation modules: thin wrappers over :mod:`gradsum.nn.functional` with torch's reprs
(and ``Softmax2d``), and ``MultiheadAttention`` (its kernels are in
:mod:`gradsum.nn._attention`).

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> nn.LeakyReLU(0.2)
    LeakyReLU(negative_slope=0.2)
    >>> nn.Softmax(dim=-1)(gradsum.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
"""

from __future__ import annotations

import math
import typing
import warnings
from typing import Any

import gradsum.ops as _ops
from gradsum import _creation, _device
from gradsum._backend import xp
from gradsum.autograd.grad_mode import is_grad_enabled as _is_grad_enabled
from gradsum.backends import mha as _mha_switch
from gradsum.nn import _attention, _messages
from gradsum.nn import functional as _F
from gradsum.nn import init as _init
from gradsum.nn.modules.linear import (
    NonDynamicallyQuantizableLinear as _NonDynamicallyQuantizableLinear,
)
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.parameter import Parameter as _Parameter
from gradsum.ops._core import _make

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
    "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
    "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU", "Softsign",
    "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"
]


class ReLU(_Module):
    """``max(x, 0)`` (``inplace=True`` overwrites the input)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(_Module):
    """Gaussian error linear unit (``approximate='tanh'`` for the tanh form)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return _F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(_Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.sigmoid(input)


class Tanh(_Module):
    """Hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.tanh(input)


class LeakyReLU(_Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class Softplus(_Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return _F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(_Module):
    """Softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return _F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(_Module):
    """Log-softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return _F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _inplace_str(inplace: bool, lead: str = ", ") -> str:
    return f"{lead}inplace=True" if inplace else ""


class _Inplace(_Module):
    """An activation whose only option is ``inplace``."""

    _fn = staticmethod(_F.selu)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, inplace=self.inplace)


class ELU(_Module):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.ELU(alpha=0.5, inplace=True)
        ELU(alpha=0.5, inplace=True)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""

    _fn = staticmethod(_F.selu)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, "")


class Hardtanh(_Module):
    """``clamp(x, min_val, max_val)`` (zero gradient at and beyond the bounds)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:  # (torch asserts this)
            raise _F._ArgAssertionError(_messages.max_val_greater_min_val(self))

    def forward(self, input: Tensor) -> Tensor:
        return _F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, "")


class Hardsigmoid(_Inplace):
    """``min(max(x + 3, 0), 6) / 6``."""

    _fn = staticmethod(_F.hardsigmoid)


class Hardswish(_Inplace):
    """``x * hardsigmoid(x)``."""

    _fn = staticmethod(_F.hardswish)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    _fn = staticmethod(_F.mish)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace, "")


class LogSigmoid(_Module):
    """``log(sigmoid(x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.logsigmoid(input)


class Softsign(_Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.softsign(input)


class Tanhshrink(_Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.tanhshrink(input)


class _Shrink(_Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    """Shrink towards 0 by ``lambd`` (0 inside ``[-lambd, lambd]``)."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """0 inside ``[-lambd, lambd]``, ``x`` elsewhere."""

    def forward(self, input: Tensor) -> Tensor:
        return _F.hardshrink(input, self.lambd)


class Threshold(_Module):
    """``value`` where ``x <= threshold``, else ``x``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return (f"threshold={self.threshold}, value={self.value}"
                f"{_inplace_str(self.inplace)}")


class Softmin(_Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return _F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GLU(_Module):
    """Gated linear unit over the two halves of ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return _F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(_Module):
    """Leaky ReLU with a learnable slope: ``num_parameters`` slopes (1, or one per channel),
    initialised to ``init``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> m = nn.PReLU(3, init=0.1)
        >>> m
        PReLU(num_parameters=3)
        >>> m.weight.tolist()
        [0.10000000149011612, 0.10000000149011612, 0.10000000149011612]
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = _Parameter(_creation.empty((num_parameters,), dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return _F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(_Module):
    """Randomised leaky ReLU (random slopes in U(lower, upper) while training, their mean in
    ``eval()``)."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Softmax2d(_Module):
    """Softmax over the channels (dim -3) of a ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> nn.Softmax2d()(gradsum.zeros(2, 1, 1)).flatten().tolist()
        [0.5, 0.5]
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(_messages.softmax2d_expected_input_3d_or(input))
        return _F.softmax(input, -3, _stacklevel=5)


class MultiheadAttention(_Module):
    """Multi-head attention with torch's parameters, initialisation, masks and shapes.

    Parameters: ``in_proj_weight`` ``(3E, E)`` (or ``q_proj_weight``, ``k_proj_weight``,
    ``v_proj_weight`` when ``kdim`` / ``vdim`` differ from ``embed_dim``), ``in_proj_bias``,
    ``out_proj`` and, with ``add_bias_kv``, ``bias_k`` / ``bias_v``. ``forward`` returns
    ``(attn_output, attn_weights)``; ``key_padding_mask`` True (bool) marks keys to ignore.

    Example:
        >>> import gradsum
        >>> _ = gradsum.manual_seed(0)
        >>> mha = gradsum.nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = gradsum.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        ((3, 5, 8), (3, 5, 5))
        >>> mha
        MultiheadAttention(
          (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
        )
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(_messages.embed_dim_num_heads_greater(embed_dim, num_heads))
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise _F._ArgAssertionError(_messages.embed_dim_not_divisible_by_num_heads())

        def empty(*shape: int) -> Tensor:
            return _creation.empty(shape, dtype=dtype)

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = _Parameter(empty(embed_dim, embed_dim))
            self.k_proj_weight = _Parameter(empty(embed_dim, self.kdim))
            self.v_proj_weight = _Parameter(empty(embed_dim, self.vdim))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = _Parameter(empty(3 * embed_dim, embed_dim))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = _Parameter(empty(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = _NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = _Parameter(empty(1, 1, embed_dim))
            self.bias_v = _Parameter(empty(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            _init.xavier_uniform_(self.in_proj_weight)
        else:
            _init.xavier_uniform_(self.q_proj_weight)
            _init.xavier_uniform_(self.k_proj_weight)
            _init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            _init.constant_(self.in_proj_bias, 0.0)
            _init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            _init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            _init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """``(attn_output, attn_weights)``: ``attn_output`` shaped like ``query`` (with
        ``embed_dim`` features); ``attn_weights`` ``(N, L, S)`` (averaged over heads) or
        ``(N, num_heads, L, S)``, None when ``need_weights=False``."""
        is_batched = query.ndim == 3
        if self._fast_path(query, key, value, attn_mask, key_padding_mask):
            return self._native_forward(query, attn_mask, key_padding_mask, need_weights,
                                        average_attn_weights)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = _ops.transpose(query, 1, 0)
                else:
                    query, key = (_ops.transpose(x, 1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (_ops.transpose(x, 1, 0) for x in (query, key, value))
        out, w = _attention.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            return _ops.transpose(out, 1, 0), w
        return out, w

    def _fast_path(self, query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None) -> bool:
        """Whether torch takes its fused inference path (``_native_multi_head_attention``),
        whose results differ from the composed one: rows with every key masked give nan,
        and ``is_causal`` is ignored. torch's conditions, in its order."""
        if not _mha_switch.get_fastpath_enabled():  # (torch.backends.mha's switch, first)
            return False
        floating = [m is not None and m.dtype.is_floating_point
                    for m in (attn_mask, key_padding_mask)]
        if any(floating):  # (torch: floating-point masks are not supported for fast path)
            return False
        if query.ndim != 3 or query is not key or key is not value:
            return False
        w, b = self.in_proj_weight, self.in_proj_bias
        if w is None or b is None or query.dtype != w.dtype or query.dtype != b.dtype:
            return False
        if (self.training or self.num_heads % 2 or not self.batch_first
                or self.bias_k is not None or self.bias_v is not None or self.add_zero_attn
                or not self._qkv_same_embed_dim):
            return False
        args = (query, w, b, self.out_proj.weight, self.out_proj.bias)
        return not (_is_grad_enabled() and any(t is not None and t.requires_grad for t in args))

    def _native_forward(self, x: Tensor, attn_mask: Tensor | None,
                        key_padding_mask: Tensor | None, need_weights: bool,
                        average_attn_weights: bool) -> tuple[Tensor, Tensor | None]:
        """torch's ``_native_multi_head_attention`` on ``(N, L, E)`` self-attention (nothing
        recorded: it runs only when no gradient is needed). The masks are merged as torch's
        ``merge_masks`` does; a row whose keys are all masked gives nan (in the output and
        the weights), as torch's masked softmax does."""
        if key_padding_mask is not None and attn_mask is not None \
                and key_padding_mask.dtype != attn_mask.dtype:
            warnings.warn(
                _messages.mismatched_masks_deprecated("key_padding_mask", "attn_mask"), stacklevel=3
            )
        kpm = _attention._canonical_mask(key_padding_mask, "key_padding_mask", x.dtype)
        am = _attention._canonical_mask(attn_mask, "attn_mask", x.dtype)
        xa = x._array
        n, seq, e = xa.shape
        h = self.num_heads
        d = e // h
        qkv = xa @ self.in_proj_weight._array.T + self.in_proj_bias._array
        q, k, v = (t.reshape(n, seq, h, d).transpose(0, 2, 1, 3)
                   for t in xp.split(qkv, 3, axis=-1))
        scores = (q / math.sqrt(d)) @ k.transpose(0, 1, 3, 2)  # (N, H, L, L)
        if am is not None:
            scores = scores + am._array.reshape((n, -1, seq, seq) if am.ndim == 3
                                                else (1, 1, seq, seq))
        if kpm is not None:
            scores = scores + kpm._array.reshape(n, 1, 1, seq)
        with xp.errstate(invalid="ignore"):
            top = scores.max(axis=-1, keepdims=True)
            ex = xp.exp(scores - top)  # (a row of -inf only: -inf - -inf = nan, as torch)
            p = ex / ex.sum(axis=-1, keepdims=True)
        out = (p @ v).transpose(0, 2, 1, 3).reshape(n, seq, e)
        out = out @ self.out_proj.weight._array.T
        if self.out_proj.bias is not None:
            out = out + self.out_proj.bias._array
        out_t = _make(xp.asarray(out, dtype=xa.dtype))
        if not need_weights:
            return out_t, None
        weights = p.mean(axis=1) if average_attn_weights else p
        return out_t, _make(xp.asarray(weights, dtype=xa.dtype))
