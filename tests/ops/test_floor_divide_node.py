"""Side by side with torch: floor division records a node whose backward is not implemented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


@pytest.mark.parametrize("call", [
    lambda L, x, y: L.floor_divide(x, 2),
    lambda L, x, y: x // 2,
    lambda L, x, y: L.floor_divide(y, x),
    lambda L, x, y: L.remainder(7, x),
])
def test_floor_divide_records_a_not_implemented_node(call: Callable[..., Any]) -> None:
    outs = {}
    for lib in (gradsum, torch):
        x = lib.tensor([3.0, 5.0], requires_grad=True)
        y = lib.tensor([7.0, 8.0])
        out = call(lib, x, y)
        assert out.requires_grad
        assert type(out.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="is not implemented"):
            out.sum().backward()
        outs[lib] = (out.detach().tolist(), len(out.grad_fn.next_functions))
    assert outs[gradsum] == outs[torch]
