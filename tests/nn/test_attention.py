"""Side by side with torch: scaled_dot_product_attention and MultiheadAttention (values and
gradients, GQA and unbatched shapes, fully masked rows, the inference fast path's nan rows and
its conditions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import as_np, check_grads, same_error, same_repr  # noqa: E402
from nn_helpers import randn_arrays  # noqa: E402

RS = np.random.RandomState(4321)
_arr = randn_arrays(RS)


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
    check_grads(fn, arrays, second=kind == "float")


def test_sdpa_shapes_gqa_and_unbatched() -> None:
    check_grads(lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
                [_arr(4, 8), _arr(5, 8), _arr(5, 3)])
    check_grads(lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
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
        assert not np.isnan(as_np(q.grad)).any()


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
    """MultiheadAttention over torch's constructor and call options: outputs, attention weights and
    gradients as torch's."""
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
        res.append([as_np(out), as_np(w), *[as_np(g) for g in gs], *[as_np(g) for g in gg]])
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
