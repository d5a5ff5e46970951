"""Data loading (torch's ``torch.utils.data`` names): datasets, samplers, collation and the
``DataLoader``, all running in the calling process.

Example:
    >>> import gradsum
    >>> from gradsum.utils.data import DataLoader, DistributedSampler, TensorDataset
    >>> list(DistributedSampler(5, num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    >>> ds = TensorDataset(gradsum.arange(6.0).reshape(3, 2), gradsum.tensor([0, 1, 0]))
    >>> for xb, yb in DataLoader(ds, batch_size=2):
    ...     print(tuple(xb.shape), yb.tolist())
    (2, 2) [0, 1]
    (1, 2) [0]
"""

from __future__ import annotations

from gradsum.utils.data._collate import default_collate, default_convert
from gradsum.utils.data.dataloader import DataLoader, get_worker_info
from gradsum.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from gradsum.utils.data.distributed import DistributedSampler
from gradsum.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
