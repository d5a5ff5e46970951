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

from gradsum._backend import xp
from gradsum.utils.data.sampler import Sampler

_MT_SMALL_N = 0xFFFFFFFF // 20  # torch's randperm_cpu switches algorithm at this n


def _torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``, exactly.

    torch's CPU generator is an MT19937 seeded with the low 32 bits of the seed; its
    ``randperm`` (``randperm_cpu``) swaps ``r[i]`` with ``r[i + u32 % (n - i)]`` for
    ``i < n - 1``, one 32-bit draw each, and for ``n >= 2**32 // 20`` uses the inside-out
    Fisher-Yates shuffle on 64-bit draws (two 32-bit draws, the first the high word).
    NumPy's legacy ``RandomState(int)`` is the same MT19937 with the same seeding, and
    ``randint(0, 2**32, dtype=uint32)`` returns its raw 32-bit outputs.

    Raises:
        RuntimeError: ``seed`` is not an int (torch's ``manual_seed`` message).
        ValueError: ``seed`` is outside ``[-2**63, 2**64)`` (torch's overflow).

    Example:
        >>> _torch_randperm(10, 0)
        [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RuntimeError(
            f"manual_seed expected a long, but got {type(seed).__name__}: "
            f"DistributedSampler's seed + epoch must be an int"
        )
    if not -(2**63) <= seed < 2**64:
        raise ValueError(
            f"Overflow when unpacking long long: DistributedSampler's seed + epoch = {seed} "
            f"does not fit in 64 bits"
        )
    rng = xp.random.RandomState(seed & 0xFFFFFFFF)
    if n < _MT_SMALL_N:
        draws = rng.randint(0, 2**32, size=max(n - 1, 0), dtype=xp.uint32).tolist()
        r = list(range(n))
        for i, u in enumerate(draws):  # a plain-list loop: ~0.5 s per million indices
            j = i + u % (n - i)
            r[i], r[j] = r[j], r[i]
        return r
    words = rng.randint(0, 2**32, size=2 * n, dtype=xp.uint32).astype(xp.uint64)
    draws = ((words[0::2] << xp.uint64(32)) | words[1::2]).tolist()
    r = [0] * n
    for i, u in enumerate(draws):  # inside-out: r[i] = r[z]; r[z] = i
        z = u % (i + 1)
        r[i] = r[z]
        r[z] = i
    return r


class DistributedSampler(Sampler[int]):
    """Indices of the part of a dataset that this rank reads, torch's padding rules included.

    Every epoch the indices ``0 .. len-1`` are permuted (``shuffle=True``) with a generator
    seeded by ``seed + epoch`` - identical on every rank, so call :meth:`set_epoch` on every
    rank before each epoch - then made divisible by ``num_replicas``: padded by repeating
    the first indices (default), or truncated (``drop_last=True``). Rank ``r`` takes every
    ``num_replicas``-th index starting at ``r``, so all ranks get ``len(sampler)`` indices and
    together cover the dataset (plus the padding repeats).

    The permutation is torch's for the same seed (:func:`_torch_randperm`: torch's CPU
    ``randperm`` on a generator seeded with ``seed + epoch``), so a job that switches between
    gradsum and torch reads the same indices on every rank; the padding, striding, lengths and
    errors are torch's too. Pass it as a ``DataLoader``'s ``sampler=`` (without ``shuffle``) to
    read this rank's share in batches.

    Args:
        dataset: a sized dataset, or its length as an int.
        num_replicas: number of ranks (default: the process group's world size).
        rank: this rank (default: the process group's rank).
        shuffle: permute the indices every epoch.
        seed: base seed of the permutation (must be the same on every rank).
        drop_last: drop the tail instead of padding.

    Raises:
        ValueError: ``rank`` is not in ``[0, num_replicas - 1]`` (torch's message), or
            ``num_replicas``/``rank`` were omitted without an initialised process group
            (``get_world_size()``'s "Default process group has not been initialized").
        RuntimeError: they were omitted and mpi4py is not installed.

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
        # torch's order and types: without a process group, get_world_size()/get_rank() raise
        # ValueError("Default process group has not been initialized, ..."); num_replicas < 1
        # fails the rank check below with torch's message
        if num_replicas is None or rank is None:
            from gradsum import distributed as dist

            if not dist.is_available():
                raise RuntimeError(
                    "Requires distributed package to be available: DistributedSampler was "
                    "given no num_replicas/rank and mpi4py is not installed (pip install "
                    "mpi4py mpich), or pass num_replicas and rank explicitly"
                )
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
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
            indices = _torch_randperm(n, self.seed + epoch)
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
