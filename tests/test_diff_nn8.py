"""Side-by-side tests of the eighth nn sweep: losses and activations recorded as one node named
as torch's (``SmoothL1LossBackward0``, ``HuberLossBackward0``, ``SoftMarginLossBackward0``,
``MultiMarginLossBackward0``, ``MultilabelMarginLossBackward0``, ``GluBackward0``,
``MishBackward0``, ``LogSigmoidBackward0``, ``CeluBackward0``) with torch's first and second
derivatives; ``prelu`` and ``layer_norm`` whose gradients require grad under ``create_graph`` as
torch's do; the in-place ``leaky_relu`` with a negative slope; and ``MultiheadAttention``'s
inference fast path (nan rows where every key is masked, ``is_causal`` ignored)."""

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
from diff_helpers import as_np, same_error  # noqa: E402

RNG = np.random.default_rng(8)


def _name(t: Any) -> str | None:
    if t is None or t.grad_fn is None:
        return None
    return t.grad_fn.name().replace("torch::autograd::", "")


def _close(a: Any, b: Any, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(as_np(a), as_np(b), rtol=tol, atol=tol, equal_nan=True)


def _run(lib: Any, fn: Callable[..., Any], arrays: list[Any], grad_idx: tuple[int, ...],
         seed: int, second: bool = True) -> dict[str, Any]:
    """``fn(lib, *tensors)``; the first and second derivatives (create_graph) with respect to
    the tensors at ``grad_idx`` (float64), against fixed random output weights."""
    ts = [lib.tensor(a, requires_grad=i in grad_idx) if np.asarray(a).dtype.kind == "f"
          else lib.tensor(a) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = fn(lib, *ts)
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal(tuple(y.shape)))
    ins = [ts[i] for i in grad_idx]
    gs = lib.autograd.grad((y * w).sum(), ins, create_graph=True)
    res: dict[str, Any] = {"y": y, "name": _name(y), "g": gs,
                           "g_rg": [g.requires_grad for g in gs],
                           "g_names": [_name(g) for g in gs]}
    live = [(g, i) for g, i in zip(gs, grad_idx) if g.requires_grad]
    if live and second:
        vs = [lib.tensor(rng.standard_normal(tuple(g.shape))) for g, _ in live]
        tot = sum((g * v).sum() for (g, _), v in zip(live, vs))
        res["gg"] = lib.autograd.grad(tot, ins, allow_unused=True)
    return res


def _compare(fn: Callable[..., Any], arrays: list[Any], grad_idx: tuple[int, ...] = (0,),
             names: bool = True, tol: float = 1e-10, second: bool = True) -> dict[str, Any]:
    """Values, first and (``second``) second derivatives, ``requires_grad`` of the first
    derivatives and (``names``) the ``grad_fn`` names of the output and of the first
    derivatives."""
    t = _run(torch, fn, arrays, grad_idx, 1, second)
    g = _run(gradsum, fn, arrays, grad_idx, 1, second)
    _close(g["y"], t["y"], tol)
    assert g["name"] == t["name"]
    for a, b in zip(g["g"], t["g"]):
        _close(a, b, tol)
    assert g["g_rg"] == t["g_rg"]
    if names:
        assert g["g_names"] == t["g_names"]
    assert ("gg" in g) == ("gg" in t)
    if "gg" in t:
        for a, b in zip(g["gg"], t["gg"]):
            if b is None:
                assert a is None or not as_np(a).any()
            else:
                assert a is not None
                _close(a, b, tol)
    return t


def _arr(*shape: int) -> Any:
    return RNG.standard_normal(shape)


# -- smooth_l1 / huber ----------------------------------------------------------------------------
X = np.array([[-2.5, -1.0, -0.3, 0.0, 0.4], [1.0, 1.7, 3.0, -0.9, 0.05]])
T = np.array([[0.0, 0.0, 0.3, 0.0, -0.6], [0.0, 0.2, 0.5, 0.1, 0.05]])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0])
def test_smooth_l1_loss_one_node_two_derivatives(reduction: str, beta: float) -> None:
    t = _compare(lambda lib, x, y: lib.nn.functional.smooth_l1_loss(
        x, y, reduction=reduction, beta=beta), [X, T], (0, 1))
    assert t["name"] == "SmoothL1LossBackward0"


