"""Graph pictures: DOT structure (nodes, edges, fan-in), shapes, saved bytes, freed nodes."""

from __future__ import annotations

import re
import sys
import types

import pytest

import gradsum
from gradsum import nn
from gradsum.toolkit import draw, to_dot

_NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
_EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?;$")


def parse(dot: str):
    assert dot.startswith("digraph gradsum {") and dot.rstrip().endswith("}")
    nodes, edges = {}, []
    for line in dot.splitlines():
        m = _NODE.match(line)
        if m:
            nodes[m.group(1)] = (m.group(2).split("\\n"), m.group(3))
            continue
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2)))
    return nodes, edges


def by_first_line(nodes, name):
    return [k for k, (label, _) in nodes.items() if label[0] == name]


def test_square_has_fan_in_two_and_every_edge():
    x = gradsum.ones(3, requires_grad=True)
    nodes, edges = parse(to_dot((x * x).sum(), params={"x": x}))
    (mul,) = by_first_line(nodes, "MulBackward0")
    (acc,) = by_first_line(nodes, "AccumulateGrad")
    (leaf,) = by_first_line(nodes, "x")
    assert edges.count((mul, acc)) == 2 and (acc, leaf) in edges
    assert "fan-in 2" in nodes[acc][0] and "#d62728" in nodes[acc][1]
    assert nodes[leaf][0][1] == "(3,) float32"
    assert ("out0", by_first_line(nodes, "SumBackward0")[0]) in edges
    assert nodes["out0"][0] == ["output", "() float32"]


def test_weight_tying_stands_out_and_untied_leaves_do_not():
    gradsum.manual_seed(0)
    emb = nn.Embedding(5, 3)
    proj_bias = nn.Parameter(gradsum.zeros(5))
    tokens = gradsum.tensor([[0, 1], [2, 4]])
    h = emb(tokens)                                            # (2, 2, 3)
    logits = h @ emb.weight.t() + proj_bias                    # tied projection
    loss = nn.functional.cross_entropy(logits.reshape(-1, 5), tokens.reshape(-1))
    nodes, edges = parse(to_dot(loss, params={"emb.weight": emb.weight, "bias": proj_bias}))
    (w,) = by_first_line(nodes, "emb.weight")
    (b,) = by_first_line(nodes, "bias")
    assert nodes[w][0][1] == "(5, 3) float32" and "fan-in 2: gradients summed" in nodes[w][0]
    assert nodes[b][0][1] == "(5,) float32" and not any("fan-in" in s for s in nodes[b][0])
    acc_w = [s for s, d in edges if d == w]
    assert len(acc_w) == 1 and sum(1 for _, d in edges if d == acc_w[0]) == 2
    acc_b = next(s for s, d in edges if d == b)
    assert sum(1 for _, d in edges if d == acc_b) == 1
    assert nodes["out0"][0][1] == "() float32"


def test_saved_bytes_shapes_and_freed_nodes():
    a = gradsum.ones(2, 3, requires_grad=True)
    b = gradsum.ones(3, 4, requires_grad=True)
    y = (a @ b).sum()
    mm_node = y.grad_fn.next_functions[0][0]
    expected = sum(
        (s._array if s._array is not None else s._tensor._array).nbytes for s in mm_node._saved)
    nodes, _ = parse(to_dot(y))
    (mm,) = by_first_line(nodes, "MmBackward0")
    assert f"saved (2, 3) (3, 4) = {expected} B" in nodes[mm][0]
    y.backward()
    nodes, _ = parse(to_dot(y))
    (mm,) = by_first_line(nodes, "MmBackward0")
    assert "saved: freed" in nodes[mm][0] and "dashed" in nodes[mm][1]


def test_several_roots_and_leaf_root():
    x = gradsum.ones(2, requires_grad=True)
    nodes, edges = parse(to_dot([x * 2, x]))
    assert nodes["out0"][0][0] == "output 0" and nodes["out1"][0][0] == "output 1"
    assert len(by_first_line(nodes, "leaf")) == 1            # the same leaf, drawn once
    assert sum(1 for s, _ in edges if s == "out1") == 1


def test_max_nodes_cuts_the_picture():
    x = gradsum.ones(1, requires_grad=True)
    y = x
    for _ in range(50):
        y = y * 1.0
    assert "graph cut at 10 nodes" in to_dot(y, max_nodes=10)


def test_draw_errors_without_graphviz(monkeypatch, tmp_path):
    x = gradsum.ones(2, requires_grad=True)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match="pip install graphviz"):
        draw(x * 2, str(tmp_path / "g.svg"))
    fake = types.ModuleType("graphviz")
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(RuntimeError, match="'dot' program"):
        draw(x * 2, str(tmp_path / "g.svg"))


def test_draw_writes_what_graphviz_renders(monkeypatch, tmp_path):
    seen = {}

    class Source:
        def __init__(self, text):
            seen["text"] = text

        def pipe(self, format):
            seen["format"] = format
            return b"<svg/>"

    fake = types.ModuleType("graphviz")
    fake.Source = Source
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/dot")
    x = gradsum.ones(2, requires_grad=True)
    out = draw(x * 2, str(tmp_path / "g.png"))
    with open(out, "rb") as f:
        assert f.read() == b"<svg/>" and seen["format"] == "png"
    assert seen["text"].startswith("digraph gradsum")


def test_draw_renders_svg_with_real_graphviz(tmp_path):
    pytest.importorskip("graphviz", reason="the graphviz package is not installed")
    import shutil

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    x = gradsum.ones(2, requires_grad=True)
    out = draw((x * x).sum(), str(tmp_path / "g.svg"), params={"x": x})
    text = (tmp_path / "g.svg").read_text()
    assert out.endswith("g.svg") and "<svg" in text and "AccumulateGrad" in text
