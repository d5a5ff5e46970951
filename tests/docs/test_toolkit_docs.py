"""Every Python block of the README's toolkit section runs (its examples stay true)."""

from __future__ import annotations

import pathlib
import re

import pytest

from gradsum.autograd import engine, graph

DOC = pathlib.Path(__file__).resolve().parents[2] / "README.md"
_TEXT = DOC.read_text()
_SECTION = _TEXT[_TEXT.index("## The accumulation toolkit"):_TEXT.index("## Examples")]
BLOCKS = re.findall(r"```python\n(.*?)```", _SECTION, flags=re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_example_runs(code, capsys):
    exec(compile(code, str(DOC), "exec"), {"__name__": "toolkit_doc"})
    assert capsys.readouterr().out                      # each example shows something
    assert engine.backward_observers == [] and graph.accumulate_observers == []


def test_doc_has_a_section_per_feature():
    assert len(BLOCKS) == 5