def test_smooth_l1_loss_beta_zero_is_l1_composition() -> None:
    t = _compare(lambda lib, x, y: lib.nn.functional.smooth_l1_loss(x, y, beta=0.0),
                 [X, T], (0, 1), names=False, second=False)
    assert t["name"] == "MeanBackward0"


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("delta", [1.0, 0.5, 2.5])
def test_huber_loss_one_node_two_derivatives(reduction: str, delta: float) -> None:
    t = _compare(lambda lib, x, y: lib.nn.functional.huber_loss(
        x, y, reduction=reduction, delta=delta), [X, T], (0, 1))
    assert t["name"] == "HuberLossBackward0"


def test_huber_loss_with_weight_multiplies_the_unreduced_node() -> None:
    w = np.abs(_arr(2, 5))
    t = _compare(lambda lib, x, y, wt: lib.nn.functional.huber_loss(x, y, weight=wt),
                 [X, T, w], (0, 1, 2))
    assert t["name"] == "MeanBackward0"


def test_smooth_l1_and_huber_target_only_and_modules() -> None:
    _compare(lambda lib, x, y: lib.nn.SmoothL1Loss(beta=0.7)(x, y), [X, T], (1,))
    _compare(lambda lib, x, y: lib.nn.HuberLoss(reduction="sum")(x, y), [X, T], (1,))


# -- soft margin ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_soft_margin_loss_one_node_two_derivatives(reduction: str) -> None:
    y = np.sign(_arr(3, 4))
    t = _compare(lambda lib, x, tt: lib.nn.functional.soft_margin_loss(
        x, tt, reduction=reduction), [_arr(3, 4) * 2, y])
    assert t["name"] == "SoftMarginLossBackward0"
    assert t["g_names"] == ["SoftMarginLossBackwardBackward0"]


def test_soft_margin_loss_target_is_not_differentiable() -> None:
    x, y = _arr(3), np.sign(_arr(3))

    def prog(lib: Any) -> Any:
        return lib.nn.functional.soft_margin_loss(lib.tensor(x), lib.tensor(y,
                                                                          requires_grad=True))

    same_error(prog)
    for lib in (torch, gradsum):  # (no_grad: nothing is recorded, nothing raises)
        with lib.no_grad():
            prog(lib)


# -- multi margin / multilabel margin -------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss_one_node(reduction: str, p: int, weighted: bool) -> None:
    x, cls, w = _arr(4, 5), np.array([0, 3, 4, 1]), np.abs(_arr(5))

    def fn(lib: Any, xx: Any, cc: Any, ww: Any) -> Any:
        return lib.nn.functional.multi_margin_loss(
            xx, cc, p=p, margin=0.8, weight=ww if weighted else None, reduction=reduction)

    t = _compare(fn, [x, cls, w], second=False)
    assert t["name"] == "MultiMarginLossBackward0"
    assert t["g_names"] == ["NotImplemented"]
    _compare(lambda lib, xx, cc: lib.nn.functional.multi_margin_loss(
        xx, cc, reduction=reduction), [x[1], np.array(2)], second=False)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_one_node(reduction: str) -> None:
    x = _arr(3, 4)
    tgt = np.array([[0, 2, -1, 0], [1, -1, 0, 0], [3, 0, 1, -1]])
    t = _compare(lambda lib, xx, tt: lib.nn.functional.multilabel_margin_loss(
        xx, tt, reduction=reduction), [x, tgt], second=False)
    assert t["name"] == "MultilabelMarginLossBackward0"
    assert t["g_names"] == ["NotImplemented"]
    _compare(lambda lib, xx, tt: lib.nn.functional.multilabel_margin_loss(
        xx, tt, reduction=reduction), [x[0], np.array([3, 1, -1, 2])], second=False)


@pytest.mark.parametrize("fn", ["multi_margin_loss", "multilabel_margin_loss"])
def test_margin_losses_have_no_double_backward(fn: str) -> None:
    x = _arr(3, 4)
    tgt = np.array([0, 2, 1]) if fn == "multi_margin_loss" else np.array(
        [[0, 2, -1, 0], [1, -1, 0, 0], [3, 0, 1, -1]])

    def prog(lib: Any) -> Any:
        xx = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(getattr(lib.nn.functional, fn)(xx, lib.tensor(tgt)), xx,
                                 create_graph=True)
        g.sum().backward()

    same_error(prog)


def test_multi_margin_loss_weight_is_not_differentiable() -> None:
    def prog(lib: Any) -> Any:
        return lib.nn.functional.multi_margin_loss(
            lib.tensor(_arr(2, 3), requires_grad=True), lib.tensor([0, 2]),
            weight=lib.tensor([1.0, 2.0, 3.0], requires_grad=True))

    same_error(prog)


