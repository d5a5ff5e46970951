"""Data loading helpers (torch's ``torch.utils.data`` names).

Example:
    >>> from gradsum.utils.data import DistributedSampler
    >>> list(DistributedSampler(5, num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
"""

from __future__ import annotations

from gradsum.utils.data.distributed import DistributedSampler

__all__ = ["DistributedSampler"]
