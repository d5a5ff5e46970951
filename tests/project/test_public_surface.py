"""The public surface is what it was when it was recorded (``tests/data/public_surface.json``):
moving code between files adds, drops or renames nothing a ported program can name.

A deliberate change of the surface records it again (``python tests/public_surface.py
--record``) in the same commit, and the commit message says what changed and why.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from public_surface import RECORD, expanded, surface


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(RECORD.read_text())


@pytest.fixture(scope="module")
def current() -> dict[str, Any]:
    return surface()


def _diff(old: list[str], new: list[str]) -> str:
    return f"removed {sorted(set(old) - set(new))}, added {sorted(set(new) - set(old))}"


def test_public_modules_export_the_recorded_names(recorded: dict[str, Any],
                                                  current: dict[str, Any]) -> None:
    for mname, names in recorded["modules"].items():
        assert current["modules"].get(mname) == names, f"{mname}: " + _diff(
            names, current["modules"].get(mname, []))


def test_public_classes_have_the_recorded_attributes(recorded: dict[str, Any],
                                                     current: dict[str, Any]) -> None:
    old, new = expanded(recorded["classes"]), expanded(current["classes"])
    assert sorted(new) == sorted(old), _diff(list(old), list(new))
    for cname, names in old.items():
        assert new[cname] == names, f"{cname}: " + _diff(names, new[cname])
    assert current["aliases"] == recorded["aliases"]


def test_op_registry_has_the_recorded_names(recorded: dict[str, Any],
                                            current: dict[str, Any]) -> None:
    assert current["ops"] == recorded["ops"], _diff(recorded["ops"], current["ops"])


def test_op_table_gives_the_recorded_grad_fn_names(recorded: dict[str, Any],
                                                   current: dict[str, Any]) -> None:
    assert sorted(current["grad_fn"]) == sorted(recorded["grad_fn"])
    for key, names in recorded["grad_fn"].items():
        assert current["grad_fn"][key] == names, key