# -- activations ----------------------------------------------------------------------------------
A = np.array([[-30.0, -2.0, -0.5, 0.0, 0.3, 1.2], [3.0, 25.0, -1.0, 0.7, -0.2, 2.0]])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu_one_node_two_derivatives(dim: int) -> None:
    x = _arr(4, 6, 2)
    t = _compare(lambda lib, xx: lib.nn.functional.glu(xx, dim), [x])
    assert t["name"] == "GluBackward0" and t["g_names"] == ["GluBackwardBackward0"]
    _compare(lambda lib, xx: lib.nn.GLU(dim)(xx), [x])


def test_mish_one_node_two_derivatives() -> None:
    t = _compare(lambda lib, xx: lib.nn.functional.mish(xx), [A])
    assert t["name"] == "MishBackward0" and t["g_names"] == ["MulBackward0"]
    _compare(lambda lib, xx: lib.nn.Mish()(xx), [A])


def test_logsigmoid_one_node_two_derivatives() -> None:
    t = _compare(lambda lib, xx: lib.nn.functional.logsigmoid(xx), [A * 3])
    assert t["name"] == "LogSigmoidBackward0"
    assert t["g_names"] == ["LogSigmoidBackwardBackward0"]
    _compare(lambda lib, xx: lib.nn.LogSigmoid()(xx), [A])


@pytest.mark.parametrize("alpha", [1.0, 2.0, 0.5])
def test_celu_node_is_celus(alpha: float) -> None:
    t = _compare(lambda lib, xx: lib.nn.functional.celu(xx, alpha), [A])
    assert t["name"] == "CeluBackward0" and t["g_names"] == ["EluBackwardBackward0"]
    _compare(lambda lib, xx: lib.nn.CELU(alpha)(xx), [A])


def test_elu_and_selu_keep_elus_node() -> None:
    assert _compare(lambda lib, xx: lib.nn.functional.elu(xx), [A])["name"] == "EluBackward0"
    assert _compare(lambda lib, xx: lib.nn.functional.selu(xx), [A])["name"] == "EluBackward0"


@pytest.mark.parametrize("fn", [
    "l1_loss", "kl_div", "poisson_nll_loss", "hinge_embedding_loss",
    "multilabel_soft_margin_loss"])
def test_losses_torch_composes_keep_their_names(fn: str) -> None:
    x, y = _arr(3, 4), np.abs(_arr(3, 4))
    if fn == "hinge_embedding_loss":
        y = np.sign(_arr(3, 4))
    if fn == "multilabel_soft_margin_loss":
        y = (y > 0.5).astype(float)
    _compare(lambda lib, xx, yy: getattr(lib.nn.functional, fn)(xx, yy), [x, y], names=False,
             second=fn != "l1_loss")


def test_other_composites_keep_torch_names() -> None:
    x, y, z = _arr(3, 4), _arr(3, 4), _arr(3, 4)
    s = np.array([1.0, -1.0, 1.0])
    for fn, arrays in [
        (lambda lib, a, b, c: lib.nn.functional.gaussian_nll_loss(a, b, c.abs() + 0.1),
         [x, y, z]),
        (lambda lib, a, b, c: lib.nn.functional.margin_ranking_loss(a[0], b[0], c),
         [x[:, :3], y[:, :3], s]),
        (lambda lib, a, b, c: lib.nn.functional.cosine_embedding_loss(a, b, c), [x, y, s]),
        (lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c), [x, y, z]),
        (lambda lib, a: lib.nn.functional.softsign(a), [x]),
        (lambda lib, a: lib.nn.functional.tanhshrink(a), [x]),
        (lambda lib, a: lib.nn.functional.softmin(a, 1), [x]),
        (lambda lib, a: lib.nn.functional.normalize(a), [x]),
    ]:
        n = len(arrays)
        _compare(fn, arrays, tuple(i for i in range(n) if arrays[i] is not s), names=False)


# -- prelu ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("xshape,wshape", [((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)),
                                           ((5,), ()), ((), (1,)), ((2, 3, 2, 2), (3,)),
                                           ((4,), (1,))])
