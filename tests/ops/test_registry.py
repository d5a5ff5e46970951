"""The op registry generates the Tensor surface (issue 19, point 2): every Tensor method,
operator and in-place twin that ``gradsum.ops`` binds comes from a declaration next to its
op (``ops._core.register`` / ``tensor_method``), and ``bind_surface`` is the only code in
``src/gradsum/ops`` that sets a Tensor attribute; every declared op is reachable under its
public names; no node class is made with ``type()`` and none changes class after it is made.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gradsum
from gradsum import Tensor
from gradsum.ops import _core

SRC = Path(gradsum.__file__).parent
OPS_DIR = SRC / "ops"


def _is_tensor(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "Tensor"


def test_only_bind_surface_sets_tensor_attributes() -> None:
    offenders = []
    for path in sorted(OPS_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "setattr" and node.args and _is_tensor(node.args[0])):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno} setattr(Tensor, ...)")
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and _is_tensor(t.value):
                        offenders.append(f"{path.relative_to(SRC)}:{node.lineno} Tensor.{t.attr} =")
    # the one setattr: bind_surface, in ops/_core.py
    rest = [o for o in offenders if not o.startswith("ops/_core.py")]
    assert not rest, "Tensor attributes set outside ops._core.bind_surface:\n" + "\n".join(rest)
    assert len(offenders) == 1


def test_every_bound_attribute_comes_from_a_declaration() -> None:
    bound = _core.surface()  # (a fresh build: the twins are new objects, the functions not)
    assert len(bound) > 450
    for name in bound:
        assert name in Tensor.__dict__, name
    for spec in _core.SPECS.values():
        for name in spec.methods + spec.dunders:
            assert Tensor.__dict__[name] is spec.fn, name
        for tw in spec.twins:
            objs = {id(Tensor.__dict__[n]) for n in tw.names}
            assert len(objs) == 1, tw.names  # (one object for all its names)
            twin = Tensor.__dict__[tw.names[0]]
            assert twin.__name__ == tw.names[0]
    # and nothing else in ops binds what the registry does not declare: every attribute of
    # Tensor that a gradsum.ops module defines is a declared one
    for name, obj in Tensor.__dict__.items():
        mod = getattr(obj, "__module__", "") or ""
        if mod.startswith("gradsum.ops"):
            assert name in bound, f"Tensor.{name} ({mod}) is not declared in the registry"


def test_declared_ops_are_reachable_under_their_names() -> None:
    for spec in _core.SPECS.values():
        for name in spec.names:
            assert _core.OPS[name] is spec.fn, name
    for name, fn in _core.OPS.items():  # (every entry of OPS comes from a register call)
        assert name in _core.SPECS[fn].names, name
    import gradsum.linalg
    import gradsum.nn.functional
    import gradsum.special

    homes = (gradsum.ops, gradsum, gradsum.linalg, gradsum.special, gradsum.nn.functional,
             Tensor)
    for name, fn in _core.OPS.items():
        if name.startswith("special_"):  # (torch.special.erfcx is aten's special_erfcx)
            assert getattr(gradsum.special, name[len("special_"):]) is fn, name
            continue
        assert any(getattr(m, name, None) is fn for m in homes), name
    # the methods view the benchmarks and tests may read
    assert gradsum.ops.METHODS["mul"] is gradsum.ops.mul
    assert gradsum.ops.METHODS["max"] is Tensor.max


def test_twins_have_their_ops_signatures() -> None:
    import inspect

    sig = inspect.signature(Tensor.index_add_)
    assert list(sig.parameters)[1:4] == ["dim", "index", "source"]
    assert "value" in inspect.signature(Tensor.addcmul_).parameters


def test_no_type_made_or_renamed_nodes() -> None:
    made = re.compile(r"""\btype\(\s*f?["'][^"']*Backward""")
    swap = re.compile(r"\b(fn|node|grad_fn)\.__class__\s*=")
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if made.search(line) or swap.search(line):
                found.append(f"{path.relative_to(SRC)}:{i}: {line.strip()}")
    assert not found, "\n".join(found)


def test_node_names_given_at_the_class_statement() -> None:
    x = gradsum.ones(3, requires_grad=True)
    assert type((x * 2).grad_fn).__name__ == "MulBackward0"
    assert (x / 2).grad_fn.name() == "DivBackward0"
    assert x.floor().grad_fn.name() == "FloorBackward0"
    assert x[None].grad_fn.name() == "UnsqueezeBackward0"
    v = x.sort().values
    assert v.grad_fn.name() == "SortBackward0"
    v.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
