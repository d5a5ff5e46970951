"""Side-by-side tests of the torch.nn pieces added in the fourth nn sweep: the activations
(ELU ... RReLU), F.pad and Conv2d's padding modes, pooling, normalize / cosine_similarity /
pairwise_distance and the remaining losses. The same program runs on both libraries; values,
first- and second-order gradients, grad_fn names, exception types and module reprs are
compared, and every new primitive passes gradcheck / gradgradcheck in float64."""

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
from diff_helpers import as_np, check_grads, run_grads_both, same_error, same_repr  # noqa: E402
from gradsum.autograd import gradcheck, gradgradcheck  # noqa: E402

Program = Callable[..., Any]
RS = np.random.RandomState(1234)


def _arr(*shape: int, ties: bool = False) -> np.ndarray:
    a = RS.randn(*shape) * 2.5
    return np.round(a) if ties else a


_np = as_np
run_both = run_grads_both
check = check_grads


# -- activations ---------------------------------------------------------------------------
_KINKS = np.array([[0.0, -3.0, 3.0, 1.0, -1.0, 0.5], [6.0, -0.5, 2.0, -6.0, 25.0, -25.0]])

ACTIVATIONS: dict[str, tuple[Program, bool]] = {  # name: (program, second order in torch)
    "elu": (lambda lib, F, x: F.elu(x, 0.7), True),
    "selu": (lambda lib, F, x: F.selu(x), True),
    "celu": (lambda lib, F, x: F.celu(x, 1.5), True),
    "hardtanh": (lambda lib, F, x: F.hardtanh(x, -1.0, 2.0), True),
    "relu6": (lambda lib, F, x: F.relu6(x), True),
    "hardsigmoid": (lambda lib, F, x: F.hardsigmoid(x), False),
    "hardswish": (lambda lib, F, x: F.hardswish(x), True),
    "mish": (lambda lib, F, x: F.mish(x), True),
    "logsigmoid": (lambda lib, F, x: F.logsigmoid(x), True),
    "softsign": (lambda lib, F, x: F.softsign(x), True),
    "tanhshrink": (lambda lib, F, x: F.tanhshrink(x), True),
    "softshrink": (lambda lib, F, x: F.softshrink(x, 1.0), True),
    "hardshrink": (lambda lib, F, x: F.hardshrink(x, 1.0), True),
    "threshold": (lambda lib, F, x: F.threshold(x, 0.5, -2.0), True),
    "softmin": (lambda lib, F, x: F.softmin(x, 1), True),
    "glu": (lambda lib, F, x: F.glu(x, 1), True),
    "rrelu_eval": (lambda lib, F, x: F.rrelu(x, 0.1, 0.3), True),
    "prelu": (lambda lib, F, x: F.prelu(x.reshape(2, 3, 2), lib.tensor(
        [0.1, 0.2, 0.3], dtype=lib.float64)), False),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("data", ["kinks", "random"])
def test_activation_values_and_gradients(name: str, data: str) -> None:
    fn, second = ACTIVATIONS[name]
    arr = _KINKS if data == "kinks" else _arr(2, 6)
    # (torch's float64 hardsigmoid gradient is float32's 1/6: equal to 3e-8 relative only)
    check(fn, [arr], second=second, atol=1e-7 if name == "hardsigmoid" else 1e-10)


def test_prelu_weight_gradient() -> None:
    check(lambda lib, F, x, w: F.prelu(x, w), [_arr(3, 4, 2), np.array([0.1, 0.2, 0.3, 0.4])],
          second=False)
    check(lambda lib, F, x, w: F.prelu(x, w), [_arr(5), np.array([0.25])], second=False)


@pytest.mark.parametrize("name", ["elu_", "selu_", "celu_", "hardtanh_", "relu6_", "mish_",
                                  "hardswish_", "hardsigmoid_", "threshold_", "rrelu_"])
def test_inplace_activations(name: str) -> None:
    def prog(lib: Any, F: Any, x: Any) -> Any:
        y = x * 1.0
        base = name[:-1]
        if base == "threshold":
            F.threshold(y, 0.5, -1.0, inplace=True)
        else:
            getattr(F, base)(y, inplace=True)
        return y

    check(prog, [_KINKS], second=False, atol=1e-7 if name == "hardsigmoid_" else 1e-10)


def test_rrelu_training_draws_slopes_in_bounds() -> None:
    x = gradsum.full((2000,), -1.0, requires_grad=True)
    y = gradsum.nn.functional.rrelu(x, 0.2, 0.4, training=True)
    slopes = -np.asarray(y.tolist())
    assert slopes.min() >= 0.2 and slopes.max() <= 0.4 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), slopes, rtol=1e-6)
    m = gradsum.nn.RReLU()
    assert m(gradsum.ones(3)).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.celu(lib.ones(2), alpha=0.0),
    lambda lib: lib.nn.functional.hardtanh(lib.ones(2), 2.0, 1.0),
    lambda lib: lib.nn.Hardtanh(2.0, 1.0),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2), -1.0),
    lambda lib: lib.nn.functional.glu(lib.ones(2, 3)),
    lambda lib: lib.nn.functional.glu(lib.tensor(1.0)),
    lambda lib: lib.nn.functional.glu(lib.ones(2, 4), 2),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(3, 1)),
    lambda lib: lib.nn.functional.prelu(lib.ones(2, 3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.nn.functional.rrelu(lib.ones(2), 0.5, 0.1),
    lambda lib: lib.nn.functional.elu(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.mish(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.hardsigmoid(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.logsigmoid(lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.nn.functional.hardshrink(lib.ones(2, dtype=lib.int64)),
])
def test_activation_errors(prog: Program) -> None:
    same_error(prog)


@pytest.mark.parametrize("make", [
    lambda nn: nn.ELU(), lambda nn: nn.ELU(0.5, True), lambda nn: nn.CELU(2.0),
    lambda nn: nn.SELU(), lambda nn: nn.SELU(True), lambda nn: nn.Hardtanh(-2.0, 3.0, True),
    lambda nn: nn.ReLU6(), lambda nn: nn.ReLU6(True), lambda nn: nn.Hardsigmoid(True),
    lambda nn: nn.Hardswish(), lambda nn: nn.Mish(True), lambda nn: nn.LogSigmoid(),
    lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(), lambda nn: nn.Softshrink(0.3),
    lambda nn: nn.Hardshrink(), lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.Softmin(1),
    lambda nn: nn.GLU(), lambda nn: nn.PReLU(), lambda nn: nn.PReLU(4, 0.1),
    lambda nn: nn.RReLU(0.1, 0.2, True),
])
def test_activation_module_reprs(make: Program) -> None:
    same_repr(lambda lib: make(lib.nn))


def test_prelu_module_parameters_and_training() -> None:
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3, init=0.1)
        assert [n for n, _ in m.named_parameters()] == ["weight"]
        assert m.weight.shape == (3,)
    x = _arr(2, 3, 4)
    grads = []
    for lib in (torch, gradsum):
        m = lib.nn.PReLU(3, init=0.1)
        m(lib.tensor(x, dtype=lib.float32)).pow(2).sum().backward()
        grads.append(np.asarray(m.weight.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5)


# -- F.pad and Conv2d padding modes --------------------------------------------------------
PADS = [
    ((2, 3, 4), (1, 2), "constant"), ((2, 3, 4), (1, -1, 2, 0, 1, 1), "constant"),
    ((3, 4), (-2, -1), "constant"), ((2, 3, 4), (0, 0, -3, 2), "constant"),
    ((1, 3, 4), (3, 2), "reflect"), ((3, 4), (2, -1), "reflect"),
    ((1, 1, 3, 4), (3, -1, 2, 1), "reflect"), ((2, 3, 4), (1, 1, 2, 2), "reflect"),
    ((1, 3, 4), (3, 5), "replicate"), ((1, 1, 3, 4), (3, -1, 2, 4), "replicate"),
    ((3, 4), (2, 0), "replicate"), ((1, 3, 4), (4, 2), "circular"),
    ((1, 1, 3, 4), (3, -1, 2, 1), "circular"), ((2, 3, 4), (1, 1, 1, 1), "circular"),
    ((1, 1, 2, 3, 4), (1, 1, 1, 1, 1, 1), "reflect"),
    ((1, 2, 3, 4), (2, 1, 1, 1, 1, 1), "replicate"),
]


@pytest.mark.parametrize(("shape", "pad", "mode"), PADS)
def test_pad(shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> None:
    value = 1.5 if mode == "constant" else None
    check(lambda lib, F, x: F.pad(x, pad, mode=mode, value=value), [_arr(*shape)], name=True)


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,)),
    lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1, 1, 1, 1, 1)),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (3, 3), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 1, 2, 3), (0, 0, 2, 0), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (4, 2), mode="circular"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (2, 2), mode="foo"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (2, 2), mode="replicate", value=1.0),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (-4, 2)),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (-2, -2)),
    lambda lib: lib.nn.functional.pad(lib.ones(3), (1, 2), mode="replicate"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 1, 2, 3), (1, 2), mode="reflect"),
    lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (1.5, 2)),
])
def test_pad_errors(prog: Program) -> None:
    same_error(prog)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_padding_modes(mode: str, padding: Any) -> None:
    x = _arr(2, 3, 6, 5)
    outs = []
    for lib in (torch, gradsum):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(3, 4, (3, 2) if padding != "same" else 3, padding=padding,
                             padding_mode=mode, dtype=lib.float64)
        with (torch.no_grad() if lib is torch else gradsum.no_grad()):
            conv.weight.copy_(lib.tensor(np.linspace(-1, 1, conv.weight.numel()).reshape(
                tuple(conv.weight.shape)), dtype=lib.float64))
            conv.bias.fill_(0.25)
        xt = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        y = conv(xt)
        y.pow(2).sum().backward()
        outs.append((_np(y), _np(xt.grad), _np(conv.weight.grad), repr(conv)))
    for a, b in zip(outs[0][:3], outs[1][:3]):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)
    assert outs[0][3] == outs[1][3]


