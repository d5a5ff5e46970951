"""The linter configured in pyproject.toml is clean (skipped when ruff is not installed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed: pip install -e .[test]")
    targets = [p for p in ("src", "tests", "benchmarks", "examples", "ports")
               if (ROOT / p).exists()]
    proc = subprocess.run([ruff, "check", *targets], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_py_typed_marker_ships():
    assert (ROOT / "src" / "gradsum" / "py.typed").exists()


def test_only_backend_imports_numpy():
    """The array backend is a seam: op and library code never import numpy directly."""
    offenders = []
    for path in (ROOT / "src" / "gradsum").rglob("*.py"):
        if path.name == "_backend.py":
            continue
        text = path.read_text()
        for line in text.splitlines():
            s = line.strip()
            if s.startswith(("import numpy", "from numpy")):
                offenders.append(f"{path.relative_to(ROOT)}: {s}")
    assert not offenders, "\n".join(offenders)
    _ = sys
