"""The Transformer family with torch's names, parameters, masks and semantics:
``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer``,
``TransformerDecoder`` and ``Transformer`` (post-norm or ``norm_first`` pre-norm, relu / gelu /
any callable activation, ``batch_first`` either way, bool or additive float masks).

torch's inference fast path (``torch._transformer_encoder_layer_fwd`` and, in
``TransformerEncoder``, nested tensors) runs in ``eval()`` mode when nothing needs a gradient.
gradsum has no separate kernel, but it gives that path's results, which differ from the slow
path's in three ways (see the "fast-path note" in this module's source): masks count as
boolean (any nonzero entry masks), a query row with nothing to attend gives NaN instead of
zeros, and the nested-tensor encoder returns zeros at padded positions.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> _ = gradsum.manual_seed(0)
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                        dim_feedforward=16, batch_first=True)
    >>> src, tgt = gradsum.randn(2, 5, 8), gradsum.randn(2, 3, 8)
    >>> mask = nn.Transformer.generate_square_subsequent_mask(3)
    >>> model(src, tgt, tgt_mask=mask, tgt_is_causal=True).shape
    (2, 3, 8)
"""

from __future__ import annotations

import copy
import math
import typing
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import gradsum.ops as _ops
from gradsum import _creation, _device
from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor as _Tensor
from gradsum.autograd.grad_mode import is_grad_enabled as _is_grad_enabled
from gradsum.backends import mha as _mha_switch
from gradsum.nn import _messages
from gradsum.nn import functional as _F
from gradsum.nn.init import xavier_uniform_ as _xavier_uniform_
from gradsum.nn.modules.activation import GELU as _GELU
from gradsum.nn.modules.activation import MultiheadAttention as _MultiheadAttention
from gradsum.nn.modules.activation import ReLU as _ReLU
from gradsum.nn.modules.container import ModuleList as _ModuleList
from gradsum.nn.modules.dropout import Dropout as _Dropout
from gradsum.nn.modules.linear import Linear as _Linear
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.modules.normalization import LayerNorm as _LayerNorm
from gradsum.ops._core import _make

if typing.TYPE_CHECKING:
    from gradsum._tensor import Tensor
    from gradsum.nn.modules.container import ModuleList
    from gradsum.nn.modules.module import Module

__all__ = [
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer"
]


Activation = str | Callable[[_Tensor], _Tensor]


# Fast-path note. torch takes its fused inference path for an encoder layer when the layer is
# in eval() mode, batch_first, with biases, relu/gelu, equal norm eps, an even head count, a
# batched (3-D) input, no forward hooks, and no tensor argument (input, weights) requiring grad
# while grad mode is on. That path (measured on torch 2.13):
#   * merges src_mask and src_key_padding_mask into one (B, nhead, L, L) float mask and then
#     treats it as boolean: an entry is masked iff it is nonzero (an additive float mask with
#     finite values is therefore not added but masks);
#   * gives NaN for every feature of a query position whose row is fully masked in any head
#     (the slow path's softmax gives zeros there);
#   * ignores the is_causal hint (only the masks count), and uses exact relu / gelu whatever
#     the activation module's options.
# TransformerEncoder adds a nested-tensor path (same conditions checked on the first layer,
# plus enable_nested_tensor, a src_key_padding_mask, no mask, and a left-aligned padding mask
# when mask_check): positions whose padding-mask entry is nonzero are dropped, the layers run on
# the remaining prefix of each sequence, and the output is zero at the dropped positions (before
# the final norm). With mask_check=False the prefix length is the number of kept entries, wherever
# they are. gradsum reproduces these results with its own ops; they are only taken when no
# gradient is recorded, so they never change a gradient.