def test_conv2d_bad_padding_mode() -> None:
    same_error(lambda lib: lib.nn.Conv2d(1, 1, 3, padding_mode="mirror"))


# -- pooling ------------------------------------------------------------------------------
POOLS: list[tuple[str, Program, bool]] = [  # id, program, ties
    ("max", lambda lib, F, x: F.max_pool2d(x, 2), False),
    ("max_ties_overlap", lambda lib, F, x: F.max_pool2d(x, 3, 1, 1, return_indices=True), True),
    ("max_ceil_dil", lambda lib, F, x: F.max_pool2d(x, (3, 2), (2, 3), (1, 1), (1, 2),
                                                     ceil_mode=True, return_indices=True), False),
    ("max_unbatched", lambda lib, F, x: F.max_pool2d(x[0], 3, 2, 1, 2, True), False),
    ("avg", lambda lib, F, x: F.avg_pool2d(x, 2), False),
    ("avg_pad_ceil", lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1, True, True), False),
    ("avg_exclude_pad", lambda lib, F, x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1), True, False),
     False),
    ("avg_divisor", lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1, True, False, 5), False),
    ("avg_unbatched", lambda lib, F, x: F.avg_pool2d(x[0], 3, 2, 1, False, False), False),
    ("adaptive_avg", lambda lib, F, x: F.adaptive_avg_pool2d(x, (3, 4)), False),
    ("adaptive_avg_none", lambda lib, F, x: F.adaptive_avg_pool2d(x, (None, 4)), False),
    ("adaptive_avg_1", lambda lib, F, x: F.adaptive_avg_pool2d(x, 1), False),
    ("adaptive_avg_up", lambda lib, F, x: F.adaptive_avg_pool2d(x[0], 9), False),
    ("adaptive_max", lambda lib, F, x: F.adaptive_max_pool2d(x, (3, 4), True), True),
    ("adaptive_max_none", lambda lib, F, x: F.adaptive_max_pool2d(x[0], (5, None)), False),
    ("max1d", lambda lib, F, x: F.max_pool1d(x[0], 3, 2, 1), False),
    ("max1d_idx", lambda lib, F, x: F.max_pool1d(x[:, 0, 0], 2, return_indices=True), True),
    ("avg1d", lambda lib, F, x: F.avg_pool1d(x[0], 3, 2, 1, True, False), False),
]


