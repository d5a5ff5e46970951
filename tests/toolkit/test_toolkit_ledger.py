"""The accumulation ledger: contributions, clears, steps, labels, call sites; sums to .grad."""

from __future__ import annotations

import inspect

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradsum
from gradsum import nn
from gradsum.autograd import engine, graph
from gradsum.optim import SGD
from gradsum.toolkit import Ledger, LedgerMismatchError, transactional
from toolkit_helpers import _toolkit_leaves_engine_clean  # noqa: F401  (autouse)


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


def _state(t):
    g = t.grad
    return None if g is None else (id(g), g._version, g._array.tobytes())


def test_toolkit_off_registers_nothing():
    w = gradsum.ones(2, requires_grad=True)
    (w * 2).sum().backward()
    assert engine.backward_observers == [] and graph.accumulate_observers == []
    ledger = Ledger([w])
    assert engine.backward_observers == []  # constructing does not attach
    with ledger:
        assert len(engine.backward_observers) == 1 and len(graph.accumulate_observers) == 1
    assert engine.backward_observers == [] and graph.accumulate_observers == []


def test_contributions_labels_sites_norms_and_sum():
    w = gradsum.tensor([1.0, -2.0, 3.0], requires_grad=True)
    with Ledger({"w": w}, store_values=True) as ledger:
        with ledger.label("loss_a"):
            la = _line() + 1
            (w * 2).sum().backward()
        ledger.next_label("loss_b")
        lb = _line() + 1
        (w * w).sum().backward()
        lc = _line() + 1
        (w ** 3).sum().backward()
    cs = ledger.contributions(w)
    assert [c.call.label for c in cs] == ["loss_a", "loss_b", None]
    assert [c.call.site for c in cs] == [f"tests/toolkit/test_toolkit_ledger.py:{n}"
                                         for n in (la, lb, lc)]
    assert [c.call.seq for c in cs] == sorted(c.call.seq for c in cs)
    assert cs[0].norm == pytest.approx(2 * 3 ** 0.5)
    assert cs[1].norm == pytest.approx(2 * 14 ** 0.5)
    assert all(c.call.status == "ok" for c in cs)
    ex = ledger.explain("w")
    assert ex.max_abs_error == 0.0  # same additions in the same order: bit-identical
    text = str(ex)
    assert "loss_a" in text and f"test_toolkit_ledger.py:{lb}" in text
    assert ledger.verify() == 0.0


def test_retain_graph_split_equals_one_backward_and_is_recorded_twice():
    w = gradsum.tensor([0.5, 1.5], requires_grad=True)
    with Ledger([w], store_values=True) as ledger:
        y = w * 3
        a, b = (y * 2).sum(), (y * y).sum()
        a.backward(retain_graph=True)
        b.backward()
    assert len(ledger.contributions(w)) == 2
    ledger.verify()
    (g,) = gradsum.autograd.grad((w * 3 * 2).sum() + ((w * 3) ** 2).sum(), w)
    assert gradsum.allclose(w.grad, g)


def test_clears_are_recorded_and_sums_hold():
    model = nn.Linear(3, 2)
    opt = SGD(model.parameters(), lr=0.1)
    x = gradsum.randn(4, 3)
    with Ledger(model, store_values=True) as ledger:
        ledger.watch(opt)
        model(x).sum().backward()
        opt.zero_grad()                               # set_to_none=True
        model(x).sum().backward()
        model(x).sum().backward()
        ledger.verify()
        model.weight.grad.zero_()                     # zeroed in place
        model(x).sum().backward()
        ledger.verify()
        model.weight.grad.mul_(0.5)                   # clipping-style scaling
        ledger.verify()
        model.weight.grad = gradsum.ones(2, 3)        # assigned
        model(x).sum().backward()
        ledger.verify()
        model.bias.grad = None                        # p.grad = None
        model(x).sum().backward()
        ledger.verify()
        kinds = [e.kind for e in ledger.history("weight")]
        bias_events = [e for e in ledger.history("bias") if e.kind != "contribution"]
    assert kinds == ["contribution", "set_to_none", "contribution", "contribution", "zeroed",
                     "contribution", "modified", "assigned", "contribution", "contribution"]
    assert bias_events[0].where == "optimizer.zero_grad(set_to_none=True)"
    assert bias_events[-1].kind == "set_to_none" and "p.grad = None" in bias_events[-1].where
    assert len(ledger.contributions("weight")) == 2   # since the assignment


def test_autograd_grad_records_nothing_and_leaves_grad_bit_identical():
    w = gradsum.randn(3, 4, requires_grad=True)
    x = gradsum.randn(2, 3)
    (x @ w).sum().backward()
    before = _state(w)
    with Ledger([w], store_values=True) as ledger:
        (g,) = gradsum.autograd.grad(((x @ w) ** 2).sum(), w)
        (g2,) = gradsum.autograd.grad(((x @ w) ** 2).sum(), w, create_graph=True)
        gradsum.autograd.grad((g2 * g2).sum(), w)
    assert _state(w) == before
    assert ledger.contributions(w) == [] and ledger.calls == []
    assert [e.kind for e in ledger.history(w)] == ["present"]


