"""Error texts by package (issue 19, point 8): each of nn, ops, optim and autograd keeps its
error and warning texts in its own message module (``nn/_messages/``, ``ops/_messages/``,
``optim/_messages.py``, ``autograd/_messages.py``), one function per error; a text written at
the raise site is the exception, and each exception left is named below with its reason.

The scan counts the raise / warn sites (and exceptions built for a later raise) outside the
message modules whose text is a literal or an f-string written at the site rather than a call
into ``_messages``. The texts themselves are checked against torch's by the differential
tests of each subject (tests/nn/test_nn_messages.py, tests/ops/, tests/optim/, ...).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import gradsum

SRC = pathlib.Path(gradsum.__file__).parent

#: package -> the inline texts it may still hold, and why
CEILINGS: dict[str, tuple[int, str]] = {
    "nn": (0, "none"),
    "ops": (0, "none"),
    "optim": (0, "none"),
    "autograd": (0, "none"),
}


def _is_text(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, ast.IfExp):
        return _is_text(node.body) or _is_text(node.orelse)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" and _is_text(node.func.value)
    return False


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def inline_lines(source: str) -> list[int]:
    """The lines of ``source`` that raise, warn or build an exception with an inline text."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args and _is_text(node.args[0])):
            continue
        name = _callee(node)
        if name == "warn" or name.endswith(("Error", "Exception", "Warning")):
            lines.append(node.lineno)
    return sorted(lines)


def inline_sites(package: str) -> list[str]:
    """``file:line`` of every inline text of a package, its message modules set aside."""
    root = SRC / package
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "_messages" or rel.name == "_messages.py":
            continue
        found += [f"{package}/{rel}:{line}" for line in inline_lines(path.read_text())]
    return found


@pytest.mark.parametrize("package", sorted(CEILINGS))
def test_inline_texts_are_the_exception(package: str) -> None:
    ceiling, why = CEILINGS[package]
    sites = inline_sites(package)
    assert len(sites) <= ceiling, (
        f"{len(sites)} {package} error/warning texts are written inline (at most {ceiling}: "
        f"{why}): put the new ones in the package's _messages, one function per error:\n"
        + "\n".join(sites)
    )


@pytest.mark.parametrize("package", sorted(CEILINGS))
def test_scan_sees_the_moved_sites(package: str) -> None:
    # the scan is not vacuous: the package's raise sites call into its message module
    calls = sum(p.read_text().count("_messages.") for p in (SRC / package).rglob("*.py"))
    assert calls > 20


def test_scan_finds_an_inline_text() -> None:
    source = (
        'raise ValueError(f"bad {x}")\n'
        'warnings.warn("w")\n'
        'err = TypeError("built " + str(x))\n'
        'raise ValueError(_messages.t(x) if a else "inline")\n'
        'raise E(_messages.t(x))\n'
        'print("not an error")\n'
    )
    assert inline_lines(source) == [1, 2, 3, 4]
