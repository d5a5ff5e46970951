"""The fused transformer layers against torch: ``layer_norm`` (one ``NativeLayerNormBackward0``
node; its float32/float64 array path, rows short and long, every affine combination, several
normalised dims, strided inputs), ``scaled_dot_product_attention``'s flash node
(``ScaledDotProductFlashAttentionForCpuBackward0``: causal, bool and float masks, fully masked
rows, grouped heads, L != S, dropout_p=0) and ``MultiheadAttention``'s path through it, and
``binary_cross_entropy_with_logits`` (reductions, weight, pos_weight, infinities and large
logits); values and gradients side by side in float32 and float64, float64 gradcheck and
gradgradcheck, the array backward and the recorded (create_graph) one agreeing, and the
number of graph nodes per call."""

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
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from nn_helpers import floats_or_none  # noqa: E402

TOL = {"float64": 1e-10, "float32": 3e-5}


def _side_by_side(fn: Callable[..., Any], arrays: list[np.ndarray], dtype: str,
                  grad: tuple[int, ...], seed: int = 0) -> tuple[list[Any], list[Any]]:
    """``fn(lib, *tensors)`` in both libraries: the output and the gradients of a weighted sum
    of it with respect to the tensors at ``grad``."""
    res = []
    for lib in (torch, gradsum):
        dt = getattr(lib, dtype)
        ts = [lib.tensor(a, dtype=dt, requires_grad=i in grad) if a.dtype.kind == "f"
              else lib.tensor(a) for i, a in enumerate(arrays)]
        y = fn(lib, *ts)
        w = np.cos(seed + np.arange(int(np.prod(tuple(y.shape))))).reshape(tuple(y.shape))
        (y * lib.tensor(w, dtype=dt)).sum().backward()
        res.append([floats_or_none(y)] + [floats_or_none(ts[i].grad) for i in grad])
    return res[0], res[1]


def _assert_same(t: list[Any], g: list[Any], dtype: str, scale: float = 1.0) -> None:
    tol = TOL[dtype] * scale
    for a, b in zip(t, g):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol, equal_nan=True)


