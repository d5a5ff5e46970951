"""Collection rules shared by tests/ and the doctests under src/.

The doctests of modules that need an optional package skip, with the reason, when it is
missing (the test extra installs all of them), as the test files do with importorskip.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

#: module path fragment -> (package it needs, how to get it)
_DOCTEST_NEEDS = {
    # (autocast's CPU default dtype is bfloat16)
    "src/gradsum/_autocast.py": ("ml_dtypes", "pip install ml_dtypes (or gradsum[bfloat16])"),
    "src/gradsum/amp/__init__.py": ("ml_dtypes", "pip install ml_dtypes (or gradsum[bfloat16])"),
    "src/gradsum/cpu/amp.py": ("ml_dtypes", "pip install ml_dtypes (or gradsum[bfloat16])"),
    "src/gradsum/amp/autocast_mode.py": ("ml_dtypes",
                                         "pip install ml_dtypes (or gradsum[bfloat16])"),
}


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers",
        "bitwise: compares bits with torch's CPU kernels; CI runs these under each "
        "ATEN_CPU_CAPABILITY (default, avx2, avx512)")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        path = str(getattr(item, "path", "")).replace("\\", "/")
        for fragment, (package, how) in _DOCTEST_NEEDS.items():
            if path.endswith(fragment) and importlib.util.find_spec(package) is None:
                item.add_marker(pytest.mark.skip(
                    reason=f"this doctest needs {package}, which is not installed: {how}"))
