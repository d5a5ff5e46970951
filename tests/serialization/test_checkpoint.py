"""gradsum.save / gradsum.load (torch's zip format, written and read by gradsum's own code):
exact round trips, atomic writes, clear errors on damaged or foreign files, gradsum's earlier
safetensors-based checkpoints still loading, and bit-for-bit training resume. (The comparisons
with torch are in test_torch_files.py, the malicious files in
test_serialization_fuzz.py.)"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import sys
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum.nn.parameter import Parameter
from gradsum.serialization import CheckpointError

# -- helpers ----------------------------------------------------------------------------------


def assert_same(a: Any, b: Any, where: str = "obj") -> None:
    """Recursive equality that also checks exact types, dtypes, bits and flags."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, gradsum.Tensor):
        assert a.dtype is b.dtype, where
        assert a.shape == b.shape, where
        assert a.requires_grad == b.requires_grad, where
        assert a._array.tobytes() == b._array.tobytes(), where
    elif isinstance(a, float):
        assert (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        ), f"{where}: {a!r} != {b!r}"
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert type(k) is type(next(kb for kb in b if kb == k)), where
            assert_same(a[k], b[k], f"{where}[{k!r}]")
        if isinstance(a, OrderedDict):
            assert vars(a).keys() == vars(b).keys(), where
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def roundtrip(obj: Any, path: Path, weights_only: bool = True) -> Any:
    gradsum.save(obj, path)
    return gradsum.load(path, weights_only=weights_only)


def sample_file(tmp_path: Path) -> tuple[Path, Any]:
    obj = {
        "w": gradsum.tensor([[1.0, -2.0], [3.5, 0.25]], requires_grad=True),
        "ids": gradsum.tensor([1, 2, 3]),
        "lr": 0.1,
        "betas": (0.9, 0.999),
        0: {"step": gradsum.tensor(3.0)},
        "name": "adamw",
    }
    path = tmp_path / "sample.pt"
    gradsum.save(obj, path)
    return path, obj


# -- round trips ------------------------------------------------------------------------------

ALL_DTYPES = [
    gradsum.float32, gradsum.float64, gradsum.float16, gradsum.int64, gradsum.int32,
    gradsum.int16, gradsum.int8, gradsum.uint8, gradsum.bool,
]


def test_round_trip_every_value_kind(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    odict: OrderedDict[str, Any] = OrderedDict(
        [("b", gradsum.from_numpy(rng.standard_normal((2, 3)))), ("a", 1)]
    )
    odict._metadata = OrderedDict([("", {"version": 1}), ("fc", {"version": 2})])  # type: ignore
    obj = {
        "none": None, "true": True, "false": False, "int": 7, "neg": -3,
        "big": 2**200 + 1, "float": 0.1, "negzero": -0.0, "tiny": 5e-324, "huge": 1.7e308,
        "inf": math.inf, "-inf": -math.inf, "nan": math.nan, "str": "héllo\n\"\\ ☃ \U0001f600",
        "empty_str": "", "list": [1, [2.5, [None]], ()], "tuple": (1, (2, 3), [4]),
        "empty": ([], (), {}), "dtype": gradsum.float64, "dtypes": list(ALL_DTYPES),
        "np_scalars": [np.float64(0.1), np.float32(1.5), np.int64(-4), np.bool_(True),
                       np.uint8(200), np.float16(np.inf)],
        "odict": odict,
        3: "int key", -1: "negative int key", True: "bool key", None: "none key",
        2.5: "float key",
        "nested": {0: {"step": gradsum.tensor(5.0), "exp_avg": gradsum.zeros(3)},
                   1: {"momentum_buffer": None}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                          "weight_decay": 0.01, "amsgrad": False, "foreach": None,
                          "params": [0, 1]}],
    }
    back = roundtrip(obj, tmp_path / "all.pt", weights_only=False)
    assert_same(obj, back)
    assert back["odict"]._metadata == odict._metadata
    assert type(back["odict"]._metadata) is OrderedDict
    # NumPy scalars need weights_only=False (as in torch); everything else loads weights-only
    del obj["np_scalars"]
    obj["bytes"], obj["set"], obj["complex"] = b"\x00\xff", {1, 2}, 1 + 2j
    assert_same(obj, roundtrip(obj, tmp_path / "all.pt"))
    with pytest.raises(pickle.UnpicklingError, match="numpy"):
        roundtrip({"x": np.float64(1.0)}, tmp_path / "np.pt")


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: d.name)
def test_round_trip_tensor_dtypes_bitwise(tmp_path: Path, dt: gradsum.dtype) -> None:
    rng = np.random.default_rng(1)
    if dt.is_floating_point:
        arr = rng.standard_normal((3, 4)).astype(dt.np)
        arr.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    elif dt is gradsum.bool:
        arr = rng.random((3, 4)) < 0.5
    else:
        info = np.iinfo(dt.np)
        arr = rng.integers(info.min, info.max, (3, 4), dtype=dt.np, endpoint=True)
    tensors = {
        "plain": gradsum.from_numpy(arr),
        "scalar": gradsum.from_numpy(np.array(arr[0, 0])),
        "empty": gradsum.from_numpy(arr[:0]),
        "empty3d": gradsum.from_numpy(np.zeros((2, 0, 3), dt.np)),
        "transposed": gradsum.from_numpy(arr.T),
        "strided": gradsum.from_numpy(arr[::2, ::-1]),
    }
    back = roundtrip(tensors, tmp_path / "t.pt")
    for key, t in tensors.items():
        b = back[key]
        assert b.dtype is dt and b.shape == t.shape, key
        assert b._array.tobytes() == np.ascontiguousarray(t._array).tobytes(), key
        assert b._array.flags.writeable, key
        if key in ("plain", "transposed"):  # strides are kept, as torch keeps them
            assert b._array.strides == t._array.strides, key
    if dt.is_floating_point:  # loaded buffers are writable
        back["plain"].mul_(2)


