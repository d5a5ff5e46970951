"""Strict mode: stale gradients, accumulation windows, graphs in .grad, leaks, None vs zero."""

from __future__ import annotations

import gc
import inspect
import warnings

import pytest

import gradsum
from gradsum import nn, optim
from gradsum.toolkit import (
    AccumulationWindowWarning,
    GradGraphError,
    GraphLeakWarning,
    NoneVsZeroWarning,
    Sanitizer,
    StaleGradientError,
    StrictOptimizer,
    strict,
)
from gradsum.toolkit import sanitizer as sanitizer_mod
from toolkit_helpers import _toolkit_leaves_engine_clean  # noqa: F401  (autouse)


def _setup(seed=0, **opt_kw):
    gradsum.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = optim.SGD(model.parameters(), lr=0.1, **opt_kw)
    x, y = gradsum.randn(8, 3), gradsum.randn(8, 2)
    return model, opt, x, y


def _loss(model, x, y):
    return ((model(x) - y) ** 2).mean()


def test_forgotten_zero_grad_raises_with_names_steps_and_fix():
    model, opt, x, y = _setup()
    with strict(opt, params=model):
        line1 = inspect.currentframe().f_lineno + 1
        _loss(model, x, y).backward()
        opt.step()
        _loss(model, x, y).backward()                      # zero_grad() forgotten
        before = [p.detach().clone() for p in model.parameters()]
        with pytest.raises(StaleGradientError) as info:
            opt.step()
    msg = str(info.value)
    assert msg.startswith("optimizer step 2: the .grad of '0.weight', '0.bias', '2.weight', "
                          "'2.bias' still holds gradients from before step 1")
    assert "backward #" in msg and f"test_toolkit_sanitizer.py:{line1}" in msg
    assert "fed step(s) [1]" in msg and "'0.weight': steps [1]" in msg
    assert "optimizer.zero_grad()" in msg
    assert isinstance(info.value, RuntimeError)
    # the failed step changed nothing (checks run before the update)
    assert all(gradsum.equal(a, b) for a, b in zip(before, model.parameters()))


def test_correct_loop_passes_and_reports():
    model, opt, x, y = _setup()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with strict(opt, params=model) as s:
            for _ in range(4):
                opt.zero_grad()
                _loss(model, x, y).backward()
                opt.step()
    rep = s.last_report
    assert rep.step == 4 and rep.backward_calls == 1 and rep.skipped == []
    assert rep.updated == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(s.reports) == 4


def test_zero_grad_with_set_to_none_false_also_clears():
    model, opt, x, y = _setup()
    with strict(opt, params=model):
        for _ in range(3):
            _loss(model, x, y).backward()
            opt.step()
            opt.zero_grad(set_to_none=False)


def test_declared_window_of_k_and_short_last_window_warns():
    model, opt, x, y = _setup()
    chunks = list(zip(x.split(2), y.split(2)))                    # 4 micro-batches
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with strict(opt, params=model, accumulate=4) as s:
            for xs, ys in chunks:
                _loss(model, xs, ys).backward()
            opt.step()
            opt.zero_grad()
    assert s.last_report.backward_calls == 4 and s.last_report.window == 4
    # a short last window: a warning, not an error
    with Sanitizer(opt, params=model) as s2, s2.accumulate(4):
        for xs, ys in chunks[:3]:
            _loss(model, xs, ys).backward()
        with pytest.warns(AccumulationWindowWarning, match="fed by 3 backward pass.*fewer than "
                                                           "the declared window of 4"):
            opt.step()
        opt.zero_grad()
        for xs, ys in chunks + chunks[:1]:
            _loss(model, xs, ys).backward()
        with pytest.warns(AccumulationWindowWarning, match="more than the declared window"):
            opt.step()
        opt.zero_grad()
    assert s2.window is None                                       # the block ended


def test_create_graph_grad_into_step_raises():
    model, opt, x, y = _setup()
    with strict(opt, params=model):
        _loss(model, x, y).backward(create_graph=True)
        with pytest.raises(GradGraphError, match=r"'0\.weight'.*carries an autograd graph.*"
                                                 r"create_graph=True"):
            opt.step()
        opt.zero_grad()
    with strict(opt, params=model, on_graph_grad="warn"):
        _loss(model, x, y).backward(create_graph=True)
        with pytest.warns(GraphLeakWarning, match="carries an autograd graph"):
            opt.step()
        opt.zero_grad()


def test_graph_alive_across_steps_is_reported():
    model, opt, x, y = _setup()
    kept = []
    with strict(opt, params=model) as s:
        for i in range(2):
            opt.zero_grad()
            loss = _loss(model, x, y)
            line = inspect.currentframe().f_lineno + 1
            loss.backward(retain_graph=True)
            kept.append(loss)                                  # the classic leak
            if i == 0:
                opt.step()
        assert s.last_report.alive_graphs == []
        with pytest.warns(GraphLeakWarning, match=r"graph of MeanBackward0 from backward #\d+ "
                                                  rf"at .*test_toolkit_sanitizer.py:{line} "
                                                  r"\(before step 1\) is still alive at step 2"):
            opt.step()
    assert len(s.last_report.alive_graphs) == 1
    assert "bytes of saved tensors" in s.last_report.alive_graphs[0]
    # a normal loop (the loss variable is reassigned) reports nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with strict(opt, params=model) as s:
            for _ in range(3):
                opt.zero_grad()
                loss = _loss(model, x, y)
                loss.backward()
                opt.step()


