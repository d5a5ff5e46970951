"""Exact micro-batching: micro-batched gradients equal the full batch's; the naive way does not."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradsum
import gradsum.nn.functional as F
from gradsum import nn
from gradsum._backend import xp
from gradsum.toolkit import (
    AccumulationMismatchError,
    accumulate_backward,
    check_accumulation,
    micro_batches,
)

IGNORE = -100


def _grads(model):
    return [p.grad._array.astype(xp.float64) for p in model.parameters()]


def _max_diff(a, b):
    return max(float(xp.max(xp.abs(x - y))) for x, y in zip(a, b))


def _sizes(draw_sizes, rows):
    """Turn hypothesis cut points into positive sizes adding up to rows."""
    cuts = sorted(set(c for c in draw_sizes if 0 < c < rows))
    edges = [0, *cuts, rows]
    return [b - a for a, b in itertools.pairwise(edges)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2 ** 31 - 1),
    rows=st.integers(2, 9),
    seq=st.integers(1, 4),
    hidden=st.integers(1, 5),
    cuts=st.lists(st.integers(1, 8), min_size=1, max_size=4),
    pad_frac=st.floats(0.0, 0.6),
)
def test_micro_batched_gradients_equal_full_batch(seed, rows, seq, hidden, cuts, pad_frac):
    gradsum.manual_seed(seed)
    vocab, classes = 6, 3
    model = nn.Sequential(nn.Embedding(vocab, hidden), nn.Tanh(), nn.Linear(hidden, classes))
    model = model.double()
    x = gradsum.randint(0, vocab, (rows, seq))
    y = gradsum.randint(0, classes, (rows, seq))
    pad = gradsum.rand(rows, seq) < pad_frac
    y = gradsum.where(pad, gradsum.full((rows, seq), IGNORE), y)
    y[0, 0] = 1                                          # at least one counted token

    def loss_sum(out, t):
        return F.cross_entropy(out.reshape(-1, classes), t.reshape(-1), reduction="sum",
                               ignore_index=IGNORE)

    # full batch
    F.cross_entropy(model(x).reshape(-1, classes), y.reshape(-1),
                    ignore_index=IGNORE).backward()
    full = _grads(model)
    model.zero_grad()
    # exact micro-batching
    sizes = _sizes(cuts, rows)
    for mb, scale in micro_batches(x, y, sizes=sizes, ignore_index=IGNORE):
        (loss_sum(model(mb.x), mb.y) * scale).backward()
    assert _max_diff(_grads(model), full) < 1e-10
    # the convenience wrapper, with the mean loss and per-micro-batch weights
    model.zero_grad()
    accumulate_backward(
        model, lambda o, t: F.cross_entropy(o.reshape(-1, classes), t.reshape(-1),
                                            ignore_index=IGNORE),
        (x, y), sizes=sizes, ignore_index=IGNORE, reduction="mean")
    assert _max_diff(_grads(model), full) < 1e-10
    # the naive way: mean of per-micro-batch means, / n
    counts = [mb.count for mb, _ in micro_batches(x, y, sizes=sizes, ignore_index=IGNORE)]
    if len(set(counts)) > 1 and all(counts):
        model.zero_grad()
        start = 0
        for s in sizes:
            xs, ys = x[start:start + s], y[start:start + s]
            F.cross_entropy(model(xs).reshape(-1, classes), ys.reshape(-1),
                            ignore_index=IGNORE).div(len(sizes)).backward()
            start += s
        assert _max_diff(_grads(model), full) > 1e-9


def test_naive_mean_of_means_is_wrong_with_a_short_last_batch():
    gradsum.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = gradsum.randn(10, 3), gradsum.randn(10, 1)
    mse = lambda o, t: ((o - t) ** 2).mean()
    assert check_accumulation(model, mse, (x, y), 3) < 1e-5       # sizes 4, 3, 3

    def naive(model, batch, n):
        for xs, ys in zip(batch[0].split(4), batch[1].split(4)):  # 4, 4, 2
            (mse(model(xs), ys) / n).backward()

    with pytest.raises(AccumulationMismatchError, match=r"weight: max abs difference"):
        check_accumulation(model, mse, (x, y), 3, accumulate=naive)


def test_check_accumulation_restores_grads_and_names_parameters():
    model = nn.Linear(2, 2)
    model.weight.grad = gradsum.ones(2, 2)
    g = model.weight.grad
    x, y = gradsum.randn(4, 2), gradsum.randint(0, 2, (4,))
    diff = check_accumulation(model, F.cross_entropy, (x, y), 2)
    assert diff < 1e-6
    assert model.weight.grad is g and model.weight.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert model.bias.grad is None


def test_iterator_of_micro_batches_with_padding():
    gradsum.manual_seed(1)
    w = gradsum.randn(4, 3, requires_grad=True)
    batches = [
        (gradsum.randn(3, 4), gradsum.tensor([0, IGNORE, 2])),
        (gradsum.randn(1, 4), gradsum.tensor([1])),
        (gradsum.randn(2, 4), gradsum.tensor([IGNORE, IGNORE])),
    ]
    mbs = micro_batches(iter(batches), ignore_index=IGNORE)
    assert [mb.count for mb, _ in mbs] == [2, 1, 0] and mbs[0][0].total == 3
    for mb, scale in mbs:
        (F.cross_entropy(mb.x @ w, mb.y, reduction="sum", ignore_index=IGNORE) * scale).backward()
    x = gradsum.cat([b[0] for b in batches])
    y = gradsum.cat([b[1] for b in batches])
    (g,) = gradsum.autograd.grad(F.cross_entropy(x @ w, y, ignore_index=IGNORE), w)
    assert gradsum.allclose(w.grad, g, atol=1e-6)


def test_split_sizes_and_errors():
    x, y = gradsum.zeros(7, 2), gradsum.zeros(7)
    assert [mb.x.shape[0] for mb, _ in micro_batches(x, y, n=3)] == [3, 2, 2]
    assert [mb.y.shape[0] for mb, _ in micro_batches((x, x), y, sizes=[1, 6])] == [1, 6]
    with pytest.raises(ValueError, match="n=8 micro-batches cannot split a batch of 7"):
        micro_batches(x, y, n=8)
    with pytest.raises(ValueError, match="add up to the batch size 7"):
        micro_batches(x, y, sizes=[3, 3])
    with pytest.raises(ValueError, match="every target in this window equals ignore_index"):
        micro_batches(x, gradsum.full((7,), IGNORE), n=2, ignore_index=IGNORE)
    with pytest.raises(TypeError, match="iterable of \\(x, y\\) pairs"):
        micro_batches([x])
    with pytest.raises(ValueError, match="reduction must be"):
        accumulate_backward(lambda a: a, lambda o, t: o.sum(), (x, y), 2, reduction="none")
