"""gradsum's modules import downward only (docs/ARCHITECTURE.md, "Layers").

Each module belongs to one layer; a module-level import (one that runs when the module is
imported, outside ``if TYPE_CHECKING:``) may name a module of its own layer or a lower one. An
upward call is made lazily, inside the function that needs it (``Tensor.backward`` reaching
the engine), so importing a layer never imports the layers above it. The table is written out
here and in docs/ARCHITECTURE.md; a module the table does not place fails the test, so a new
file gets a layer when it is added. ops and Tensor printing never import nn at all, lazily
either: what they share with nn.functional is written below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gradsum

SRC = Path(gradsum.__file__).resolve().parent

#: lowest first; a module belongs to the layer of the longest prefix that names it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("seams: arrays, dtypes, devices, settings, messages between processes", (
        "gradsum._backend", "gradsum._blas", "gradsum._dtype", "gradsum._fma",
        "gradsum._memory_format", "gradsum._device", "gradsum._process_settings",
        "gradsum.backends", "gradsum.version", "gradsum.distributed._core",
        "gradsum.distributed._rank", "gradsum.ops._erf", "gradsum.ops._scipy_special")),
    ("graph: nodes, the leaf sink, saved tensors, grad mode, hooks", (
        "gradsum.autograd.graph", "gradsum.autograd.saved", "gradsum.autograd.grad_mode",
        "gradsum.autograd.hooks", "gradsum.autograd._messages", "gradsum.autograd.anomaly_mode")),
    ("Tensor: state, printing, creation, random numbers", (
        "gradsum._tensor", "gradsum._tensor_str", "gradsum._creation", "gradsum._random",
        "gradsum._legacy_types", "gradsum._autocast")),
    ("ops: every primitive with its backward rule, by family", (
        "gradsum.ops", "gradsum.linalg", "gradsum.special")),
    ("engine and Function", ("gradsum.autograd",)),
    ("nn, optim and what builds on modules", (
        "gradsum.nn", "gradsum.optim", "gradsum.amp", "gradsum.func", "gradsum.utils",
        "gradsum.cuda", "gradsum.cpu", "gradsum.mps", "gradsum.xpu", "gradsum.accelerator",
        "gradsum.random", "gradsum.compiler", "gradsum.onnx", "gradsum.testing",
        "gradsum.datasets", "gradsum.distributed")),
    ("toolkit, checkpoints, porting, the command line, the package", (
        "gradsum.toolkit", "gradsum.serialization", "gradsum.porting", "gradsum.demo",
        "gradsum.__main__", "gradsum._stubgen", "gradsum.distributed.run", "gradsum")),
]


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = p.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                    best is None or len(prefix) > best[1]):
                best = (i, len(prefix))
    return None if best is None else best[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_imports(name: str) -> set[str]:
    """The gradsum modules ``name`` imports when it is imported (``from a import b`` names
    the submodule ``a.b`` where there is one, else ``a``)."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    def add(target: str) -> None:
        while target not in MODULES and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in MODULES and target != name:
            found.add(target)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("gradsum"):
                        add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[:len(package) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                if not base.startswith("gradsum"):
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    add(sub if sub in MODULES else base)
            elif isinstance(node, ast.If):
                if not _is_type_checking(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
                for handler in node.handlers:
                    visit(handler.body)

    visit(ast.parse(path.read_text()).body)
    return found


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in MODULES if layer_of(m) is None)
    assert not unplaced, f"modules without a layer in LAYERS (and docs/ARCHITECTURE.md): {unplaced}"


def test_module_level_imports_go_downward() -> None:
    upward = []
    for name in sorted(MODULES):
        mine = layer_of(name)
        for target in sorted(module_imports(name)):
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{name} ({LAYERS[mine][0].split(':')[0]}) imports {target} "
                              f"({LAYERS[theirs][0].split(':')[0]})")
    assert not upward, ("module-level imports up the layers (import inside the function that "
                        "needs it instead):\n  " + "\n  ".join(upward))


def test_the_finder_sees_a_known_edge() -> None:
    # (the scan itself works: a module-level import that exists today)
    assert "gradsum.autograd.graph" in module_imports("gradsum.autograd.engine")


def imports_anywhere(name: str) -> set[str]:
    """Every module an import statement of ``name`` names, wherever it is (module level, inside
    a function, under ``if TYPE_CHECKING:``): ``from a import b`` names both ``a`` and ``a.b``.
    Strings (a docstring's ``>>> import gradsum.nn.functional as F``) are not statements."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _names_nn(module: str) -> bool:
    return module == "gradsum.nn" or module.startswith("gradsum.nn.")


def test_ops_and_tensor_printing_never_import_nn() -> None:
    # ops is layer 4 and nn layer 6: not even a lazy import inside a function goes up to nn
    # (what an op shares with nn.functional is written in ops, and F imports it from there;
    # ops' error texts are ops/_messages/). Tensor printing likewise.
    scanned = [m for m in MODULES if m == "gradsum.ops" or m.startswith("gradsum.ops.")]
    assert len(scanned) > 40, scanned  # (the scan sees the package)
    scanned.append("gradsum._tensor_str")
    found = [f"{m} imports {t}" for m in sorted(scanned)
             for t in sorted(imports_anywhere(m)) if _names_nn(t)]
    assert not found, "imports of gradsum.nn from below it:\n  " + "\n  ".join(found)


def test_the_anywhere_finder_sees_a_lazy_import() -> None:
    # (a function-level import that exists today: float_power_ reaches the in-place machinery)
    assert "gradsum.ops.inplace" in imports_anywhere("gradsum.ops.arithmetic")
    assert "gradsum.ops.inplace" not in module_imports("gradsum.ops.arithmetic")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def _family_namespace_edge(src: str, dst: str) -> bool:
    """A family's ``import gradsum.ops as F``: its backward rules call other families'
    differentiable ops through the package namespace, looked up when a rule runs (mul's rule
    sums to a shape, sum_to's rule expands, expand's rule sums: the rules of the families
    depend on one another by nature, as torch's ``at::`` functions do)."""
    return dst == "gradsum.ops" and src.startswith("gradsum.ops.")


def test_no_import_cycles() -> None:
    graph = {m: {t for t in module_imports(m) if not _family_namespace_edge(m, t)}
             for m in MODULES}
    cycles = _cycles(graph)
    assert not cycles, ("modules that import each other when imported (import inside the "
                        "function that needs it, or move the shared part down):\n  "
                        + "\n  ".join(" <-> ".join(c) for c in cycles))


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