def test_meta_learning_fast_weights_leak_is_reported():
    gradsum.manual_seed(0)
    w = nn.Parameter(gradsum.randn(3))
    opt = optim.SGD([w], lr=0.1)
    x = gradsum.randn(3)
    fast_history = []
    with strict(opt, params={"w": w}) as s, warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for _ in range(3):
            opt.zero_grad()
            inner = (w * x).pow(2).sum()
            (g,) = gradsum.autograd.grad(inner, w, create_graph=True)
            fast = w - 0.5 * g
            fast_history.append(fast)                          # keeps every graph alive
            outer = (fast * x).sum()
            outer.backward()
            opt.step()
    leaks = [r for r in rec if issubclass(r.category, GraphLeakWarning)]
    assert leaks and "autograd.grad at" in str(leaks[0].message)
    assert "still alive at step 2" in str(leaks[0].message)
    assert s.reports[-1].alive_graphs
    # Without the history, nothing is reported.
    del fast_history
    gc.collect()
    with strict(opt, params={"w": w}), warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.zero_grad()
            (g,) = gradsum.autograd.grad((w * x).pow(2).sum(), w, create_graph=True)
            ((w - 0.5 * g) * x).sum().backward()
            opt.step()


def test_none_versus_zero_report():
    gradsum.manual_seed(0)
    a = nn.Parameter(gradsum.randn(2))
    b = nn.Parameter(gradsum.randn(2))
    c = nn.Parameter(gradsum.randn(2))
    opt = optim.SGD([a, b, c], lr=0.1, momentum=0.9, weight_decay=0.1)
    with strict(opt, params={"a": a, "b": b, "c": c}) as s:
        (a * 2).sum().backward()
        b.grad = gradsum.zeros(2)                              # zero: still updated
        with pytest.warns(NoneVsZeroWarning, match=r"'b' had an all-zero gradient \(not None\) "
                                                   r"and still moved"):
            opt.step()
        rep = s.last_report
        assert rep.skipped == ["c"] and rep.zero_grad_moved == ["b"]
        assert rep.updated == ["a", "b"] and rep.moved_without_grad == []
        assert "skipped (.grad is None" in str(rep) and "zero gradient but moved" in str(rep)
        opt.zero_grad(set_to_none=False)                       # zeros for everyone now
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            opt.step()
        assert s.last_report.zero_grad_moved == ["a", "b"]     # momentum + decay move them
        assert [str(r.message).count("'a'") for r in rec] == [1]   # b was warned already


def test_strict_optimizer_wrapper_and_log():
    model, opt, x, y = _setup()
    lines = []
    sopt = StrictOptimizer(opt, params=model, log=lines.append)
    assert sopt.param_groups is opt.param_groups
    sopt.zero_grad()
    _loss(model, x, y).backward()
    sopt.step()
    assert sopt.last_report.step == 1 and lines[0].startswith("step 1: 1 backward pass(es)")
    _loss(model, x, y).backward()
    with pytest.raises(StaleGradientError):
        sopt.step()
    sopt.close()
    opt.step()                                                  # checks off: torch semantics


def test_global_strict_scope_catches_every_optimizer():
    model, opt, x, y = _setup()
    other = nn.Linear(2, 2)
    opt2 = optim.AdamW(other.parameters(), lr=1e-3)
    with strict(params=model) as scope:
        _loss(model, x, y).backward()
        other(gradsum.ones(1, 2)).sum().backward()
        opt.step()
        opt2.step()
        opt2.zero_grad()
        other(gradsum.ones(1, 2)).sum().backward()
        opt2.step()                                              # fine: cleared
        _loss(model, x, y).backward()
        with pytest.raises(StaleGradientError, match=r"'0\.weight'"):
            opt.step()
        assert len(scope.sanitizers) == 2
    opt.step()                                                   # off again
    assert optim.SGD.step.__dict__.get("__gradsum_strict__") is None


def test_env_variable_turns_strict_mode_on(monkeypatch):
    model, opt, x, y = _setup()
    monkeypatch.setenv("GRADSUM_STRICT", "1")
    assert sanitizer_mod.apply_env()
    try:
        _loss(model, x, y).backward()
        opt.step()
        _loss(model, x, y).backward()
        with pytest.raises(StaleGradientError):
            opt.step()
    finally:
        monkeypatch.setenv("GRADSUM_STRICT", "0")
        assert not sanitizer_mod.apply_env()


def test_allow_stale_and_bad_arguments():
    model, opt, x, y = _setup()
    with strict(opt, allow_stale=True):
        _loss(model, x, y).backward()
        opt.step()
        _loss(model, x, y).backward()
        opt.step()
    with pytest.raises(ValueError, match="on_graph_grad"):
        Sanitizer(opt, on_graph_grad="ignore")
    with pytest.raises(ValueError, match="positive"):
        Sanitizer(opt, accumulate=0)


def test_strict_mode_does_not_change_results():
    def run(use_strict):
        model, opt, x, y = _setup(seed=5, momentum=0.9)
        ctx = strict(opt) if use_strict else None
        for _ in range(3):
            opt.zero_grad()
            _loss(model, x, y).backward()
            opt.step()
        if ctx is not None:
            ctx.detach()
        return [p.detach().numpy().tobytes() for p in model.parameters()]

    assert run(True) == run(False)


def test_process_wide_mode_does_not_keep_optimizers_alive():
    import weakref

    model, opt, x, y = _setup()
    with strict() as scope:
        _loss(model, x, y).backward()
        opt.step()
        assert len(scope.sanitizers) == 1
        ref = weakref.ref(opt)
        del opt
        gc.collect()
        assert ref() is None and scope.sanitizers == []