def _generate_square_subsequent_mask(sz: int, device: Any = None,
                                     dtype: D.dtype | None = None) -> Tensor:
    """A ``(sz, sz)`` causal mask: ``-inf`` above the diagonal, ``0`` elsewhere (for
    ``dtype=bool``, True above the diagonal)."""
    return _ops.triu(_creation.full((sz, sz), float("-inf"), dtype=dtype), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int | None:
    if src.ndim == 2:  # unbatched: (S, E)
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _get_clones(module: Module, n: int) -> ModuleList:
    """``n`` independent deep copies of ``module`` (torch's ``_get_clones``)."""
    return _ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return _F.relu
    if activation == "gelu":
        return _F.gelu
    raise RuntimeError(_messages.activation_relu_gelu(activation))


def _none_or_dtype(input: Tensor | None) -> D.dtype | None:
    if input is None:
        return None
    if isinstance(input, _Tensor):
        return input.dtype
    raise RuntimeError(_messages.input_none_or_dtype_none())


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: D.dtype | None,
                    other_name: str, target_type: D.dtype,
                    check_other: bool = True) -> Tensor | None:
    """torch's ``F._canonical_mask``: a bool mask (True = masked out) as a ``target_type``
    0 / -inf float mask; a float mask unchanged; any other dtype refused."""
    if mask is None:
        return None
    if mask.dtype != D.bool_ and not mask.dtype.is_floating_point:
        raise _F._ArgAssertionError(_messages.only_bool_floating_types_supported(mask_name))
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(_messages.mismatched_masks_deprecated(mask_name, other_name), stacklevel=3)
    if mask.dtype == D.bool_:
        np_dtype = _creation.empty((0,), dtype=target_type)._array.dtype
        return _make(xp.where(mask._array, -math.inf, 0.0).astype(np_dtype))
    return mask


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    """``is_causal`` when given; otherwise (``None``) whether ``mask`` equals the causal mask
    of ``size`` (``mask.shape[-2]`` when ``size`` is None) in ``mask``'s dtype."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        if tuple(mask.shape) == tuple(causal.shape):
            make_causal = bool(xp.all(mask._array == causal._array))
        else:
            make_causal = False
    return make_causal


def _view_error(shape: tuple[int, ...], size: int) -> RuntimeError:
    return RuntimeError(_messages.transformer_mask_shape_invalid(shape, size))


def _needs_grad(tensors: tuple[Tensor | None, ...]) -> bool:
    return _is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


class TransformerEncoderLayer(_Module):
    """Self-attention then a feed-forward block, each with a residual connection and a
    LayerNorm (after the residual by default, before the block with ``norm_first=True``).

    Submodules, in torch's order: ``self_attn`` (MultiheadAttention), ``linear1``,
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2`` (and
    ``activation`` when it is a Module). ``activation`` is ``"relu"``, ``"gelu"`` or a
    callable. In ``eval()`` mode with nothing requiring grad, results follow torch's fast path
    (see the module docstring).

    Example:
        >>> import gradsum
        >>> _ = gradsum.manual_seed(0)
        >>> layer = gradsum.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> layer(gradsum.randn(5, 3, 8)).shape
        (5, 3, 8)
        >>> [name for name, _ in layer.named_children()]
        ['self_attn', 'linear1', 'dropout', 'linear2', 'norm1', 'norm2', 'dropout1', 'dropout2']
    """

    __constants__: ClassVar[list[str]] = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = _F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.self_attn = _MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = _Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = _Dropout(dropout)
        self.linear2 = _Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = _Dropout(dropout)
        self.dropout2 = _Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # 1: relu, 2: gelu, 0: anything else (torch's flag for its fused kernel)
        if activation is _F.relu or isinstance(activation, _ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is _F.gelu or isinstance(activation, _GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """``src`` ``(S, N, E)`` (``(N, S, E)`` with ``batch_first``) or unbatched ``(S, E)``;
        ``src_mask`` ``(S, S)`` or ``(N * nhead, S, S)``; ``src_key_padding_mask`` ``(N, S)``
        (True / -inf = ignore that key). ``is_causal`` is a hint that ``src_mask`` is causal."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        if self._uses_fast_path(src):
            return self._fast_forward(src, src_mask, src_key_padding_mask)
        return self._block(src, src_mask, src_key_padding_mask, is_causal, self.activation)

    def _fast_path_args(self, src: Tensor) -> tuple[Tensor | None, ...]:
        attn = self.self_attn
        return (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
                attn.out_proj.bias, self.norm1.weight, self.norm1.bias, self.norm2.weight,
                self.norm2.bias, self.linear1.weight, self.linear1.bias, self.linear2.weight,
                self.linear2.bias)

    def _uses_fast_path(self, src: Tensor) -> bool:
        """Whether torch 2.13 would run this call through its fused inference kernel."""
        attn = self.self_attn
        if (not _mha_switch.get_fastpath_enabled()
                or src.ndim != 3 or self.training or not attn.batch_first
                or attn.in_proj_bias is None or not attn._qkv_same_embed_dim
                or not self.activation_relu_or_gelu or self.norm1.eps != self.norm2.eps
                or attn.num_heads % 2 == 1):
            return False
        if any(m._forward_hooks or m._forward_pre_hooks for m in self.modules()):
            return False
        return not _needs_grad(self._fast_path_args(src))

    def _fast_forward(self, src: Tensor, src_mask: Tensor | None,
                      key_padding_mask: Tensor | None) -> Tensor:
        """The fused kernel's result (fast-path note): masks merged and read as boolean,
        exact relu / gelu, NaN rows where a query has nothing to attend."""
        n, length, _ = src.shape
        heads = self.self_attn.num_heads
        merged: Any = None
        if src_mask is None and key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (n, length):
                raise RuntimeError(_messages.mask_type_1_mask_shape(n, length, key_padding_mask))
            merged = key_padding_mask._array.reshape(n, 1, 1, length)
        elif src_mask is not None:
            am = src_mask._array
            if am.ndim == 3:
                if am.size % (n * length * length):
                    raise _view_error((n, -1, length, length), am.size)
                am = am.reshape(n, -1, length, length)
            else:
                if am.size != length * length:
                    raise _view_error((1, 1, length, length), am.size)
                am = xp.broadcast_to(am.reshape(1, 1, length, length),
                                     (n, heads, length, length))
            if key_padding_mask is not None:
                kp = key_padding_mask._array
                if kp.size != n * length:
                    raise _view_error((n, 1, 1, length), kp.size)
                if am.shape[1] not in (1, heads):
                    raise RuntimeError(_messages.attn_mask_heads_mismatch(am, heads))
                am = am + kp.reshape(n, 1, 1, length)
            if am.shape[1] != heads:
                raise RuntimeError(_messages.mask_type_2_mask_shape(n, heads, length))
            merged = am
        mask = None
        dead = None
        if merged is not None:
            masked = xp.broadcast_to(merged != 0, (n, heads, length, length))
            mask = _make(xp.ascontiguousarray(masked).reshape(n * heads, length, length))
            dead = xp.any(xp.all(masked, axis=-1), axis=1)  # (n, length)
        act = _F.relu if self.activation_relu_or_gelu == 1 else _F.gelu
        out = self._block(src, mask, None, False, act)
        if dead is not None and dead.any():
            nan = _creation.full((), float("nan"), dtype=out.dtype)
            out = _ops.where(_make(dead[:, :, None]), nan, out)
        return out

    def _block(self, x: Tensor, src_mask: Tensor | None, key_padding_mask: Tensor | None,
               is_causal: bool, activation: Callable[[Tensor], Tensor]) -> Tensor:
        # see Fig. 1 of https://arxiv.org/pdf/2002.04745v1.pdf
        if self.norm_first:
            x = _ops.add(x, self._sa_block(self.norm1(x), src_mask, key_padding_mask, is_causal))
            return _ops.add(x, self._ff_block(self.norm2(x), activation))
        x = self.norm1(_ops.add(x, self._sa_block(x, src_mask, key_padding_mask, is_causal)))
        return self.norm2(_ops.add(x, self._ff_block(x, activation)))

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor,
                  activation: Callable[[Tensor], Tensor] | None = None) -> Tensor:
        act = self.activation if activation is None else activation
        x = self.linear2(self.dropout(act(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(_Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer`` (``layers``), then an
    optional ``norm``.

    ``enable_nested_tensor`` and ``mask_check`` select torch's nested-tensor inference path
    (``eval()``, nothing requiring grad, a ``src_key_padding_mask``): padded positions are
    then dropped and come back as zeros. A warning says why it cannot be used when the layer
    does not allow it, as torch's does.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> _ = gradsum.manual_seed(0)
        >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
        >>> enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8))
        >>> x = gradsum.randn(3, 5, 8)
        >>> pad = gradsum.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 5])
        >>> enc(x, src_key_padding_mask=pad).shape
        (3, 5, 8)
        >>> len(enc.layers), enc.layers[0] is enc.layers[1]
        (2, False)
    """

    __constants__: ClassVar[list[str]] = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        # the value given at construction, and whether nested tensors are actually used
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(_messages.enable_nested_tensor_true_self(why_not), stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """Each layer in turn with ``mask`` / ``src_key_padding_mask`` (shapes as for
        :class:`TransformerEncoderLayer`), then ``norm``. ``is_causal=None`` detects a causal
        ``mask``."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first_layer = self.layers[0]
        batch_first = first_layer.self_attn.batch_first
        keep = self._nested_keep(src, mask, src_key_padding_mask)
        kpm_for_layers = src_key_padding_mask
        if keep is not None:
            kpm_for_layers = _make(~keep)
        seq_len = _get_seq_len(src, batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=kpm_for_layers)
        if keep is not None:  # torch's to_padded_tensor(0.0): zeros where nothing was kept
            output = _ops.where(_make(keep[:, :, None]), output,
                               _creation.zeros((), dtype=output.dtype))
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_keep(self, src: Tensor, mask: Tensor | None,
                     key_padding_mask: Tensor | None) -> Any:
        """The ``(N, S)`` positions torch's nested-tensor path keeps, or None when torch would
        not take that path (fast-path note)."""
        first_layer = self.layers[0]
        if (not _mha_switch.get_fastpath_enabled()
                or not getattr(self, "use_nested_tensor", False) or first_layer.training
                or src.ndim != 3 or key_padding_mask is None):
            return None
        keep = key_padding_mask._array == 0  # (torch: src_key_padding_mask.logical_not())
        n, s = src.shape[0], src.shape[1]
        if getattr(self, "mask_check", True):
            if keep.shape != (n, s):
                raise RuntimeError(_messages.mask_size_match_input_size(keep, n, s))
            if not bool(xp.all(keep[:, 1:] <= keep[:, :-1])):
                return None  # not left-aligned
        if mask is not None or _needs_grad(first_layer._fast_path_args(src)):
            return None
        if keep.shape != (n, s):
            raise RuntimeError(_messages.mask_size_match_input_size(keep, n, s))
        # each sequence is its first sum(keep) positions
        return xp.arange(s)[None, :] < keep.sum(axis=1)[:, None]


