"""Side by side with torch: ``F.ctc_loss`` and ``nn.CTCLoss`` (values, gradients, graph,
errors)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradsum
import gradsum.nn.functional as GF
from gradsum import nn

torch = pytest.importorskip("torch", reason="side-by-side checks need torch")
TF = torch.nn.functional

DT = {"float64": (gradsum.float64, torch.float64, 1e-10),
      "float32": (gradsum.float32, torch.float32, 2e-5)}


def _case(seed: int, t: int, n: int, c: int, s: int, repeat: bool = False,
          zero: bool = False) -> tuple[np.ndarray, np.ndarray, list[int], list[int]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, n, c)) * 2
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    tg = rng.integers(1, c, (n, s))
    if repeat:
        tg[:, 1] = tg[:, 0]
    tl = list(rng.integers(1 if not zero else 0, s + 1, n))
    if zero:
        tl[0] = 0
    il = [int(v) for v in rng.integers(min(2 * s + 1, t), t + 1, n)]
    return lp, tg, il, [int(v) for v in tl]


def _pair(lp: np.ndarray, dtype: str) -> tuple[Any, Any]:
    g = gradsum.tensor(lp, dtype=DT[dtype][0], requires_grad=True)
    t = torch.tensor(lp, dtype=DT[dtype][1], requires_grad=True)
    return g, t


def _close(a: Any, b: Any, tol: float) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(),
                               rtol=tol, atol=tol)


CASES = [
    dict(seed=0, t=8, n=3, c=5, s=3),
    dict(seed=1, t=12, n=4, c=3, s=4, repeat=True),
    dict(seed=2, t=10, n=3, c=6, s=3, zero=True),
    dict(seed=3, t=15, n=5, c=4, s=5, repeat=True, zero=True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("concat", [False, True])
def test_values_and_grads(dtype: str, reduction: str, case: int, concat: bool) -> None:
    lp, tg, il, tl = _case(**CASES[case])
    tol = DT[dtype][2]
    g, t = _pair(lp, dtype)
    if concat:
        flat = np.concatenate([tg[i, :tl[i]] for i in range(len(tl))])
        gt, tt = gradsum.tensor(flat), torch.tensor(flat)
    else:
        gt, tt = gradsum.tensor(tg), torch.tensor(tg)
    lengths = (gradsum.tensor(il), gradsum.tensor(tl)) if case % 2 else (tuple(il), tuple(tl))
    out = GF.ctc_loss(g, gt, *lengths, reduction=reduction)
    ref = TF.ctc_loss(t, tt, tuple(il), tuple(tl), reduction=reduction)
    _close(out, ref, tol)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    w = np.random.default_rng(9).standard_normal(tuple(ref.shape))
    (out * gradsum.tensor(w, dtype=DT[dtype][0])).sum().backward()
    (ref * torch.tensor(w, dtype=DT[dtype][1])).sum().backward()
    _close(g.grad, t.grad, tol)


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_impossible_targets(zero_infinity: bool, reduction: str) -> None:
    lp, _, _, _ = _case(4, 6, 3, 4, 4)
    tg = np.array([[1, 1, 1, 1], [1, 2, 3, 1], [2, 2, 0, 0]])
    il, tl = (6, 2, 0), (4, 4, 2)  # repeats need blanks between: 7 > 6 steps; 2 < 4; 0 < 2
    g, t = _pair(lp, "float64")
    out = GF.ctc_loss(g, gradsum.tensor(tg), il, tl, reduction=reduction,
                      zero_infinity=zero_infinity)
    ref = TF.ctc_loss(t, torch.tensor(tg), il, tl, reduction=reduction,
                      zero_infinity=zero_infinity)
    _close(out, ref, 1e-12)
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    out.sum().backward()
    ref.sum().backward()
    _close(g.grad, t.grad, 1e-12)  # (nan where torch gives nan: assert_allclose matches them)


def test_empty_input_and_target() -> None:
    lp, tg, _, _ = _case(5, 6, 3, 4, 2)
    il, tl = (0, 0, 6), (0, 1, 0)
    g, t = _pair(lp, "float64")
    out = GF.ctc_loss(g, gradsum.tensor(tg), il, tl, reduction="none")
    ref = TF.ctc_loss(t, torch.tensor(tg), il, tl, reduction="none")
    _close(out, ref, 1e-12)
    GF.ctc_loss(g, gradsum.tensor(tg), il, (0, 0, 0), reduction="sum").backward()
    TF.ctc_loss(t, torch.tensor(tg), il, (0, 0, 0), reduction="sum").backward()
    _close(g.grad, t.grad, 1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_unbatched(reduction: str) -> None:
    lp, tg, il, tl = _case(6, 9, 1, 5, 3, repeat=True)
    g, t = _pair(lp[:, 0], "float64")
    out = GF.ctc_loss(g, gradsum.tensor(tg[0, :tl[0]]), gradsum.tensor(il[0]),
                      gradsum.tensor(tl[0]), blank=0, reduction=reduction)
    ref = TF.ctc_loss(t, torch.tensor(tg[0, :tl[0]]), torch.tensor(il[0]),
                      torch.tensor(tl[0]), reduction=reduction)
    _close(out, ref, 1e-12)
    assert out.shape == ref.shape
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    out.sum().backward()
    ref.sum().backward()
    _close(g.grad, t.grad, 1e-12)


def test_other_blank_and_int_targets() -> None:
    lp, tg, il, tl = _case(7, 10, 4, 5, 3, repeat=True)
    tg = tg - 1  # labels 0..3, blank 4
    g, t = _pair(lp, "float64")
    out = GF.ctc_loss(g, gradsum.tensor(tg, dtype=gradsum.int32), il, tl, blank=4)
    ref = TF.ctc_loss(t, torch.tensor(tg, dtype=torch.int32), il, tl, blank=4)
    _close(out, ref, 1e-12)
    out.backward()
    ref.backward()
    _close(g.grad, t.grad, 1e-12)


def test_module_matches() -> None:
    lp, tg, il, tl = _case(8, 9, 3, 4, 3)
    g, t = _pair(lp, "float32")
    m, tm = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True), torch.nn.CTCLoss(
        blank=0, reduction="sum", zero_infinity=True)
    assert repr(m) == repr(tm)
    assert (m.blank, m.reduction, m.zero_infinity) == (tm.blank, tm.reduction, tm.zero_infinity)
    out = m(g, gradsum.tensor(tg), gradsum.tensor(il), gradsum.tensor(tl))
    ref = tm(t, torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
    _close(out, ref, 2e-5)
    assert out.dtype == gradsum.float32


def test_double_backward_raises_as_torch() -> None:
    lp, tg, il, tl = _case(0, 8, 2, 5, 3)
    g, t = _pair(lp, "float64")
    (gg,) = gradsum.autograd.grad(GF.ctc_loss(g, gradsum.tensor(tg), il, tl), g,
                                  create_graph=True)
    (tgg,) = torch.autograd.grad(TF.ctc_loss(t, torch.tensor(tg), il, tl), t, create_graph=True)
    assert type(gg.grad_fn).__name__ == type(tgg.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError) as theirs:
        tgg.sum().backward()
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not"):
        gg.sum().backward()
    assert str(theirs.value).startswith("derivative for aten::_ctc_loss_backward is not")


def test_no_grad_input_records_nothing() -> None:
    lp, tg, il, tl = _case(1, 8, 2, 5, 3)
    out = GF.ctc_loss(gradsum.tensor(lp), gradsum.tensor(tg), il, tl, zero_infinity=True)
    assert out.grad_fn is None and not out.requires_grad


def _both(fn_args: Any) -> tuple[BaseException, BaseException]:
    errs = []
    for mod, F in ((torch, TF), (gradsum, GF)):
        with pytest.raises(Exception) as e:
            F.ctc_loss(*fn_args(mod))
        errs.append(e.value)
    return errs[0], errs[1]


LP = _case(0, 6, 2, 4, 3)[0]
TG = np.array([[1, 2, 3], [3, 2, 1]])

ERRORS = {
    "input too long": lambda m: (m.tensor(LP), m.tensor(TG), [7, 5], [3, 2]),
    "target too long": lambda m: (m.tensor(LP), m.tensor(TG), [6, 5], [4, 2]),
    "negative input": lambda m: (m.tensor(LP), m.tensor(TG), [6, -1], [3, 2]),
    "negative target": lambda m: (m.tensor(LP), m.tensor(TG), [6, 5], [-1, 2]),
    "batch input lengths": lambda m: (m.tensor(LP), m.tensor(TG), [6, 5, 4], [3, 2]),
    "batch target lengths": lambda m: (m.tensor(LP), m.tensor(TG), [6, 5], [3, 2, 1]),
    "blank": lambda m: (m.tensor(LP), m.tensor(TG), [6, 5], [3, 2], 4),
    "3-d targets": lambda m: (m.tensor(LP), m.tensor(TG[None]), [6, 5], [3, 2]),
    "targets batch": lambda m: (m.tensor(LP), m.tensor(TG[:1]), [6, 5], [3, 2]),
    "concat size": lambda m: (m.tensor(LP), m.tensor([1, 2, 3, 2]), [6, 5], [3, 2]),
    "log_probs dim": lambda m: (m.tensor(LP[0, 0]), m.tensor(TG), [6, 5], [3, 2]),
    "float lengths": lambda m: (m.tensor(LP), m.tensor(TG), m.tensor([6.0, 5.0]),
                                m.tensor([3.0, 2.0])),
    "mixed lengths": lambda m: (m.tensor(LP), m.tensor(TG), m.tensor([6, 5]), [3, 2]),
    "int lengths": lambda m: (m.tensor(LP[:, 0]), m.tensor(TG[0]), 6, 3),
    "half": lambda m: (m.tensor(LP).half(), m.tensor(TG), [6, 5], [3, 2]),
    "long": lambda m: (m.tensor(TG), m.tensor(TG), [6, 5], [3, 2]),
    "empty": lambda m: (m.zeros(0, 2, 4), m.tensor(TG), [0, 0], [0, 0], 0, "none"),
    "reduction": lambda m: (m.tensor(LP), m.tensor(TG), [6, 5], [3, 2], 0, "foo"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match(name: str) -> None:
    theirs, ours = _both(ERRORS[name])
    assert type(ours) is type(theirs)
    first = str(theirs).split("\n")[0]
    assert str(ours).startswith(first.split(" (got")[0].split(" - got")[0]), (ours, theirs)


def test_elementwise_mean_warns() -> None:
    lp, tg, il, tl = _case(0, 8, 2, 5, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = GF.ctc_loss(gradsum.tensor(lp), gradsum.tensor(tg), il, tl,
                          reduction="elementwise_mean")
    assert "elementwise_mean" in str(w[0].message)
    _close(out, TF.ctc_loss(torch.tensor(lp), torch.tensor(tg), il, tl), 1e-12)


def test_larger_float32_batch() -> None:
    lp, tg, il, tl = _case(11, 40, 8, 12, 10, repeat=True, zero=True)
    g, t = _pair(lp, "float32")
    out = GF.ctc_loss(g, gradsum.tensor(tg), il, tl)
    ref = TF.ctc_loss(t, torch.tensor(tg), il, tl)
    _close(out, ref, 2e-5)
    out.backward()
    ref.backward()
    _close(g.grad, t.grad, 2e-5)


# -- AdaptiveLogSoftmaxWithLoss ----------------------------------------------------------------
def _asm_pair(head_bias: bool) -> tuple[Any, Any]:
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10, 15], div_value=2.0,
                                             head_bias=head_bias).double()
    gm = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10, 15], div_value=2.0,
                                       head_bias=head_bias).double()
    sd = {k: gradsum.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert {k: tuple(v.shape) for k, v in gm.state_dict().items()} == {
        k: tuple(v.shape) for k, v in sd.items()}
    gm.load_state_dict(sd)
    return gm, tm


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_forward_backward(head_bias: bool) -> None:
    gm, tm = _asm_pair(head_bias)
    assert repr(gm) == repr(tm)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 16))
    y = np.array([0, 4, 5, 9, 10, 14, 15, 19, 1, 12, 7, 3])
    gx = gradsum.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    go, to = gm(gx, gradsum.tensor(y)), tm(tx, torch.tensor(y))
    assert type(go).__name__ == "_ASMoutput" and go._fields == ("output", "loss")
    _close(go.output, to.output, 1e-12)
    _close(go.loss, to.loss, 1e-12)
    go.loss.backward()
    to.loss.backward()
    _close(gx.grad, tx.grad, 1e-12)
    for (name, p), (tname, q) in zip(gm.named_parameters(), tm.named_parameters()):
        assert name == tname
        _close(p.grad, q.grad, 1e-12)
    _close(gm.log_prob(gradsum.tensor(x)), tm.log_prob(torch.tensor(x)), 1e-12)
    assert gm.predict(gradsum.tensor(x)).tolist() == tm.predict(torch.tensor(x)).tolist()
    one = gm(gradsum.tensor(x[0]), gradsum.tensor(y[3]))
    _close(one.output, tm(torch.tensor(x[0]), torch.tensor(y[3])).output, 1e-12)


def test_adaptive_errors_match() -> None:
    gm, tm = _asm_pair(False)
    for args in [((4, 16), [1, 2, 3]), ((4, 16), [0, 1, 2, 20]), ((3, 16), [[1], [2], [3]]),
                 ((16,), [1, 2])]:
        msgs = []
        for m, mod in ((tm, torch), (gm, gradsum)):
            with pytest.raises(RuntimeError) as e:
                m(mod.zeros(*args[0], dtype=mod.float64), mod.tensor(args[1]))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    for cutoffs in ([], [3, 2], [0, 4], [20], [4, 4]):
        with pytest.raises(ValueError) as theirs:
            torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)
        with pytest.raises(ValueError, match=str(theirs.value)[:30]):
            nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)
