"""gradsum.utils.data against torch.utils.data.

Side by side with torch wherever no randomness is involved: collation (dtypes, shapes,
structures, errors), DataLoader batching, lengths, drop_last, batch_size=None, custom
samplers and batch samplers, iterable datasets, the mutually exclusive options, dataset
indexing (TensorDataset, Subset, ConcatDataset, StackDataset, ChainDataset, negative indices
and errors), random_split's lengths, sampler validation, and a DataLoader over an unshuffled
DistributedSampler. gradsum's generator cannot reproduce torch's numbers, so the random parts
are checked torch-free, by their properties: determinism for a fixed seed, permutations,
each sample once an epoch, new orders across epochs, generator= isolated from the global
seed, set_epoch changing a DistributedSampler's order."""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum.utils import data as gdata

try:
    import torch
    import torch.utils.data as tdata
except ImportError:  # the differential tests skip; the torch-free ones still run
    torch = None
    tdata = None

needs_torch = pytest.mark.skipif(
    torch is None,
    reason="torch (the reference oracle) is not installed: pip install -e .[test]",
)

Point = collections.namedtuple("Point", ["x", "y"])


def is_tensor(x: Any) -> bool:
    return isinstance(x, gradsum.Tensor) or (torch is not None and isinstance(x, torch.Tensor))