@pytest.mark.parametrize(("fn", "ties", "name"), [(p[1], p[2], "1d" not in p[0]) for p in POOLS],
                         ids=[p[0] for p in POOLS])
def test_pooling(fn: Program, ties: bool, name: bool) -> None:
    # (1-d pooling ends in a squeeze, whose grad_fn gradsum names SqueezeBackward0)
    check(fn, [_arr(2, 3, 7, 6, ties=ties)], name=name)


@pytest.mark.parametrize("prog", [
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 3, padding=2),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 0),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 2, dilation=0),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), 6),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 5, 5), (2, 2, 2)),
    lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 2, 5, 5), 3, padding=2),
    lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 2, 5, 5), 2, divisor_override=0),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.ones(1, 2, 5, 5), (2,)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool2d(lib.ones(5, 5), 2),
    lambda lib: lib.nn.functional.max_pool1d(lib.ones(5), 2),
])
def test_pooling_errors(prog: Program) -> None:
    same_error(prog)


def test_pooling_integer_inputs() -> None:
    x = np.arange(32).reshape(1, 2, 4, 4) * 3 - 20
    for fn in (lambda lib: lib.nn.functional.max_pool2d(lib.tensor(x), 2, 1, 1),
               lambda lib: lib.nn.functional.avg_pool2d(lib.tensor(x), 3, 2, 1)):
        assert fn(gradsum).tolist() == fn(torch).tolist()


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool2d(2), lambda nn: nn.MaxPool2d((3, 2), 1, 1, 2, True, True),
    lambda nn: nn.AvgPool2d(3), lambda nn: nn.AvgPool2d(3, 2, 1, True, False, 4),
    lambda nn: nn.AdaptiveAvgPool2d((None, 3)), lambda nn: nn.AdaptiveMaxPool2d(2),
    lambda nn: nn.MaxPool1d(2), lambda nn: nn.AvgPool1d(3), lambda nn: nn.AvgPool1d(3, 2, 1),
])
def test_pooling_module_reprs_and_forward(make: Program) -> None:
    same_repr(lambda lib: make(lib.nn))
    x = _arr(2, 3, 8, 7)
    x = x[:, :, 0] if "1d" in type(make(gradsum.nn)).__name__ else x
    outs = []
    for lib in (torch, gradsum):
        y = make(lib.nn)(lib.tensor(x, dtype=lib.float64))
        outs.append([_np(t) for t in (y if isinstance(y, tuple) else (y,))])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12)


