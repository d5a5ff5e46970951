"""Misuse errors: torch's exception type and phrase first (a search for the error finds its
explanation), then the values involved, then the fix.

One table over the misuse cases users hit most: optimizer construction, ``load_state_dict``,
dims and indices out of range, shapes that do not fit (cat, reshape, conv, linear, LSTM),
class targets out of range, ``reduction=`` strings, hooks, dtypes that torch refuses to mix.
Each case runs in both libraries; gradsum must raise torch's type, its message must start with
torch's (up to ``upto``, where torch prints a value in its own notation, e.g. ``torch.Size``),
and must contain the values and the fix listed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest


class Case(NamedTuple):
    program: Callable[[Any], Any]
    values: list[str]
    fix: str
    upto: str | None = None


def _leaf(L: Any) -> Any:
    return L.ones(2, requires_grad=True)


def _sd_missing(L: Any) -> None:
    m = L.nn.Linear(2, 3)
    sd = m.state_dict()
    del sd["bias"]
    m.load_state_dict(sd)


def _sd_unexpected(L: Any) -> None:
    m = L.nn.Linear(2, 3)
    sd = m.state_dict()
    sd["extra"] = L.zeros(1)
    m.load_state_dict(sd)


CASES: dict[str, Case] = {
    # optimizers
    "non-leaf param": Case(lambda L: L.optim.SGD([_leaf(L) * 2], lr=0.1),
                           ["MulBackward0", "(2,)"], "detach().requires_grad_()"),
    "beta out of range": Case(lambda L: L.optim.Adam([_leaf(L)], betas=(1.5, 0.9)),
                              ["(1.5, 0.9)"], "betas=(0.9, 0.999)"),
    "negative lr": Case(lambda L: L.optim.Adam([_leaf(L)], lr=-1), ["-1"], "maximize=True"),
    "negative eps": Case(lambda L: L.optim.Adam([_leaf(L)], eps=-1), ["-1"], "non-negative"),
    "negative weight decay": Case(
        lambda L: L.optim.SGD([_leaf(L)], lr=0.1, weight_decay=-0.5), ["-0.5"],
        "non-negative"),
    "beta of NAdam": Case(lambda L: L.optim.NAdam([_leaf(L)], betas=(0.9, 1.0)),
                          ["(0.9, 1.0)"], "betas="),
    # checkpoints
    "state_dict missing key": Case(_sd_missing, ['"bias"'], "strict=False"),
    "state_dict unexpected key": Case(_sd_unexpected, ['"extra"'], "strict=False"),
    "state_dict size mismatch": Case(
        lambda L: L.nn.Linear(2, 3).load_state_dict(L.nn.Linear(2, 4).state_dict()),
        ["(4, 2)", "(3, 2)", "(4,)"], "build the model with the checkpoint's sizes",
        upto="torch.Size"),
    # dims, indices, shapes
    "cat dim": Case(lambda L: L.cat([L.ones(2, 3), L.ones(2, 3)], dim=2),
                    ["[-2, 1]", "got 2"], "pass a dim from -2 to 1"),
    "cat sizes": Case(lambda L: L.cat([L.ones(2, 3), L.ones(3, 4)], dim=0),
                      ["(2, 3)", "(3, 4)"], "concatenate along the dimension"),
    "sum dim": Case(lambda L: L.ones(2, 3).sum(dim=2), ["got 2"], "pass a dim from -2 to 1"),
    "mean dim": Case(lambda L: L.ones(2, 3).mean(dim=-3), ["got -3"], "pass a dim"),
    "softmax dim": Case(lambda L: L.nn.functional.softmax(L.ones(2, 3), dim=2), ["got 2"],
                        "pass a dim"),
    "index": Case(lambda L: L.ones(2, 3)[5], ["index 5", "size 2"],
                  "valid indices are -2 to 1"),
    "index in dim 1": Case(lambda L: L.ones(2, 3)[:, 7], ["index 7", "size 3"],
                           "valid indices are -3 to 2"),
    "reshape": Case(lambda L: L.ones(2, 3).reshape(4, 2), ["[4, 2]", "multiply to 8"],
                    "product is 6"),
    "view with -1": Case(lambda L: L.ones(2, 3).view(-1, 4), ["[-1, 4]", "rows of 4"],
                         "product is 6"),
    "gather index": Case(lambda L: L.ones(2, 3).gather(1, L.tensor([[5]])), ["index 5"],
                         "[0, 2]"),
    "embedding index": Case(lambda L: L.nn.Embedding(3, 2)(L.tensor([5])), ["[5, 5]"],
                            "[0, 2]"),
    "broadcast": Case(lambda L: L.ones(2, 3) + L.ones(4), ["(2, 3)", "(4,)"], "unsqueeze"),
    "matmul": Case(lambda L: L.ones(2, 3) @ L.ones(4, 5), ["2x3", "4x5"], "Transpose"),
    "expand": Case(lambda L: L.ones(2, 3).expand(4, 3), ["[4, 3]", "[2, 3]"], "pass -1"),
    "expand a middle size": Case(lambda L: L.ones(2, 3).expand(2, 2, 4), ["dimension 2"],
                                 "repeat()"),
    "split into zero": Case(lambda L: L.ones(4).split(0), ["size of 4"], "size of each piece"),
    "split negative": Case(lambda L: L.ones(4).split(-1), ["split_size=-1"], "summing to 4"),
    "chunk zero": Case(lambda L: L.ones(4).chunk(0), ["got: 0"], "1 or more"),
    "permute length": Case(lambda L: L.ones(2, 3).permute(0), ["(2, 3)"], "0 to 1"),
    "stack sizes": Case(lambda L: L.stack([L.ones(2), L.ones(3)]), ["[2]", "[3]"], "cat()"),
    "unfold size": Case(lambda L: L.ones(3).unfold(0, 5, 1), ["size is 5"], "at most 3"),
    "dot lengths": Case(lambda L: L.ones(3) @ L.ones(4), ["[3]", "[4]"], "equal lengths"),
    "pool too small": Case(lambda L: L.nn.functional.max_pool2d(L.ones(1, 1, 2, 2), 3),
                           ["(1x2x2)"], "smaller kernel_size"),
    "one_hot classes": Case(lambda L: L.nn.functional.one_hot(L.tensor([5]), 3), [],
                            "num_classes greater than"),
    "arange step": Case(lambda L: L.arange(0, 5, 0), ["step=0"], "positive step"),
    # layers
    "batch norm features": Case(lambda L: L.nn.BatchNorm1d(4)(L.ones(2, 3)),
                                ["3 elements not 4"], "num_features=3"),
    "layer norm shape": Case(lambda L: L.nn.LayerNorm(4)(L.ones(2, 3)), ["[2, 3]"],
                             "last 1 size(s)"),
    "dropout p": Case(lambda L: L.nn.Dropout(1.5), ["1.5"], "probability of zeroing"),
    "linear input": Case(lambda L: L.nn.Linear(4, 2)(L.ones(3, 5)), ["(3, 5)", "(2, 4)"],
                         "must end with the in_features"),
    "conv channels": Case(lambda L: L.nn.Conv2d(3, 4, 3)(L.ones(1, 2, 5, 5)),
                          ["[1, 2, 5, 5]", "2 channels"], "in_channels=2"),
    "conv dims": Case(lambda L: L.nn.Conv2d(3, 4, 3)(L.ones(5, 5)), ["[5, 5]"],
                      "x[None] adds a batch of one"),
    "conv1d functional dims": Case(
        lambda L: L.nn.functional.conv1d(L.ones(5), L.ones(2, 1, 3)), ["[5]"], "(N, C, L)"),
    "LSTM features": Case(lambda L: L.nn.LSTM(4, 8)(L.ones(5, 2, 3)), ["(5, 2, 3)"],
                          "input_size=3"),
    "LSTM dims": Case(lambda L: L.nn.LSTM(4, 8)(L.ones(5, 2, 4, 1)), ["(5, 2, 4, 1)"],
                      "(L, N, H_in)"),
    # losses
    "batch sizes": Case(
        lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 1, 2])),
        ["(2)", "(3)"], "one target per row"),
    "cross-entropy target": Case(
        lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 3])),
        ["Target 3", "3 classes"], "from 0 to 2"),
    "negative target": Case(
        lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([0, -5])),
        ["Target -5"], "ignore_index"),
    "reduction string": Case(
        lambda L: L.nn.functional.mse_loss(L.ones(2), L.ones(2), reduction="avg"), ["avg"],
        "reduction='mean', 'sum' or 'none'"),
    "reduction of a module": Case(
        lambda L: L.nn.CrossEntropyLoss(reduction="average")(L.ones(2, 3), L.tensor([0, 1])),
        ["average"], "'mean'"),
    # autograd and dtypes
    "hook without grad": Case(lambda L: L.ones(2).register_hook(lambda g: g),
                              ["(2,)", "requires_grad=False"], "requires_grad_()"),
    "in-place cast": Case(lambda L: L.zeros(2, dtype=L.int64).add_(L.ones(2) * 0.5),
                          ["add_"], "out-of-place"),
    "index_add_ dtypes": Case(
        lambda L: L.zeros(3).index_add_(0, L.tensor([0]), L.ones(1, dtype=L.float64)),
        ["Float", "Double"], "source.to("),
    "requires_grad_ of ints": Case(lambda L: L.ones(2, dtype=L.int64).requires_grad_(),
                                   ["int64"], ".float()"),
    "requires_grad= of ints": Case(lambda L: L.ones(2, dtype=L.int64, requires_grad=True),
                                   ["int64"], ".float()"),
    "requires_grad attribute of ints": Case(
        lambda L: setattr(L.ones(2, dtype=L.int64), "requires_grad", True), ["int64"],
        ".float()"),
    "empty parameter list": Case(lambda L: L.optim.SGD([], lr=0.1), [], "model.parameters()"),
    "isclose of a number": Case(lambda L: L.isclose(1, L.ones(2)), ["int"],
                                "Wrap it with gradsum.tensor()"),
    "allclose of a number": Case(lambda L: L.allclose(L.ones(2), 1.5), ["float"],
                                 "Wrap it with gradsum.tensor()"),
}


def _error(lib: Any, fn: Callable[[Any], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_phrase_then_values_then_fix(case: str) -> None:
    torch = pytest.importorskip("torch", reason="torch not installed: the reference texts")
    import gradsum

    c = CASES[case]
    ours, theirs = _error(gradsum, c.program), _error(torch, c.program)
    text, phrase = str(ours), str(theirs)
    if c.upto is not None:
        phrase = phrase[: phrase.index(c.upto)]
    assert type(ours) is type(theirs), (ours, theirs)
    assert text.startswith(phrase), (text, phrase)
    assert len(text) > len(phrase), f"torch's text alone, no fix: {text}"
    for v in c.values:
        assert v in text, (v, text)
    assert c.fix in text, (c.fix, text)
