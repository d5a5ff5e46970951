"""Side by side with torch: the key types __getitem__ accepts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


def _outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple[Any, ...]:
    """What ``fn(lib)`` does: ('err', exception type name) or ('ok', dtype, shape, values,
    requires_grad, grad_fn name)."""
    try:
        out = fn(lib)
    except Exception as e:  # any exception is an outcome to compare
        return ("err", type(e).__name__)
    if isinstance(out, (torch.dtype, gradsum.dtype)):
        return ("dtype", str(out).split(".")[-1].replace("bool_", "bool"))
    arr = out.detach().numpy() if isinstance(out, torch.Tensor) else out._array
    fn_name = None
    if out.grad_fn is not None:
        fn_name = (type(out.grad_fn).__name__ if isinstance(out, torch.Tensor)
                   else out.grad_fn.name())
    values = [repr(float(v)) if isinstance(v, float) else v for v in np.ravel(arr).tolist()]
    return ("ok", str(out.dtype).split(".")[-1].replace("bool_", "bool"), tuple(out.shape),
            values, out.requires_grad, fn_name)


def _same(fn: Callable[[Any], Any]) -> None:
    t, g = _outcome(torch, fn), _outcome(gradsum, fn)
    assert g == t, f"gradsum {g} != torch {t}"


# -- getitem key types ---------------------------------------------------------------------
@pytest.mark.parametrize("key", ["a", [], [0, "a"], [0, 2], 5, (0, 5), 1.0],
                         ids=repr)
def test_getitem_key_types(key: Any) -> None:
    _same(lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])[key])
