"""Side-by-side tests of the Transformer family (``TransformerEncoderLayer``,
``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder``, ``Transformer``)
against torch: torch's state_dict is loaded into gradsum, the same inputs and masks run through
both, and outputs and the gradients of every parameter (and of the inputs) are compared in
float64 and float32, in train mode (dropout 0) and in eval mode, where torch's fast path (fused
encoder layer, nested tensors) gives results of its own. state_dict keys, reprs, warnings,
initialisation and the errors for bad arguments are compared too."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import same_error, same_repr  # noqa: E402

D, H, FF = 8, 2, 16  # d_model, nhead, dim_feedforward
N, S, T = 2, 5, 4  # batch, source length, target length
RS = np.random.RandomState(2024)
SRC = RS.randn(N, S, D)  # batch-first values; transposed for batch_first=False
TGT = RS.randn(N, T, D)
SEED = 0  # torch's parameters (copied into gradsum's)

pytestmark = pytest.mark.filterwarnings(
    "ignore:enable_nested_tensor is True", "ignore:Support for mismatched",
    "ignore:The PyTorch API of nested tensors",
)


# -- building both modules ------------------------------------------------------------------
def _dtype(lib: Any, name: str) -> Any:
    return getattr(lib, name)


def _activation(lib: Any, act: str) -> Any:
    """``"relu"`` / ``"gelu"`` as strings; the others as the library's own callables."""
    return {"tanh": lib.tanh, "GELU_tanh": lambda: lib.nn.GELU(approximate="tanh"),
            "ReLU": lambda: lib.nn.ReLU(), "F.gelu": lib.nn.functional.gelu}.get(act, act)


def _layer_kw(lib: Any, kw: dict[str, Any], dtype: str) -> dict[str, Any]:
    kw = dict(kw)
    act = kw.pop("activation", "relu")
    a = _activation(lib, act)
    kw["activation"] = a() if act in ("GELU_tanh", "ReLU") else a
    kw.setdefault("dropout", 0.0)
    kw.setdefault("dim_feedforward", FF)
    return {"d_model": D, "nhead": H, **kw, "dtype": _dtype(lib, dtype)}


def _make(lib: Any, kind: str, kw: dict[str, Any], dtype: str) -> Any:
    """One module of ``kind`` built the same way from ``lib``."""
    kw = dict(kw)
    if kind in ("encoder", "decoder"):
        layers = kw.pop("num_layers", 2)
        norm = kw.pop("norm", True)
        extra = {k: kw.pop(k) for k in ("enable_nested_tensor", "mask_check") if k in kw}
        dt = _dtype(lib, dtype)
        ln = lib.nn.LayerNorm(D, dtype=dt) if norm else None
        if kind == "encoder":
            return lib.nn.TransformerEncoder(
                lib.nn.TransformerEncoderLayer(**_layer_kw(lib, kw, dtype)), layers, ln, **extra)
        return lib.nn.TransformerDecoder(
            lib.nn.TransformerDecoderLayer(**_layer_kw(lib, kw, dtype)), layers, ln)
    if kind == "transformer":
        lk = _layer_kw(lib, kw, dtype)
        lk.setdefault("num_encoder_layers", 2)
        lk.setdefault("num_decoder_layers", 1)
        return lib.nn.Transformer(**lk)
    cls = {"enc_layer": "TransformerEncoderLayer", "dec_layer": "TransformerDecoderLayer"}[kind]
    return getattr(lib.nn, cls)(**_layer_kw(lib, kw, dtype))


def _pair(kind: str, kw: dict[str, Any], dtype: str = "float64") -> tuple[Any, Any]:
    """(torch module, gradsum module) with torch's parameters copied into gradsum's."""
    torch.manual_seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = _make(torch, kind, kw, dtype)
        gm = _make(gradsum, kind, kw, dtype)
    t_sd, g_sd = tm.state_dict(), gm.state_dict()
    assert list(g_sd) == list(t_sd)
    assert [tuple(v.shape) for v in g_sd.values()] == [tuple(v.shape) for v in t_sd.values()]
    gm.load_state_dict({k: gradsum.tensor(v.numpy()) for k, v in t_sd.items()})
    return tm, gm


