"""The texts of the copies that move elements (cat, stack, flip, ...)."""

from __future__ import annotations

from typing import Any  # noqa: F401

from gradsum.ops._messages._format import torch_name  # noqa: F401
