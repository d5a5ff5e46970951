"""Side by side with torch: the losses of torch.nn (mse, binary cross entropy with and without
logits, nll, KL divergence, the margin, Huber / smooth L1 and the other losses): values, first and
second derivatives, dtype and range checks of inputs, targets and weights, BCE's float32 epsilon,
nll_loss's double backward, losses as one node named as torch's, argument errors and module
reprs. (The losses' dtypes: test_loss_dtypes.py; the single nodes of smooth L1, Huber and the
margin losses: test_loss_nodes.py.)"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402
    as_np,
    check_grads,
    same_error,
    same_repr,
)
from nn_helpers import (  # noqa: E402
    floats,
    wide_randn_arrays,
)


# -- losses: dtype and range checks ------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_mse_loss_of_integer_tensors_is_not_implemented(dtype: str) -> None:
    for red in ("mean", "sum", "none"):
        assert same_error(lambda lib, red=red: lib.nn.functional.mse_loss(
            lib.ones(2, dtype=getattr(lib, dtype)), lib.ones(2, dtype=getattr(lib, dtype)),
            reduction=red)) is NotImplementedError


def test_mse_loss_of_mixed_int_float_is_float() -> None:
    for lib in (gradsum, torch):
        y = lib.nn.functional.mse_loss(lib.tensor([1, 3]), lib.tensor([0.0, 1.0]))
        assert y.dtype == lib.float32 and y.item() == 2.5


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_binary_cross_entropy_of_integer_tensors_is_not_implemented(dtype: str) -> None:
    for red in ("mean", "sum", "none"):
        assert same_error(lambda lib, red=red: lib.nn.functional.binary_cross_entropy(
            lib.ones(2, dtype=getattr(lib, dtype)), lib.ones(2, dtype=getattr(lib, dtype)),
            reduction=red)) is NotImplementedError


@pytest.mark.parametrize("target", [[2.0], [-0.5], [math.nan]])
def test_binary_cross_entropy_target_out_of_range(target: list[float]) -> None:
    assert same_error(lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.5]), lib.tensor(target))) is RuntimeError


@pytest.mark.parametrize("logits,arg", [(False, "weight"), (True, "weight"),
                                        (True, "pos_weight")])
@pytest.mark.parametrize("shape", [(2, 3, 4), (3,), (2, 4)])
def test_bce_weights_may_not_enlarge_or_misfit_the_input(logits: bool, arg: str,
                                                         shape: tuple[int, ...]) -> None:
    def prog(lib: Any) -> Any:
        f = (lib.nn.functional.binary_cross_entropy_with_logits if logits
             else lib.nn.functional.binary_cross_entropy)
        return f(lib.full((3, 4), 0.5), lib.ones(3, 4), **{arg: lib.ones(*shape)})

    assert same_error(prog) is RuntimeError


@pytest.mark.parametrize("logits", [False, True])
@pytest.mark.parametrize("shape", [(4,), (3, 1), (), (1, 4)])
def test_bce_broadcast_weights_still_match(logits: bool, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    x, t = rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))
    w = rng.uniform(0.5, 2.0, shape)
    outs = []
    for lib in (gradsum, torch):
        f = (lib.nn.functional.binary_cross_entropy_with_logits if logits
             else lib.nn.functional.binary_cross_entropy)
        kw = {"weight": lib.tensor(w.tolist(), dtype=lib.float64)}
        if logits:
            kw["pos_weight"] = lib.tensor(w.tolist(), dtype=lib.float64)
        xt = lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=True)
        y = f(xt, lib.tensor(t.tolist(), dtype=lib.float64), **kw)
        y.backward()
        outs.append((y.item(), floats(xt.grad)))
    assert outs[0][0] == pytest.approx(outs[1][0], rel=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-10)


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("case", [
    ((5, 4), (3,), "float32"), ((5, 4), (3,), "int32"), ((5, 4), (3, 4), "float32"),
    ((2, 4, 3, 3), (1, 3, 3), "float32"),
])
def test_batch_size_mismatch_is_reported_before_the_target_dtype(
        fn: str, case: tuple[Any, ...]) -> None:
    xs, ts, tdt = case
    assert same_error(lambda lib: getattr(lib.nn.functional, fn)(
        lib.ones(*xs), lib.ones(*ts, dtype=getattr(lib, tdt)))) is ValueError


Program = Callable[..., Any]


RS = np.random.RandomState(1234)
_arr = wide_randn_arrays(RS)


# -- losses -------------------------------------------------------------------------------
_A, _B, _N = _arr(4, 5), _arr(4, 5), _arr(4, 5)


_B[0, :2] = _A[0, :2] + np.array([1.0, -0.5])  # (exactly at smooth_l1's / huber's kinks)


_PM = np.sign(_arr(4)) + (np.sign(_arr(4)) == 0)


_PM5 = np.sign(_arr(4, 5))


_MLM = np.array([[0, 2, -1, 1, 1], [4, -1, 0, 0, 0], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1]])


LOSSES: dict[str, tuple[Program, list[Any], tuple[int, ...], bool]] = {
    "smooth_l1": (lambda lib, F, a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.5),
                  [_A, _B], (), True),
    "smooth_l1_beta0": (lambda lib, F, a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.0),
                        [_A, _B], (), True),
    "huber": (lambda lib, F, a, b, r: F.huber_loss(a, b, reduction=r, delta=0.5), [_A, _B],
              (), True),
    "huber_weight": (lambda lib, F, a, b, r: F.huber_loss(
        a, b, reduction=r, weight=lib.tensor(np.abs(_N), dtype=lib.float64)), [_A, _B], (),
        True),
    "kl_div": (lambda lib, F, a, b, r: F.kl_div(a, b.abs(), reduction=r), [_A, _B], (), True),
    "kl_div_log_target": (lambda lib, F, a, b, r: F.kl_div(a, b, reduction=r, log_target=True),
                          [_A, _B], (), True),
    "soft_margin": (lambda lib, F, a, t, r: F.soft_margin_loss(a, t, reduction=r), [_A, _PM5],
                    (1,), True),
    "margin_ranking": (lambda lib, F, a, b, t, r: F.margin_ranking_loss(
        a, b, t, margin=0.3, reduction=r), [_A[:, 0], _B[:, 0], _PM], (2,), True),
    "hinge_embedding": (lambda lib, F, a, t, r: F.hinge_embedding_loss(
        a, t, margin=0.7, reduction=r), [_A, _PM5], (1,), True),
    "cosine_embedding": (lambda lib, F, a, b, t, r: F.cosine_embedding_loss(
        a, b, t, margin=0.1, reduction=r), [_A, _B, _PM], (2,), True),
    "poisson_nll_full": (lambda lib, F, a, b, r: F.poisson_nll_loss(
        a, b.abs() * 3, full=True, reduction=r), [_A, _B], (), True),
    "poisson_nll_rate": (lambda lib, F, a, b, r: F.poisson_nll_loss(
        a.abs(), b.abs() * 3, log_input=False, full=True, eps=0.01, reduction=r), [_A, _B], (),
        True),
    "gaussian_nll_full": (lambda lib, F, a, b, v, r: F.gaussian_nll_loss(
        a, b, v.abs(), full=True, reduction=r), [_A, _B, _arr(4, 1)], (), True),
    "gaussian_nll_short_var": (lambda lib, F, a, b, v, r: F.gaussian_nll_loss(
        a, b, v.abs(), reduction=r), [_A, _B, _arr(4)], (), True),
    "gaussian_nll_eps": (lambda lib, F, a, b, v, r: F.gaussian_nll_loss(
        a, b, v.abs() * 0.01, eps=0.02, reduction=r), [_A, _B, _arr(4, 5)], (), True),
    "triplet_swap": (lambda lib, F, a, b, c, r: F.triplet_margin_loss(
        a, b, c, margin=0.5, swap=True, reduction=r), [_A, _B, _N], (), True),
    "triplet_p1": (lambda lib, F, a, b, c, r: F.triplet_margin_loss(
        a, b, c, p=1, reduction=r), [_A, _B, _N], (), True),
    "multi_margin": (lambda lib, F, a, t, r: F.multi_margin_loss(a, t, reduction=r),
                     [_A, np.array([0, 2, 4, 1])], (1,), False),
    "multi_margin_p2_weight": (lambda lib, F, a, t, r: F.multi_margin_loss(
        a, t, p=2, margin=0.5, weight=lib.tensor([1.0, 2, 3, 4, 5], dtype=lib.float64),
        reduction=r), [_A, np.array([0, 2, 4, 1])], (1,), False),
    "multilabel_margin": (lambda lib, F, a, t, r: F.multilabel_margin_loss(a, t, reduction=r),
                          [_A, _MLM], (1,), False),
    "multilabel_soft_margin": (lambda lib, F, a, b, r: F.multilabel_soft_margin_loss(
        a, b.abs(), weight=lib.tensor([1.0, 2, 3, 4, 5], dtype=lib.float64), reduction=r),
        [_A, _B], (), True),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_losses(name: str, reduction: str) -> None:
    """Each loss in each reduction: torch's values and first (and where torch has them, second)
    derivatives."""
    fn, arrays, ints, second = LOSSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_grads(lambda lib, F, *xs: fn(lib, F, *xs, reduction), arrays, ints, second)


def test_kl_div_batchmean_and_mean_warning() -> None:
    check_grads(lambda lib, F, a, b: F.kl_div(a, b.abs(), reduction="batchmean"), [_A, _B])
    for lib in (torch, gradsum):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            lib.nn.functional.kl_div(lib.zeros(2), lib.ones(2))
            lib.nn.functional.kl_div(lib.zeros(2), lib.ones(2), reduction="batchmean")
        assert [w.category for w in rec] == [UserWarning]


def test_one_dim_margin_losses() -> None:
    check_grads(lambda lib, F, a, t: F.multi_margin_loss(a, t, reduction="none"),
                [_A[0], np.array(2)], (1,), second=False)
    check_grads(lambda lib, F, a, t: F.multilabel_margin_loss(a, t, reduction="none"),
                [_A[0], np.array([3, 0, -1, 1, 1])], (1,), second=False)


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.ones(2), beta=-1.0),
    lambda lib: lib.nn.functional.huber_loss(lib.ones(2), lib.ones(2), delta=0.0),
    lambda lib: lib.nn.functional.huber_loss(lib.ones(2), lib.ones(2), weight=lib.ones(3)),
    lambda lib: lib.nn.functional.kl_div(lib.ones(2), lib.ones(2), reduction="avg"),
    lambda lib: lib.nn.functional.margin_ranking_loss(lib.ones(2), lib.ones(2, 1),
                                                      lib.ones(2)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                        lib.ones(2, 1)),
    lambda lib: lib.nn.functional.cosine_embedding_loss(lib.ones(3), lib.ones(3),
                                                        lib.ones(1)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                    lib.ones(3, 2)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                    -lib.ones(2, 3)),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3), -1.0),
    lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                    lib.ones(2, 3), reduction="avg"),
    lambda lib: lib.nn.functional.triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                      lib.ones(2, 3), margin=0.0),
    lambda lib: lib.nn.functional.triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3),
                                                      lib.ones(3)),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.zeros(2).long(), p=3),
    lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(2, 3), lib.zeros(2).long(),
                                                    weight=lib.ones(3, 1)),
    lambda lib: lib.nn.functional.poisson_nll_loss(lib.ones(2), lib.ones(2), reduction="x"),
    lambda lib: lib.nn.TripletMarginLoss(margin=-1.0),
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
])
def test_loss_errors(prog: Program) -> None:
    same_error(prog)


@pytest.mark.parametrize("make", [
    lambda nn: nn.SmoothL1Loss(beta=0.5), lambda nn: nn.HuberLoss(delta=2.0),
    lambda nn: nn.KLDivLoss(reduction="batchmean"), lambda nn: nn.SoftMarginLoss(),
    lambda nn: nn.MarginRankingLoss(0.5), lambda nn: nn.HingeEmbeddingLoss(),
    lambda nn: nn.CosineEmbeddingLoss(), lambda nn: nn.PoissonNLLLoss(full=True),
    lambda nn: nn.GaussianNLLLoss(full=True), lambda nn: nn.TripletMarginLoss(swap=True),
    lambda nn: nn.MultiMarginLoss(p=2), lambda nn: nn.MultiLabelMarginLoss(),
    lambda nn: nn.MultiLabelSoftMarginLoss(),
])
def test_loss_module_reprs(make: Program) -> None:
    same_repr(lambda lib: make(lib.nn))
    t, g = make(torch.nn), make(gradsum.nn)
    for attr in ("reduction", "margin", "beta", "delta", "log_target", "full", "eps", "p",
                 "swap", "log_input"):
        assert getattr(t, attr, None) == getattr(g, attr, None), attr


def test_loss_modules_forward() -> None:
    a, b = _A, _B
    cases = [
        (lambda nn: nn.SmoothL1Loss(beta=0.5), (a, b)),
        (lambda nn: nn.HuberLoss(reduction="sum"), (a, b)),
        (lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True), (a, b)),
        (lambda nn: nn.TripletMarginLoss(swap=True), (a, b, _N)),
        (lambda nn: nn.GaussianNLLLoss(), (a, b, np.abs(_N))),
        (lambda nn: nn.PoissonNLLLoss(), (a, np.abs(b))),
        (lambda nn: nn.MultiLabelSoftMarginLoss(), (a, np.abs(b))),
    ]
    for make, arrays in cases:
        t = make(torch.nn)(*[torch.tensor(x) for x in arrays])
        g = make(gradsum.nn)(*[gradsum.tensor(x) for x in arrays])
        np.testing.assert_allclose(as_np(g), as_np(t), rtol=1e-12)


def _nll_program(lib: Any, reduction: str, weighted: bool, k_dim: bool) -> list[Any]:
    rs = np.random.RandomState(7)
    shape = (3, 4, 2) if k_dim else (3, 4)
    x = lib.tensor(rs.randn(*shape), requires_grad=True)
    target = lib.tensor(rs.randint(0, 4, (3, 2) if k_dim else (3,)))
    w = lib.tensor(rs.rand(4)) if weighted else None
    y = lib.nn.functional.nll_loss(x, target, w, ignore_index=1, reduction=reduction)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    return [as_np(g), g.requires_grad, g.grad_fn.name(), as_np(gg)]


@pytest.mark.parametrize("k_dim", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_gradient_requires_grad_under_create_graph(reduction: str, weighted: bool,
                                                             k_dim: bool) -> None:
    t = _nll_program(torch, reduction, weighted, k_dim)
    g = _nll_program(gradsum, reduction, weighted, k_dim)
    np.testing.assert_allclose(g[0], t[0], rtol=1e-12)
    assert g[1] is t[1] is True
    if not k_dim:  # (torch views a 3-D input as 4-D for nll_loss2d: a ViewBackward0 there)
        assert g[2] == t[2] == "NllLossBackwardBackward0"
    np.testing.assert_allclose(g[3], t[3])  # zeros: nll_loss is linear in its input


def test_nll_loss_input_modified_in_place_after_the_loss_raises() -> None:
    def fn(lib: Any) -> Any:
        x = lib.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=True)
        logp = x * 1
        loss = lib.nn.functional.nll_loss(logp, lib.tensor([0, 1]))
        with lib.no_grad():
            logp.add_(1.0)
        loss.backward()

    same_error(fn)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_binary_cross_entropy_gradient_at_0_and_1_uses_a_float32_epsilon(dtype: str) -> None:
    res = []
    for lib in (torch, gradsum):
        x = lib.tensor([0.0, 1.0, 0.0, 1.0, 0.5], dtype=getattr(lib, dtype),
                       requires_grad=True)
        t = lib.tensor([0.0, 1.0, 1.0, 0.0, 0.25], dtype=getattr(lib, dtype))
        lib.nn.functional.binary_cross_entropy(x, t, reduction="sum").backward()
        res.append(as_np(x.grad))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-15)


@pytest.mark.parametrize("name", ["mse", "bce", "bce_logits"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weights", [0, 1, 2])
def test_losses_are_one_node_named_as_torch(name: str, reduction: str, weights: int) -> None:
    # torch's MseLossBackward0 / BinaryCrossEntropy(WithLogits)Backward0 include the weights
    # and the reduction; first and second derivatives for input and target match
    rng = np.random.default_rng(weights)
    x0, t0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    if name == "bce":
        x0, t0 = 1 / (1 + np.exp(-x0)), (t0 > 0) * 0.7 + 0.1

    def run(m: Any) -> tuple[str, list[np.ndarray]]:
        F = m.nn.functional
        x = m.tensor(x0, requires_grad=True)
        t = m.tensor(t0, requires_grad=True)
        kw: dict[str, Any] = {}
        if weights:
            kw["weight"] = m.tensor(np.linspace(0.5, 1.5, 4))
        if weights == 2 and name == "bce_logits":
            kw["pos_weight"] = m.tensor(np.linspace(0.2, 2.0, 4))
        if name == "mse":
            y = F.mse_loss(x, t, reduction=reduction)
        elif name == "bce":
            y = F.binary_cross_entropy(x, t, reduction=reduction, **kw)
        else:
            y = F.binary_cross_entropy_with_logits(x, t, reduction=reduction, **kw)
        gx, gt = m.autograd.grad((y * y).sum(), [x, t], create_graph=True)
        ggx, ggt = m.autograd.grad((gx * gx).sum() + (gt * gt).sum(), [x, t])
        return y.grad_fn.name(), [v.detach().numpy() for v in (y, gx, gt, ggx, ggt)]

    (want_name, want), (got_name, got) = run(torch), run(gradsum)
    assert got_name == want_name
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(w).max()))


def test_mse_loss_broadcast_sums_gradients_back() -> None:
    def run(m: Any) -> list[Any]:
        x = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        t = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (both warn about the broadcast)
            y = m.nn.functional.mse_loss(x, t)
        y.backward()
        return [y.item(), *x.grad.flatten().tolist(), *t.grad.tolist()]

    assert run(gradsum) == pytest.approx(run(torch))
