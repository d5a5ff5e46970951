"""Side by side with torch: mm/bmm/mv/dot's argument checks (ranks, dtypes, non-tensors) and
matmul's bool shape error."""

from __future__ import annotations

import math
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


def _b(lib: Any) -> Any:
    return lib.bool if lib is torch else lib.bool_


def _t(lib: Any, shape: tuple[int, ...], dtype: str = "float32", rg: bool = False) -> Any:
    dt = _b(lib) if dtype == "bool" else getattr(lib, dtype)
    n = math.prod(shape)
    vals = np.arange(1, n + 1).reshape(shape) % (2 if dtype == "bool" else 7)
    return lib.tensor(vals.tolist(), dtype=dt, requires_grad=rg)


# -- mm / bmm / mv / dot: their own rank and dtype checks, their own grad_fn -----------------
_MM_CASES = [
    ("mm", (2, 3), (3, 4)), ("mm", (3,), (3, 2)), ("mm", (2, 3), (3,)), ("mm", (2, 2, 3), (3, 2)),
    ("mm", (), (2, 2)), ("bmm", (2, 2, 3), (2, 3, 4)), ("bmm", (2, 3), (2, 3, 2)),
    ("bmm", (2, 2, 3), (3, 2)), ("bmm", (1, 2, 3), (3, 3, 2)), ("bmm", (2, 2, 3), (2, 4, 2)),
    ("mv", (2, 3), (3,)), ("mv", (3,), (3,)), ("mv", (), (3,)), ("mv", (2, 3), ()),
    ("mv", (2, 3), (4,)), ("mv", (2, 2, 3), (3,)), ("dot", (3,), (3,)), ("dot", (2, 3), (3, 2)),
    ("dot", (), ()), ("dot", (3,), (4,)),
]


@pytest.mark.parametrize(("name", "sa", "sb"), _MM_CASES)
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("float32", "float64"),
                                    ("int64", "int64"), ("bool", "bool")])
def test_mm_bmm_mv_dot_check_ranks_and_dtypes(name: str, sa: tuple[int, ...],
                                              sb: tuple[int, ...], dtypes: tuple[str, str]
                                              ) -> None:
    rg = dtypes[0] == "float32"
    _same(lambda L: getattr(L, name)(_t(L, sa, dtypes[0], rg), _t(L, sb, dtypes[1])))
    _same(lambda L: getattr(_t(L, sa, dtypes[0], rg), name)(_t(L, sb, dtypes[1])))


@pytest.mark.parametrize("name", ["mm", "bmm", "mv", "dot"])
def test_mm_family_refuses_non_tensors(name: str) -> None:
    _same(lambda L: getattr(L, name)(_t(L, (2, 3)), [[1.0]]))
    _same(lambda L: getattr(L, name)([1.0], _t(L, (3,))))


@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (2, 3)), ((3,), (4,)), ((2, 2, 3), (3, 3, 2)),
                                        ((2, 3), (3,)), ((3,), (2, 3, 2)), ((3,), (3,))])
def test_matmul_bool_shape_error_comes_first(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    _same(lambda L: L.matmul(_t(L, sa, "bool"), _t(L, sb, "bool")))