# -- normalize, cosine_similarity, pairwise_distance ------------------------------------------
@pytest.mark.parametrize(("fn", "shapes"), [
    (lambda lib, F, a: F.normalize(a), [(4, 5)]),
    (lambda lib, F, a: F.normalize(a, p=3, dim=0), [(4, 5)]),
    (lambda lib, F, a: F.normalize(a, p=1, dim=-1, eps=0.5), [(2, 3, 2)]),
    (lambda lib, F, a, b: F.cosine_similarity(a, b), [(4, 5), (4, 5)]),
    (lambda lib, F, a, b: F.cosine_similarity(a, b, dim=-1), [(4, 5), (1, 5)]),
    (lambda lib, F, a, b: F.cosine_similarity(a, b, 0, eps=10.0), [(3, 1), (3, 4)]),
    (lambda lib, F, a, b: F.pairwise_distance(a, b), [(4, 5), (4, 5)]),
    (lambda lib, F, a, b: F.pairwise_distance(a, b, p=3, keepdim=True), [(4, 5), (5,)]),
    (lambda lib, F, a, b: F.pairwise_distance(a, b, p=1, eps=0.1), [(2, 3, 4), (3, 4)]),
])
def test_distances(fn: Program, shapes: list[tuple[int, ...]]) -> None:
    check(fn, [_arr(*s) for s in shapes])


