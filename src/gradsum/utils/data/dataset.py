"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``,
``ConcatDataset``, ``ChainDataset``, ``Subset`` and ``random_split`` (torch's names, indexing
rules and errors).

Example:
    >>> import gradsum
    >>> from gradsum.utils.data import ConcatDataset, Subset, TensorDataset
    >>> ds = TensorDataset(gradsum.arange(4), gradsum.arange(4) * 10)
    >>> ds[-1]
    (tensor(3), tensor(30))
    >>> both = ConcatDataset([Subset(range(10), [5, 6]), range(3)])
    >>> len(both), both[1], both[-1]
    (5, 6, 2)
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from gradsum import _random

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys (usually ``0 .. len - 1``) to samples: subclasses implement
    ``__getitem__`` and usually ``__len__`` (and may implement ``__getitems__`` to fetch a
    whole batch at once). ``a + b`` is ``ConcatDataset([a, b])``.

    Example:
        >>> class Squares(Dataset[int]):
        ...     def __len__(self) -> int:
        ...         return 4
        ...     def __getitem__(self, i: int) -> int:
        ...         return i * i
        >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
        ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index: Any) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses implement ``__iter__``. A ``DataLoader`` reads it in
    order (no sampler, no shuffle). ``a + b`` is ``ChainDataset([a, b])``.

    Example:
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(3))
        >>> list(Count() + Count())
        [0, 1, 2, 0, 1, 2]
    """

    def __add__(self, other: Dataset[_T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Any, ...]]):
    """Samples ``(t1[i], t2[i], ...)`` of tensors that share their first dimension.

    Example:
        >>> import gradsum
        >>> ds = TensorDataset(gradsum.zeros(3, 2), gradsum.tensor([7, 8, 9]))
        >>> len(ds), ds[1][1]
        (3, tensor(8))
    """

    tensors: tuple[Any, ...]

    def __init__(self, *tensors: Any) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise AssertionError(
                f"Size mismatch between tensors: their first dimensions are {sizes}. Pass "
                "tensors with the same size in dimension 0 (one row per sample)."
            )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


class StackDataset(Dataset[Any]):
    """Datasets of the same length read side by side: ``StackDataset(a, b)[i]`` is
    ``(a[i], b[i])``, ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``.

    Example:
        >>> StackDataset(x=[1, 2], y="ab")[1]
        {'x': 2, 'y': 'b'}
    """

    datasets: tuple[Any, ...] | dict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                    "like input/output, but both types are given."
                )
            datasets: list[Any] = list(args)
            self.datasets = args
        elif kwargs:
            datasets = list(kwargs.values())
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError(f"Size mismatch between datasets: their lengths are "
                             f"{[len(d) for d in datasets]}. Pass datasets of equal length.")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        if isinstance(self.datasets, dict):
            dict_batch: list[dict[str, Any]] = [{} for _ in indices]
            for k, dataset in self.datasets.items():
                for data, d_sample in zip(_fetch(dataset, indices), dict_batch):
                    d_sample[k] = data
            return dict_batch
        list_batch: list[list[Any]] = [[] for _ in indices]
        for dataset in self.datasets:
            for data, t_sample in zip(_fetch(dataset, indices), list_batch):
                t_sample.append(data)
        return [tuple(sample) for sample in list_batch]

    def __len__(self) -> int:
        return self._length


def _fetch(dataset: Any, indices: list[Any]) -> list[Any]:
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                             f"got {len(items)}")
        return list(items)
    return [dataset[i] for i in indices]


class ConcatDataset(Dataset[_T_co]):
    """Map-style datasets one after the other; negative indices count from the end.

    Example:
        >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
        >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
        (5, 3, 5, [2, 5])
    """

    datasets: list[Any]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        r, s = [], 0
        for e in sequence:
            n = len(e)
            r.append(n + s)
            s += n
        return r

    def __init__(self, datasets: Iterable[Any]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset: chain "
                                     "streams with ChainDataset instead")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> _T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError(f"absolute value of index should not exceed dataset length: "
                                 f"index {idx}, length {len(self)}")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == 0:
            sample_idx = idx
        else:
            sample_idx = idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]  # type: ignore[no-any-return]


class ChainDataset(IterableDataset):
    """Iterable datasets read one after the other (lazily).

    Example:
        >>> class R(IterableDataset):
        ...     def __init__(self, n: int) -> None:
        ...         self.n = n
        ...     def __iter__(self):
        ...         return iter(range(self.n))
        >>> list(ChainDataset([R(2), R(3)]))
        [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[_T_co]):
    """The samples of ``dataset`` at ``indices`` (``Subset(ds, idx)[i]`` is
    ``ds[idx[i]]``, negative ``i`` included).

    Example:
        >>> s = Subset("abcdef", [4, 0, 2])
        >>> len(s), s[0], s[-1], s.__getitems__([1, 2])
        (3, 'e', 'c', ['a', 'c'])
    """

    dataset: Any
    indices: Sequence[int]

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if (type(self).__getitem__ is not Subset.__getitem__
                and type(self).__getitems__ is Subset.__getitems__):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx: Any) -> _T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]  # type: ignore[no-any-return]
        return self.dataset[self.indices[idx]]  # type: ignore[no-any-return]

    def __getitems__(self, indices: list[int]) -> list[_T_co]:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(  # type: ignore[no-any-return]
                [self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: _random.Generator | None = _random.default_generator,
                 ) -> list[Subset[Any]]:
    """Split ``dataset`` into non-overlapping random :class:`Subset` s of the given lengths.

    ``lengths`` are item counts summing to ``len(dataset)``, or fractions summing to 1:
    each split then gets ``floor(frac * len(dataset))`` items and the remainder is handed
    out one item at a time to the splits in order (round robin), as torch does. The
    permutation comes from ``generator`` (default: the global one), so it differs from
    torch's for the same seed; the lengths are torch's.

    Args:
        dataset: a sized dataset.
        lengths: the lengths, or fractions, of the splits.
        generator: the generator of the permutation.

    Example:
        >>> import gradsum
        >>> from gradsum.utils.data import random_split
        >>> parts = random_split(range(10), [0.5, 0.3, 0.2],
        ...                      generator=gradsum.Generator().manual_seed(42))
        >>> [len(p) for p in parts]
        [5, 3, 2]
        >>> [len(p) for p in random_split(range(11), [0.25, 0.25, 0.5])]
        [3, 3, 5]
        >>> sorted(i for p in parts for i in p) == list(range(10))
        True
    """
    import gradsum

    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1 (got {frac})")
            subset_lengths.append(math.floor(n * frac))
        remainder = n - sum(subset_lengths)
        for i in range(remainder):  # round robin, as torch
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != n:
        raise ValueError(f"Sum of input lengths does not equal the length of the input "
                         f"dataset! The lengths {list(lengths)} sum to {sum(lengths)}, the "
                         f"dataset has {n} items. Pass counts summing to {n}, or fractions "
                         "summing to 1.")
    indices = gradsum.randperm(int(sum(lengths)), generator=generator).tolist()
    int_lengths = [int(x) for x in lengths]
    return [Subset(dataset, indices[offset - length: offset])
            for offset, length in zip(itertools.accumulate(int_lengths), int_lengths)]