def _count_nodes(t: Any) -> int:
    """Graph nodes reachable from ``t.grad_fn``, leaf sinks left out."""
    seen: set[int] = set()
    todo = [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen or n.name() == "AccumulateGrad":
            continue
        seen.add(id(n))
        todo.extend(f for f, _ in n.next_functions)
    return len(seen)


# -- layer_norm ---------------------------------------------------------------------------------
LN_CASES = [((4, 16, 32), (32,)), ((6, 200), (200,)), ((3, 5, 4), (5, 4)), ((2, 3, 129), (129,)),
            ((7, 1), (1,))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize(("shape", "ns"), LN_CASES, ids=[str(c[0]) for c in LN_CASES])
def test_layer_norm_side_by_side(shape: tuple[int, ...], ns: tuple[int, ...], affine: str,
                                 dtype: str) -> None:
    rng = np.random.default_rng(sum(shape))
    arrays = [rng.standard_normal(shape) * 3 + 1, rng.standard_normal(ns), rng.standard_normal(ns)]

    def fn(lib: Any, x: Any, w: Any, b: Any) -> Any:
        return lib.nn.functional.layer_norm(x, ns, w if "w" in affine else None,
                                            b if "b" in affine else None, 1e-5)

    t, g = _side_by_side(fn, arrays, dtype, (0, 1, 2))
    _assert_same(t, g, dtype, scale=10.0 if dtype == "float32" else 1.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_strided_input_and_gradient(dtype: str) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((32, 5, 3)), rng.standard_normal(32), rng.standard_normal(32)]

    def fn(lib: Any, x: Any, w: Any, b: Any) -> Any:
        y = lib.nn.functional.layer_norm(x.permute(2, 1, 0), (32,), w, b)
        return y.transpose(0, 1)  # (the gradient reaching the node is strided too)

    t, g = _side_by_side(fn, arrays, dtype, (0, 1, 2))
    _assert_same(t, g, dtype, scale=10.0)


@pytest.mark.parametrize("affine", ["wb", "w", ""])
@pytest.mark.parametrize("m", [8, 150])
def test_layer_norm_gradcheck_gradgradcheck(affine: str, m: int) -> None:
    rng = np.random.default_rng(m)
    x = gradsum.tensor(rng.standard_normal((3, m)), requires_grad=True)
    w = gradsum.tensor(rng.standard_normal(m), requires_grad=True)
    b = gradsum.tensor(rng.standard_normal(m), requires_grad=True)

    def fn(x: Any, w: Any, b: Any) -> Any:
        return gradsum.nn.functional.layer_norm(x, (m,), w if "w" in affine else None,
                                                b if "b" in affine else None)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_layer_norm_one_node_and_no_grad_values() -> None:
    rng = np.random.default_rng(2)
    x = gradsum.tensor(rng.standard_normal((4, 16, 32)).astype(np.float32), requires_grad=True)
    w = gradsum.tensor(rng.standard_normal(32).astype(np.float32), requires_grad=True)
    b = gradsum.tensor(rng.standard_normal(32).astype(np.float32), requires_grad=True)
    y = gradsum.nn.functional.layer_norm(x, (32,), w, b)
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    assert _count_nodes(y) == 1
    with gradsum.no_grad():
        y0 = gradsum.nn.functional.layer_norm(x, (32,), w, b)
    assert y0.grad_fn is None
    np.testing.assert_array_equal(y0.numpy(), y.detach().numpy())


def test_layer_norm_array_and_recorded_backward_agree() -> None:
    """The array backward (plain) and the recorded one (create_graph) give the same first
    derivatives."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((5, 40)), rng.standard_normal(40), rng.standard_normal(40)]
    got = []
    for create in (False, True):
        ts = [gradsum.tensor(a, requires_grad=True) for a in arrays]
        y = gradsum.nn.functional.layer_norm(ts[0], (40,), ts[1], ts[2])
        gw = gradsum.tensor(np.sin(np.arange(200.0)).reshape(5, 40))
        gs = gradsum.autograd.grad((y * gw).sum(), ts, create_graph=create)
        got.append([g.detach().numpy() for g in gs])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_layer_norm_input_modified_in_place_raises_as_torch() -> None:
    msgs = []
    for lib in (torch, gradsum):
        x = lib.ones(3, 4, dtype=lib.float32, requires_grad=True) * 1.0
        x = x + lib.tensor(np.arange(12.0).reshape(3, 4), dtype=lib.float32)
        w = lib.ones(4, requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (4,), w, None)
        x.mul_(2)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert "modified by an inplace operation" in msgs[1]


# -- scaled_dot_product_attention -------------------------------------------------------------
def _bool_mask(rng: np.random.Generator, shape: tuple[int, ...], dead_row: bool) -> np.ndarray:
    m = rng.random(shape) < 0.7
    m[..., 0] = True
    if dead_row:
        m[..., 1, :] = False  # (a query that may attend to nothing: zeros, as torch's)
    return m


SDPA_CASES: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("causal", (2, 3, 6, 4), (2, 3, 6, 4), {"is_causal": True}),
    ("causal_L<S", (2, 2, 4, 5), (2, 2, 7, 5), {"is_causal": True}),
    ("causal_L>S", (1, 2, 7, 3), (1, 2, 4, 3), {"is_causal": True}),
    ("plain", (2, 2, 5, 4), (2, 2, 6, 4), {}),
    ("scale", (2, 2, 5, 4), (2, 2, 6, 4), {"scale": 0.3}),
    ("dropout_0", (2, 2, 5, 4), (2, 2, 6, 4), {"dropout_p": 0.0}),
    ("bool_mask_2d", (2, 2, 5, 4), (2, 2, 6, 4), {"mask": ("bool", (5, 6))}),
    ("bool_mask_4d", (2, 2, 5, 4), (2, 2, 6, 4), {"mask": ("bool", (2, 1, 5, 6))}),
    ("float_mask_4d", (2, 2, 5, 4), (2, 2, 6, 4), {"mask": ("float", (2, 2, 5, 6))}),
    ("long_rows", (1, 2, 3, 4), (1, 2, 150, 4), {"mask": ("bool", (3, 150))}),
    ("gqa", (2, 4, 5, 4), (2, 2, 6, 4), {"enable_gqa": True}),
    ("gqa_causal", (1, 6, 5, 3), (1, 2, 5, 3), {"enable_gqa": True, "is_causal": True}),
]


def _sdpa_fn(kw: dict[str, Any], mask: np.ndarray | None) -> Callable[..., Any]:
    kw = {k: v for k, v in kw.items() if k != "mask"}

    def fn(lib: Any, q: Any, k: Any, v: Any) -> Any:
        m = None
        if mask is not None:
            m = lib.tensor(mask) if mask.dtype == bool else lib.tensor(mask, dtype=q.dtype)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)

    return fn


def _sdpa_inputs(case: tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]],
                 dead_row: bool = False) -> tuple[list[np.ndarray], np.ndarray | None]:
    _, qs, ks, kw = case
    rng = np.random.default_rng(len(case[0]))
    arrays = [rng.standard_normal(qs), rng.standard_normal(ks), rng.standard_normal(ks)]
    mask = None
    if "mask" in kw:
        kind, shape = kw["mask"]
        mask = (_bool_mask(rng, shape, dead_row) if kind == "bool"
                else rng.standard_normal(shape))
    return arrays, mask


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_side_by_side(case: Any, dtype: str) -> None:
    arrays, mask = _sdpa_inputs(case)
    t, g = _side_by_side(_sdpa_fn(case[3], mask), arrays, dtype, (0, 1, 2))
    _assert_same(t, g, dtype, scale=10.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sdpa_fully_masked_rows_side_by_side(dtype: str) -> None:
    case = SDPA_CASES[7]
    arrays, mask = _sdpa_inputs(case, dead_row=True)
    t, g = _side_by_side(_sdpa_fn(case[3], mask), arrays, dtype, (0, 1, 2))
    _assert_same(t, g, dtype, scale=10.0)


@pytest.mark.parametrize("case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_flash_node_gradcheck_gradgradcheck(case: Any) -> None:
    arrays, mask = _sdpa_inputs(case)
    ts = [gradsum.tensor(a[..., :3, :] if a.shape[-2] > 40 else a, requires_grad=True)
          for a in arrays]
    if mask is not None and mask.shape[-1] > 40:
        mask = mask[..., :3]
        ts[1], ts[2] = (gradsum.tensor(arrays[i][..., :3, :], requires_grad=True)
                        for i in (1, 2))
        ts[0] = gradsum.tensor(arrays[0], requires_grad=True)
    fn = _sdpa_fn(case[3], mask)

    def f(q: Any, k: Any, v: Any) -> Any:
        return fn(gradsum, q, k, v)

    assert gradcheck(f, ts)
    assert gradgradcheck(f, ts)


@pytest.mark.parametrize("case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_one_node_as_torch(case: Any) -> None:
    arrays, mask = _sdpa_inputs(case)
    names = []
    for lib in (torch, gradsum):
        ts = [lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in arrays]
        y = _sdpa_fn(case[3], mask)(lib, *ts)
        names.append(y.grad_fn.name().replace("torch::autograd::", ""))
        if lib is gradsum:
            assert _count_nodes(y) == 1
    assert names[1] == names[0] == "ScaledDotProductFlashAttentionForCpuBackward0"


def test_sdpa_array_and_recorded_backward_agree() -> None:
    arrays, mask = _sdpa_inputs(SDPA_CASES[10])
    got = []
    for create in (False, True):
        ts = [gradsum.tensor(a, requires_grad=True) for a in arrays]
        y = _sdpa_fn(SDPA_CASES[10][3], mask)(gradsum, *ts)
        gw = gradsum.tensor(np.sin(np.arange(y.numel(), dtype=float)).reshape(tuple(y.shape)))
        gs = gradsum.autograd.grad((y * gw).sum(), ts, create_graph=create)
        got.append([g.detach().numpy() for g in gs])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_sdpa_no_grad_values_are_the_graph_values() -> None:
    arrays, _ = _sdpa_inputs(SDPA_CASES[0])
    ts = [gradsum.tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    y = gradsum.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
    with gradsum.no_grad():
        y0 = gradsum.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
    np.testing.assert_array_equal(y0.numpy(), y.detach().numpy())


@pytest.mark.parametrize("masks", ["causal", "padding", "both", "none"])
def test_multihead_attention_through_sdpa_side_by_side(masks: str) -> None:
    """need_weights=False takes scaled_dot_product_attention (the flash node without
    dropout): outputs and every parameter's gradient as torch's."""
    E, H, L, N = 8, 2, 5, 3
    tm = torch.nn.MultiheadAttention(E, H, batch_first=True).double()
    gm = gradsum.nn.MultiheadAttention(E, H, batch_first=True).double()
    gm.load_state_dict({k: gradsum.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})
    rng = np.random.default_rng(4)
    x = rng.standard_normal((N, L, E))
    causal = np.triu(np.ones((L, L), dtype=bool), 1)
    pad = np.zeros((N, L), dtype=bool)
    pad[1, -2:] = True
    res = []
    for lib, m in ((torch, tm), (gradsum, gm)):
        xt = lib.tensor(x, requires_grad=True)
        kw: dict[str, Any] = {"need_weights": False}
        if masks in ("causal", "both"):
            kw["attn_mask"] = lib.tensor(causal)
        if masks in ("padding", "both"):
            kw["key_padding_mask"] = lib.tensor(pad)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y, w = m(xt, xt, xt, **kw)
        assert w is None
        (y * lib.tensor(np.cos(np.arange(N * L * E)).reshape(N, L, E))).sum().backward()
        res.append([floats_or_none(y), floats_or_none(xt.grad)]
                   + [floats_or_none(p.grad) for p in m.parameters()])
    _assert_same(res[0], res[1], "float64")


# -- binary_cross_entropy_with_logits ---------------------------------------------------------
BCE_EXTREME = np.array([[np.inf, -np.inf, 0.0, -0.0, 30.0, -30.0],
                        [1e-8, -100.0, 100.0, 17.0, -25.0, 2.5]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weights", ["", "w", "pw", "w_pw"])
def test_bce_with_logits_side_by_side(weights: str, reduction: str, dtype: str) -> None:
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((6, 7)) * 4, rng.random((6, 7)), rng.random(7) + 0.5,
              rng.random(7) * 3]

    def fn(lib: Any, x: Any, t: Any, w: Any, pw: Any) -> Any:
        return lib.nn.functional.binary_cross_entropy_with_logits(
            x, t, weight=w if "w" in weights.split("_") else None,
            pos_weight=pw if "pw" in weights else None, reduction=reduction)

    t, g = _side_by_side(fn, arrays, dtype, (0,))
    _assert_same(t, g, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits_extreme_logits_side_by_side(dtype: str) -> None:
    target = np.array([[0.0, 1.0, 0.5, 1.0, 0.0, 1.0], [0.3, 0.0, 1.0, 0.2, 0.9, 0.5]])

    def fn(lib: Any, x: Any, t: Any) -> Any:
        return lib.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none")

    t, g = _side_by_side(fn, [BCE_EXTREME.copy(), target], dtype, (0,))
    # (float32: e^-100 is a subnormal that torch's vectorised sigmoid flushes; absolute check)
    _assert_same(t, g, dtype)


@pytest.mark.parametrize("weights", ["", "w_pw"])
def test_bce_with_logits_gradcheck_gradgradcheck(weights: str) -> None:
    rng = np.random.default_rng(6)
    x = gradsum.tensor(rng.standard_normal((3, 4)) * 3, requires_grad=True)
    t = gradsum.tensor(rng.random((3, 4)), requires_grad=True)
    w = gradsum.tensor(rng.random(4) + 0.5) if weights else None
    pw = gradsum.tensor(rng.random(4) * 3) if weights else None

    def fn(x: Any, t: Any) -> Any:
        return gradsum.nn.functional.binary_cross_entropy_with_logits(
            x, t, weight=w, pos_weight=pw, reduction="sum")

    assert gradcheck(fn, (x, t))
    assert gradgradcheck(fn, (x, t))


def test_bce_with_logits_one_node_as_torch() -> None:
    names = []
    for lib in (torch, gradsum):
        x = lib.tensor(np.linspace(-3, 3, 8), dtype=lib.float32, requires_grad=True)
        y = lib.nn.functional.binary_cross_entropy_with_logits(x, lib.ones(8))
        names.append(y.grad_fn.name().replace("torch::autograd::", ""))
        if lib is gradsum:
            assert _count_nodes(y) == 1
    assert names[0] == names[1] == "BinaryCrossEntropyWithLogitsBackward0"


# -- cross_entropy ------------------------------------------------------------------------------
def _tree(fn: Any) -> list[str]:
    if fn is None:
        return []
    out = [fn.name().replace("torch::autograd::", "")]
    for f, _ in fn.next_functions:
        out += ["  " + line for line in _tree(f)]
    return out


CE_CASES: list[dict[str, Any]] = [
    {}, {"ignore_index": 1}, {"weight": True}, {"label_smoothing": 0.1},
    {"label_smoothing": 0.2, "ignore_index": 1}, {"label_smoothing": 0.1, "weight": True},
    {"label_smoothing": 0.1, "weight": True, "ignore_index": 2, "reduction": "sum"},
    {"label_smoothing": 0.3, "reduction": "none"}, {"probs": True},
    {"probs": True, "label_smoothing": 0.1, "weight": True},
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CE_CASES, ids=[str(c) for c in CE_CASES])
def test_cross_entropy_graph_and_values_as_torch(case: dict[str, Any], dtype: str) -> None:
    """The values and gradients of cross_entropy as torch's, and for class indices the graph
    (node names, all the way down): log_softmax and nll_loss, and torch's composition for
    label smoothing (its products by a scalar are MulBackward1). (With probabilities torch's
    last node is DivBackward1, a division by a C++ scalar, which gradsum does not have: its
    DivBackward0 computes the same.)"""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 4))
    probs = rng.random((6, 4))
    probs /= probs.sum(1, keepdims=True)
    arrays = [x, probs if case.get("probs") else np.array([0, 1, 2, 3, 1, 2]),
              np.arange(1.0, 5.0)]
    kw = {k: v for k, v in case.items() if k not in ("probs", "weight")}

    def fn(lib: Any, x: Any, t: Any, w: Any) -> Any:
        return lib.nn.functional.cross_entropy(x, t, weight=w if case.get("weight") else None,
                                               **kw)

    t, g = _side_by_side(fn, arrays, dtype, (0,))
    _assert_same(t, g, dtype)
    if case.get("probs"):
        return
    trees = []
    for lib in (torch, gradsum):
        dt = getattr(lib, dtype)
        ts = [lib.tensor(arrays[0], dtype=dt, requires_grad=True),
              lib.tensor(arrays[1], dtype=dt) if case.get("probs") else lib.tensor(arrays[1]),
              lib.tensor(arrays[2], dtype=dt)]
        trees.append(_tree(fn(lib, *ts).grad_fn))
    assert trees[1] == trees[0]


# -- the kept intermediates are saved tensors: released by the backward ------------------------
@pytest.mark.parametrize("layer", ["layer_norm", "sdpa", "bce"])
def test_kept_intermediates_released_after_backward(layer: str) -> None:
    """The normalised input (layer_norm), the attention weights (sdpa) and exp(-|x|) (BCE
    with logits) that the array paths keep for the backward are saved tensors: a backward
    without retain_graph frees them, and a second one raises torch's error."""
    import gc
    import weakref

    rng = np.random.default_rng(9)
    x = gradsum.tensor(rng.standard_normal((2, 2, 4, 3)).astype(np.float32), requires_grad=True)
    w = gradsum.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    F = gradsum.nn.functional
    y = {"layer_norm": lambda: F.layer_norm(x, (3,), w, w),
         "sdpa": lambda: F.scaled_dot_product_attention(x, x, x, is_causal=True),
         "bce": lambda: F.binary_cross_entropy_with_logits(x, gradsum.ones_like(x))}[layer]()
    kept = weakref.ref(y.grad_fn._saved[-1]._tensor)
    assert kept() is not None
    y.sum().backward()
    gc.collect()
    assert kept() is None
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()
