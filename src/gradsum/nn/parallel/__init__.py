"""Parallel wrappers (torch's ``nn.parallel``): :class:`DistributedDataParallel`.

Example:
    >>> from gradsum.nn.parallel import DistributedDataParallel, DDP
    >>> DDP is DistributedDataParallel
    True
"""

from __future__ import annotations

from gradsum.nn.parallel.distributed import DistributedDataParallel

DDP = DistributedDataParallel

__all__ = ["DDP", "DistributedDataParallel"]