# -- masks --------------------------------------------------------------------------------------
def _causal(n: int) -> np.ndarray:
    return np.triu(np.ones((n, n), dtype=bool), 1)


KPM_S = np.zeros((N, S), dtype=bool)
KPM_S[1, 3:] = True  # left-aligned padding
KPM_S_HOLE = KPM_S.copy()
KPM_S_HOLE[0, 1] = True  # padding not at the end
KPM_S_FULL = KPM_S.copy()
KPM_S_FULL[0] = True  # a batch element with nothing to attend to
KPM_T = np.zeros((N, T), dtype=bool)
KPM_T[0, 2:] = True
MASK3 = RS.rand(N * H, S, S) > 0.7
MASK3[:, np.arange(S), np.arange(S)] = False  # (keeps every row alive)
DEAD_ROW = np.zeros((S, S), dtype=bool)
DEAD_ROW[2] = True
FLOAT_MASK = np.where(RS.rand(S, S) > 0.6, 0.0, -RS.rand(S, S) * 3)  # finite additive values
MEM_MASK = RS.rand(T, S) > 0.7
MEM_MASK[:, 0] = False


def _to(lib: Any, a: np.ndarray, dtype: str) -> Any:
    if a.dtype == bool:
        return lib.tensor(a)
    return lib.tensor(a, dtype=_dtype(lib, dtype))


def _mask(lib: Any, spec: Any, dtype: str) -> Any:
    """A mask from its spec: an array (bool as is, float as ``dtype``), ``("float", a)``
    (a bool array as 0 / -inf), ``"causal_S"`` / ``"causal_T"`` (torch's float mask)."""
    if isinstance(spec, str):
        n = S if spec.endswith("S") else T
        return lib.nn.Transformer.generate_square_subsequent_mask(n, dtype=_dtype(lib, dtype))
    if isinstance(spec, tuple):
        return _to(lib, np.where(spec[1], -np.inf, 0.0), dtype)
    return _to(lib, spec, dtype)


def _call(lib: Any, m: Any, kind: str, call: dict[str, Any], dtype: str, batch_first: bool,
          unbatched: bool = False) -> tuple[Any, list[Any]]:
    """Run ``m`` on SRC (and TGT); returns the output and the input tensors."""
    def inp(a: np.ndarray) -> Any:
        a = a[0] if unbatched else (a if batch_first else a.transpose(1, 0, 2))
        return lib.tensor(np.ascontiguousarray(a), dtype=_dtype(lib, dtype), requires_grad=True)

    kw = {k: (_mask(lib, v, dtype) if not isinstance(v, bool) else v) for k, v in call.items()}
    src, tgt = inp(SRC), inp(TGT)
    if kind in ("enc_layer", "encoder"):
        return m(src, **kw), [src]
    if kind in ("dec_layer", "decoder"):
        return m(tgt, src, **kw), [tgt, src]
    return m(src, tgt, **kw), [src, tgt]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _run_both(kind: str, ctor: dict[str, Any], call: dict[str, Any], dtype: str = "float64",
              train: bool = True, unbatched: bool = False) -> list[tuple[Any, Any]]:
    """Outputs and the gradients of ``sum(out * r)`` (all parameters, then the inputs), as
    (torch, gradsum) array pairs."""
    tm, gm = _pair(kind, ctor, dtype)
    bf = ctor.get("batch_first", False)
    res = []
    for lib, m in ((torch, tm), (gradsum, gm)):
        m.train(train)
        out, inputs = _call(lib, m, kind, call, dtype, bf, unbatched)
        r = np.random.RandomState(7).randn(*out.shape)
        (out * _to(lib, r, dtype)).sum().backward()
        grads = [p.grad for _, p in m.named_parameters()] + [x.grad for x in inputs]
        res.append([out, *grads])
    pairs = []
    for t, g in zip(*res):
        if t is None:  # (a parameter a path does not reach: None in both)
            assert g is None
            continue
        assert g is not None
        pairs.append((_np(t), _np(g)))
    return pairs