def test_requires_grad_and_parameters(tmp_path: Path) -> None:
    p = Parameter(gradsum.randn(3))
    frozen = Parameter(gradsum.randn(2), requires_grad=False)
    int_param = Parameter(gradsum.tensor([1, 2]), requires_grad=False)
    leaf = gradsum.ones(2, requires_grad=True)
    nonleaf = leaf * 2
    back = roundtrip({"p": p, "frozen": frozen, "ip": int_param, "leaf": leaf,
                      "nonleaf": nonleaf, "plain": gradsum.ones(1)}, tmp_path / "p.pt")
    assert type(back["p"]) is Parameter and back["p"].requires_grad
    assert type(back["frozen"]) is Parameter and not back["frozen"].requires_grad
    assert type(back["ip"]) is Parameter and back["ip"].dtype is gradsum.int64
    assert type(back["leaf"]) is gradsum.Tensor and back["leaf"].requires_grad
    assert back["leaf"].is_leaf and back["leaf"].grad is None
    assert back["nonleaf"].requires_grad and back["nonleaf"].is_leaf  # saved detached, like torch
    assert gradsum.equal(back["nonleaf"], nonleaf.detach())
    assert not back["plain"].requires_grad


def test_rng_state_round_trip(tmp_path: Path) -> None:
    gradsum.manual_seed(123)
    gradsum.rand(5)
    state = gradsum.get_rng_state()
    back = roundtrip({"rng": state}, tmp_path / "rng.pt")["rng"]
    assert back == state
    expected = gradsum.randn(10)
    gradsum.manual_seed(0)
    gradsum.set_rng_state(back)
    assert gradsum.equal(gradsum.randn(10), expected)
    assert gradsum.initial_seed() == 123


def test_shared_tensors(tmp_path: Path) -> None:
    """Same object twice -> one object; tensors viewing one buffer (tied weights as a
    state_dict presents them, slices, transposes) -> one storage with offsets, loaded as
    distinct tensors sharing a buffer, as with torch.load."""
    w = gradsum.randn(4, 3, requires_grad=True)
    tied = {"enc.weight": w.detach(), "dec.weight": w.detach(), "again": None}
    same = gradsum.randn(2)
    obj = {"sd": tied, "a": same, "b": [same], "view": w.detach()[1:], "other": w.detach().t()}
    obj["sd"]["again"] = obj["sd"]["enc.weight"]
    path = tmp_path / "shared.pt"
    back = roundtrip(obj, path)
    assert back["a"] is back["b"][0]
    enc, dec = back["sd"]["enc.weight"], back["sd"]["dec.weight"]
    assert enc is back["sd"]["again"] and enc is not dec
    assert gradsum.equal(enc, w.detach()) and gradsum.equal(dec, w.detach())
    assert gradsum.equal(back["view"], w.detach()[1:])
    assert gradsum.equal(back["other"], w.detach().t())
    enc.add_(1.0)  # one buffer, as torch.load gives
    assert gradsum.equal(dec, enc) and gradsum.equal(back["view"], enc[1:])
    assert gradsum.equal(back["other"], enc.t())
    records = [n for n in zipfile.ZipFile(path).namelist() if "/data/" in n]
    assert len(records) == 2  # w once, same once


