"""Files are named for what they hold, never for when they arrived (STYLE.md, "Named for what
it holds"): no module or test file called extra, more, misc, compat, new or leftovers, and none
whose name ends in a number (``linalg2``, ``test_diff_nn9``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_HISTORY = re.compile(r"(^|_)(extra|more|misc|compat|new|leftovers|others?)(_|$)")


def _stems(top: str) -> list[Path]:
    return [p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]


def test_no_file_is_named_for_when_it_arrived() -> None:
    bad = [str(p.relative_to(ROOT)) for top in ("src", "tests", "benchmarks")
           for p in _stems(top) if _HISTORY.search(p.stem.lstrip("_"))]
    assert not bad, f"files named by history, not by what they hold: {bad}"


def test_no_file_name_ends_in_a_number() -> None:
    bad = [str(p.relative_to(ROOT)) for top in ("src", "tests", "benchmarks")
           for p in _stems(top) if p.stem[-1:].isdigit()]
    assert not bad, f"files named by a number: {bad}"
