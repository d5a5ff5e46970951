"""Side-by-side tests of the torch.nn pieces added in the fifth nn sweep: scaled dot-product
attention, MultiheadAttention, interpolate / Upsample, pixel (un)shuffle, channel shuffle,
Unfold / Fold modules, Bilinear and Embedding's max_norm / scale_grad_by_freq. Values, first-
and second-order gradients, grad_fn names, exception types and reprs are compared with torch;
the upsampling primitives pass gradcheck / gradgradcheck in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, check_grads, run_grads_both, same_error, same_repr  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402

Program = Callable[..., Any]
RS = np.random.RandomState(4321)


def _arr(*shape: int) -> np.ndarray:
    return RS.randn(*shape)


_np = as_np
run_both = run_grads_both
check = check_grads


# -- scaled_dot_product_attention ---------------------------------------------------------------
BOOL_MASK = RS.rand(4, 5) > 0.4
BOOL_MASK[2] = False  # a fully masked row


@pytest.mark.parametrize("kind", ["plain", "causal", "scale", "bool", "float"])
def test_sdpa_values_and_grads(kind: str) -> None:
    def fn(lib: Any, F: Any, q: Any, k: Any, v: Any, *rest: Any) -> Any:
        kw: dict[str, Any] = {}
        if kind == "causal":
            kw["is_causal"] = True
        if kind == "scale":
            kw["scale"] = 0.3
        if kind == "bool":
            kw["attn_mask"] = lib.tensor(BOOL_MASK)
        if kind == "float":
            kw["attn_mask"] = rest[0]
        return F.scaled_dot_product_attention(q, k, v, **kw)

    arrays = [_arr(2, 3, 4, 8), _arr(2, 3, 5, 8), _arr(2, 3, 5, 6)]
    if kind == "float":
        arrays.append(_arr(4, 5))
    # (torch's flash CPU kernel has no double backward: second order only on its math path)
    check(fn, arrays, second=kind == "float")


def test_sdpa_shapes_gqa_and_unbatched() -> None:
    check(lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
          [_arr(4, 8), _arr(5, 8), _arr(5, 3)])
    check(lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
          [_arr(2, 6, 4, 8), _arr(2, 3, 5, 8), _arr(2, 3, 5, 8)], second=False)
    same_error(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.ones(2, 6, 4, 8), lib.ones(2, 3, 5, 8), lib.ones(2, 3, 5, 8)))
    same_error(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.ones(4, 8), lib.ones(5, 8), lib.ones(5, 8),
        attn_mask=lib.ones(4, 5, dtype=lib.int64)))
    same_error(lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.ones(4, 8, requires_grad=True), lib.ones(5, 8), lib.ones(5, 8), is_causal=True,
        attn_mask=lib.ones(4, 5, dtype=lib.bool)))


def test_sdpa_fully_masked_rows_are_zero() -> None:
    for lib in (torch, gradsum):
        q = lib.ones(1, 2, 4, requires_grad=True)
        m = lib.tensor([[True, False], [False, False]])
        y = lib.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=m)
        y.sum().backward()
        assert y[0, 1].tolist() == [0.0] * 4
        assert not np.isnan(_np(q.grad)).any()


# -- MultiheadAttention -------------------------------------------------------------------------
def _mha_pair(**kw: Any) -> tuple[Any, Any]:
    tm = torch.nn.MultiheadAttention(**kw, dtype=torch.float64)
    gm = gradsum.nn.MultiheadAttention(**kw, dtype=gradsum.float64)
    t_sd = tm.state_dict()
    assert list(gm.state_dict()) == list(t_sd)
    gm.load_state_dict({k: gradsum.tensor(v.numpy()) for k, v in t_sd.items()})
    return tm, gm


MHA_CASES = [
    ({"embed_dim": 8, "num_heads": 2}, {}),
    ({"embed_dim": 8, "num_heads": 2, "batch_first": True}, {"average_attn_weights": False}),
    ({"embed_dim": 8, "num_heads": 4, "kdim": 5, "vdim": 3}, {}),
    ({"embed_dim": 8, "num_heads": 2, "add_bias_kv": True, "add_zero_attn": True}, {"kpm": 1}),
    ({"embed_dim": 8, "num_heads": 2, "bias": False}, {"need_weights": False, "mask": "bool"}),
    ({"embed_dim": 8, "num_heads": 2}, {"mask": "float", "kpm": 1}),
    ({"embed_dim": 8, "num_heads": 2}, {"mask": "causal", "need_weights": False}),
    ({"embed_dim": 6, "num_heads": 3}, {"unbatched": True}),
]


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("ctor,call", MHA_CASES)
def test_multihead_attention(ctor: dict[str, Any], call: dict[str, Any]) -> None:
    tm, gm = _mha_pair(**ctor)
    e = ctor["embed_dim"]
    kd, vd = ctor.get("kdim", e), ctor.get("vdim", e)
    L, S, N = 4, 5, 3
    bf = ctor.get("batch_first", False)
    unb = call.get("unbatched", False)

    def shape(n: int, d: int) -> tuple[int, ...]:
        return (n, d) if unb else ((N, n, d) if bf else (n, N, d))

    arrays = [_arr(*shape(L, e)), _arr(*shape(S, kd)), _arr(*shape(S, vd))]
    mask = call.get("mask")
    kpm = np.zeros((N, S), dtype=bool)
    kpm[:, -1] = True
    kpm[0, 1] = True
    bmask = RS.rand(L, S) > 0.7
    fmask = _arr(L, S)
    res = []
    for lib, m in ((torch, tm), (gradsum, gm)):
        q, k, v = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays)
        kw: dict[str, Any] = {"need_weights": call.get("need_weights", True),
                              "average_attn_weights": call.get("average_attn_weights", True)}
        if call.get("kpm"):
            kw["key_padding_mask"] = lib.tensor(kpm)
        if mask == "bool":
            kw["attn_mask"] = lib.tensor(bmask)
        elif mask == "float":
            kw["attn_mask"] = lib.tensor(fmask)
        elif mask == "causal":
            kw["attn_mask"] = lib.tensor(np.triu(np.full((L, S), -np.inf), 1))
            kw["is_causal"] = True
        out, w = m(q, k, v, **kw)
        loss = (out * out).sum() + (0 if w is None else (w * w).sum())
        params = [p for _, p in m.named_parameters()]
        gs = lib.autograd.grad(loss, [q, k, v, *params], create_graph=True)
        gg = []
        if kw["need_weights"]:  # (else torch's flash CPU kernel: no double backward)
            s = sum((g * g).sum() for g in gs)
            gg = lib.autograd.grad(s, [q, *params])
        res.append([_np(out), _np(w), *[_np(g) for g in gs], *[_np(g) for g in gg]])
    for i, (a, b) in enumerate(zip(*res)):
        if a is None or b is None:
            assert a is None and b is None, i
            continue
        assert a.shape == b.shape, (i, a.shape, b.shape)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10, equal_nan=True, err_msg=str(i))


def test_multihead_attention_parameters_repr_and_errors() -> None:
    for kw in ({"embed_dim": 8, "num_heads": 2}, {"embed_dim": 8, "num_heads": 2, "kdim": 3},
               {"embed_dim": 4, "num_heads": 1, "bias": False, "add_bias_kv": True}):
        names = [n for n, _ in gradsum.nn.MultiheadAttention(**kw).named_parameters()]
        assert names == [n for n, _ in torch.nn.MultiheadAttention(**kw).named_parameters()]
        same_repr(lambda lib, kw=kw: lib.nn.MultiheadAttention(**kw))
    m = gradsum.nn.MultiheadAttention(8, 2)
    assert float(m.in_proj_bias.abs().sum()) == 0.0 and float(m.out_proj.bias.abs().sum()) == 0
    bound = (6 / (8 + 24)) ** 0.5
    assert float(m.in_proj_weight.abs().max()) <= bound
    same_error(lambda lib: lib.nn.MultiheadAttention(8, 3))
    same_error(lambda lib: lib.nn.MultiheadAttention(0, 2))
    same_error(lambda lib: lib.nn.MultiheadAttention(4, 2)(
        lib.ones(3, 1, 4), lib.ones(3, 4), lib.ones(3, 4)))
    same_error(lambda lib: lib.nn.MultiheadAttention(4, 2)(
        lib.ones(3, 1, 4), lib.ones(3, 1, 4), lib.ones(3, 1, 4), attn_mask=lib.ones(2, 2)))
    same_error(lambda lib: lib.nn.MultiheadAttention(4, 2)(
        lib.ones(3, 1, 4), lib.ones(3, 1, 4), lib.ones(3, 1, 4), is_causal=True))


# -- interpolate / Upsample ---------------------------------------------------------------------
INTERP = [
    ((1, 2, 3, 4), {"scale_factor": 2}),
    ((1, 2, 3, 4), {"size": (5, 7)}),
    ((1, 2, 5, 6), {"size": (3, 4)}),
    ((1, 2, 3, 4), {"scale_factor": 1.7}),
    ((1, 2, 3, 4), {"scale_factor": 1.7, "recompute_scale_factor": True}),
    ((1, 2, 3, 4), {"scale_factor": (2.5, 0.6)}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "bilinear"}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "bilinear", "align_corners": True}),
    ((1, 2, 5, 6), {"size": (2, 3), "mode": "bilinear"}),
    ((1, 2, 3, 4), {"scale_factor": 1.7, "mode": "bilinear"}),
    ((1, 2, 3, 4), {"size": 1, "mode": "bilinear", "align_corners": True}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "nearest-exact"}),
    ((2, 3, 4), {"scale_factor": 3}),
    ((2, 3, 4), {"size": 7, "mode": "linear"}),
    ((2, 3, 4), {"size": 7, "mode": "linear", "align_corners": True}),
    ((2, 3, 7), {"scale_factor": 0.45, "mode": "linear"}),
    ((2, 3, 4), {"size": 9, "mode": "nearest-exact"}),
]


@pytest.mark.parametrize("shape,kw", INTERP)
def test_interpolate(shape: tuple[int, ...], kw: dict[str, Any]) -> None:
    check(lambda lib, F, x: F.interpolate(x, **kw), [_arr(*shape)], name=True)


def test_interpolate_float32_and_modules() -> None:
    x = RS.rand(1, 1, 3, 5).astype(np.float32)
    for kw in ({"scale_factor": 1.3}, {"size": (4, 9), "mode": "bilinear"}):
        t = torch.nn.functional.interpolate(torch.tensor(x), **kw)
        g = gradsum.nn.functional.interpolate(gradsum.tensor(x), **kw)
        assert g.dtype == gradsum.float32
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)
    same_repr(lambda lib: lib.nn.Upsample(scale_factor=2, mode="bilinear"))
    same_repr(lambda lib: lib.nn.Upsample(size=(3, 4)))
    same_repr(lambda lib: lib.nn.Upsample(scale_factor=(2, 3)))
    same_repr(lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=2))
    same_repr(lambda lib: lib.nn.UpsamplingBilinear2d(size=5))
    check(lambda lib, F, x: lib.nn.UpsamplingBilinear2d(size=5)(x), [_arr(1, 1, 3, 2)])
    check(lambda lib, F, x: lib.nn.Upsample(scale_factor=2, mode="bilinear")(x),
          [_arr(1, 1, 3, 2)])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=3, scale_factor=2),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=3, align_corners=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=(3, 3, 3)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), scale_factor=(2, 3, 4)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=3, mode="linear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2), size=3, mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2), size=3,
                                              recompute_scale_factor=True),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), scale_factor=0.1),
])
def test_interpolate_errors(call: Program) -> None:
    same_error(call)


def test_upsample_primitives_gradcheck() -> None:
    F = gradsum.nn.functional
    x = gradsum.tensor(_arr(1, 2, 3, 4), dtype=gradsum.float64, requires_grad=True)
    for kw in ({"scale_factor": 1.5}, {"size": (4, 6), "mode": "bilinear"},
               {"size": (2, 7), "mode": "bilinear", "align_corners": True},
               {"size": (5, 3), "mode": "nearest-exact"}):
        assert gradcheck(lambda t, kw=kw: F.interpolate(t, **kw), (x,))
        assert gradgradcheck(lambda t, kw=kw: F.interpolate(t, **kw), (x,))
    y = gradsum.tensor(_arr(2, 1, 4), dtype=gradsum.float64, requires_grad=True)
    assert gradgradcheck(lambda t: F.interpolate(t, size=6, mode="linear"), (y,))


def test_upsample_double_backward_node_names() -> None:
    names = []
    for lib in (torch, gradsum):
        x = lib.ones(1, 1, 2, 2, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.interpolate(x, size=(3, 3), mode="bilinear")
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        names.append(g.grad_fn.name().split("::")[-1])
    assert names[0] == names[1]


# -- pixel / channel shuffle, Unfold / Fold, Bilinear, Embedding ---------------------------------
def test_pixel_shuffle_and_unshuffle() -> None:
    check(lambda lib, F, x: F.pixel_shuffle(x, 2), [_arr(2, 8, 3, 2)])
    check(lambda lib, F, x: lib.nn.PixelShuffle(3)(x), [_arr(9, 2, 2)], second=False)
    check(lambda lib, F, x: F.pixel_unshuffle(x, 2), [_arr(1, 2, 3, 4, 6)])
    check(lambda lib, F, x: lib.nn.PixelUnshuffle(2)(x), [_arr(2, 2, 4, 2)], second=False)
    check(lambda lib, F, x: lib.nn.ChannelShuffle(2)(x), [_arr(2, 6, 3)], second=False)
    check(lambda lib, F, x: F.channel_shuffle(x, 3), [_arr(1, 6, 2, 2)], second=False)
    same_repr(lambda lib: lib.nn.PixelShuffle(2))
    same_repr(lambda lib: lib.nn.PixelUnshuffle(3))
    same_repr(lambda lib: lib.nn.ChannelShuffle(4))
    same_error(lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 5, 2, 2), 2))
    same_error(lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(4, 2), 2))
    same_error(lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2))
    same_error(lambda lib: lib.nn.ChannelShuffle(4)(lib.ones(1, 6, 2)))


def test_unfold_fold_modules() -> None:
    check(lambda lib, F, x: lib.nn.Unfold((2, 3), padding=1, stride=(1, 2))(x),
          [_arr(2, 3, 4, 5)], second=False)
    check(lambda lib, F, x: lib.nn.Fold((4, 5), 2, stride=1)(x), [_arr(2, 12, 12)],
          second=False)
    same_repr(lambda lib: lib.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)))
    same_repr(lambda lib: lib.nn.Fold(output_size=(4, 5), kernel_size=2))


def test_bilinear() -> None:
    check(lambda lib, F, a, b, w, c: F.bilinear(a, b, w, c),
          [_arr(4, 3), _arr(4, 2), _arr(5, 3, 2), _arr(5)])
    check(lambda lib, F, a, b, w: F.bilinear(a, b, w), [_arr(2, 4, 3), _arr(2, 4, 2),
                                                        _arr(5, 3, 2)], second=False)
    same_repr(lambda lib: lib.nn.Bilinear(3, 2, 5))
    same_repr(lambda lib: lib.nn.Bilinear(3, 2, 5, bias=False))
    m = gradsum.nn.Bilinear(4, 2, 3)
    assert tuple(m.weight.shape) == (3, 4, 2) and float(m.weight.abs().max()) <= 0.5
    assert tuple(m(gradsum.ones(7, 4), gradsum.ones(7, 2)).shape) == (7, 3)
    same_error(lambda lib: lib.nn.functional.bilinear(lib.ones(4, 3), lib.ones(5, 2),
                                                      lib.ones(5, 3, 2)))


def test_embedding_max_norm_and_scale_grad_by_freq() -> None:
    w0 = _arr(6, 3) * 2
    idx = np.array([[0, 2, 2], [5, 0, 2]])
    res = []
    for lib in (torch, gradsum):
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(idx), w, max_norm=1.5,
                                        scale_grad_by_freq=True)
        (y * y).sum().backward()
        version = w._version
        res.append((_np(y), _np(w), _np(w.grad), version))
        m = lib.nn.Embedding(6, 3, max_norm=1.0, norm_type=1.0)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w0))
        m(lib.tensor(idx))
        res.append((_np(m.weight),))
    for a, b in zip(res[0][:3], res[2][:3]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[3][0], res[1][0], rtol=1e-6, atol=1e-6)  # (float32)
    assert res[2][3] == res[0][3]