def norm(x: Any) -> Any:
    """A library-free description of a result: tensors by dtype name, shape, values and
    requires_grad; containers by type name and contents."""
    if is_tensor(x):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), x.detach().tolist(),
                x.requires_grad)
    if isinstance(x, np.ndarray):
        return ("np", x.dtype.str, x.tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(norm(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    if isinstance(x, dict):
        return ("dict", {k: norm(v) for k, v in x.items()})
    return (type(x).__name__, x)


def run(fn: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
    """``fn(lib, data_module)`` in gradsum and torch: the result, or the exception raised."""
    out = []
    for lib, mod in ((gradsum, gdata), (torch, tdata)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(fn(lib, mod))
        except Exception as e:  # (compared below)
            out.append(e)
    return out[0], out[1]


def same(fn: Callable[[Any, Any], Any]) -> Any:
    g, t = run(fn)
    assert not isinstance(t, Exception), f"torch raised {t!r}"
    assert not isinstance(g, Exception), f"gradsum raised {g!r}"
    assert norm(g) == norm(t)
    return g


def same_error(fn: Callable[[Any, Any], Any], prefix: int = 30) -> None:
    """Both raise the same exception type; gradsum's message starts like torch's."""
    g, t = run(fn)
    assert isinstance(t, Exception), f"torch returned {t!r}"
    assert isinstance(g, Exception), f"gradsum returned {g!r}"
    assert type(g) is type(t), (g, t)
    assert str(g)[:prefix] == str(t)[:prefix], (str(g), str(t))


# ---------------------------------------------------------------- collation (vs torch)

COLLATE_CASES: dict[str, Callable[[Any], list[Any]]] = {
    "ints": lambda lib: [0, 1, 2],
    "floats": lambda lib: [0.5, 1.0, -2.25],
    "bools": lambda lib: [True, False],
    "int_then_float": lambda lib: [1, 2.5],
    "float_then_int": lambda lib: [2.5, 1],
    "strings": lambda lib: ["a", "bc"],
    "bytes": lambda lib: [b"a", b"bc"],
    "tensors_f32": lambda lib: [lib.ones(3), lib.zeros(3)],
    "tensors_i64_2d": lambda lib: [lib.arange(6).reshape(2, 3), lib.arange(6).reshape(2, 3)],
    "tensors_0d": lambda lib: [lib.tensor(1.5), lib.tensor(2.0)],
    "tensors_f64_bool": lambda lib: [lib.tensor([True]), lib.tensor([False])],
    "tensors_grad": lambda lib: [lib.ones(2, requires_grad=True), lib.zeros(2)],
    "np_f32": lambda lib: [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "np_f64_2d": lambda lib: [np.eye(2), np.ones((2, 2))],
    "np_i32": lambda lib: [np.arange(3, dtype=np.int32)] * 2,
    "np_u8": lambda lib: [np.arange(3, dtype=np.uint8)] * 2,
    "np_bool": lambda lib: [np.array([True, False])] * 2,
    "np_scalars_f32": lambda lib: [np.float32(1), np.float32(2.5)],
    "np_scalars_f64": lambda lib: [np.float64(1), np.float64(2.5)],
    "np_scalars_i64": lambda lib: [np.int64(1), np.int64(7)],
    "np_scalars_bool": lambda lib: [np.bool_(True), np.bool_(False)],
    "tuples": lambda lib: [(lib.ones(2), 1, "a"), (lib.zeros(2), 2, "b")],
    "lists": lambda lib: [[0, 1.5], [2, 3.5]],
    "dicts": lambda lib: [{"x": lib.ones(2), "y": 0, "s": "a"},
                          {"x": lib.zeros(2), "y": 1, "s": "b"}],
    "nested": lambda lib: [{"a": (1, [2.0, lib.ones(1)])}, {"a": (3, [4.0, lib.zeros(1)])}],
    "namedtuple": lambda lib: [Point(lib.ones(2), 0), Point(lib.zeros(2), 1)],
    "namedtuple_of_np": lambda lib: [Point(np.ones(2), 1.5), Point(np.zeros(2), 2.5)],
    "tensor_dataset_samples": lambda lib: [(lib.arange(3.0), lib.tensor(1)),
                                           (lib.arange(3.0) + 1, lib.tensor(0))],
}


@needs_torch
@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_collate_like_torch(case: str) -> None:
    same(lambda lib, mod: mod.default_collate(COLLATE_CASES[case](lib)))


@needs_torch
def test_collated_tensors_stay_in_the_graph() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        w = lib.ones(2, requires_grad=True)
        batch = mod.default_collate([w * 2, w * 3])
        batch.sum().backward()
        return batch.grad_fn.name(), w.grad

    (g_name, g_grad), (t_name, t_grad) = run(fn)
    assert g_name == t_name
    assert g_grad.tolist() == t_grad.tolist()


@needs_torch
@pytest.mark.parametrize("case", ["unequal_lists", "none", "np_str", "np_object", "set"])
def test_default_collate_errors_like_torch(case: str) -> None:
    batches = {
        "unequal_lists": [[1, 2], [3]],
        "none": [None, None],
        "np_str": [np.array(["a"]), np.array(["b"])],
        "np_object": [np.array([1, None]), np.array([2, None])],
        "set": [{1}, {2}],
    }
    same_error(lambda lib, mod: mod.default_collate(batches[case]))


@needs_torch
@pytest.mark.parametrize("value", [
    np.arange(3), np.float32(2.5), np.int64(3), (np.ones(2), 1), [np.zeros(1), "s"],
    {"a": np.ones(1), "b": 2}, Point(np.ones(1), 2), 7, 1.5, "text", np.array(["a", "b"]),
])
def test_default_convert_like_torch(value: Any) -> None:
    same(lambda lib, mod: mod.default_convert(value))


# ---------------------------------------------------------------- DataLoader (vs torch)


def _tensor_ds(lib: Any, mod: Any, n: int = 7) -> Any:
    return mod.TensorDataset(lib.arange(2.0 * n).reshape(n, 2), lib.arange(n))


def _dict_ds(lib: Any, mod: Any) -> Any:
    return [{"x": lib.full((2,), float(i)), "label": i, "name": f"s{i}"} for i in range(5)]


def _iterable_ds(lib: Any, mod: Any, n: int = 7, with_len: bool = True) -> Any:
    class Stream(mod.IterableDataset):  # type: ignore[name-defined,misc]
        def __iter__(self) -> Any:
            return iter([(lib.tensor(float(i)), i) for i in range(n)])

    if with_len:
        Stream.__len__ = lambda self: n  # type: ignore[attr-defined]
    return Stream()


LOADER_CASES: dict[str, tuple[Callable[[Any, Any], Any], dict[str, Any]]] = {
    "tensor_bs1": (_tensor_ds, {}),
    "tensor_bs3": (_tensor_ds, {"batch_size": 3}),
    "tensor_bs3_drop": (_tensor_ds, {"batch_size": 3, "drop_last": True}),
    "tensor_bs7_drop": (_tensor_ds, {"batch_size": 7, "drop_last": True}),
    "tensor_bs8_drop": (_tensor_ds, {"batch_size": 8, "drop_last": True}),
    "tensor_bs_none": (_tensor_ds, {"batch_size": None}),
    "tensor_shuffle_false": (_tensor_ds, {"batch_size": 2, "shuffle": False}),
    "list_ints": (lambda lib, mod: list(range(10)), {"batch_size": 4}),
    "list_floats_none": (lambda lib, mod: [0.5, 1.5], {"batch_size": None}),
    "range": (lambda lib, mod: range(5), {"batch_size": 2, "drop_last": True}),
    "np_rows": (lambda lib, mod: list(np.arange(12.0, dtype=np.float32).reshape(6, 2)),
                {"batch_size": 4}),
    "np_rows_none": (lambda lib, mod: list(np.arange(4).reshape(2, 2)), {"batch_size": None}),
    "dicts": (_dict_ds, {"batch_size": 2}),
    "sampler_list": (_tensor_ds, {"batch_size": 2, "sampler": [6, 0, 3, 3, 1]}),
    "sampler_list_none": (_tensor_ds, {"batch_size": None, "sampler": [2, -1]}),
    "batch_sampler": (_tensor_ds, {"batch_sampler": [[0, 1, 2], [6], [5, 4]]}),
    "batch_sampler_obj": (lambda lib, mod: list(range(9)), {"batch_sampler": "bs"}),
    "collate_identity": (_tensor_ds, {"batch_size": 3, "collate_fn": "identity"}),
    "subset": (lambda lib, mod: mod.Subset(_tensor_ds(lib, mod), [5, -1, 0]),
               {"batch_size": 2}),
    "concat": (lambda lib, mod: mod.ConcatDataset([list(range(3)), list(range(10, 12))]),
               {"batch_size": 2}),
    "stack_tuple": (lambda lib, mod: mod.StackDataset(list(range(5)), list("abcde")),
                    {"batch_size": 2}),
    "stack_dict": (lambda lib, mod: mod.StackDataset(a=list(range(5)), b=[0.5] * 5),
                   {"batch_size": 3}),
    "iterable_bs2": (_iterable_ds, {"batch_size": 2}),
    "iterable_bs2_drop": (_iterable_ds, {"batch_size": 2, "drop_last": True}),
    "iterable_bs7_drop": (_iterable_ds, {"batch_size": 7, "drop_last": True}),
    "iterable_none": (_iterable_ds, {"batch_size": None}),
    "iterable_shuffle_false": (_iterable_ds, {"batch_size": 3, "shuffle": False}),
    "iterable_chain": (lambda lib, mod: _iterable_ds(lib, mod, 3) + _iterable_ds(lib, mod, 2),
                       {"batch_size": 2}),
    "tensor_as_dataset": (lambda lib, mod: lib.arange(10.0).reshape(5, 2), {"batch_size": 2}),
    "tensor_as_dataset_none": (lambda lib, mod: lib.arange(3), {"batch_size": None}),
    "subset_tensor_indices": (lambda lib, mod: mod.Subset(list("abcd"), lib.tensor([2, 0, 3])),
                              {"batch_size": 2}),
    "split_tensor_dataset": (lambda lib, mod: mod.random_split(
        mod.TensorDataset(lib.arange(6)), [6, 0], generator=lib.Generator())[1],
        {"batch_size": 2}),
    "dist_sampler": (_tensor_ds, {"batch_size": 2, "sampler": "dist"}),
    "dist_sampler_drop": (_tensor_ds, {"batch_size": 2, "sampler": "dist_drop"}),
}


def _make_loader(lib: Any, mod: Any, case: str) -> Any:
    build, kwargs = LOADER_CASES[case]
    ds = build(lib, mod)
    kwargs = dict(kwargs)
    if kwargs.get("collate_fn") == "identity":
        kwargs["collate_fn"] = lambda batch: batch
    if kwargs.get("batch_sampler") == "bs":
        kwargs["batch_sampler"] = mod.BatchSampler(mod.SequentialSampler(ds), 4, False)
    if kwargs.get("sampler") in ("dist", "dist_drop"):
        kwargs["sampler"] = mod.DistributedSampler(
            ds, num_replicas=3, rank=1, shuffle=False, drop_last=kwargs["sampler"] == "dist_drop")
    return mod.DataLoader(ds, **kwargs)


@needs_torch
@pytest.mark.parametrize("case", sorted(LOADER_CASES))
def test_dataloader_batches_like_torch(case: str) -> None:
    same(lambda lib, mod: list(_make_loader(lib, mod, case)))


@needs_torch
@pytest.mark.parametrize("case", sorted(c for c in LOADER_CASES if c != "iterable_chain"))
def test_dataloader_len_like_torch(case: str) -> None:
    same(lambda lib, mod: (len(_make_loader(lib, mod, case)),
                           len(iter(_make_loader(lib, mod, case)))
                           if not case.startswith("iterable") else None))


@needs_torch
def test_dataloader_len_of_unsized_sampler_like_torch() -> None:
    same_error(lambda lib, mod: len(mod.DataLoader(range(4), sampler=iter([0, 1]))))
    same_error(lambda lib, mod: len(mod.DataLoader(_iterable_ds(lib, mod, with_len=False))))


@needs_torch
def test_iterable_longer_than_its_len_warns_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        ds = _iterable_ds(lib, mod, 5)
        type(ds).__len__ = lambda self: 2
        loader = mod.DataLoader(ds, batch_size=None)
        n = len(loader)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = list(loader)
        return n, len(got), sum("was reported to be 2" in str(x.message) for x in w)

    g, t = run(fn)
    assert g == t


MUTUALLY_EXCLUSIVE: dict[str, Callable[[Any, Any], Any]] = {
    "sampler_shuffle": lambda lib, mod: mod.DataLoader(range(4), sampler=[0], shuffle=True),
    "batch_sampler_bs": lambda lib, mod: mod.DataLoader(range(4), batch_sampler=[[0]],
                                                        batch_size=2),
    "batch_sampler_shuffle": lambda lib, mod: mod.DataLoader(range(4), batch_sampler=[[0]],
                                                             shuffle=True),
    "batch_sampler_sampler": lambda lib, mod: mod.DataLoader(range(4), batch_sampler=[[0]],
                                                             sampler=[0]),
    "batch_sampler_drop_last": lambda lib, mod: mod.DataLoader(range(4), batch_sampler=[[0]],
                                                               drop_last=True),
    "bs_none_drop_last": lambda lib, mod: mod.DataLoader(range(4), batch_size=None,
                                                         drop_last=True),
    "iterable_shuffle": lambda lib, mod: mod.DataLoader(_iterable_ds(lib, mod), shuffle=True),
    "iterable_sampler": lambda lib, mod: mod.DataLoader(_iterable_ds(lib, mod), sampler=[0]),
    "iterable_batch_sampler": lambda lib, mod: mod.DataLoader(_iterable_ds(lib, mod),
                                                              batch_sampler=[[0]]),
    "num_workers_negative": lambda lib, mod: mod.DataLoader(range(4), num_workers=-1),
    "timeout_negative": lambda lib, mod: mod.DataLoader(range(4), timeout=-1),
    "prefetch_without_workers": lambda lib, mod: mod.DataLoader(range(4), prefetch_factor=2),
    "persistent_without_workers": lambda lib, mod: mod.DataLoader(range(4),
                                                                  persistent_workers=True),
    "mp_context_without_workers": lambda lib, mod: mod.DataLoader(
        range(4), multiprocessing_context="spawn"),
    "batch_size_zero": lambda lib, mod: mod.DataLoader(range(4), batch_size=0),
    "batch_size_bool": lambda lib, mod: mod.DataLoader(range(4), batch_size=True),
    "drop_last_int": lambda lib, mod: mod.DataLoader(range(4), batch_size=2, drop_last=1),
    "shuffle_empty": lambda lib, mod: mod.DataLoader([], shuffle=True),
}


@needs_torch
@pytest.mark.parametrize("case", sorted(MUTUALLY_EXCLUSIVE))
def test_dataloader_option_errors_like_torch(case: str) -> None:
    same_error(MUTUALLY_EXCLUSIVE[case])


@needs_torch
@pytest.mark.parametrize("attr", ["batch_size", "sampler", "batch_sampler", "drop_last",
                                  "dataset", "persistent_workers"])
def test_dataloader_frozen_attributes_like_torch(attr: str) -> None:
    def fn(lib: Any, mod: Any) -> Any:
        loader = mod.DataLoader(range(4), batch_size=2)
        setattr(loader, attr, None)

    same_error(fn, prefix=60)


@needs_torch
def test_dataloader_defaults_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        a = mod.DataLoader(range(4))
        b = mod.DataLoader(range(4), shuffle=True, batch_size=None)
        c = mod.DataLoader(range(4), batch_sampler=[[0, 1]])
        return [(type(x.sampler).__name__, type(x.batch_sampler).__name__, x.batch_size,
                 x.drop_last, x.num_workers, x.collate_fn.__name__) for x in (a, b, c)]

    same(fn)


# ---------------------------------------------------------------- datasets (vs torch)


@needs_torch
def test_tensor_dataset_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        ds = _tensor_ds(lib, mod, 5)
        return [len(ds), ds[0], ds[-1], ds[1:3], ds[[0, 4]]]

    same(fn)
    same_error(lambda lib, mod: mod.TensorDataset(lib.ones(3), lib.ones(4)), prefix=29)
    same_error(lambda lib, mod: mod.TensorDataset(lib.ones(3))[3])
    same_error(lambda lib, mod: len(mod.TensorDataset()))


@needs_torch
def test_subset_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        s = mod.Subset(list("abcdefg"), [6, 0, 3])
        return [len(s), s[0], s[-1], s[-3], s.__getitems__([2, 0]),
                mod.Subset(_tensor_ds(lib, mod), [1, 2])[[0, 1]]]

    same(fn)
    same_error(lambda lib, mod: mod.Subset(list("abc"), [0, 1])[2])
    same_error(lambda lib, mod: mod.Subset(list("abc"), [0, 5])[1])

    def bad_subclass(lib: Any, mod: Any) -> Any:
        class S(mod.Subset):  # type: ignore[name-defined,misc]
            def __getitem__(self, i: Any) -> Any:
                return 0

        return S([1], [0])

    same_error(bad_subclass, prefix=60)


@needs_torch
def test_concat_dataset_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        ds = mod.ConcatDataset([list("ab"), [], list("cde"), mod.Subset(list("xyz"), [2])])
        return [len(ds), ds.cumulative_sizes, [ds[i] for i in range(-len(ds), len(ds))],
                len(mod.Subset(list("ab"), [0]) + mod.Subset(list("ab"), [1, 0]))]

    same(fn)
    for idx in (6, -7, 100, -100):
        same_error(lambda lib, mod, idx=idx: mod.ConcatDataset([list("ab"), list("cde"),
                                                                list("f")])[idx])
    same_error(lambda lib, mod: mod.ConcatDataset([]))
    same_error(lambda lib, mod: mod.ConcatDataset([list("ab"), _iterable_ds(lib, mod)]))


@needs_torch
def test_stack_and_chain_datasets_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        t = mod.StackDataset(list("abc"), [1, 2, 3])
        d = mod.StackDataset(x=list("abc"), y=mod.Subset([1, 2, 3, 4], [3, 2, 1]))
        c = mod.ChainDataset([_iterable_ds(lib, mod, 2), _iterable_ds(lib, mod, 3)])
        return [len(t), t[1], t.__getitems__([0, 2]), len(d), d[-1], d.__getitems__([1]),
                len(c), list(c)]

    same(fn)
    same_error(lambda lib, mod: mod.StackDataset([1], [1, 2]), prefix=29)
    same_error(lambda lib, mod: mod.StackDataset())
    same_error(lambda lib, mod: mod.StackDataset([1], x=[1]))
    same_error(lambda lib, mod: list(mod.ChainDataset([[1, 2]])))


@needs_torch
def test_dataset_base_classes_like_torch() -> None:
    same_error(lambda lib, mod: mod.Dataset()[0])
    same_error(lambda lib, mod: iter(mod.Sampler()).__next__())
    same_error(lambda lib, mod: mod.IterableDataset())  # abstract: no __iter__
    same_error(lambda lib, mod: mod.Dataset() + mod.Dataset())  # no len()
    same(lambda lib, mod: [isinstance(_iterable_ds(lib, mod), mod.Dataset),
                           type(mod.Subset([1], [0]) + mod.Subset([2], [0])).__name__,
                           type(_iterable_ds(lib, mod) + _iterable_ds(lib, mod)).__name__,
                           isinstance(mod.DistributedSampler(range(3), 1, 0), mod.Sampler)])


SPLITS = [
    (10, [3, 7]), (10, [0.5, 0.5]), (10, [0.3, 0.3, 0.4]), (11, [0.25, 0.25, 0.5]),
    (7, [0.1, 0.1, 0.8]), (3, [0.2, 0.2, 0.2, 0.2, 0.2]), (1, [1]), (5, [1.0]),
    (5, [0, 5]), (10, [0.0, 1.0]), (100, [0.33, 0.33, 0.34]), (13, [0.7, 0.2, 0.1]),
    (0, [0.5, 0.5]), (6, [0.6, 0.4]), (10, [11, -1]),
]


@needs_torch
@pytest.mark.parametrize(("n", "lengths"), SPLITS)
def test_random_split_lengths_like_torch(n: int, lengths: list[float]) -> None:
    def fn(lib: Any, mod: Any) -> Any:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            parts = mod.random_split(range(n), lengths, generator=lib.Generator().manual_seed(0))
        return [len(p) for p in parts], [str(x.message) for x in w]

    same(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parts = gdata.random_split(range(n), lengths, generator=gradsum.Generator().manual_seed(0))
    assert sorted(i for p in parts for i in p) == list(range(n))


@needs_torch
@pytest.mark.parametrize("lengths", [[3, 6], [0.5, 0.6], [-0.5, 1.5], [1.2, -0.2]])
def test_random_split_errors_like_torch(lengths: list[float]) -> None:
    same_error(lambda lib, mod: mod.random_split(range(10), lengths), prefix=40)


# ---------------------------------------------------------------- samplers (vs torch)


@needs_torch
def test_deterministic_samplers_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        seq = mod.SequentialSampler(range(5))
        out: list[Any] = [list(seq), len(seq)]
        for bs in (1, 2, 3, 5, 6):
            for drop in (False, True):
                b = mod.BatchSampler(seq, bs, drop)
                out += [list(b), len(b)]
        out.append(list(mod.BatchSampler([9, 8, 7], 2, False)))
        out.append(len(mod.RandomSampler(range(5))))
        out.append(len(mod.RandomSampler(range(5), replacement=True, num_samples=12)))
        out.append(len(mod.RandomSampler(range(5), num_samples=12)))
        out.append(len(mod.SubsetRandomSampler([4, 2])))
        out.append(len(mod.WeightedRandomSampler([1.0, 2.0], 7)))
        out.append(list(mod.WeightedRandomSampler([0.0, 1.0, 0.0], 3)))
        out.append(sorted(mod.WeightedRandomSampler([0.0, 1.0, 2.0], 2, replacement=False)))
        return out

    same(fn)


SAMPLER_ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "batch_size_zero": lambda lib, mod: mod.BatchSampler(range(3), 0, False),
    "batch_size_float": lambda lib, mod: mod.BatchSampler(range(3), 1.5, False),
    "batch_size_bool": lambda lib, mod: mod.BatchSampler(range(3), True, False),
    "drop_last_none": lambda lib, mod: mod.BatchSampler(range(3), 2, None),
    "random_replacement_int": lambda lib, mod: mod.RandomSampler(range(3), replacement=1),
    "random_num_samples_zero": lambda lib, mod: mod.RandomSampler(range(3), num_samples=0),
    "random_num_samples_float": lambda lib, mod: mod.RandomSampler(range(3), num_samples=2.0),
    "random_empty": lambda lib, mod: mod.RandomSampler([]),
    "weighted_num_samples": lambda lib, mod: mod.WeightedRandomSampler([1.0], 0),
    "weighted_num_samples_bool": lambda lib, mod: mod.WeightedRandomSampler([1.0], True),
    "weighted_replacement": lambda lib, mod: mod.WeightedRandomSampler([1.0], 1, 1),
    "weighted_2d": lambda lib, mod: mod.WeightedRandomSampler([[1.0], [2.0]], 1),
    "weighted_0d": lambda lib, mod: mod.WeightedRandomSampler(1.0, 1),
    "weighted_too_many": lambda lib, mod: list(mod.WeightedRandomSampler([1.0, 2.0], 3,
                                                                         replacement=False)),
    "weighted_negative": lambda lib, mod: list(mod.WeightedRandomSampler([1.0, -2.0], 3)),
    "weighted_all_zero": lambda lib, mod: list(mod.WeightedRandomSampler([0.0, 0.0], 3)),
}


@needs_torch
@pytest.mark.parametrize("case", sorted(SAMPLER_ERRORS))
def test_sampler_errors_like_torch(case: str) -> None:
    # (gradsum.multinomial's message for a negative weight is not torch 2.13's: the type is)
    same_error(SAMPLER_ERRORS[case], prefix=0 if case == "weighted_negative" else 25)


@needs_torch
def test_dataloader_over_distributed_sampler_like_torch() -> None:
    def fn(lib: Any, mod: Any) -> Any:
        ds = _tensor_ds(lib, mod, 10)
        out = []
        for rank in range(3):
            s = mod.DistributedSampler(ds, num_replicas=3, rank=rank, shuffle=False)
            loader = mod.DataLoader(ds, batch_size=3, sampler=s)
            out.append((len(loader), [y for _, y in loader]))
        return out

    same(fn)


# ---------------------------------------------------------------- random parts (torch-free)


def _epochs(loader: Any, n: int = 3) -> list[list[int]]:
    return [[i for b in loader for i in gradsum.as_tensor(b).reshape(-1).tolist()]
            for _ in range(n)]


def test_shuffle_is_a_permutation_each_epoch_and_changes_across_epochs() -> None:
    loader = gdata.DataLoader(range(40), batch_size=6, shuffle=True,
                              generator=gradsum.Generator().manual_seed(3))
    epochs = _epochs(loader)
    for e in epochs:
        assert sorted(e) == list(range(40))
    assert epochs[0] != epochs[1] != epochs[2]
    assert epochs[0] != list(range(40))


def test_shuffle_is_deterministic_for_a_seed() -> None:
    def order(seed: int) -> list[list[int]]:
        return _epochs(gdata.DataLoader(range(30), batch_size=4, shuffle=True,
                                        generator=gradsum.Generator().manual_seed(seed)))

    assert order(5) == order(5)
    assert order(5) != order(6)

    def global_order(seed: int) -> list[list[int]]:
        gradsum.manual_seed(seed)
        return _epochs(gdata.DataLoader(range(30), batch_size=4, shuffle=True))

    assert global_order(1) == global_order(1)
    assert global_order(1) != global_order(2)


def test_generator_is_isolated_from_the_global_seed() -> None:
    def order(global_seed: int) -> list[list[int]]:
        gradsum.manual_seed(global_seed)
        g = gradsum.Generator().manual_seed(11)
        return _epochs(gdata.DataLoader(range(25), batch_size=5, shuffle=True, generator=g))

    assert order(0) == order(1)
    gradsum.manual_seed(0)
    before = gradsum.get_rng_state()
    order(0)  # (which reseeds the global generator to 0 itself)
    gradsum.manual_seed(0)
    g = gradsum.Generator().manual_seed(11)
    list(gdata.DataLoader(range(25), shuffle=True, generator=g))
    assert gradsum.get_rng_state() == before  # the global stream is not touched


def test_loader_advances_the_default_generator_once_per_epoch_like_torch() -> None:
    # torch draws a base seed from the default generator for every iter(loader), shuffled
    # or not; gradsum does the same, so the draws after an epoch depend on the epoch
    gradsum.manual_seed(0)
    s0 = gradsum.get_rng_state()
    list(gdata.DataLoader(range(5)))
    s1 = gradsum.get_rng_state()
    assert s0 != s1


def test_random_sampler_properties() -> None:
    g = gradsum.Generator().manual_seed(0)
    s = gdata.RandomSampler(range(10), generator=g)
    a, b = list(s), list(s)
    assert sorted(a) == sorted(b) == list(range(10)) and a != b
    more = list(gdata.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == list(range(4))
    assert len(set(more[8:])) == 2
    rep = list(gdata.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(rep) == 70 and set(rep) == {0, 1, 2}
    assert list(gdata.RandomSampler(range(5), generator=gradsum.Generator().manual_seed(9))) \
        == list(gdata.RandomSampler(range(5), generator=gradsum.Generator().manual_seed(9)))


def test_subset_random_and_weighted_sampler_properties() -> None:
    g = gradsum.Generator().manual_seed(1)
    idx = [10, 20, 30, 40, 50]
    s = gdata.SubsetRandomSampler(idx, generator=g)
    orders = [list(s) for _ in range(4)]
    assert all(sorted(o) == idx for o in orders) and len({tuple(o) for o in orders}) > 1
    w = gdata.WeightedRandomSampler([1.0, 0.0, 3.0], 4000, generator=g)
    draws = list(w)
    assert 1 not in draws
    assert 0.70 < draws.count(2) / 4000 < 0.80
    nr = list(gdata.WeightedRandomSampler([5.0, 1.0, 1.0, 1.0], 4, replacement=False,
                                          generator=g))
    assert sorted(nr) == [0, 1, 2, 3]


def test_random_split_is_deterministic_disjoint_and_isolated() -> None:
    def split(seed: int, global_seed: int = 0) -> list[list[int]]:
        gradsum.manual_seed(global_seed)
        parts = gdata.random_split(range(20), [0.5, 0.25, 0.25],
                                   generator=gradsum.Generator().manual_seed(seed))
        return [list(p) for p in parts]

    a = split(0)
    assert a == split(0) == split(0, global_seed=7)
    assert a != split(1)
    assert sorted(i for p in a for i in p) == list(range(20)) and [len(p) for p in a] == [10, 5, 5]
    gradsum.manual_seed(4)
    x = [list(p) for p in gdata.random_split(range(8), [4, 4])]
    gradsum.manual_seed(4)
    assert x == [list(p) for p in gdata.random_split(range(8), [4, 4])]


def test_distributed_sampler_in_a_loader_reshuffles_with_set_epoch() -> None:
    ds = list(range(11))
    samplers = [gdata.DistributedSampler(ds, num_replicas=2, rank=r, seed=5) for r in range(2)]
    loaders = [gdata.DataLoader(ds, batch_size=3, sampler=s) for s in samplers]
    seen = []
    for epoch in range(3):
        for s in samplers:
            s.set_epoch(epoch)
        per_rank = [[i for b in ld for i in b.tolist()] for ld in loaders]
        assert per_rank[0] == [i for b in loaders[0] for i in b.tolist()]  # same epoch again
        assert len(per_rank[0]) == len(per_rank[1]) == 6 and len(loaders[0]) == 2
        assert set(per_rank[0]) | set(per_rank[1]) == set(ds)
        seen.append(per_rank)
    assert seen[0] != seen[1] != seen[2]
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        gdata.DataLoader(ds, sampler=samplers[0], shuffle=True)


def test_workers_run_in_process() -> None:
    def batches(**kw: Any) -> list[Any]:
        ds = gdata.TensorDataset(gradsum.arange(10.0), gradsum.arange(10))
        calls: list[int] = []
        out = [(x.tolist(), y.tolist()) for x, y in gdata.DataLoader(
            ds, batch_size=3, worker_init_fn=calls.append, **kw)]
        assert calls == []  # no workers, so no worker_init_fn
        return out

    assert batches(num_workers=2, persistent_workers=True, prefetch_factor=4,
                   multiprocessing_context="spawn") == batches()
    assert gdata.get_worker_info() is None
    with pytest.raises(ValueError, match="num_workers=2 is not supported"):
        gdata.DataLoader(_iterable_ds(gradsum, gdata), num_workers=2)
    with pytest.warns(UserWarning, match="pin_memory"):
        list(gdata.DataLoader(range(2), pin_memory=True))


def test_error_messages_add_values_and_fix() -> None:
    with pytest.raises(AssertionError, match=r"Size mismatch between tensors: .*\[3, 4\]"):
        gdata.TensorDataset(gradsum.ones(3), gradsum.ones(4))
    with pytest.raises(ValueError, match="lengths \\[3, 6\\] sum to 9, the dataset has 10"):
        gdata.random_split(range(10), [3, 6])
    with pytest.raises(RuntimeError, match="sizes \\[2, 1\\]"):
        gdata.default_collate([[1, 2], [3]])
    with pytest.raises(ValueError, match="index -4, length 3"):
        gdata.ConcatDataset([[1, 2, 3]])[-4]


def test_a_training_loop_runs() -> None:
    gradsum.manual_seed(0)
    x = gradsum.randn(64, 3)
    y = x @ gradsum.tensor([[1.0], [-2.0], [0.5]])
    model = gradsum.nn.Linear(3, 1)
    opt = gradsum.optim.SGD(model.parameters(), lr=0.1)
    loader = gdata.DataLoader(gdata.TensorDataset(x, y), batch_size=16, shuffle=True)
    losses = []
    for _ in range(20):
        for xb, yb in loader:
            loss = gradsum.nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 < losses[0]
