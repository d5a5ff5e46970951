"""Transactional backward, and the core's promise that pre-walk validation writes nothing."""

from __future__ import annotations

import random

import pytest

import gradsum
from gradsum import nn
from gradsum.toolkit import transactional, transactional_backward
from gradsum.toolkit._hub import iter_nodes
from toolkit_helpers import _toolkit_leaves_engine_clean  # noqa: F401  (autouse)


class Boom(Exception):
    pass


def _state(ts):
    out = []
    for t in ts:
        g = t.grad
        out.append(None if g is None else (id(g), g._version, g._array.tobytes()))
    return out


def _model(seed: int) -> tuple[nn.Module, gradsum.Tensor, gradsum.Tensor]:
    gradsum.manual_seed(seed)
    emb = nn.Embedding(7, 4)
    lin = nn.Linear(4, 4)
    model = nn.ModuleDict({"emb": emb, "lin": lin})
    tokens = gradsum.randint(0, 7, (6,))
    targets = gradsum.randint(0, 7, (6,))
    return model, tokens, targets


def _loss(model, tokens, targets):
    h = model["emb"](tokens)
    h = gradsum.tanh(model["lin"](h)) + h
    logits = h @ model["emb"].weight.t()                 # tied weights: fan-in 2
    return nn.functional.cross_entropy(logits, targets)


@pytest.mark.parametrize("seed", range(12))
def test_prehook_raising_at_a_random_node_restores_every_grad_bitwise(seed):
    model, tokens, targets = _model(seed)
    params = list(model.parameters())
    _loss(model, tokens, targets).backward()              # .grad already holds something
    params[-1].grad = None                                # and one is None
    before = _state(params)
    loss = _loss(model, tokens, targets)
    nodes = iter_nodes([loss.grad_fn])
    rng = random.Random(seed)
    victim = rng.choice([n for n in nodes if n.name() != "AccumulateGrad"] or nodes)

    def boom(grads):
        raise Boom(victim.name())

    victim.register_prehook(boom)
    with transactional(), pytest.raises(Boom):
        loss.backward()
    assert _state(params) == before


def test_without_transactional_a_failure_leaves_a_half_applied_gradient():
    a = gradsum.ones(2, requires_grad=True)
    b = gradsum.ones(2, requires_grad=True)
    y = (a * 3) + (b * 5)
    y.grad_fn.next_functions[0][0].register_prehook(lambda g: (_ for _ in ()).throw(Boom()))
    with pytest.raises(Boom):
        y.sum().backward()
    assert a.grad is None and b.grad is not None          # half applied: torch does the same


@pytest.mark.parametrize("exc", [MemoryError, Boom, KeyboardInterrupt])
def test_tensor_hook_raising_restores_objects_contents_and_versions(exc):
    a = gradsum.ones(3, requires_grad=True)
    b = gradsum.ones(3, requires_grad=True)
    (a * b).sum().backward()
    a_grad, b_grad = a.grad, b.grad
    before = _state([a, b])
    y = a * 2 + b * 7
    a.register_hook(lambda g: (_ for _ in ()).throw(exc()))
    with pytest.raises(exc), transactional():
        y.sum().backward()
    assert a.grad is a_grad and b.grad is b_grad
    assert _state([a, b]) == before


def test_create_graph_failure_restores_object_identity():
    w = gradsum.tensor([1.0, 2.0], requires_grad=True)
    v = gradsum.tensor([3.0], requires_grad=True)
    (w ** 2).sum().backward(create_graph=True)
    g = w.grad
    y = (w ** 3).sum() + (v * 2).sum()
    y.grad_fn.next_functions[0][0].register_prehook(lambda gs: (_ for _ in ()).throw(Boom()))
    with pytest.raises(Boom):
        transactional_backward(y, create_graph=True)
    assert w.grad is g and v.grad is None


def test_skipping_a_failed_micro_batch_keeps_the_window_and_retry_works():
    gradsum.manual_seed(3)
    model = nn.Linear(3, 2)
    xs = [gradsum.randn(2, 3) for _ in range(4)]
    expected = [gradsum.zeros(2, 3), gradsum.zeros(2)]
    for i, x in enumerate(xs):
        if i != 2:
            gw, gb = gradsum.autograd.grad(model(x).pow(2).sum(), [model.weight, model.bias])
            expected[0] += gw
            expected[1] += gb
    failed_loss = None
    with transactional():
        for i, x in enumerate(xs):
            loss = model(x).pow(2).sum()
            handle = None
            if i == 2:
                handle = model.weight.register_hook(lambda g: (_ for _ in ()).throw(Boom()))
            try:
                loss.backward()
            except Boom:
                failed_loss = loss                      # skip this micro-batch
            finally:
                if handle is not None:
                    handle.remove()
    assert gradsum.allclose(model.weight.grad, expected[0], atol=1e-6)
    assert gradsum.allclose(model.bias.grad, expected[1], atol=1e-6)
    # The failed graph was restored too: after fixing the cause, backward on it works.
    failed_loss.backward()
    gw, gb = gradsum.autograd.grad(model(xs[2]).pow(2).sum(), [model.weight, model.bias])
    assert gradsum.allclose(model.weight.grad, expected[0] + gw, atol=1e-6)


def test_retained_non_leaf_grads_and_inputs_are_restored():
    x = gradsum.ones(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    y = (h * h).sum()
    y.backward(retain_graph=True)
    before_h = h.grad
    before = _state([x, h])
    hook = x.register_hook(lambda g: (_ for _ in ()).throw(Boom()))
    with transactional(), pytest.raises(Boom):
        y.backward(retain_graph=True)
    hook.remove()
    assert h.grad is before_h and _state([x, h]) == before
    with transactional(), pytest.raises(Boom):
        handle = h.register_hook(lambda g: (_ for _ in ()).throw(Boom()))
        try:
            y.backward(inputs=[h])
        finally:
            handle.remove()
    assert _state([x, h]) == before


def test_nested_backward_inside_a_hook():
    a = gradsum.ones(2, requires_grad=True)
    b = gradsum.ones(2, requires_grad=True)

    def hook(g):
        with gradsum.enable_grad():
            (b * 4).sum().backward()                    # an inner backward that succeeds
        raise Boom()

    y = (a * 3).sum()
    a.register_hook(hook)
    with transactional(), pytest.raises(Boom):
        y.backward()
    assert a.grad is None and b.grad is None           # the outer rollback undoes both


# -- the core's promise, outside transactional(): validation happens before any write ---------
def _two_leaf_graph():
    a = gradsum.randn(3, requires_grad=True)
    b = gradsum.randn(3, requires_grad=True)
    (a * b).sum().backward()
    return a, b


def test_freed_graph_error_changes_nothing():
    a, b = _two_leaf_graph()
    m = (b * 1) * (b * 1)
    y = (a * 2).sum() + m.sum()
    m.sum().backward()                                   # frees m's part of y's graph
    before = _state([a, b])
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()
    assert _state([a, b]) == before


def test_modified_saved_tensor_error_changes_nothing():
    a, b = _two_leaf_graph()
    h = b * 1
    y = (a * 2).sum() + (h * h).sum()
    with gradsum.no_grad():
        h.add_(1.0)
    before = _state([a, b])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert _state([a, b]) == before


def test_bad_gradient_shape_changes_nothing():
    a, b = _two_leaf_graph()
    y = a * b
    before = _state([a, b])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        y.backward(gradsum.ones(4))
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        y.backward()
    assert _state([a, b]) == before
