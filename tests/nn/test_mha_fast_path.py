"""Side by side with torch: MultiheadAttention's inference fast path (nan rows where every key
is masked, ``is_causal`` ignored, each condition that leaves it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from derivative_helpers import close_nan  # noqa: E402
from diff_helpers import as_np, same_error  # noqa: E402

# -- MultiheadAttention fast path -----------------------------------------------------------------
E, H, N, L = 8, 2, 2, 4


KPM = np.array([[False, False, True, False], [True, True, True, True]])


AM = np.zeros((L, L), dtype=bool)


AM[1] = True


def _mha_pair(**kw: Any) -> tuple[Any, Any]:
    kw.setdefault("batch_first", True)
    tm = torch.nn.MultiheadAttention(E, H, **kw).double()
    gm = gradsum.nn.MultiheadAttention(E, H, **kw).double()
    gm.load_state_dict({k: gradsum.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})
    for m in (tm, gm):
        m.eval()
        with (torch if m is tm else gradsum).no_grad():
            for p in m.parameters():
                p.add_(0.1)
    return tm, gm


def _mha_call(lib: Any, m: Any, x: Any, grad: bool = False, same: bool = True,
              **kw: Any) -> tuple[Any, Any]:
    q = lib.tensor(x, requires_grad=kw.pop("x_rg", False))
    k = q if same else lib.tensor(x)
    for name in ("key_padding_mask", "attn_mask"):
        if kw.get(name) is not None:
            kw[name] = lib.tensor(kw[name])
    if grad:
        return m(q, k, k, **kw)
    with lib.no_grad():
        return m(q, k, k, **kw)


def _mha_same(tm: Any, gm: Any, grad: bool = False, **kw: Any) -> tuple[Any, Any]:
    x = np.random.default_rng(3).standard_normal((N, L, E))
    to, tw = _mha_call(torch, tm, x, grad, **dict(kw))
    go, gw = _mha_call(gradsum, gm, x, grad, **dict(kw))
    close_nan(go, to, 1e-10)
    if tw is None:
        assert gw is None
    else:
        close_nan(gw, tw, 1e-10)
    return as_np(to), None if tw is None else as_np(tw)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_mha_fast_path_nan_rows(need_weights: bool, average: bool) -> None:
    tm, gm = _mha_pair()
    out, w = _mha_same(tm, gm, key_padding_mask=KPM, need_weights=need_weights,
                       average_attn_weights=average)
    assert np.isnan(out[1]).all() and not np.isnan(out[0]).any()
    out, w = _mha_same(tm, gm, attn_mask=AM, need_weights=need_weights,
                       average_attn_weights=average)
    assert np.isnan(out[:, 1]).all()
    _mha_same(tm, gm, attn_mask=AM, key_padding_mask=KPM, need_weights=need_weights)
    _mha_same(tm, gm, attn_mask=np.repeat(AM[None], N * H, 0), need_weights=need_weights)


def test_mha_fast_path_ignores_is_causal() -> None:
    tm, gm = _mha_pair()
    out, _ = _mha_same(tm, gm, is_causal=True, need_weights=False)
    plain, _ = _mha_same(tm, gm, need_weights=False)
    np.testing.assert_array_equal(out, plain)
    _mha_same(tm, gm, is_causal=True, attn_mask=AM, need_weights=False)


@pytest.mark.parametrize("flip", ["float_mask", "not_self", "train", "odd_heads",
                                  "seq_first", "bias_kv", "zero_attn", "kdim", "no_bias",
                                  "grad", "x_grad", "dtype"])
def test_mha_each_fast_path_condition(flip: str) -> None:
    """One condition broken at a time: the composed path (zeros where every key is masked,
    ``is_causal`` without a mask raises), as torch's."""
    kw: dict[str, Any] = {}
    heads = H
    if flip == "odd_heads":
        heads = 1
    if flip == "seq_first":
        kw["batch_first"] = False
    if flip == "bias_kv":
        kw["add_bias_kv"] = True
    if flip == "zero_attn":
        kw["add_zero_attn"] = True
    if flip == "kdim":
        kw["kdim"] = kw["vdim"] = 6
    if flip == "no_bias":
        kw["bias"] = False
    kw.setdefault("batch_first", True)
    tm = torch.nn.MultiheadAttention(E, heads, **kw).double()
    gm = gradsum.nn.MultiheadAttention(E, heads, **kw).double()
    gm.load_state_dict({k: gradsum.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})
    if flip == "train":
        tm.train(), gm.train()
    else:
        tm.eval(), gm.eval()
    x = np.random.default_rng(4).standard_normal((N, L, E) if flip != "seq_first"
                                                 else (L, N, E))
    kpm = KPM.astype(float) * -1e9 if flip == "float_mask" else KPM
    call: dict[str, Any] = {"key_padding_mask": kpm, "need_weights": False}
    grad = flip in ("grad", "x_grad")
    if flip == "x_grad":
        call["x_rg"] = True
    same = flip != "not_self"
    if flip == "dtype":  # (a float32 query, float64 parameters: both raise)
        same_error(lambda lib: _dtype_mismatch(lib, tm if lib is torch else gm, x))
        return
    outs = []
    for lib, m in ((torch, tm), (gradsum, gm)):
        if flip == "kdim":
            q = lib.tensor(x)
            k = lib.tensor(np.random.default_rng(5).standard_normal((N, L, 6)))
            with lib.no_grad():
                o, _ = m(q, k, k, key_padding_mask=lib.tensor(kpm), need_weights=False)
        else:
            o, _ = _mha_call(lib, m, x, grad, same, **dict(call))
        outs.append(as_np(o))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-9, atol=1e-9)
    if flip not in ("float_mask", "bias_kv", "zero_attn"):
        assert not np.isnan(outs[0]).any()
    if flip not in ("float_mask", "not_self", "kdim"):
        same_error(lambda lib: _mha_call(lib, tm if lib is torch else gm, x, grad, same,
                                         is_causal=True, need_weights=False))


def _dtype_mismatch(lib: Any, m: Any, x: Any) -> Any:
    q = lib.tensor(x, dtype=lib.float32)
    with lib.no_grad():
        return m(q, q, q)
