"""Samplers: the order in which a :class:`~gradsum.utils.data.DataLoader` reads a dataset.

Names, arguments, validation and lengths are torch's (``torch.utils.data.sampler``). The
random ones draw from gradsum's generators (NumPy's PCG64), so a fixed seed gives a fixed
order that differs from torch's for the same seed.

Example:
    >>> from gradsum.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
    [[0, 1, 2], [3, 4, 5], [6]]
    >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=True))
    [[0, 1, 2], [3, 4, 5]]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from gradsum import _random

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)


def _fresh_generator(generator: _random.Generator | None) -> _random.Generator:
    """``generator``, or (as torch does when none is given) a new generator seeded from one
    draw of the default generator, so ``manual_seed`` fixes the order."""
    if generator is not None:
        return generator
    seed = int(_random.rng(None).integers(0, 2**63))
    return _random.Generator().manual_seed(seed)


class Sampler(Generic[_T_co]):
    """Base class of all samplers: subclasses provide ``__iter__`` (indices, or lists of
    indices for a batch sampler) and usually ``__len__``.

    Example:
        >>> class EvenFirst(Sampler[int]):
        ...     def __init__(self, n: int) -> None:
        ...         self.n = n
        ...     def __iter__(self):
        ...         return iter([*range(0, self.n, 2), *range(1, self.n, 2)])
        ...     def __len__(self) -> int:
        ...         return self.n
        >>> list(EvenFirst(5))
        [0, 2, 4, 1, 3]
    """

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, always in that order.

    Example:
        >>> list(SequentialSampler("abc"))
        [0, 1, 2]
    """

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random order of the indices: a permutation (repeated and cut to ``num_samples``
    when that exceeds the length), or ``num_samples`` independent draws with
    ``replacement=True``.

    Without ``generator`` each ``iter()`` seeds a fresh generator from the default one (as
    torch does), so ``gradsum.manual_seed`` makes the sequence of epochs reproducible and
    every epoch differs from the previous one.

    Args:
        data_source: a sized dataset.
        replacement: draw with replacement.
        num_samples: how many indices per pass (default: ``len(data_source)``).
        generator: the generator to draw from.

    Example:
        >>> import gradsum
        >>> g = gradsum.Generator().manual_seed(0)
        >>> sorted(RandomSampler(range(5), generator=g))
        [0, 1, 2, 3, 4]
    """

    data_source: Sized
    replacement: bool

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None,
                 generator: _random.Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # the dataset size might change at runtime
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        import gradsum

        n = len(self.data_source)
        generator = _fresh_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from gradsum.randint(0, n, (32,), generator=generator).tolist()
            yield from gradsum.randint(0, n, (self.num_samples % 32,),
                                       generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from gradsum.randperm(n, generator=generator).tolist()
            yield from gradsum.randperm(n, generator=generator).tolist()[
                : self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (a new one every pass), without replacement.

    Example:
        >>> sorted(SubsetRandomSampler([7, 3, 9]))
        [3, 7, 9]
    """

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int],
                 generator: _random.Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        import gradsum

        for i in gradsum.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices of ``[0, len(weights))`` drawn with probabilities
    proportional to ``weights`` (``gradsum.multinomial``): with replacement by default;
    without it, each index at most once (so ``num_samples <= len(weights)``, checked when
    iterating, as in torch).

    Example:
        >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4)
        >>> list(s), len(s)
        ([1, 1, 1, 1], 4)
    """

    num_samples: int
    replacement: bool

    def __init__(self, weights: Sequence[float] | Any, num_samples: int,
                 replacement: bool = True,
                 generator: _random.Generator | None = None) -> None:
        import gradsum

        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = gradsum.as_tensor(weights, dtype=gradsum.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        import gradsum

        rand_tensor = gradsum.multinomial(self.weights, self.num_samples, self.replacement,
                                          generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups another sampler's indices into lists of ``batch_size`` (the last one shorter,
    or dropped with ``drop_last=True``).

    Example:
        >>> list(BatchSampler(range(5), 2, drop_last=False)), len(BatchSampler(range(5), 2, True))
        ([[0, 1], [2, 3], [4]], 2)
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch in zip(*args):
                yield [*batch]
        else:
            batch_list = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch_list:
                yield batch_list
                batch_list = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size  # type: ignore[arg-type]
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size  # type: ignore[arg-type]