def test_file_objects_and_pathlike(tmp_path: Path) -> None:
    buf = io.BytesIO()
    gradsum.save({"x": gradsum.arange(3)}, buf)
    buf.seek(0)
    assert gradsum.equal(gradsum.load(buf)["x"], gradsum.arange(3))
    gradsum.save([1, 2], str(tmp_path / "s.pt"))
    assert gradsum.load(tmp_path / "s.pt") == [1, 2]
    with open(tmp_path / "s.pt", "rb") as fh:
        assert gradsum.load(fh) == [1, 2]


def test_save_through_symlink_keeps_link(tmp_path: Path) -> None:
    target = tmp_path / "real.pt"
    link = tmp_path / "latest.pt"
    gradsum.save(1, target)
    link.symlink_to(target)
    gradsum.save(2, link)
    assert link.is_symlink() and gradsum.load(target) == 2


def test_unpicklable_objects_are_refused(tmp_path: Path) -> None:
    """Like torch.save, anything picklable saves (sets, tuple keys, arrays, subclasses,
    cycles); what pickle refuses is refused before the file is touched."""
    path = tmp_path / "bad.pt"
    cyc: list[Any] = [1]
    cyc.append(cyc)

    class Sub(gradsum.Tensor):
        pass

    obj = {"set": {1, 2}, (1, 2): 3, "a": np.zeros(2), "cyc": cyc}
    back = roundtrip(obj, path, weights_only=False)
    assert back["set"] == {1, 2} and back[(1, 2)] == 3 and back["cyc"][1] is back["cyc"]
    np.testing.assert_array_equal(back["a"], np.zeros(2))
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        gradsum.save({"f": lambda x: x}, path)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        gradsum.save(Sub._make(np.zeros(2)), path)  # a local class, as with torch.save
    assert gradsum.load(path, weights_only=False)["set"] == {1, 2}
    assert os.listdir(tmp_path) == ["bad.pt"]


def test_load_keyword_arguments(tmp_path: Path) -> None:
    path, obj = sample_file(tmp_path)
    assert_same(gradsum.load(path, map_location="cpu", weights_only=True), obj)
    assert_same(gradsum.load(path, "cpu", weights_only=False, mmap=True), obj)
    assert_same(gradsum.load(path, mmap=True), obj)
    for ok in ({"cuda:0": "cpu"}, lambda s, loc: s, lambda s, loc: None, "cpu:0"):
        assert_same(gradsum.load(path, map_location=ok), obj)
    if isinstance(getattr(gradsum, "device", None), type):
        assert_same(gradsum.load(path, map_location=gradsum.device("cpu")), obj)
    for bad in ("cuda", "cuda:0", {"cpu": "cuda:1"}):
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA"):
            gradsum.load(path, map_location=bad)
    assert_same(gradsum.load(path, pickle_module=pickle), obj)  # then not weights-only
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        gradsum.load(path, pickle_module=pickle, weights_only=True)
    with pytest.raises(FileNotFoundError):
        gradsum.load(tmp_path / "missing.pt")