def test_cosine_similarity_zero_vector_first_order() -> None:
    # the clamped norm: a zero row gives 0 similarity and torch's (finite) gradient
    a = _arr(3, 4)
    a[1] = 0.0
    check(lambda lib, F, x, y: F.cosine_similarity(x, y), [a, _arr(3, 4)], second=False)
    check(lambda lib, F, x: F.normalize(x), [a], second=False)


def test_distance_modules() -> None:
    same_repr(lambda lib: lib.nn.CosineSimilarity(0, 1e-3))
    same_repr(lambda lib: lib.nn.PairwiseDistance(1.0, keepdim=True))
    a, b = _arr(3, 4), _arr(3, 4)
    for make in (lambda nn: nn.CosineSimilarity(), lambda nn: nn.PairwiseDistance(3.0)):
        t = make(torch.nn)(torch.tensor(a), torch.tensor(b))
        g = make(gradsum.nn)(gradsum.tensor(a), gradsum.tensor(b))
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-12)
    same_error(lambda lib: lib.nn.functional.cosine_similarity(lib.ones(2, dtype=lib.int64),
                                                               lib.ones(2, dtype=lib.int64),
                                                               dim=0))


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
    fn, arrays, ints, second = LOSSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib, F, *xs: fn(lib, F, *xs, reduction), arrays, ints, second)


def test_kl_div_batchmean_and_mean_warning() -> None:
    check(lambda lib, F, a, b: F.kl_div(a, b.abs(), reduction="batchmean"), [_A, _B])
    for lib in (torch, gradsum):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            lib.nn.functional.kl_div(lib.zeros(2), lib.ones(2))
            lib.nn.functional.kl_div(lib.zeros(2), lib.ones(2), reduction="batchmean")
        assert [w.category for w in rec] == [UserWarning]


def test_one_dim_margin_losses() -> None:
    check(lambda lib, F, a, t: F.multi_margin_loss(a, t, reduction="none"),
          [_A[0], np.array(2)], (1,), second=False)
    check(lambda lib, F, a, t: F.multilabel_margin_loss(a, t, reduction="none"),
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
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-12)


# -- gradcheck / gradgradcheck of the new primitives ------------------------------------------
def _x(*shape: int, ties: bool = False) -> gradsum.Tensor:
    return gradsum.tensor(_arr(*shape, ties=ties), dtype=gradsum.float64, requires_grad=True)


F = gradsum.nn.functional
PRIMITIVES: list[tuple[str, Program, tuple[int, ...]]] = [
    ("constant_pad", lambda x: F.pad(x, (1, -1, 2, 0), value=0.5), (2, 3, 4)),
    ("reflect_pad", lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), (1, 2, 3, 4)),
    ("replicate_pad", lambda x: F.pad(x, (3, -1), mode="replicate"), (2, 3, 4)),
    ("circular_pad", lambda x: F.pad(x, (2, 1, -1, 2), mode="circular"), (1, 3, 4)),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 2, 5, 6)),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, True, False), (2, 2, 5, 6)),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), (2, 5, 7)),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 3)), (2, 5, 7)),
]


@pytest.mark.parametrize(("fn", "shape"), [p[1:] for p in PRIMITIVES],
                         ids=[p[0] for p in PRIMITIVES])
def test_primitive_gradcheck(fn: Program, shape: tuple[int, ...]) -> None:
    x = _x(*shape)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))
