"""The texts of the normalizations."""

from __future__ import annotations

from typing import Any  # noqa: F401

from gradsum.ops._messages._format import torch_name  # noqa: F401