def test_no_safetensors_needed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saving, loading, and reading plain safetensors files work without the package."""
    for name in ("safetensors", "safetensors.numpy", "safetensors.torch"):
        monkeypatch.setitem(sys.modules, name, None)
    path, obj = sample_file(tmp_path)
    assert_same(gradsum.load(path), obj)
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    head = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                       "__metadata__": {"format": "pt"}}).encode()
    (tmp_path / "m.safetensors").write_bytes(len(head).to_bytes(8, "little") + head
                                             + arr.tobytes())
    back = gradsum.load(tmp_path / "m.safetensors")
    assert list(back) == ["w"] and back["w"].tolist() == arr.tolist()


def test_format_is_torch_zip_layout(tmp_path: Path) -> None:
    """torch 2.13's records in its order, stored, each record's data 64-byte aligned (so it
    can be memory-mapped), the folder named for the file, CRC-32 on every record."""
    path, _ = sample_file(tmp_path)
    raw = path.read_bytes()
    z = zipfile.ZipFile(path)
    names = z.namelist()
    assert names[:4] == ["sample/data.pkl", "sample/.format_version",
                         "sample/.storage_alignment", "sample/byteorder"]
    assert names[-2:] == ["sample/version", "sample/.data/serialization_id"]
    assert sorted(names[4:-2]) == [f"sample/data/{i}" for i in range(3)]
    assert z.read("sample/version") == b"3\n" and z.read("sample/byteorder") == b"little"
    assert z.read("sample/.storage_alignment") == b"64"
    for info in z.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        name_len, extra_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28],
                                             "little"), \
            int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
    assert z.testzip() is None
    w = np.frombuffer(z.read("sample/data/0"), np.float32)
    np.testing.assert_array_equal(w, [1.0, -2.0, 3.5, 0.25])
    buf = io.BytesIO()
    gradsum.save({}, buf)
    assert zipfile.ZipFile(buf).namelist()[0] == "archive/data.pkl"  # torch's name for buffers


# -- atomic writes ----------------------------------------------------------------------------


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_failed_save_keeps_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    from gradsum.serialization import zip_format

    path = tmp_path / "ckpt.pt"
    gradsum.save({"v": gradsum.tensor([1.0]), "step": 1}, path)
    real = zip_format._write_record

    def half_then_fail(zf: Any, fh: Any, name: str, data: Any) -> None:
        if "/data/" in name:
            real(zf, fh, name, bytes(memoryview(data).cast("B"))[: len(data) // 2])
            raise exc
        real(zf, fh, name, data)

    monkeypatch.setattr(zip_format, "_write_record", half_then_fail)
    with pytest.raises(type(exc)):
        gradsum.save({"v": gradsum.tensor([2.0]), "step": 2}, path)
    assert gradsum.load(path)["step"] == 1
    assert os.listdir(tmp_path) == ["ckpt.pt"]
    with pytest.raises(type(exc)):  # a first save that fails leaves nothing at all
        gradsum.save({"step": gradsum.ones(3)}, tmp_path / "new.pt")
    assert os.listdir(tmp_path) == ["ckpt.pt"]


def test_failed_rename_or_fsync_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ckpt.pt"
    gradsum.save("old", path)
    def failing(name: str) -> Any:
        def fail(*args: Any) -> None:
            raise OSError(f"{name} failed")

        return fail

    for name in ("replace", "fsync"):
        with monkeypatch.context() as m:
            m.setattr(os, name, failing(name))
            with pytest.raises(OSError, match=name):
                gradsum.save("new", path)
        assert gradsum.load(path) == "old"
        assert os.listdir(tmp_path) == ["ckpt.pt"]
    gradsum.save("new", path)
    assert gradsum.load(path) == "new" and os.listdir(tmp_path) == ["ckpt.pt"]


def test_save_into_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="makedirs"):
        gradsum.save(1, tmp_path / "nope" / "c.pt")


def test_save_keeps_permissions_of_replaced_file(tmp_path: Path) -> None:
    path = tmp_path / "c.pt"
    gradsum.save(1, path)
    os.chmod(path, 0o640)
    gradsum.save(2, path)
    assert (os.stat(path).st_mode & 0o777) == 0o640


# -- damaged and foreign files ----------------------------------------------------------------


def check_error(path: Path, *fragments: str) -> CheckpointError:
    with pytest.raises(CheckpointError) as info:
        gradsum.load(path)
    msg = str(info.value)
    assert str(path) in msg, msg
    for frag in fragments:
        assert frag in msg, msg
    assert isinstance(info.value, ValueError)
    return info.value


def test_truncated_files(tmp_path: Path) -> None:
    path, _ = sample_file(tmp_path)
    data = path.read_bytes()
    bad = tmp_path / "trunc.pt"
    for cut in sorted({0, 1, 7, 8, 9, 20, len(data) // 2, len(data) - 8, len(data) - 1}):
        bad.write_bytes(data[:cut])
        err = check_error(bad)
        assert ("empty" if cut == 0 else "") in str(err)


def test_every_flipped_byte_is_detected(tmp_path: Path) -> None:
    """Each record carries a CRC-32: a flipped byte in any record's data is an error naming
    the file. A flip elsewhere (the zip's own headers) is an error too, or, where it only
    touches bytes the reader ignores (padding, timestamps), loads the same values: never
    different numbers."""
    path, obj = sample_file(tmp_path)
    data = path.read_bytes()
    z = zipfile.ZipFile(path)
    in_records = set()
    for info in z.infolist():
        o = info.header_offset
        start = o + 30 + int.from_bytes(data[o + 26:o + 28], "little") + int.from_bytes(
            data[o + 28:o + 30], "little")
        in_records.update(range(start, start + info.file_size))
    bad = tmp_path / "flip.pt"
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0xFF
        bad.write_bytes(bytes(flipped))
        try:
            back = gradsum.load(bad)
        except CheckpointError as e:
            assert "flip.pt" in str(e), (i, str(e))
            continue
        assert i not in in_records, i
        assert_same(back, obj, f"byte {i}")
    bad.write_bytes(data)
    assert_same(gradsum.load(bad), obj)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    check_error(path, "empty")


def test_plain_pickle_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"w": [1.0, 2.0]}, fh, protocol=2)
    check_error(path, "Invalid magic number; corrupt file?", "pickle.load")


def test_plain_safetensors_file_loads_by_name(tmp_path: Path) -> None:
    stnp = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "hf.safetensors"
    tensors = {"weight": np.arange(4, dtype=np.float32).reshape(2, 2),
               "ids": np.array([3, -1], np.int64), "mask": np.array([True, False])}
    stnp.save_file(tensors, str(path), metadata={"format": "pt"})
    back = gradsum.load(path)
    assert sorted(back) == sorted(tensors)
    for name, arr in tensors.items():
        assert back[name].dtype is gradsum.from_numpy(arr).dtype
        np.testing.assert_array_equal(back[name]._array, arr)
        assert back[name]._array.flags.writeable
    with pytest.raises(RuntimeError, match="CUDA"):
        gradsum.load(path, map_location="cuda")


def test_other_garbage(tmp_path: Path) -> None:
    path = tmp_path / "junk.pt"
    for junk in (b"\x00" * 3, b"\xff" * 64, b"hello world, not a checkpoint",
                 (10).to_bytes(8, "little") + b"not json!!", (2).to_bytes(8, "little") + b"[]",
                 b"\x93NUMPY\x01\x00" + b" " * 100):
        path.write_bytes(junk)
        check_error(path)


def write_crafted(path: Path, tree: dict[str, Any], arrays: dict[str, Any],
                  **meta_overrides: str) -> None:
    """A gradsum format-1 file (what gradsum.save wrote before torch's zip format) with valid
    checksums for ``tree`` (as that writer, a buggy or a hostile one could make)."""
    stnp = pytest.importorskip("safetensors.numpy")
    text = json.dumps(tree)
    meta = {"gradsum.format": "gradsum.checkpoint", "gradsum.version": "1", "gradsum.tree": text,
            "gradsum.tree_sha256": hashlib.sha256(text.encode()).hexdigest(), **meta_overrides}
    stnp.save_file(arrays, str(path), metadata=meta)


def test_format_1_checkpoints_still_load(tmp_path: Path) -> None:
    w = np.array([[1.5, -2.0]], np.float32)
    ids = np.array([4, 5], np.int64)
    tree = {
        "root": {"dict": [["model", {"odict": [["w", {"tensor": 0}], ["tied", {"tensor": 1}]],
                                     "attrs": {"_metadata": {"dict": [["", {"dict": []}]]}}}],
                          ["ids", {"tensor": 2}], ["betas", {"tuple": [0.9, 0.999]}],
                          ["lr", {"float": "inf"}], ["dt", {"dtype": "float64"}],
                          ["n", {"scalar": ["int64", 3]}], [3, None]]},
        "tensors": [
            {"storage": "0", "kind": "parameter", "requires_grad": True, "dtype": "float32",
             "shape": [1, 2]},
            {"storage": "0", "kind": "tensor", "requires_grad": False, "dtype": "float32",
             "shape": [1, 2]},
            {"storage": "1", "kind": "tensor", "requires_grad": False, "dtype": "int64",
             "shape": [2]}],
        "storages": {"0": {"dtype": "float32", "shape": [1, 2],
                           "sha256": hashlib.sha256(w.tobytes()).hexdigest()},
                     "1": {"dtype": "int64", "shape": [2],
                           "sha256": hashlib.sha256(ids.tobytes()).hexdigest()}},
    }
    path = tmp_path / "old.safetensors"
    write_crafted(path, tree, {"0": w, "1": ids})
    back = gradsum.load(path)
    assert type(back["model"]["w"]) is Parameter and back["model"]["w"].requires_grad
    assert back["model"]["w"].tolist() == [[1.5, -2.0]]
    assert back["model"]._metadata == {"": {}}
    back["model"]["w"].data.add_(1)  # one buffer for the two tensors of storage "0"
    assert back["model"]["tied"].tolist() == [[2.5, -1.0]]
    assert back["ids"].dtype is gradsum.int64 and back["betas"] == (0.9, 0.999)
    assert back["lr"] == math.inf and back["dt"] is gradsum.float64
    assert type(back["n"]) is np.int64 and back[3] is None


def crafted_parts() -> tuple[dict[str, Any], dict[str, Any]]:
    arr = np.array([1.0, 2.0, 3.0], np.float32)
    tree = {"root": {"dict": [["w", {"tensor": 0}]]},
            "tensors": [{"storage": "0", "kind": "tensor", "requires_grad": False,
                         "dtype": "float32", "shape": [3]}],
            "storages": {"0": {"dtype": "float32", "shape": [3],
                               "sha256": hashlib.sha256(arr.tobytes()).hexdigest()}}}
    return tree, {"0": arr}


def test_wrong_shapes_and_missing_tensors(tmp_path: Path) -> None:
    path = tmp_path / "crafted.pt"
    tree, arrays = crafted_parts()
    write_crafted(path, tree, arrays)
    assert gradsum.load(path)["w"].tolist() == [1.0, 2.0, 3.0]  # the crafting itself is sound

    t = json.loads(json.dumps(tree))
    t["storages"]["0"]["shape"] = [4]
    t["tensors"][0]["shape"] = [4]
    write_crafted(path, t, arrays)
    check_error(path, "declared float32 [4]", "stores float32 [3]")

    t = json.loads(json.dumps(tree))
    t["tensors"][0]["shape"] = [1, 3]
    write_crafted(path, t, arrays)
    check_error(path, "tensor #0 is declared")

    t = json.loads(json.dumps(tree))
    t["storages"]["0"]["dtype"] = "int32"
    t["tensors"][0]["dtype"] = "int32"
    write_crafted(path, t, arrays)
    check_error(path, "declared int32")

    write_crafted(path, tree, {})
    check_error(path, "references tensors ['0'] that the file lacks")

    t = json.loads(json.dumps(tree))
    t["root"] = {"dict": [["w", {"tensor": 5}]]}
    write_crafted(path, t, arrays)
    check_error(path, "invalid node")

    t = json.loads(json.dumps(tree))
    t["root"] = {"pickle": "cos\nsystem\n"}
    write_crafted(path, t, arrays)
    check_error(path, "invalid node")

    t = json.loads(json.dumps(tree))
    t["root"] = {"odict": [], "attrs": {"__class__": {"dict": []}}}
    write_crafted(path, t, arrays)
    check_error(path, "invalid attribute name '__class__'")

    t = json.loads(json.dumps(tree))
    t["tensors"][0]["storage"] = "7"
    write_crafted(path, t, arrays)
    check_error(path, "missing storage")

    write_crafted(path, tree, {"0": np.array([1.0, 2.0, 4.0], np.float32)})
    check_error(path, "SHA-256")

    write_crafted(path, tree, arrays, **{"gradsum.version": "99"})
    check_error(path, "version '99'", "Upgrade gradsum")


def test_bytes_not_matching_declared_safetensors_shape(tmp_path: Path) -> None:
    path = tmp_path / "shape.safetensors"
    tree, arrays = crafted_parts()
    write_crafted(path, tree, arrays)
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = raw[8:8 + n].replace(b'"shape":[3]', b'"shape":[5]')
    path.write_bytes(raw[:8] + header + raw[8 + n:])
    check_error(path, "data offsets")


# -- no code execution ------------------------------------------------------------------------


class Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_loading_never_executes_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"w": Payload(marker)}))
    pickle.loads(evil.read_bytes())  # the payload is live: plain unpickling runs it
    assert marker.exists()
    marker.unlink()
    for proto in range(0, pickle.HIGHEST_PROTOCOL + 1):
        evil.write_bytes(pickle.dumps(Payload(marker), protocol=proto))
        with pytest.raises(CheckpointError, match="Invalid magic number"):
            gradsum.load(evil)
    gradsum.save({"w": Payload(marker)}, evil)  # saved (as torch.save would) ...
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        gradsum.load(evil)  # ... but refused by the default weights-only load
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        gradsum.load(evil, _use_new_zipfile_serialization=False) if False else \
            gradsum.load(evil, weights_only=True)
    assert not marker.exists()
    gradsum.load(evil, weights_only=False)  # explicitly trusted: the payload runs
    assert marker.exists()


# -- resuming training ------------------------------------------------------------------------

OPTIMIZERS = {
    "sgd_momentum": lambda params: ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True,
                                                weight_decay=1e-3)),
    "adamw": lambda params: ("AdamW", dict(lr=1e-2, betas=(0.8, 0.95), weight_decay=0.05,
                                           amsgrad=True)),
}


def build(seed: int, opt_name: str) -> tuple[Any, Any, Any]:
    nn = gradsum.nn
    optim = pytest.importorskip("gradsum.optim")
    lr_scheduler = pytest.importorskip("gradsum.optim.lr_scheduler")
    gradsum.manual_seed(seed)
    layers = [nn.Linear(4, 16), nn.ReLU()]
    if hasattr(nn, "Dropout"):
        layers.append(nn.Dropout(0.25))
    model = nn.Sequential(*layers, nn.Linear(16, 3))
    cls_name, kwargs = OPTIMIZERS[opt_name](None)
    opt = getattr(optim, cls_name)(model.parameters(), **kwargs)
    sched = lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    return model, opt, sched


def train(model: Any, opt: Any, sched: Any, steps: int) -> None:
    model.train()
    for _ in range(steps):
        x = gradsum.randn(8, 4)  # the data stream depends on the RNG too
        target = gradsum.randn(8, 3)
        loss = ((model(x) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()


def test_every_scheduler_state_round_trips(tmp_path: Path) -> None:
    lr_scheduler = pytest.importorskip("gradsum.optim.lr_scheduler")
    optim = pytest.importorskip("gradsum.optim")
    p = Parameter(gradsum.ones(2))
    makers = {
        "StepLR": lambda o: lr_scheduler.StepLR(o, 3, gamma=0.5),
        "MultiStepLR": lambda o: lr_scheduler.MultiStepLR(o, [2, 2, 5], gamma=0.3),
        "LinearLR": lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4),
        "ExponentialLR": lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9),
        "CosineAnnealingLR": lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=7),
        "LambdaLR": lambda o: lr_scheduler.LambdaLR(o, lambda e: 0.95**e),
        "SequentialLR": lambda o: lr_scheduler.SequentialLR(
            o, [lr_scheduler.LinearLR(o, 0.5, total_iters=2),
                lr_scheduler.ExponentialLR(o, 0.8)], milestones=[2]),
    }
    for name, make in makers.items():
        opt = optim.SGD([p], lr=0.1)
        sched = make(opt)
        for _ in range(4):
            opt.step()
            sched.step()
        back = roundtrip(sched.state_dict(), tmp_path / f"{name}.pt")
        assert_same(sched.state_dict(), back, name)
        opt2 = optim.SGD([p], lr=0.1)
        sched2 = make(opt2)
        sched2.load_state_dict(back)
        opt2.load_state_dict(roundtrip(opt.state_dict(), tmp_path / "o.pt"))
        for _ in range(5):
            sched.step()
            sched2.step()
            assert sched.get_last_lr() == sched2.get_last_lr(), name


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_resume_is_bitwise_identical(tmp_path: Path, opt_name: str) -> None:
    path = tmp_path / "ckpt.pt"
    model, opt, sched = build(0, opt_name)
    train(model, opt, sched, 10)
    gradsum.save({"model": model.state_dict(), "optim": opt.state_dict(),
                  "sched": sched.state_dict(), "rng": gradsum.get_rng_state(), "step": 10}, path)
    train(model, opt, sched, 10)  # the uninterrupted run
    rng_after = gradsum.get_rng_state()

    model2, opt2, sched2 = build(1, opt_name)  # fresh objects, different initial weights
    gradsum.manual_seed(99)
    ckpt = gradsum.load(path)
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optim"])
    sched2.load_state_dict(ckpt["sched"])
    gradsum.set_rng_state(ckpt["rng"])
    assert ckpt["step"] == 10
    train(model2, opt2, sched2, 10)

    assert_same(model.state_dict(), model2.state_dict())
    assert_same(opt.state_dict(), opt2.state_dict())
    assert_same(sched.state_dict(), sched2.state_dict())
    assert gradsum.get_rng_state() == rng_after
    state = opt2.state_dict()["state"]
    assert len(state) == 4
    if opt_name == "adamw":
        assert all(s["step"].dtype is gradsum.float32 and s["step"].item() == 20
                   for s in state.values())

    # without the RNG state the continuation differs (dropout masks and data change)
    model3, opt3, sched3 = build(1, opt_name)
    model3.load_state_dict(ckpt["model"])
    opt3.load_state_dict(ckpt["optim"])
    sched3.load_state_dict(ckpt["sched"])
    gradsum.manual_seed(12345)
    train(model3, opt3, sched3, 10)
    assert not gradsum.equal(model3[0].weight, model.state_dict()["0.weight"])


# -- whole modules saved before gradsum.nn's classes moved to torch's files ---------------------
def test_whole_module_saved_under_the_former_nn_file_names_loads() -> None:
    """A whole module pickles its classes by reference; before each class moved to the file
    torch defines it in, ``gradsum.save(model)`` wrote ``gradsum.nn.layers.Linear``,
    ``gradsum.nn.container.Sequential``, ``gradsum.nn._attention.MultiheadAttention``, ...
    Such files load as the classes' new homes, with ``weights_only=False`` and, for classes
    allowed by ``safe_globals``, with ``weights_only=True``."""
    gradsum.manual_seed(0)
    nn = gradsum.nn
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.MultiheadAttention(4, 2))
    buf = io.BytesIO()
    gradsum.save(model, buf, _use_new_zipfile_serialization=False)  # (one plain pickle)
    raw = buf.getvalue()
    former = {b"gradsum.nn.modules.container\nSequential": b"gradsum.nn.container\nSequential",
              b"gradsum.nn.modules.linear\nLinear": b"gradsum.nn.layers\nLinear",
              b"gradsum.nn.modules.activation\nReLU": b"gradsum.nn.activation\nReLU",
              b"gradsum.nn.modules.activation\nMultiheadAttention":
                  b"gradsum.nn._attention\nMultiheadAttention",
              b"gradsum.nn.modules.linear\nNonDynamicallyQuantizableLinear":
                  b"gradsum.nn._attention\nNonDynamicallyQuantizableLinear"}
    for new, old in former.items():
        assert new in raw
        raw = raw.replace(new, old)
    back = gradsum.load(io.BytesIO(raw), weights_only=False)
    assert [type(m) for m in back.modules()] == [type(m) for m in model.modules()]
    x = gradsum.randn(3, 4)
    assert gradsum.equal(back[0](x), model[0](x))
    assert type(back[0]).__module__ == "gradsum.nn.modules.linear"
    # weights_only: refused unless allowed, allowed under the class's current name
    lin = io.BytesIO()
    gradsum.save(nn.Linear(2, 3), lin, _use_new_zipfile_serialization=False)
    old = lin.getvalue().replace(b"gradsum.nn.modules.linear\nLinear",
                                 b"gradsum.nn.layers\nLinear")
    with pytest.raises(pickle.UnpicklingError, match=r"gradsum\.nn\.layers\.Linear"):
        gradsum.load(io.BytesIO(old))
    with gradsum.serialization.safe_globals([nn.Linear]):
        assert type(gradsum.load(io.BytesIO(old))) is nn.Linear
    # a name the former files never held fails as any missing module does
    with pytest.raises(ImportError):
        gradsum.load(io.BytesIO(old.replace(b"nn.layers\nLinear", b"nn.layers\nNoSuchLayer")),
                     weights_only=False)
