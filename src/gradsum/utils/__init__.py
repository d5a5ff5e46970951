"""Utilities (torch's ``torch.utils`` names): :mod:`gradsum.utils.checkpoint`,
:mod:`gradsum.utils.hooks` and :mod:`gradsum.utils.data` (imported on first use).

Example:
    >>> import gradsum
    >>> gradsum.utils.checkpoint.checkpoint.__name__
    'checkpoint'
"""

from __future__ import annotations

import importlib
from typing import Any

from gradsum.utils import checkpoint, hooks

__all__ = ["checkpoint", "data", "hooks"]


def __getattr__(name: str) -> Any:
    if name == "data":
        return importlib.import_module("gradsum.utils.data")
    raise AttributeError(f"module 'gradsum.utils' has no attribute {name!r}")
