"""Side by side with torch: F.one_hot of an empty tensor."""

from __future__ import annotations




