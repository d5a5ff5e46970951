"""One writer of ``.grad``: only the leaf sink's module (``gradsum/autograd/graph.py``) assigns
a tensor's ``_grad``.

torch keeps every update of ``.grad`` in ``AccumulateGrad`` (take-over of an owned buffer,
in-place add, out of place under ``create_graph``); gradsum's sink is ``graph._accumulate_grad``
(backward, retain_grad, DDP) and ``graph._set_grad`` (the ``.grad`` setter, ``deepcopy``, the
toolkit restoring a snapshot). This test reads the source of every module with ``ast`` and
fails on an assignment (``x._grad = ...``, ``x._grad += ...``, ``del x._grad``) or a
``setattr``/``delattr``/``object.__setattr__`` of ``"_grad"`` anywhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gradsum

SRC = Path(gradsum.__file__).parent
SINK = SRC / "autograd" / "graph.py"
_SETTERS = {"setattr", "delattr", "__setattr__", "__delattr__"}


def _writes(tree: ast.AST) -> list[int]:
    """The line numbers in ``tree`` that assign, augment or delete an attribute ``_grad``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            if name in _SETTERS and any(isinstance(a, ast.Constant) and a.value == "_grad"
                                        for a in node.args):
                lines.append(node.lineno)
            continue
        else:
            continue
        for t in targets:
            if any(isinstance(sub, ast.Attribute) and sub.attr == "_grad" for sub in ast.walk(t)):
                lines.append(node.lineno)
    return lines


def test_only_the_sink_assigns_grad() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SINK:
            continue
        for line in _writes(ast.parse(path.read_text(), str(path))):
            offenders.append(f"{path.relative_to(SRC.parent)}:{line}")
    assert not offenders, (
        "these lines write ._grad outside the sink (gradsum/autograd/graph.py); call "
        "graph._accumulate_grad (adding a gradient) or graph._set_grad (replacing it) instead: "
        + ", ".join(offenders))


def test_the_scan_sees_each_kind_of_write() -> None:
    src = """
t._grad = g
t._grad += g
t.grad._grad: int = 0
del t._grad
setattr(t, "_grad", g)
object.__setattr__(t, "_grad", g)
delattr(t, "_grad")
a, t._grad = 1, 2
"""
    assert sorted(_writes(ast.parse(src))) == list(range(2, 10))
    assert _writes(ast.parse("g = t._grad\nt.grad = g\nf(t._grad)\n")) == []


def test_the_sink_is_where_the_writes_are() -> None:
    assert _writes(ast.parse(SINK.read_text()))  # (the scan would pass vacuously otherwise)
