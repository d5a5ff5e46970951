"""Side by side with torch: a second backward without retain_graph raises where torch saved
something."""

from __future__ import annotations

import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


@pytest.mark.parametrize("case", ["index tensor", "bool mask", "tensor after slice",
                                  "nll_loss", "cross_entropy", "embedding", "x * 2", "x / 2",
                                  "x + 2", "mse_loss", "where"])
def test_second_backward_raises_where_torch_saved_something(case):
    """Nodes that keep an index, a mask or a wrapped number raise on a second backward
    without retain_graph, as torch's do (they saved variables); others run again."""
    calls = {
        "index tensor": lambda L, x: x[L.tensor([0, 2])],
        "bool mask": lambda L, x: x[L.tensor([True, False, True, False])],
        "tensor after slice": lambda L, x: x.reshape(2, 2)[:, L.tensor([1])],
        "nll_loss": lambda L, x: L.nn.functional.nll_loss(x.reshape(2, 2), L.tensor([0, 1])),
        "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x.reshape(2, 2),
                                                                     L.tensor([0, 1])),
        "embedding": lambda L, x: L.nn.functional.embedding(L.tensor([1, 1]), x.reshape(2, 2)),
        "x * 2": lambda L, x: x * 2,
        "x / 2": lambda L, x: x / 2,
        "x + 2": lambda L, x: x + 2,
        "mse_loss": lambda L, x: L.nn.functional.mse_loss(x, L.ones(4)),
        "where": lambda L, x: L.where(x > 0, x, L.zeros(4)),
    }
    outcome = []
    for lib in (torch, gradsum):
        x = lib.tensor([0.5, -1.0, 2.0, 3.0], requires_grad=True)
        y = calls[case](lib, x).sum()
        y.backward()
        try:
            y.backward()
            outcome.append("runs")
        except RuntimeError:
            outcome.append("raises")
    assert outcome[1] == outcome[0]