def test_prelu_one_node_two_derivatives(xshape: tuple[int, ...],
                                        wshape: tuple[int, ...]) -> None:
    x = np.round(_arr(*xshape), 1)
    x.reshape(-1)[:1] = 0.0  # (the kink: torch's x > 0 and x >= 0 masks)
    w = _arr(*wshape) * 0.3
    for idx in [(0, 1), (0,), (1,)]:
        t = _compare(lambda lib, xx, ww: lib.nn.functional.prelu(xx, ww), [x, w], idx)
        assert t["name"] == "PreluKernelBackward0" and all(t["g_rg"])
        _compare(lambda lib, xx, ww: xx.prelu(ww), [x, w], idx)


def test_prelu_module_and_shared_implementation() -> None:
    x = _arr(2, 3, 4)
    names = []
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3)
        y = m(lib.tensor(x, dtype=lib.float32, requires_grad=True))
        (g,) = lib.autograd.grad(y.sum(), m.weight, create_graph=True)
        assert g.requires_grad
        names.append(_name(g))
    assert names[0] == names[1] == "ViewBackward0"
    assert gradsum.nn.functional.prelu.__doc__ and gradsum.prelu(
        gradsum.tensor([-2.0]), gradsum.tensor([0.5])).tolist() == [-1.0]


@pytest.mark.parametrize("wshape", [(1, 1), (3, 1), (2, 2)])
def test_prelu_errors(wshape: tuple[int, ...]) -> None:
    same_error(lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(*wshape)))


# -- layer norm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", ["wb", "w", "b", ""])
@pytest.mark.parametrize("shape,ns", [((3, 4), (4,)), ((2, 3, 4), (3, 4))])
def test_layer_norm_one_node_two_derivatives(affine: str, shape: tuple[int, ...],
                                             ns: tuple[int, ...]) -> None:
    x, w, b = _arr(*shape), _arr(*ns), _arr(*ns)

    def fn(lib: Any, xx: Any, ww: Any, bb: Any) -> Any:
        return lib.nn.functional.layer_norm(xx, ns, ww if "w" in affine else None,
                                            bb if "b" in affine else None)

    for idx in [(0, 1, 2), (1, 2), (2,), (0,), (1,)]:
        idx = tuple(i for i in idx if i == 0 or "wb"[i - 1] in affine)
        if not idx:
            continue
        # (torch's layer_norm_double_backward fails with an internal error when the bias
        # gradient is differentiated without a weight, or when only the bias requires grad)
        broken = 2 in idx and ("w" not in affine or idx == (2,))
        t = _compare(fn, [x, w, b], idx, tol=1e-9, second=not broken)
        assert t["name"] == "NativeLayerNormBackward0"
        assert set(t["g_names"]) == {"NativeLayerNormBackwardBackward0"}


def test_layer_norm_module_bias_grad_requires_grad() -> None:
    x = _arr(2, 5)
    res = []
    for lib in (torch, gradsum):
        m = lib.nn.LayerNorm(5)
        y = m(lib.tensor(x, dtype=lib.float32))
        gw, gb = lib.autograd.grad((y * y).sum(), [m.weight, m.bias], create_graph=True)
        res.append((gw.requires_grad, gb.requires_grad, as_np(gw), as_np(gb)))
    assert res[0][:2] == res[1][:2] == (True, True)
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-5, atol=1e-5)


# -- in-place leaky_relu with a negative slope ----------------------------------------------------
def test_inplace_leaky_relu_negative_slope_raises_at_backward() -> None:
    x = _arr(5)

    def prog(lib: Any) -> Any:
        a = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.leaky_relu(a * 1, -0.5, inplace=True)
        assert _name(y) == "LeakyReluBackward1"
        y.sum().backward()

    same_error(prog)
    for slope in (0.0, 0.2):
        grads = []
        for lib in (torch, gradsum):
            a = lib.tensor(x, requires_grad=True)
            y = lib.nn.functional.leaky_relu(a * 1, slope, inplace=True)
            assert _name(y) == "LeakyReluBackward1"
            y.sum().backward()
            grads.append(as_np(a.grad))
        np.testing.assert_allclose(grads[1], grads[0])
    for lib in (torch, gradsum):  # (nothing recorded: nothing raises)
        with lib.no_grad():
            lib.nn.functional.leaky_relu(lib.tensor(x), -0.5, inplace=True)
        lib.nn.functional.leaky_relu(lib.tensor(x), -0.5, inplace=True)


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
    _close(go, to, 1e-10)
    if tw is None:
        assert gw is None
    else:
        _close(gw, tw, 1e-10)
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
