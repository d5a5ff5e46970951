"""``DistributedSampler``: each rank's share of a dataset's indices (torch's semantics).

Example:
    >>> from gradsum.utils.data.distributed import DistributedSampler
    >>> [list(DistributedSampler(10, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    >>> [list(DistributedSampler(10, num_replicas=3, rank=r, shuffle=False, drop_last=True))
    ...  for r in range(3)]
    [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from gradsum.utils.data.sampler import Sampler


class DistributedSampler(Sampler[int]):
    """Indices of the part of a dataset that this rank reads, torch's padding rules included.

    Every epoch the indices ``0 .. len-1`` are permuted (``shuffle=True``) with a generator
    seeded by ``seed + epoch`` - identical on every rank, so call :meth:`set_epoch` on every
    rank before each epoch - then made divisible by ``num_replicas``: padded by repeating
    the first indices (default), or truncated (``drop_last=True``). Rank ``r`` takes every
    ``num_replicas``-th index starting at ``r``, so all ranks get ``len(sampler)`` indices and
    together cover the dataset (plus the padding repeats).

    The permutation comes from gradsum's generator, so it differs from torch's for the same
    seed; the padding, striding and lengths are torch's. Pass it as a ``DataLoader``'s
    ``sampler=`` (without ``shuffle``) to read this rank's share in batches.

    Args:
        dataset: a sized dataset, or its length as an int.
        num_replicas: number of ranks (default: the process group's world size).
        rank: this rank (default: the process group's rank).
        shuffle: permute the indices every epoch.
        seed: base seed of the permutation (must be the same on every rank).
        drop_last: drop the tail instead of padding.

    Example:
        >>> s = DistributedSampler(7, num_replicas=2, rank=0, seed=3)
        >>> s.set_epoch(1)
        >>> len(s), len(list(s)), sorted(set(s) | set(DistributedSampler(
        ...     7, num_replicas=2, rank=1, seed=3)._indices(1))) == list(range(7))
        (4, 4, True)
    """

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from gradsum import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "DistributedSampler needs num_replicas and rank, or an initialised process "
                    "group: call gradsum.distributed.init_process_group() first"
                )
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if num_replicas < 1:
            raise ValueError(f"num_replicas must be >= 1, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.dataset_len = dataset if isinstance(dataset, int) else len(dataset)
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        n = self.dataset_len
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def _indices(self, epoch: int) -> list[int]:
        n = self.dataset_len
        if self.shuffle:
            import gradsum

            g = gradsum.Generator()
            g.manual_seed(self.seed + epoch)
            indices: list[int] = gradsum.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            elif indices:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return indices[self.rank : self.total_size : self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices(self.epoch))

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of ``epoch`` (call it on every rank before each epoch)."""
        self.epoch = epoch