def _close(pairs: list[tuple[Any, Any]], dtype: str) -> None:
    for i, (t, g) in enumerate(pairs):
        assert t.shape == g.shape, (i, t.shape, g.shape)
        # float32: rtol 1e-5, plus float32 rounding of sums relative to the array's scale
        scale = float(np.nanmax(np.abs(t), initial=1.0))
        rtol, atol = (1e-9, 1e-11 * scale) if dtype == "float64" else (1e-5, 1e-5 * scale)
        np.testing.assert_allclose(g, t, rtol=rtol, atol=atol, equal_nan=True, err_msg=str(i))


# -- the grid: outputs and every gradient, train mode and eval mode (slow path) --------------
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("enc_layer", {}, {}),
    ("enc_layer", {"batch_first": True}, {"src_mask": _causal(S)}),
    ("enc_layer", {"norm_first": True}, {"src_mask": "causal_S", "is_causal": True}),
    ("enc_layer", {"activation": "gelu", "batch_first": True},
     {"src_key_padding_mask": KPM_S_HOLE}),
    ("enc_layer", {"activation": "tanh", "norm_first": True},
     {"src_mask": MASK3, "src_key_padding_mask": KPM_S}),
    ("enc_layer", {"bias": False, "layer_norm_eps": 1e-3}, {"src_mask": FLOAT_MASK}),
    ("enc_layer", {"activation": "GELU_tanh", "batch_first": True},
     {"src_mask": ("float", _causal(S)), "src_key_padding_mask": ("float", KPM_S)}),
    ("enc_layer", {}, {"src_mask": DEAD_ROW}),
    ("enc_layer", {}, {"src_key_padding_mask": KPM_S_FULL}),
    ("encoder", {"num_layers": 1, "norm": False}, {}),
    ("encoder", {"batch_first": True}, {"mask": _causal(S), "src_key_padding_mask": KPM_S}),
    ("encoder", {"norm_first": True, "activation": "ReLU"}, {"mask": "causal_S"}),
    ("encoder", {"batch_first": True, "bias": False},
     {"src_key_padding_mask": ("float", KPM_S_HOLE), "is_causal": False}),
    ("dec_layer", {}, {}),
    ("dec_layer", {"batch_first": True, "norm_first": True},
     {"tgt_mask": "causal_T", "tgt_is_causal": True, "memory_key_padding_mask": KPM_S}),
    ("dec_layer", {"activation": "gelu"},
     {"tgt_mask": _causal(T), "memory_mask": MEM_MASK, "tgt_key_padding_mask": KPM_T}),
    ("dec_layer", {"bias": False, "activation": "F.gelu"},
     {"memory_mask": ("float", MEM_MASK), "tgt_key_padding_mask": ("float", KPM_T)}),
    ("decoder", {"num_layers": 1}, {"tgt_mask": "causal_T"}),
    ("decoder", {"batch_first": True, "norm_first": True, "norm": False},
     {"tgt_mask": _causal(T), "memory_key_padding_mask": KPM_S_HOLE}),
    ("transformer", {}, {}),
    ("transformer", {"batch_first": True},
     {"src_key_padding_mask": KPM_S, "tgt_mask": "causal_T",
      "memory_key_padding_mask": KPM_S}),
    ("transformer", {"norm_first": True, "activation": "gelu", "num_encoder_layers": 1},
     {"src_mask": "causal_S", "tgt_mask": "causal_T", "tgt_is_causal": True,
      "memory_mask": MEM_MASK}),
    ("transformer", {"bias": False, "layer_norm_eps": 1e-4, "batch_first": True},
     {"tgt_key_padding_mask": KPM_T}),
]


def _id(case: tuple[str, dict[str, Any], dict[str, Any]]) -> str:
    kind, ctor, call = case
    return "-".join([kind, *ctor, *call]) or kind


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_train_outputs_and_gradients(case: tuple[str, dict[str, Any], dict[str, Any]],
                                     dtype: str) -> None:
    kind, ctor, call = case
    _close(_run_both(kind, ctor, call, dtype), dtype)


