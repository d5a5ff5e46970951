"""The texts of the op base and the registry (ops/_core.py)."""

from __future__ import annotations

from typing import Any  # noqa: F401

from gradsum.ops._messages._format import torch_name  # noqa: F401
