"""The suite runs where the optional packages are missing (CI's no-torch combinations in
.ci/compat install neither torch nor SciPy): a test file imports an optional package at module
level only after ``pytest.importorskip`` of that package, so that the file skips with a reason
instead of failing collection."""

from __future__ import annotations

import ast
import pathlib

import pytest

#: packages the suite may use that a plain ``pip install -e .`` does not bring
_OPTIONAL = ("torch", "scipy", "mpi4py", "safetensors", "graphviz", "rich", "matplotlib",
             "ml_dtypes", "mkl")
_TESTS = pathlib.Path(__file__).resolve().parents[1]


def _unguarded(source: str) -> list[tuple[int, str]]:
    """(line, package) of each module-level import of an optional package that no earlier
    module-level ``pytest.importorskip("package", ...)`` guards."""
    guarded: set[str] = set()
    found = []
    for node in ast.parse(source).body:
        value = getattr(node, "value", None)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr == "importorskip" and value.args \
                and isinstance(value.args[0], ast.Constant):
            guarded.add(str(value.args[0].value).split(".")[0])
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in _OPTIONAL and top not in guarded:
                found.append((node.lineno, top))
    return found


def test_the_check_sees_an_unguarded_import() -> None:
    assert _unguarded("import numpy\nimport torch\n") == [(2, "torch")]
    assert _unguarded("from scipy import linalg\n") == [(1, "scipy")]
    guarded = 'import pytest\ntorch = pytest.importorskip("torch", reason="r")\nimport torch.nn\n'
    assert _unguarded(guarded) == []
    assert _unguarded('pytest.importorskip("scipy")\nimport torch\n') == [(2, "torch")]


@pytest.mark.parametrize("path", sorted(p for p in _TESTS.rglob("*.py")
                                         if "mpi_scripts" not in p.parts),
                         ids=lambda p: p.relative_to(_TESTS).as_posix())
def test_optional_packages_are_imported_behind_importorskip(path: pathlib.Path) -> None:
    bad = _unguarded(path.read_text())
    assert not bad, (
        f"{path.name} imports {', '.join(f'{pkg} (line {line})' for line, pkg in bad)} at module "
        "level without pytest.importorskip first: the file fails collection where the package "
        "is missing; write `torch = pytest.importorskip(\"torch\", reason=...)` instead")