def _why_not_sparsity_fast_path(encoder_layer: Module) -> str:
    """Why torch's TransformerEncoder cannot use nested tensors with this layer ('' if it
    can)."""
    enc_layer = "encoder_layer"
    if not isinstance(encoder_layer, TransformerEncoderLayer):
        return f"{enc_layer} was not TransformerEncoderLayer"
    attn = encoder_layer.self_attn
    if encoder_layer.norm_first:
        return f"{enc_layer}.norm_first was True"
    if not attn.batch_first:
        return (f"{enc_layer}.self_attn.batch_first was not True"
                "(use batch_first for better inference performance)")
    if not attn._qkv_same_embed_dim:
        return f"{enc_layer}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{enc_layer}.self_attn was passed bias=False"
    if not encoder_layer.activation_relu_or_gelu:
        return f"{enc_layer}.activation_relu_or_gelu was not True"
    if encoder_layer.norm1.eps != encoder_layer.norm2.eps:
        return f"{enc_layer}.norm1.eps was not equal to {enc_layer}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{enc_layer}.self_attn.num_heads is odd"
    return ""


class TransformerDecoderLayer(_Module):
    """Self-attention, attention over the encoder's ``memory``, then a feed-forward block,
    each with a residual connection and a LayerNorm (post-norm by default, ``norm_first`` for
    pre-norm).

    Submodules, in torch's order: ``self_attn``, ``multihead_attn``, ``linear1``,
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``norm3``, ``dropout1``, ``dropout2``,
    ``dropout3`` (and ``activation`` when it is a Module).

    Example:
        >>> import gradsum
        >>> _ = gradsum.manual_seed(0)
        >>> layer = gradsum.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16,
        ...                                            batch_first=True, norm_first=True)
        >>> tgt, memory = gradsum.randn(2, 3, 8), gradsum.randn(2, 5, 8)
        >>> layer(tgt, memory).shape
        (2, 3, 8)
    """

    __constants__: ClassVar[list[str]] = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = _F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        self.self_attn = _MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, dtype=dtype)
        self.multihead_attn = _MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 dtype=dtype)
        self.linear1 = _Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = _Dropout(dropout)
        self.linear2 = _Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = _Dropout(dropout)
        self.dropout2 = _Dropout(dropout)
        self.dropout3 = _Dropout(dropout)
        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """``tgt`` ``(T, N, E)`` and ``memory`` ``(S, N, E)`` (batch first with
        ``batch_first``; or unbatched); ``tgt_mask`` ``(T, T)``, ``memory_mask`` ``(T, S)``
        (or per head, ``(N * nhead, ., .)``), padding masks ``(N, T)`` / ``(N, S)``."""
        x = tgt
        if self.norm_first:
            x = _ops.add(x, self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                          tgt_is_causal))
            x = _ops.add(x, self._mha_block(self.norm2(x), memory, memory_mask,
                                           memory_key_padding_mask, memory_is_causal))
            return _ops.add(x, self._ff_block(self.norm3(x)))
        x = self.norm1(_ops.add(x, self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                                 tgt_is_causal)))
        x = self.norm2(_ops.add(x, self._mha_block(x, memory, memory_mask,
                                                  memory_key_padding_mask, memory_is_causal)))
        return self.norm3(_ops.add(x, self._ff_block(x)))

    def _sa_block(self, x: Tensor, attn_mask: Tensor | None,
                  key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Tensor | None,
                   key_padding_mask: Tensor | None, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(_Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer`` (``layers``), then an
    optional ``norm``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> _ = gradsum.manual_seed(0)
        >>> dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), num_layers=2)
        >>> tgt, memory = gradsum.randn(3, 2, 8), gradsum.randn(5, 2, 8)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(3)
        >>> dec(tgt, memory, tgt_mask=mask).shape
        (3, 2, 8)
    """

    __constants__: ClassVar[list[str]] = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """Each layer in turn (arguments as for :class:`TransformerDecoderLayer`), then
        ``norm``. ``tgt_is_causal=None`` detects a causal ``tgt_mask``."""
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(_Module):
    """The encoder-decoder model of "Attention Is All You Need": ``encoder`` (a
    :class:`TransformerEncoder` of ``num_encoder_layers`` layers and a final LayerNorm) and
    ``decoder`` (likewise), or the ``custom_encoder`` / ``custom_decoder`` given. Every
    parameter with more than one dimension is then re-initialised with ``xavier_uniform_``.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> _ = gradsum.manual_seed(0)
        >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
        ...                        num_decoder_layers=1, dim_feedforward=16, batch_first=True)
        >>> next(iter(model.state_dict()))
        'encoder.layers.0.self_attn.in_proj_weight'
        >>> nn.Transformer.generate_square_subsequent_mask(3)
        tensor([[0., -inf, -inf],
                [0., 0., -inf],
                [0., 0., 0.]])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = _F.relu,
                 custom_encoder: Any | None = None, custom_decoder: Any | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: D.dtype | None = None) -> None:
        _device.check_factory(device, "empty")  # (torch's error for a GPU device)
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, dtype=dtype)
            encoder_norm = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(
                d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                batch_first, norm_first, bias, dtype=dtype)
            decoder_norm = _LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """``decoder(tgt, encoder(src))``: ``src`` ``(S, N, E)``, ``tgt`` ``(T, N, E)``
        (batch first with ``batch_first``; or unbatched ``(S, E)`` / ``(T, E)``)."""
        is_batched = src.ndim == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and is_batched:
            raise RuntimeError(_messages.transformer_batch_mismatch(src, tgt))
        if self.batch_first and src.shape[0] != tgt.shape[0] and is_batched:
            raise RuntimeError(_messages.transformer_batch_mismatch_batch_first(src, tgt))
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(_messages.feature_number_src_tgt_equal(src, tgt, self))
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: D.dtype | None = None) -> Tensor:
        """A ``(sz, sz)`` causal mask: ``-inf`` above the diagonal (masked), ``0`` on and
        below it (float32 unless ``dtype``)."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        """``xavier_uniform_`` on every parameter with more than one dimension."""
        for p in self.parameters():
            if p.ndim > 1:
                _xavier_uniform_(p)
