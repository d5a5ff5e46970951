"""``DataLoader``: batches of a dataset, in the order a sampler gives (torch's semantics).

Example:
    >>> import gradsum
    >>> from gradsum.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(gradsum.arange(5.0), gradsum.arange(5))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from gradsum import _random
from gradsum.utils.data._collate import default_collate, default_convert
from gradsum.utils.data.dataset import IterableDataset
from gradsum.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

_T_co = TypeVar("_T_co", covariant=True)


def get_worker_info() -> None:
    """Information about the current data-loading worker: always ``None`` in gradsum, whose
    loaders read every sample in the main process (torch returns ``None`` there too)."""
    return None


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler[None]):
    """``None`` forever: the sampler of an iterable dataset (the fetcher ends the pass)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader(Generic[_T_co]):
    """Iterate over a dataset in batches: torch's ``DataLoader`` with its arguments, defaults,
    mutually exclusive options and lengths, loading in the calling process.

    A map-style dataset (``__getitem__`` + ``__len__``; any sequence works) is read in the
    order of ``sampler`` (default: :class:`SequentialSampler`, or :class:`RandomSampler`
    with ``shuffle=True``, a new order every epoch); ``batch_size`` indices at a time are
    grouped by a :class:`BatchSampler` (``drop_last`` drops a short last batch), or
    ``batch_sampler`` gives whole batches. The samples of a batch go through ``collate_fn``
    (default :func:`default_collate`: tensors stacked, numbers to tensors, structure kept).
    ``batch_size=None`` turns batching off: each sample goes through
    :func:`default_convert` alone. An :class:`IterableDataset` is read in its own order
    (no sampler, no shuffle), in batches of ``batch_size``.

    Workers: gradsum loads data in the main process. ``num_workers > 0`` is accepted for
    map-style datasets and gives the same batches in the same order as torch's workers
    (``in_order=True``) do; ``worker_init_fn``, ``prefetch_factor``,
    ``persistent_workers``, ``multiprocessing_context``, ``timeout`` and ``in_order`` are
    accepted and have nothing to act on (no worker process is started, so
    ``worker_init_fn`` is not called and :func:`get_worker_info` returns ``None``). For an
    :class:`IterableDataset`, ``num_workers > 0`` is refused: torch runs one copy of the
    stream per worker, which one process cannot reproduce. ``pin_memory=True`` warns, as
    torch does without an accelerator.

    Random order: ``shuffle=True`` draws from ``generator`` or, without one, from a fresh
    generator seeded by the default one (so ``gradsum.manual_seed`` fixes the epochs'
    orders); the orders differ from torch's for the same seed. Each ``iter()`` also draws
    one number from ``generator`` (or the default generator), as torch's base seed does.

    Args:
        dataset: a map-style dataset or an :class:`IterableDataset`.
        batch_size: samples per batch, or ``None`` for no batching.
        shuffle: reshuffle the indices every epoch (map-style only).
        sampler: the index order (an iterable of keys); exclusive with ``shuffle``.
        batch_sampler: yields lists of indices; exclusive with ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``.
        num_workers: see above.
        collate_fn: turns a list of samples into a batch.
        pin_memory: accepted (warns: no accelerator).
        drop_last: drop the last batch when it is short.
        timeout: must be >= 0; unused.
        worker_init_fn: accepted, not called (no workers).
        multiprocessing_context: accepted with ``num_workers > 0``; unused.
        generator: the generator behind ``shuffle=True`` (and the per-epoch base seed).
        prefetch_factor: only with ``num_workers > 0``; unused.
        persistent_workers: only with ``num_workers > 0``; unused.
        pin_memory_device: accepted, unused.
        in_order: accepted, unused (batches always come in order).

    Example:
        >>> import gradsum
        >>> from gradsum.utils.data import DataLoader, TensorDataset
        >>> x, y = gradsum.arange(10.0).reshape(5, 2), gradsum.arange(5)
        >>> loader = DataLoader(TensorDataset(x, y), batch_size=2, shuffle=True,
        ...                     generator=gradsum.Generator().manual_seed(0))
        >>> len(loader), [tuple(xb.shape) for xb, _ in loader]
        (3, [(2, 2), (2, 2), (1, 2)])
        >>> sorted(i for _, yb in loader for i in yb.tolist())  # every sample once an epoch
        [0, 1, 2, 3, 4]
        >>> [b.tolist() for b in DataLoader(range(5), batch_size=2, drop_last=True)]
        [[0, 1], [2, 3]]
        >>> list(DataLoader([1.5, 2.5], batch_size=None))  # no batching: samples as they are
        [1.5, 2.5]
    """

    dataset: Any
    batch_size: int | None
    num_workers: int
    drop_last: bool
    sampler: Any
    batch_sampler: Any
    __initialized = False

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: _random.Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             f"disable multiprocessing (got num_workers={num_workers}).")
        if timeout < 0:
            raise ValueError(f"timeout option should be non-negative (got timeout={timeout})")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
            if num_workers > 0:
                raise ValueError(
                    f"DataLoader with IterableDataset: num_workers={num_workers} is not "
                    "supported: gradsum loads data in the main process, and torch's workers "
                    "would each replay the stream. Pass num_workers=0."
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called: int | None = None

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context: Any) -> None:
        if multiprocessing_context is not None and self.num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got "
                             f"num_workers={self.num_workers}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _DataLoaderIter:
    """One pass over a :class:`DataLoader` (what ``iter(loader)`` returns)."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # torch draws its workers' base seed here (advancing the generator once per epoch)
        self._base_seed = int(_random.rng(loader.generator).integers(0, 2**63))
        self._num_yielded = 0
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._dataset_iter: Iterator[Any] | None = None
        self._ended = False
        if self._dataset_kind == _DatasetKind.Iterable:
            self._dataset_iter = iter(self._dataset)

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _fetch(self, index: Any) -> Any:
        if self._dataset_iter is not None:  # iterable dataset
            if self._ended:
                raise StopIteration
            if self._auto_collation:
                data = []
                for _ in index:
                    try:
                        data.append(next(self._dataset_iter))
                    except StopIteration:
                        self._ended = True
                        break
                if len(data) == 0 or (self._drop_last and len(data) < len(index)):
                    raise StopIteration
            else:
                data = next(self._dataset_iter)
            return self._collate_fn(data)
        if self._auto_collation:
            if hasattr(self._dataset, "__getitems__") and self._dataset.__getitems__:
                data = self._dataset.__getitems__(index)
            else:
                data = [self._dataset[idx] for idx in index]
        else:
            data = self._dataset[index]
        return self._collate_fn(data)

    def __next__(self) -> Any:
        index = next(self._sampler_iter)  # may raise StopIteration
        data = self._fetch(index)  # may raise StopIteration
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._IterableDataset_len_called}(when accessing "
                          f"len(dataloader)), but {self._num_yielded} samples have been "
                          "fetched. ", stacklevel=2)
        return data