@pytest.mark.parametrize("case", CASES[::2], ids=[_id(c) for c in CASES[::2]])
def test_eval_with_grad_outputs_and_gradients(
        case: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    # parameters require grad, so torch takes its slow path here too
    kind, ctor, call = case
    _close(_run_both(kind, {**ctor, "dropout": 0.3}, call, train=False), "float64")


UNBATCHED = [
    ("enc_layer", {"batch_first": True}, {"src_mask": _causal(S)}),
    ("encoder", {}, {"src_key_padding_mask": KPM_S[1]}),
    ("dec_layer", {"norm_first": True}, {"memory_key_padding_mask": KPM_S[1]}),
    ("transformer", {"batch_first": True}, {"tgt_mask": "causal_T"}),
]


@pytest.mark.parametrize("case", UNBATCHED, ids=[_id(c) for c in UNBATCHED])
def test_unbatched_inputs(case: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    kind, ctor, call = case
    _close(_run_both(kind, ctor, call, unbatched=True), "float64")
    _close(_run_both(kind, ctor, call, unbatched=True, train=False), "float64")


# -- eval mode without gradients: torch's fast path ---------------------------------------------
def _eval_nograd(kind: str, ctor: dict[str, Any], call: dict[str, Any],
                 dtype: str = "float32", hook: bool = False) -> tuple[np.ndarray, np.ndarray]:
    tm, gm = _pair(kind, {"batch_first": True, **ctor}, dtype)
    outs = []
    for lib, m in ((torch, tm), (gradsum, gm)):
        m.eval()
        if hook:
            m.register_forward_hook(lambda *a: None)
        with lib.no_grad():
            out, _ = _call(lib, m, kind, call, dtype, ctor.get("batch_first", True))
        outs.append(_np(out))
    t, g = outs
    tol = 1e-5 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(g, t, rtol=tol, atol=tol, equal_nan=True)
    return t, g


FAST = [
    ("enc_layer", {}, {}),
    ("enc_layer", {"activation": "gelu", "norm_first": True}, {"src_mask": "causal_S"}),
    ("enc_layer", {}, {"src_key_padding_mask": KPM_S_HOLE}),
    ("enc_layer", {}, {"src_mask": MASK3, "src_key_padding_mask": ("float", KPM_S)}),
    # finite float masks count as boolean, fully masked rows give NaN
    ("enc_layer", {}, {"src_mask": FLOAT_MASK}),
    ("enc_layer", {}, {"src_mask": FLOAT_MASK, "src_key_padding_mask": KPM_S}),
    ("enc_layer", {}, {"src_mask": DEAD_ROW}),
    ("enc_layer", {}, {"src_key_padding_mask": KPM_S_FULL}),
    ("enc_layer", {"activation": "GELU_tanh"}, {}),  # (the fused kernel's gelu is exact)
    ("enc_layer", {}, {"is_causal": True}),  # (the hint alone is ignored)
    # nested tensors: zeros at padded positions, before the final norm
    ("encoder", {}, {"src_key_padding_mask": KPM_S}),
    ("encoder", {"norm": False}, {"src_key_padding_mask": KPM_S_FULL}),
    ("encoder", {"norm": False}, {"src_key_padding_mask": ("float", KPM_S)}),
    ("encoder", {"norm": False}, {"src_key_padding_mask": KPM_S_HOLE}),  # not left-aligned
    ("encoder", {"norm": False, "mask_check": False}, {"src_key_padding_mask": KPM_S_HOLE}),
    ("encoder", {"norm": False}, {"src_key_padding_mask": KPM_S, "mask": "causal_S"}),
    ("encoder", {"norm": False, "enable_nested_tensor": False},
     {"src_key_padding_mask": KPM_S}),
    ("encoder", {"norm": False, "norm_first": True}, {"src_key_padding_mask": KPM_S}),
    ("encoder", {"norm": False, "batch_first": False}, {"src_key_padding_mask": KPM_S_FULL}),
    ("encoder", {"norm": False, "bias": False}, {"src_key_padding_mask": KPM_S_FULL}),
    ("encoder", {"norm": False, "activation": "tanh"}, {"src_key_padding_mask": KPM_S_FULL}),
    ("transformer", {}, {"src_key_padding_mask": KPM_S, "memory_key_padding_mask": KPM_S,
                         "tgt_mask": "causal_T"}),
    ("dec_layer", {}, {"tgt_key_padding_mask": KPM_T, "tgt_mask": _causal(T)}),
    ("decoder", {}, {"tgt_mask": "causal_T", "memory_key_padding_mask": KPM_S_FULL}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", FAST, ids=[_id(c) for c in FAST])
def test_eval_no_grad_matches_torch_fast_path(
        case: tuple[str, dict[str, Any], dict[str, Any]], dtype: str) -> None:
    _eval_nograd(*case, dtype=dtype)


def test_eval_no_grad_decoder_self_attention_fully_masked_row() -> None:
    _eval_nograd("dec_layer", {}, {"tgt_key_padding_mask": np.ones((N, T), dtype=bool)})


def test_fast_path_specifics_are_exercised() -> None:
    t, _ = _eval_nograd("enc_layer", {}, {"src_key_padding_mask": KPM_S_FULL})
    assert np.isnan(t[0]).all() and not np.isnan(t[1]).any()
    t, _ = _eval_nograd("enc_layer", {}, {"src_mask": DEAD_ROW})
    assert np.isnan(t[:, 2]).all() and not np.isnan(t[:, [0, 1, 3, 4]]).any()
    t, _ = _eval_nograd("encoder", {"norm": False}, {"src_key_padding_mask": KPM_S})
    assert (t[1, 3:] == 0).all() and (t[0] != 0).all()
    t, _ = _eval_nograd("encoder", {"norm": False, "mask_check": False},
                        {"src_key_padding_mask": KPM_S_HOLE})
    assert (t[0, 4:] == 0).all() and (t[0, :4] != 0).all()
    # a forward hook sends torch (and gradsum) down the slow path: zeros, no NaN
    t, _ = _eval_nograd("enc_layer", {}, {"src_mask": DEAD_ROW}, hook=True)
    assert not np.isnan(t).any()


def test_eval_frozen_parameters_take_the_fast_path_with_grad_mode_on() -> None:
    tm, gm = _pair("encoder", {"batch_first": True, "norm": False}, "float32")
    outs = []
    for lib, m in ((torch, tm), (gradsum, gm)):
        m.eval().requires_grad_(False)
        out, _ = _call(lib, m, "encoder", {"src_key_padding_mask": KPM_S}, "float32", True)
        outs.append(_np(out))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
    assert not (outs[0][1, 3:] == 0).all()  # (src requires grad: no nested tensors)
    for lib, m in ((torch, tm), (gradsum, gm)):
        x = lib.tensor(SRC, dtype=lib.float32)
        outs.append(_np(m(x, src_key_padding_mask=lib.tensor(KPM_S))))
    np.testing.assert_allclose(outs[3], outs[2], rtol=1e-5, atol=1e-6)
    assert (outs[2][1, 3:] == 0).all()


# -- dropout, modes -----------------------------------------------------------------------------
def test_dropout_in_train_mode_only() -> None:
    _ = gradsum.manual_seed(0)
    m = gradsum.nn.Transformer(D, H, 1, 1, FF, dropout=0.5, batch_first=True)
    src, tgt = gradsum.tensor(SRC, dtype=gradsum.float32), gradsum.tensor(TGT,
                                                                          dtype=gradsum.float32)
    a, b = m(src, tgt), m(src, tgt)
    assert not np.allclose(_np(a), _np(b))
    m.eval()
    np.testing.assert_array_equal(_np(m(src, tgt)), _np(m(src, tgt)))
    drops = [n for n, mod in m.named_modules() if isinstance(mod, gradsum.nn.Dropout)]
    t_drops = [n for n, mod in torch.nn.Transformer(D, H, 1, 1, FF, dropout=0.5,
                                                     batch_first=True).named_modules()
               if isinstance(mod, torch.nn.Dropout)]
    assert drops == t_drops
    assert all(mod.p == 0.5 for mod in m.modules() if isinstance(mod, gradsum.nn.Dropout))
    assert m.encoder.layers[0].self_attn.dropout == 0.5


# -- structure: state_dict, repr, loading both ways, clones, initialisation -------------------
STRUCTURE = [
    ("enc_layer", {"bias": False}), ("enc_layer", {"activation": "ReLU"}),
    ("dec_layer", {}), ("dec_layer", {"activation": "GELU_tanh", "norm_first": True}),
    ("encoder", {"num_layers": 3}), ("encoder", {"norm": False}), ("decoder", {}),
    ("transformer", {}), ("transformer", {"bias": False, "activation": "gelu"}),
]


@pytest.mark.parametrize("kind,ctor", STRUCTURE)
def test_state_dict_repr_and_loading_both_ways(kind: str, ctor: dict[str, Any]) -> None:
    tm, gm = _pair(kind, ctor, "float32")  # (keys and shapes checked there)
    assert [n for n, _ in gm.named_modules()] == [n for n, _ in tm.named_modules()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_repr(lambda lib: _make(lib, kind, ctor, "float32"))
        fresh = _make(torch, kind, ctor, "float32")
    fresh.load_state_dict({k: torch.tensor(v.numpy()) for k, v in gm.state_dict().items()})
    for (k, a), b in zip(tm.state_dict().items(), fresh.state_dict().values()):
        assert torch.equal(a, b), k


def test_clones_are_independent_deep_copies() -> None:
    for lib in (gradsum, torch):
        layer = lib.nn.TransformerEncoderLayer(D, H, FF)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = lib.nn.TransformerEncoder(layer, 2)
        w0, w1 = enc.layers[0].linear1.weight, enc.layers[1].linear1.weight
        assert w0 is not w1 and w0 is not layer.linear1.weight
        assert np.array_equal(_np(w0), _np(w1)) and np.array_equal(_np(w0),
                                                                    _np(layer.linear1.weight))
        assert len(list(enc.parameters())) == 2 * len(list(layer.parameters()))
        assert enc.num_layers == 2 and enc.enable_nested_tensor and enc.mask_check
        dec = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(D, H, FF), 3)
        assert len(dec.layers) == 3 and dec.norm is None and dec.num_layers == 3


def test_default_initialisation() -> None:
    _ = gradsum.manual_seed(0)
    m = gradsum.nn.Transformer(D, H, 2, 2, FF, batch_first=True)
    for name, p in m.named_parameters():
        a = _np(p)
        if p.ndim > 1:  # xavier_uniform_: U(-b, b), b = sqrt(6 / (fan_in + fan_out))
            bound = (6 / (p.shape[0] + p.shape[1])) ** 0.5
            assert np.abs(a).max() <= bound, name
            assert np.abs(a).max() > 0.8 * bound, name  # (not kaiming's narrower bound)
        elif "norm" in name:
            assert (a == (1.0 if name.endswith("weight") else 0.0)).all(), name
        elif "attn" in name:  # in_proj_bias, out_proj.bias: zeros
            assert (a == 0).all(), name
        else:  # Linear biases: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            fan_in = D if "linear1" in name else FF
            assert np.abs(a).max() <= fan_in ** -0.5 and np.abs(a).max() > 0, name
    l0, l1 = m.encoder.layers[0].linear1.weight, m.encoder.layers[1].linear1.weight
    assert not np.array_equal(_np(l0), _np(l1))  # (re-initialised after cloning)
    assert m.d_model == D and m.nhead == H and m.batch_first
    layer = gradsum.nn.TransformerEncoderLayer(D, H, FF)  # (the layer alone: Linear's init)
    assert np.abs(_np(layer.linear1.weight)).max() <= D ** -0.5
    assert layer.activation is gradsum.nn.functional.relu and layer.activation_relu_or_gelu == 1
    assert gradsum.nn.TransformerEncoderLayer(D, H, FF, activation="gelu").activation_relu_or_gelu
    assert gradsum.nn.TransformerEncoderLayer(D, H, FF, activation=gradsum.tanh
                                              ).activation_relu_or_gelu == 0


def test_custom_encoder_and_decoder() -> None:
    tm = gm = None
    for lib in (torch, gradsum):
        enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF, 0.0), 1,
                                        enable_nested_tensor=False)
        dec = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(D, H, FF, 0.0), 1)
        m = lib.nn.Transformer(D, H, custom_encoder=enc, custom_decoder=dec, dropout=0.0)
        if lib is torch:
            tm = m
        else:
            gm = m
        assert m.encoder is enc and m.decoder is dec
        assert enc.norm is None and dec.norm is None
    assert list(gm.state_dict()) == list(tm.state_dict())
    gm.load_state_dict({k: gradsum.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    src, tgt = SRC.transpose(1, 0, 2), TGT.transpose(1, 0, 2)
    out_t = tm(torch.tensor(src, dtype=torch.float32), torch.tensor(tgt, dtype=torch.float32))
    out_g = gm(gradsum.tensor(src, dtype=gradsum.float32),
               gradsum.tensor(tgt, dtype=gradsum.float32))
    np.testing.assert_allclose(_np(out_g), _np(out_t), rtol=1e-5, atol=1e-6)


def test_generate_square_subsequent_mask() -> None:
    for kw in ({}, {"dtype": "float64"}, {"dtype": "bool"}, {"dtype": "float16"}):
        def make(lib: Any, kw: dict[str, Any] = kw) -> Any:
            k = {n: _dtype(lib, v) for n, v in kw.items()}
            return lib.nn.Transformer.generate_square_subsequent_mask(4, **k)

        t, g = make(torch), make(gradsum)
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert g.tolist() == t.tolist()
    same_error(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(
        3, dtype=lib.int64))


def test_nested_tensor_warnings() -> None:
    layers: list[Callable[[Any], Any]] = [
        lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF),
        lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True, norm_first=True),
        lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True, bias=False),
        lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True,
                                                   activation=lib.tanh),
        lambda lib: lib.nn.TransformerEncoderLayer(D, 1, FF, batch_first=True),
        lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True),
        lambda lib: lib.nn.Linear(D, D),
    ]
    for make in layers:
        msgs = []
        for lib in (torch, gradsum):
            layer = make(lib)
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                enc = lib.nn.TransformerEncoder(layer, 1)
                lib.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
            msgs.append(([str(w.message) for w in rec], enc.use_nested_tensor))
        assert msgs[0] == msgs[1]