def test_steps_and_forgotten_zero_grad_visible_in_explain():
    w = gradsum.ones(2, requires_grad=True)
    opt = SGD([w], lr=0.1)
    with Ledger({"w": w}) as ledger:
        ledger.watch(opt)
        (w * 2).sum().backward()
        opt.step()
        (w * 2).sum().backward()          # zero_grad() forgotten
        opt.step()
        (w * 2).sum().backward()
        cs = ledger.contributions(w)
        text = str(ledger.explain(w))
    assert [c.step + 1 for c in cs] == [1, 2, 3]      # the step each first fed
    assert "never cleared" in text and "zero_grad" in text
    assert ledger.steps == 2


def test_create_graph_contributions_sum_without_spurious_events():
    w = gradsum.tensor([1.0, 2.0], requires_grad=True)
    with Ledger([w], store_values=True) as ledger:
        (w ** 3).sum().backward(create_graph=True)
        first = w.grad
        (w ** 2).sum().backward(create_graph=True)
        assert w.grad is not first and w.grad.grad_fn is not None
        ledger.verify()
    assert [e.kind for e in ledger.history(w)] == ["contribution", "contribution"]


def test_weight_tying_one_contribution_per_backward_summed_over_paths():
    emb = nn.Embedding(5, 3)
    head_bias = gradsum.zeros(5, requires_grad=True)
    tokens = gradsum.tensor([0, 3, 4])
    with Ledger({"emb.weight": emb.weight, "head_bias": head_bias}, store_values=True) as led:
        h = emb(tokens)
        logits = h @ emb.weight.t() + head_bias        # tied output projection
        nn.functional.cross_entropy(logits, gradsum.tensor([1, 2, 0])).backward()
        led.verify()
    assert len(led.contributions(emb.weight)) == 1


def test_auto_mode_tracks_every_leaf_and_names_from_watch():
    model = nn.Linear(2, 2)
    x = gradsum.ones(1, 2, requires_grad=True)
    with Ledger(store_values=True) as ledger:
        ledger.watch(model)
        model(x).sum().backward()
        ledger.verify()
    assert set(ledger.names()) == {"weight", "bias", "leaf[2]"}


def test_summary_and_unknown_parameter_errors():
    w = gradsum.ones(2, requires_grad=True)
    with Ledger({"w": w}) as ledger:
        (w * 2).sum().backward()
        assert ledger.summary().splitlines()[1].startswith("w ")
    with pytest.raises(KeyError, match="not tracked"):
        ledger.explain(gradsum.ones(2, requires_grad=True))
    with pytest.raises(KeyError, match="no tracked parameter named 'v'"):
        ledger.explain("v")
    with pytest.raises(RuntimeError, match="store_values=True"):
        ledger.verify()


def test_verify_catches_writes_that_bypass_the_version_counter():
    w = gradsum.ones(2, requires_grad=True)
    with Ledger({"w": w}, store_values=True) as ledger:
        (w * 2).sum().backward()
        w.grad._array[0] = 100.0                     # raw write: no version bump
        with pytest.raises(LedgerMismatchError, match="w: baseline"):
            ledger.verify()


def test_failed_backward_rolled_back_by_transactional_is_dropped():
    w = gradsum.ones(2, requires_grad=True)
    with Ledger([w], store_values=True) as ledger, transactional():
        (w * 2).sum().backward()
        y = (w * 3).sum()
        h = y.grad_fn.register_prehook(lambda g: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            y.backward()
        h.remove()
        ledger.verify()
        assert len(ledger.contributions(w)) == 1
        assert ledger.calls[-1].status == "rolled back"


def test_partial_failure_outside_transactional_is_recorded_as_failed():
    a = gradsum.ones(2, requires_grad=True)
    b = gradsum.ones(2, requires_grad=True)
    with Ledger({"a": a, "b": b}, store_values=True) as ledger:
        y = (a * 3) + (b * 5)                       # b's branch runs first
        y.grad_fn.next_functions[0][0].register_prehook(lambda g: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            y.sum().backward()
        ledger.verify()
    assert a.grad is None and b.grad.tolist() == [5.0, 5.0]
    assert ledger.contributions(b)[0].call.status == "failed"


# -- property: under random sequences of backward / clear / step, the ledger sums to .grad -----
_OPS = st.sampled_from(["backward", "backward2", "none", "zero", "scale", "assign", "step",
                        "grad", "create_graph"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_OPS, min_size=1, max_size=14), st.integers(0, 2 ** 31 - 1))
def test_ledger_sums_to_grad_under_random_sequences(ops, seed):
    gradsum.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = gradsum.randn(5, 3)
    with Ledger(model, store_values=True) as ledger:
        ledger.watch(opt)
        for op in ops:
            p = model[0].weight
            if op == "backward":
                model(x).pow(2).mean().backward()
            elif op == "backward2":
                out = model(x)
                out.sum().backward(retain_graph=True)
                (out * out).mean().backward()
            elif op == "none":
                p.grad = None
            elif op == "zero" and p.grad is not None:
                p.grad.zero_()
            elif op == "scale" and p.grad is not None:
                p.grad.mul_(0.25)
            elif op == "assign":
                p.grad = gradsum.randn(4, 3)
            elif op == "step":
                opt.step()
            elif op == "grad":
                before = [_state(q) for q in model.parameters()]
                gradsum.autograd.grad(model(x).sum(), list(model.parameters()))
                assert [_state(q) for q in model.parameters()] == before
            elif op == "create_graph":
                model(x).pow(2).sum().backward(create_graph=True)
                for q in model.parameters():
                    if q.grad is not None:
                        q.grad = q.grad.detach()
            ledger.verify(atol=1e-5)
