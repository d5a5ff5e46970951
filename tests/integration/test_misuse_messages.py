"""Optimizer misuse: torch's exception type and phrase first (a search for the error finds
its explanation), then the values involved, then the fix."""

from __future__ import annotations

from typing import Any

import pytest

import gradsum

CASES = {
    "non-leaf param": (lambda L: L.optim.SGD([L.ones(2, requires_grad=True) * 2], lr=0.1),
                       ["MulBackward0", "(2,)"], "detach().requires_grad_()"),
    "beta out of range": (lambda L: L.optim.Adam([L.ones(2, requires_grad=True)],
                                                 betas=(1.5, 0.9)),
                          ["(1.5, 0.9)"], "betas=(0.9, 0.999)"),
    "negative lr": (lambda L: L.optim.Adam([L.ones(2, requires_grad=True)], lr=-1),
                    ["-1"], "maximize=True"),
    "negative eps": (lambda L: L.optim.Adam([L.ones(2, requires_grad=True)], eps=-1),
                     ["-1"], "non-negative"),
    "negative weight decay": (lambda L: L.optim.SGD([L.ones(2, requires_grad=True)], lr=0.1,
                                                     weight_decay=-0.5),
                              ["-0.5"], "non-negative"),
    "beta of NAdam": (lambda L: L.optim.NAdam([L.ones(2, requires_grad=True)],
                                             betas=(0.9, 1.0)), ["(0.9, 1.0)"], "betas="),
}


def _error(lib: Any, fn: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(lib)
    return info.value


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_phrase_then_values_then_fix(case):
    torch = pytest.importorskip("torch", reason="torch not installed: the reference texts")
    fn, values, fix = CASES[case]
    ours, theirs = _error(gradsum, fn), _error(torch, fn)
    assert type(ours) is type(theirs)
    assert str(ours).startswith(str(theirs)), (str(ours), str(theirs))
    for v in values:
        assert v in str(ours)
    assert fix in str(ours)