def test_mismatched_mask_types_warn_like_torch() -> None:
    msgs = []
    for lib in (torch, gradsum):
        m = lib.nn.TransformerEncoderLayer(D, H, FF, 0.0)
        x = lib.tensor(SRC.transpose(1, 0, 2), dtype=lib.float32)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m(x, src_mask=lib.tensor(_causal(S)),
              src_key_padding_mask=lib.tensor(np.where(KPM_S, -np.inf, 0.0), dtype=lib.float32))
        msgs.append(sorted({str(w.message) for w in rec}))
    assert msgs[0] == msgs[1] and msgs[0]


# -- errors -------------------------------------------------------------------------------------
def _x(lib: Any, n: int = N, s: int = S, d: int = D) -> Any:
    return lib.ones(s, n, d)


ERRORS: list[Callable[[Any], Any]] = [
    lambda lib: lib.nn.TransformerEncoderLayer(D, 3),
    lambda lib: lib.nn.TransformerDecoderLayer(D, 3),
    lambda lib: lib.nn.Transformer(D, 3),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, activation="swish"),
    lambda lib: lib.nn.TransformerDecoderLayer(D, H, activation="tanh"),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF)(_x(lib), _x(lib, n=3, s=T)),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF, batch_first=True)(
        lib.ones(2, S, D), lib.ones(3, T, D)),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF)(_x(lib, d=6), _x(lib, s=T)),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF)(_x(lib), _x(lib, s=T, d=6)),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF)(lib.ones(S, D), lib.ones(T, 6)),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(_x(lib), src_mask=lib.zeros(3, 3)),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(_x(lib),
                                                         src_mask=lib.zeros(N, S, S)),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(
        _x(lib), src_key_padding_mask=lib.zeros(N, S + 1, dtype=lib.bool)),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(
        _x(lib), src_mask=lib.zeros(S, S, dtype=lib.int64)),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(
        _x(lib), src_key_padding_mask=lib.zeros(N, S, dtype=lib.int64)),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(_x(lib), is_causal=True),
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, FF)(_x(lib, d=6)),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF), 1)(
        _x(lib), is_causal=True),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF), 1)(
        _x(lib), mask=lib.zeros(S, S, dtype=lib.int32)),
    lambda lib: lib.nn.TransformerDecoderLayer(D, H, FF)(_x(lib, s=T), _x(lib),
                                                         memory_mask=lib.zeros(T, T)),
    lambda lib: lib.nn.TransformerDecoderLayer(D, H, FF)(_x(lib, s=T), _x(lib, n=3)),
    lambda lib: lib.nn.TransformerDecoderLayer(D, H, FF)(_x(lib, s=T), _x(lib),
                                                         memory_is_causal=True),
    lambda lib: lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(D, H, FF), 1)(
        _x(lib, s=T), _x(lib), tgt_key_padding_mask=lib.zeros(N, S, dtype=lib.bool)),
    lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF), 0)(
        _x(lib)),
]


