"""Side by side with torch: mm/bmm/mv/dot's argument checks (ranks, dtypes, non-tensors) and
matmul's bool shape error."""

from __future__ import annotations

import pytest

from diff_helpers import ramp, same_op

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)


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
    same_op(lambda L: getattr(L, name)(ramp(L, sa, dtypes[0], rg), ramp(L, sb, dtypes[1])))
    same_op(lambda L: getattr(ramp(L, sa, dtypes[0], rg), name)(ramp(L, sb, dtypes[1])))


@pytest.mark.parametrize("name", ["mm", "bmm", "mv", "dot"])
def test_mm_family_refuses_non_tensors(name: str) -> None:
    same_op(lambda L: getattr(L, name)(ramp(L, (2, 3)), [[1.0]]))
    same_op(lambda L: getattr(L, name)([1.0], ramp(L, (3,))))


@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (2, 3)), ((3,), (4,)), ((2, 2, 3), (3, 3, 2)),
                                        ((2, 3), (3,)), ((3,), (2, 3, 2)), ((3,), (3,))])
def test_matmul_bool_shape_error_comes_first(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    same_op(lambda L: L.matmul(ramp(L, sa, "bool"), ramp(L, sb, "bool")))
