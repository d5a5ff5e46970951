"""``src/gradsum/_tensor.pyi`` is what ``gradsum._stubgen`` makes of today's ``gradsum._tensor``.

Type checkers read the stub instead of ``_tensor.py`` (the package ships ``py.typed``), so a
stale stub hides a new method from them, or keeps one that is gone. After changing the Tensor
surface (an op, a method, a signature), regenerate it: ``PYTHONPATH=src python -m
gradsum._stubgen``.
"""

from __future__ import annotations

import ast
import difflib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

import gradsum
from gradsum import Tensor, _stubgen


def _stub_tree() -> ast.Module:
    return ast.parse(_stubgen.STUB.read_text(encoding="utf-8"))


def _class_names(tree: ast.Module, name: str) -> set[str]:
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _render_fresh() -> str:
    """The stub as a fresh process renders it: what other tests did to this process (lazily
    bound globals, patched attributes) cannot change it."""
    src = str(Path(gradsum.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [src, *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from gradsum._stubgen import render; "
         "sys.stdout.write(render())"], env=env, capture_output=True, text=True,
        encoding="utf-8", timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_checked_in_stub_is_current() -> None:
    expected = _render_fresh()
    actual = _stubgen.STUB.read_text(encoding="utf-8") if _stubgen.STUB.exists() else ""
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            actual.splitlines(keepends=True), expected.splitlines(keepends=True),
            "checked in", "generated"))[:60])
        raise AssertionError(
            f"src/gradsum/_tensor.pyi is stale: regenerate it with `{_stubgen.REGENERATE}` "
            f"and commit it. First lines of the difference:\n{diff}")


def test_stub_declares_every_tensor_attribute() -> None:
    # dir() shows the inherited object attributes too; the stub declares Tensor's own
    declared = _class_names(_stub_tree(), "Tensor")
    own = {n for n in vars(gradsum.Tensor) if n not in _stubgen._SKIP}
    assert own - declared == set(), sorted(own - declared)
    public = {n for n in dir(gradsum.Tensor) if not n.startswith("_")}
    assert public <= declared, sorted(public - declared)
    assert len(public) > 500


def test_stub_declares_what_the_package_imports_from_tensor_module() -> None:
    tree = _stub_tree()
    top = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    top |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name)}
    top |= {n.target.id for n in tree.body
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    wanted = _stubgen._imported_elsewhere(gradsum, _stubgen.MODULE)
    assert {"Tensor", "Size", "is_tensor", "numel"} <= wanted
    assert wanted <= top, sorted(wanted - top)


def test_operators_and_properties_are_typed() -> None:
    text = _stubgen.STUB.read_text(encoding="utf-8")
    for line in ("    def __add__(self, ", "    def __radd__(self, ", "    def __matmul__(self, ",
                 "    def __getitem__(self, key: Any) -> Tensor: ...",
                 "    def __lt__(self, other: Any) -> Tensor: ...",
                 "    def grad(self) -> Tensor | None: ...",
                 "    def shape(self) -> tuple[builtins.int, ...]: ...",
                 "    def backward(\n"):
        assert line in text, line


def test_renderer_qualifies_names_a_class_body_hides() -> None:
    # inside ``class Tensor`` the names ``int``, ``float``, ``numpy`` are methods
    r = _stubgen._Renderer({"Tensor"}, {"int", "float", "numpy"})
    assert r.render(int | None) == "builtins.int | None"
    assert r.render(list[str]) == "list[str]"
    assert r.render(np.ndarray) == "_numpy.ndarray"
    assert r.render(Callable[[gradsum.Tensor], gradsum.Tensor]) == "Callable[[Tensor], Tensor]"
    assert r.render(Callable[..., Any]) == "Callable[..., Any]"
    assert r.render(Literal["mean", "sum"]) == "Literal['mean', 'sum']"
    assert r.render(tuple[int, ...]) == "tuple[builtins.int, ...]"
    assert r.render(gradsum.device) == "gradsum._device.device"  # where it is defined
    assert r.import_lines() == [
        "import builtins", "from collections.abc import Callable",
        "from typing import Any, Literal", "", "import numpy as _numpy", "",
        "import gradsum._device", ""]


def test_signatures_fall_back_to_any() -> None:
    r = _stubgen._Renderer({"Tensor"}, set())

    def documented(a: Tensor, dim: int = 0, *, keepdim: bool = False) -> Tensor:
        return a

    def unknown(a, b: NoSuchName = None):  # type: ignore[no-untyped-def]  # noqa: F821
        return a

    assert _stubgen._function("documented", documented, r, "", "self") == [
        "def documented(self, dim: int = ..., *, keepdim: bool = ...) -> Tensor: ..."]
    assert _stubgen._function("unknown", unknown, r, "", "self") == [
        "def unknown(self, b: Any = ...) -> Any: ..."]
    assert _stubgen._function("builtin", len, r, "", None) == [
        "def builtin(obj: Any, /) -> Any: ..."]
    assert _stubgen._function("opaque", max, r, "", "self") == [  # (no signature)
        "def opaque(self, *args: Any, **kwargs: Any) -> Any: ..."]