def _fast(lib: Any, **kw: Any) -> Any:
    m = lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True).eval()
    with lib.no_grad():
        return m(lib.ones(N, S, D), **kw)


def _nested(lib: Any, kpm: Any, **kw: Any) -> Any:
    m = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, H, FF, batch_first=True),
                                  1, **kw).eval()
    return m(lib.ones(N, S, D), src_key_padding_mask=kpm)


ERRORS += [  # torch's fast path and nested-tensor path check shapes their own way
    lambda lib: _fast(lib, src_mask=lib.zeros(S - 1, S - 1)),
    lambda lib: _fast(lib, src_mask=lib.zeros(N, S, S)),
    lambda lib: _fast(lib, src_mask=lib.zeros(N * H, S, S - 1)),
    lambda lib: _fast(lib, src_key_padding_mask=lib.zeros(N, S - 1, dtype=lib.bool)),
    lambda lib: _fast(lib, src_mask=lib.zeros(S, S),
                      src_key_padding_mask=lib.zeros(N, S - 1)),
    lambda lib: _nested(lib, lib.zeros(N, S - 1, dtype=lib.bool)),
    lambda lib: _nested(lib, lib.zeros(N + 1, S, dtype=lib.bool)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_match_torch(fn: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(fn)


def test_error_messages() -> None:
    m = gradsum.nn.Transformer(D, H, 1, 1, FF, batch_first=True)
    with pytest.raises(RuntimeError, match=r"^the batch number of src and tgt must be equal"):
        m(gradsum.ones(2, S, D), gradsum.ones(3, T, D))
    with pytest.raises(RuntimeError,
                       match=r"^the feature number of src and tgt must be equal to d_model"):
        m(gradsum.ones(2, S, D), gradsum.ones(2, T, 6))
    with pytest.raises(RuntimeError, match=r"^activation should be relu/gelu, not swish"):
        gradsum.nn.TransformerEncoderLayer(D, H, activation="swish")
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        gradsum.nn.TransformerEncoderLayer(D, 3)
    with pytest.raises(AssertionError, match=r"^only bool and floating types of src_mask"):
        gradsum.nn.TransformerEncoderLayer(D, H)(_x(gradsum),
                                                 src_mask=gradsum.zeros(S, S, dtype=gradsum.int64))
