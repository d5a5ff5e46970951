"""gradsum.nn.functional against torch.nn.functional: values and gradients in float32, then
gradcheck/gradgradcheck in float64; cross_entropy/nll_loss options; dropout statistics;
error parity."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)
import torch.nn.functional as TF  # noqa: E402

import gradsum  # noqa: E402
import gradsum.nn.functional as F  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402
from nn_helpers import compare, g_of, t_of, to_np  # noqa: E402

RNG = np.random.default_rng(1234)


def randn(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# -- elementwise activations and friends ---------------------------------------------------------
ACTIVATIONS = [
    ("relu", lambda x: F.relu(x), lambda x: TF.relu(x)),
    ("gelu", lambda x: F.gelu(x), lambda x: TF.gelu(x)),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda x: TF.gelu(x, approximate="tanh")),
    ("silu", F.silu, TF.silu),
    ("sigmoid", F.sigmoid, torch.sigmoid),
    ("tanh", F.tanh, torch.tanh),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2)),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=3.0),
     lambda x: TF.softplus(x, beta=2.0, threshold=3.0)),
    ("softmax", lambda x: F.softmax(x, dim=-1), lambda x: TF.softmax(x, dim=-1)),
    ("log_softmax", lambda x: F.log_softmax(x, dim=1), lambda x: TF.log_softmax(x, dim=1)),
]


@pytest.mark.parametrize("name,fg,ft", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_torch(name: str, fg: Any, ft: Any) -> None:
    compare(torch, fg, ft, [randn(3, 5) * 3])


@pytest.mark.parametrize("name,fg,ft", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradgradcheck(name: str, fg: Any, ft: Any) -> None:
    x = gradsum.tensor(randn(2, 3, dtype=np.float64) + 0.05, requires_grad=True)
    if name == "relu" or name == "leaky_relu":
        x = gradsum.tensor(np.where(np.abs(x.detach().numpy()) < 0.1, 0.5, x.detach().numpy()),
                           requires_grad=True)
    assert gradcheck(fg, (x,))
    assert gradgradcheck(fg, (x,))


def test_softmax_implicit_dim_like_torch() -> None:
    x = randn(2, 3, 4)
    with pytest.warns(UserWarning, match="Implicit dimension"):
        out = F.softmax(g_of(x))
    with pytest.warns(UserWarning):
        ref = TF.softmax(t_of(torch, x))
    np.testing.assert_allclose(to_np(out), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("inplace_fn,name", [(F.relu, "relu"), (F.silu, "silu"),
                                              (F.leaky_relu, "leaky_relu")])
def test_inplace_activations(inplace_fn: Any, name: str) -> None:
    x = randn(4)
    a = g_of(x, True)
    b = a * 1.0
    out = inplace_fn(b, inplace=True)
    assert out is b
    out.sum().backward()
    ta = t_of(torch, x, True)
    tb = ta * 1.0
    getattr(TF, name)(tb, inplace=True).sum().backward()
    np.testing.assert_allclose(to_np(b), tb.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(to_np(a.grad), ta.grad.numpy(), rtol=1e-6)


def test_linear_matches_torch() -> None:
    compare(torch, F.linear, TF.linear, [randn(4, 3), randn(2, 3), randn(2)])
    compare(torch, F.linear, TF.linear, [randn(2, 4, 3), randn(5, 3)])


def test_linear_and_embedding_gradgradcheck() -> None:
    x = gradsum.tensor(randn(3, 4, dtype=np.float64), requires_grad=True)
    w = gradsum.tensor(randn(2, 4, dtype=np.float64), requires_grad=True)
    b = gradsum.tensor(randn(2, dtype=np.float64), requires_grad=True)
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (x, w, b))
    idx = gradsum.tensor(np.array([[0, 3], [3, 1]]))
    table = gradsum.tensor(randn(4, 3, dtype=np.float64), requires_grad=True)

    def emb(t: Any) -> Any:
        # plain lookup: padding_idx/scale_grad_by_freq change the gradient on purpose (torch's
        # semantics, checked against torch above), so they are not numerical derivatives
        return F.embedding(idx, t) ** 2

    assert gradcheck(emb, (table,))
    assert gradgradcheck(emb, (table,))


def test_one_hot() -> None:
    idx = np.array([0, 3, 1])
    assert F.one_hot(gradsum.tensor(idx), 5).tolist() == TF.one_hot(torch.tensor(idx), 5).tolist()
    assert F.one_hot(gradsum.tensor(idx)).tolist() == TF.one_hot(torch.tensor(idx)).tolist()


# -- embedding -----------------------------------------------------------------------------------
@pytest.mark.parametrize("padding_idx,freq", [(None, False), (2, False), (-1, True), (None, True)])
def test_embedding_matches_torch(padding_idx: int | None, freq: bool) -> None:
    w = randn(5, 3)
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    compare(
        torch,
        lambda w_, i: F.embedding(i, w_, padding_idx=padding_idx, scale_grad_by_freq=freq),
        lambda w_, i: TF.embedding(i, w_, padding_idx=padding_idx, scale_grad_by_freq=freq),
        [w, idx], diff=[True, False],
    )


def test_embedding_max_norm_renormalises_like_torch() -> None:
    w = randn(5, 3) * 3
    gw, tw = g_of(w, True), t_of(torch, w, True)
    idx = np.array([1, 3, 3])
    out_g = F.embedding(g_of(idx), gw, max_norm=1.0)
    out_t = TF.embedding(t_of(torch, idx), tw, max_norm=1.0)
    np.testing.assert_allclose(to_np(out_g), out_t.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(to_np(gw), tw.detach().numpy(), rtol=1e-5)


def test_embedding_padding_row_gets_no_gradient() -> None:
    w = gradsum.randn(4, 2, requires_grad=True)
    F.embedding(gradsum.tensor([0, 1, 1, 3]), w, padding_idx=1).sum().backward()
    assert w.grad[1].tolist() == [0.0, 0.0]
    assert w.grad[0].tolist() == [1.0, 1.0]


def test_embedding_errors() -> None:
    w = gradsum.randn(3, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(gradsum.tensor([3]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(gradsum.tensor([-1]), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding(gradsum.tensor([1.0]), w)
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        gradsum.nn.Embedding(3, 2, padding_idx=3)


# -- layer norm, conv ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape,norm", [((4, 5), (5,)), ((2, 3, 4), (3, 4))])
def test_layer_norm_matches_torch(shape: tuple[int, ...], norm: tuple[int, ...]) -> None:
    compare(torch, lambda x, w, b: F.layer_norm(x, norm, w, b, eps=1e-5),
            lambda x, w, b: TF.layer_norm(x, norm, w, b, eps=1e-5),
            [randn(*shape), randn(*norm), randn(*norm)], rtol=1e-4, atol=1e-5)
    compare(torch, lambda x: F.layer_norm(x, norm), lambda x: TF.layer_norm(x, norm),
            [randn(*shape)], rtol=1e-4, atol=1e-5)


def test_layer_norm_gradgradcheck() -> None:
    x = gradsum.tensor(randn(2, 4, dtype=np.float64), requires_grad=True)
    w = gradsum.tensor(randn(4, dtype=np.float64), requires_grad=True)
    b = gradsum.tensor(randn(4, dtype=np.float64), requires_grad=True)

    def fn(x_: Any, w_: Any, b_: Any) -> Any:
        return F.layer_norm(x_, (4,), w_, b_)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


CONV_CASES = [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=1, padding=(2, 1), dilation=2, groups=1),
    dict(stride=(2, 1), padding=1, dilation=1, groups=2),
    dict(stride=1, padding="same", dilation=1, groups=1),
    dict(stride=1, padding="same", dilation=2, groups=1),
    dict(stride=1, padding="valid", dilation=1, groups=1),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("kw", CONV_CASES, ids=[str(k) for k in CONV_CASES])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(kw: dict[str, Any], bias: bool) -> None:
    g = kw["groups"]
    arrays = [randn(2, 4, 7, 6), randn(6, 4 // g, 3, 2)] + ([randn(6)] if bias else [])
    compare(torch, lambda *a: F.conv2d(*a, **kw), lambda *a: TF.conv2d(*a, **kw), arrays,
            rtol=1e-4, atol=1e-5)


def test_conv2d_unbatched_and_even_kernel_same() -> None:
    compare(torch, lambda x, w: F.conv2d(x, w, padding="same"),
            lambda x, w: TF.conv2d(x, w, padding="same"), [randn(2, 5, 5), randn(3, 2, 2, 4)],
            rtol=1e-4, atol=1e-5)


def test_conv2d_gradgradcheck() -> None:
    x = gradsum.tensor(randn(1, 2, 4, 4, dtype=np.float64), requires_grad=True)
    w = gradsum.tensor(randn(2, 2, 2, 2, dtype=np.float64), requires_grad=True)
    b = gradsum.tensor(randn(2, dtype=np.float64), requires_grad=True)

    def fn(x_: Any, w_: Any, b_: Any) -> Any:
        return F.conv2d(x_, w_, b_, stride=2, padding=1)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_unfold_fold_match_torch() -> None:
    compare(torch, lambda x: F.unfold(x, (2, 3), padding=1, stride=2),
            lambda x: TF.unfold(x, (2, 3), padding=1, stride=2), [randn(2, 3, 5, 6)])
    compare(torch, lambda c: F.fold(c, (4, 5), 2), lambda c: TF.fold(c, (4, 5), 2),
            [randn(2, 12, 12)])


def test_conv2d_errors_like_torch() -> None:
    with pytest.raises(RuntimeError, match="to have 2 channels, but got 3 channels"):
        F.conv2d(gradsum.randn(1, 3, 5, 5), gradsum.randn(2, 2, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
        F.conv2d(gradsum.randn(1, 3, 2, 2), gradsum.randn(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(gradsum.randn(1, 3, 5, 5), gradsum.randn(2, 3, 3, 3), stride=2,
                 padding="same")


# -- regression losses ---------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_regression_losses(name: str, reduction: str) -> None:
    x, t = randn(3, 4), randn(3, 4)
    x[0, 0] = t[0, 0] + 0.5  # keep |x - t| away from the kink
    compare(torch, lambda a, b: getattr(F, name)(a, b, reduction=reduction),
            lambda a, b: getattr(TF, name)(a, b, reduction=reduction), [x, t])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction: str, weighted: bool) -> None:
    x = RNG.uniform(0.05, 0.95, (3, 4)).astype(np.float32)
    t = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    arrays = [x, t] + ([RNG.uniform(0.5, 2, (4,)).astype(np.float32)] if weighted else [])
    diff = [True, True] + ([False] if weighted else [])
    compare(torch, lambda *a: F.binary_cross_entropy(*a, reduction=reduction),
            lambda *a: TF.binary_cross_entropy(*a, reduction=reduction), arrays, diff)


def test_binary_cross_entropy_edges_like_torch() -> None:
    x = np.array([0.0, 1.0, 0.5, 1.0], dtype=np.float32)
    t = np.array([0.0, 1.0, 1.0, 0.0], dtype=np.float32)
    compare(torch, F.binary_cross_entropy, TF.binary_cross_entropy, [x, t], [True, False])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("opts", ["plain", "weight", "pos_weight", "both"])
def test_bce_with_logits(reduction: str, opts: str) -> None:
    x = randn(3, 4) * 4
    t = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    w = RNG.uniform(0.5, 2, (3, 1)).astype(np.float32)
    pw = RNG.uniform(0.5, 3, (4,)).astype(np.float32)
    use_w, use_pw = opts in ("weight", "both"), opts in ("pos_weight", "both")

    def run(mod: Any, x_: Any, t_: Any, w_: Any, pw_: Any) -> Any:
        return mod.binary_cross_entropy_with_logits(
            x_, t_, weight=w_ if use_w else None, pos_weight=pw_ if use_pw else None,
            reduction=reduction)

    compare(torch, lambda *a: run(F, *a), lambda *a: run(TF, *a), [x, t, w, pw],
            [True, True, False, False])


def test_loss_functional_gradgradcheck() -> None:
    dt = np.float64
    x = gradsum.tensor(randn(3, 4, dtype=dt), requires_grad=True)
    t = gradsum.tensor(RNG.uniform(0, 1, (3, 4)), requires_grad=True)
    p = gradsum.tensor(RNG.uniform(0.1, 0.9, (3, 4)), requires_grad=True)
    for fn, args in [
        (lambda a, b: F.mse_loss(a, b), (x, t)),
        (lambda a, b: F.binary_cross_entropy_with_logits(a, b), (x, t)),
        (lambda a, b: F.binary_cross_entropy(a, b), (p, t)),
    ]:
        assert gradcheck(fn, args)
        assert gradgradcheck(fn, args)


# -- nll / cross entropy -------------------------------------------------------------------------
def _targets(shape: tuple[int, ...], c: int, ignore: int | None) -> np.ndarray:
    t = RNG.integers(0, c, shape)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return t


CE_GRID = list(itertools.product(
    ["none", "mean", "sum"],  # reduction
    [False, True],  # weight
    [None, 1, -100],  # ignore_index present in the targets
    [0.0, 0.2],  # label smoothing
    [(5,), (4, 2, 3)],  # target shape (N,) or K-dim (N, d1, d2)
))


@pytest.mark.parametrize("reduction,weighted,ignore,ls,tshape", CE_GRID)
def test_cross_entropy_class_indices(reduction: str, weighted: bool, ignore: int | None,
                                     ls: float, tshape: tuple[int, ...]) -> None:
    c = 4
    x = randn(tshape[0], c, *tshape[1:])
    t = _targets(tshape, c, ignore)
    w = RNG.uniform(0.2, 2.0, (c,)).astype(np.float32)
    kw: dict[str, Any] = dict(reduction=reduction, label_smoothing=ls)
    if ignore is not None:
        kw["ignore_index"] = ignore

    def run(mod: Any, x_: Any, t_: Any, w_: Any) -> Any:
        return mod.cross_entropy(x_, t_, weight=w_ if weighted else None, **kw)

    compare(torch, lambda *a: run(F, *a), lambda *a: run(TF, *a), [x, t, w],
            [True, False, False], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction,weighted,ignore", list(itertools.product(
    ["none", "mean", "sum"], [False, True], [None, 2])))
def test_nll_loss(reduction: str, weighted: bool, ignore: int | None) -> None:
    c = 5
    x = randn(6, c, 2)
    t = _targets((6, 2), c, ignore)
    w = RNG.uniform(0.2, 2.0, (c,)).astype(np.float32)
    kw: dict[str, Any] = dict(reduction=reduction)
    if ignore is not None:
        kw["ignore_index"] = ignore

    def run(mod: Any, x_: Any, t_: Any, w_: Any) -> Any:
        return mod.nll_loss(x_, t_, weight=w_ if weighted else None, **kw)

    compare(torch, lambda *a: run(F, *a), lambda *a: run(TF, *a), [x, t, w],
            [True, False, False])


def test_nll_mean_divides_by_weight_of_counted_targets() -> None:
    logp = gradsum.tensor([[-1.0, -2.0], [-3.0, -0.5], [-0.1, -4.0]])
    t = gradsum.tensor([0, 1, 1])
    w = gradsum.tensor([2.0, 10.0])
    got = F.nll_loss(logp, t, weight=w, ignore_index=1)
    assert got.item() == pytest.approx(1.0)  # (2 * 1) / 2, the ignored ones weigh nothing
    all_ignored = F.nll_loss(logp, gradsum.tensor([1, 1, 1]), ignore_index=1)
    assert np.isnan(all_ignored.item())


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted,ls", [(False, 0.0), (True, 0.0), (False, 0.2), (True, 0.2)])
@pytest.mark.parametrize("tshape", [(), (3,), (2, 3)])
def test_every_target_ignored_gives_torchs_gradient(reduction, weighted, ls, tshape) -> None:
    """Every target ignored: 'mean' is 0 / 0 (nan) and the gradient is exactly zero (torch
    skips ignored targets; -g / 0 * 0 would be nan)."""
    c = 4
    x = randn(*(tshape[:1] + (c,) + tshape[1:])) if tshape else randn(c)
    t = np.full(tshape, 2, dtype=np.int64)
    w = RNG.uniform(0.2, 2.0, (c,)).astype(np.float32)
    kw: dict[str, Any] = dict(reduction=reduction, label_smoothing=ls, ignore_index=2)

    def run(mod: Any, x_: Any, t_: Any, w_: Any) -> Any:
        return mod.cross_entropy(x_, t_, weight=w_ if weighted else None, **kw)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's 0/0 notes)
        compare(torch, lambda *a: run(F, *a), lambda *a: run(TF, *a), [x, t, w],
                [True, False, False], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted,ls", [(False, 0.0), (True, 0.0), (True, 0.3)])
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (4,)])
def test_cross_entropy_soft_targets(reduction: str, weighted: bool, ls: float,
                                    shape: tuple[int, ...]) -> None:
    x = randn(*shape)
    cdim = 0 if len(shape) == 1 else 1
    p = RNG.uniform(0, 1, shape).astype(np.float32)
    p = p / p.sum(axis=cdim, keepdims=True)
    w = RNG.uniform(0.2, 2.0, (shape[cdim],)).astype(np.float32)

    def run(mod: Any, x_: Any, p_: Any, w_: Any) -> Any:
        return mod.cross_entropy(x_, p_, weight=w_ if weighted else None, reduction=reduction,
                                 label_smoothing=ls)

    compare(torch, lambda *a: run(F, *a), lambda *a: run(TF, *a), [x, p, w],
            [True, True, False])


def test_cross_entropy_1d_input() -> None:
    x = randn(5)
    compare(torch, lambda a: F.cross_entropy(a, gradsum.tensor(3)),
            lambda a: TF.cross_entropy(a, torch.tensor(3)), [x])
    compare(torch, lambda a: F.cross_entropy(a, gradsum.tensor(3), label_smoothing=0.1,
                                             reduction="none"),
            lambda a: TF.cross_entropy(a, torch.tensor(3), label_smoothing=0.1,
                                       reduction="none"), [x])


def test_cross_entropy_gradgradcheck() -> None:
    x = gradsum.tensor(randn(3, 4, 2, dtype=np.float64), requires_grad=True)
    t = gradsum.tensor(np.array([[0, 1], [3, -100], [2, 2]]))
    w = gradsum.tensor(RNG.uniform(0.5, 2, (4,)))
    p = gradsum.tensor(RNG.dirichlet(np.ones(4), size=(3, 2)).transpose(0, 2, 1).copy(),
                       requires_grad=True)
    for fn, args in [
        (lambda a: F.cross_entropy(a, t, weight=w, label_smoothing=0.1), (x,)),
        (lambda a: F.nll_loss(F.log_softmax(a, 1), t, reduction="sum"), (x,)),
        (lambda a, b: F.cross_entropy(a, b), (x, p)),
    ]:
        assert gradcheck(fn, args)
        assert gradgradcheck(fn, args)


def test_loss_errors_like_torch() -> None:
    x = gradsum.randn(3, 4)
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.nll_loss(x, gradsum.tensor([0, 5, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target"):
        F.nll_loss(x, gradsum.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4"):
        F.nll_loss(x, gradsum.tensor([0, 1, 1]), weight=gradsum.ones(3))
    with pytest.raises(RuntimeError, match=r"label_smoothing must be between 0\.0 and 1\.0"):
        F.cross_entropy(x, gradsum.tensor([0, 1, 1]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        F.cross_entropy(x, gradsum.rand(3, 4), ignore_index=1)
    with pytest.raises(RuntimeError, match="Expected target size"):
        F.nll_loss(gradsum.randn(3, 4, 5), gradsum.zeros(3, 4, dtype=gradsum.int64))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="foo")
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(gradsum.tensor([1.5]), gradsum.tensor([1.0]))
    with pytest.raises(ValueError, match="that is different to the input size"):
        F.binary_cross_entropy(gradsum.tensor([0.5]), gradsum.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(gradsum.tensor([0.5]), gradsum.tensor([1.0, 0.0]))
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 3\]"):
        F.layer_norm(x, (3,))


def test_legacy_size_average_reduce() -> None:
    x, t = gradsum.tensor([1.0, 3.0]), gradsum.tensor([0.0, 0.0])
    with pytest.warns(UserWarning):
        assert F.mse_loss(x, t, size_average=False).item() == 10.0
    with pytest.warns(UserWarning):
        assert F.mse_loss(x, t, reduce=False).tolist() == [1.0, 9.0]


# -- dropout -------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics(p: float) -> None:
    gradsum.manual_seed(7)
    x = gradsum.ones(200_000, requires_grad=True)
    y = F.dropout(x, p)
    arr = y.detach().numpy()
    assert abs((arr == 0).mean() - p) < 0.01
    assert abs(arr.mean() - 1.0) < 0.02  # the expectation is preserved
    np.testing.assert_allclose(np.unique(arr), [0.0, np.float32(1.0) / np.float32(1 - p)],
                               rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), arr)  # gradient = the same mask


def test_dropout_eval_identity_and_edges() -> None:
    x = gradsum.randn(10)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 1.0).tolist() == [0.0] * 10
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(x, 1.5)
    gradsum.manual_seed(3)
    a = F.dropout(x, 0.3)
    gradsum.manual_seed(3)
    b = F.dropout(x, 0.3)
    assert gradsum.equal(a, b)
    y = gradsum.ones(100)
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and set(y.tolist()) <= {0.0, 2.0}
