"""gradsum.save / gradsum.load: exact round trips, atomic writes, clear errors on damaged or
foreign files, no code execution, and bit-for-bit training resume."""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import re
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("safetensors", reason="checkpoints need safetensors: pip install -e .[test]")

import safetensors.numpy as stnp

import gradsum
from gradsum import serialization
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


def roundtrip(obj: Any, path: Path) -> Any:
    gradsum.save(obj, path)
    return gradsum.load(path)


def sample_file(tmp_path: Path) -> tuple[Path, Any]:
    obj = {
        "w": gradsum.tensor([[1.0, -2.0], [3.5, 0.25]], requires_grad=True),
        "ids": gradsum.tensor([1, 2, 3]),
        "lr": 0.1,
        "betas": (0.9, 0.999),
        0: {"step": gradsum.tensor(3.0)},
        "name": "adamw",
    }
    path = tmp_path / "sample.safetensors"
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
    back = roundtrip(obj, tmp_path / "all.safetensors")
    assert_same(obj, back)
    assert back["odict"]._metadata == odict._metadata
    assert type(back["odict"]._metadata) is OrderedDict


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
    back = roundtrip(tensors, tmp_path / "t.safetensors")
    for key, t in tensors.items():
        b = back[key]
        assert b.dtype is dt and b.shape == t.shape, key
        assert b._array.tobytes() == np.ascontiguousarray(t._array).tobytes(), key
        assert b._array.flags.writeable and b._array.flags.c_contiguous
    if dt.is_floating_point:  # loaded buffers are writable
        back["plain"].mul_(2)


def test_requires_grad_and_parameters(tmp_path: Path) -> None:
    p = Parameter(gradsum.randn(3))
    frozen = Parameter(gradsum.randn(2), requires_grad=False)
    int_param = Parameter(gradsum.tensor([1, 2]), requires_grad=False)
    leaf = gradsum.ones(2, requires_grad=True)
    nonleaf = leaf * 2
    back = roundtrip({"p": p, "frozen": frozen, "ip": int_param, "leaf": leaf,
                      "nonleaf": nonleaf, "plain": gradsum.ones(1)}, tmp_path / "p.safetensors")
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
    back = roundtrip({"rng": state}, tmp_path / "rng.safetensors")["rng"]
    assert back == state
    expected = gradsum.randn(10)
    gradsum.manual_seed(0)
    gradsum.set_rng_state(back)
    assert gradsum.equal(gradsum.randn(10), expected)
    assert gradsum.initial_seed() == 123


def test_shared_tensors(tmp_path: Path) -> None:
    """Same object twice -> one object; distinct tensors on the same memory (tied weights as a
    state_dict presents them) -> stored once, loaded as distinct tensors sharing a buffer."""
    w = gradsum.randn(4, 3, requires_grad=True)
    tied = {"enc.weight": w.detach(), "dec.weight": w.detach(), "again": None}
    same = gradsum.randn(2)
    obj = {"sd": tied, "a": same, "b": [same], "view": w.detach()[1:], "other": w.detach().t()}
    obj["sd"]["again"] = obj["sd"]["enc.weight"]
    path = tmp_path / "shared.safetensors"
    back = roundtrip(obj, path)
    assert back["a"] is back["b"][0]
    enc, dec = back["sd"]["enc.weight"], back["sd"]["dec.weight"]
    assert enc is back["sd"]["again"] and enc is not dec
    assert gradsum.equal(enc, w.detach()) and gradsum.equal(dec, w.detach())
    enc.add_(1.0)  # shared buffer (and version counter), as torch.load gives
    assert gradsum.equal(dec, enc) and dec._version == enc._version
    assert gradsum.equal(back["view"], w.detach()[1:])  # overlapping views: independent copies
    assert gradsum.equal(back["other"], w.detach().t())
    stored = stnp.load_file(str(path))
    assert len(stored) == 4  # w once, same once, the slice, the transpose


def test_file_objects_and_pathlike(tmp_path: Path) -> None:
    buf = io.BytesIO()
    gradsum.save({"x": gradsum.arange(3)}, buf)
    buf.seek(0)
    assert gradsum.equal(gradsum.load(buf)["x"], gradsum.arange(3))
    gradsum.save([1, 2], str(tmp_path / "s.safetensors"))
    assert gradsum.load(tmp_path / "s.safetensors") == [1, 2]
    with open(tmp_path / "s.safetensors", "rb") as fh:
        assert gradsum.load(fh) == [1, 2]


def test_save_through_symlink_keeps_link(tmp_path: Path) -> None:
    target = tmp_path / "real.safetensors"
    link = tmp_path / "latest.safetensors"
    gradsum.save(1, target)
    link.symlink_to(target)
    gradsum.save(2, link)
    assert link.is_symlink() and gradsum.load(target) == 2


def test_unsupported_objects_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match=r"obj\['opt'\]\[0\].*set"):
        gradsum.save({"opt": [{1, 2}]}, path)
    with pytest.raises(TypeError, match="key"):
        gradsum.save({(1, 2): 3}, path)
    with pytest.raises(TypeError, match="ndarray"):
        gradsum.save({"a": np.zeros(2)}, path)

    class Sub(gradsum.Tensor):
        pass

    with pytest.raises(TypeError, match="subclass"):
        gradsum.save(Sub._make(np.zeros(2)), path)
    cyc: list[Any] = [1]
    cyc.append(cyc)
    with pytest.raises(ValueError, match="cycle"):
        gradsum.save(cyc, path)
    assert not path.exists() and os.listdir(tmp_path) == []


def test_load_keyword_arguments(tmp_path: Path) -> None:
    path, obj = sample_file(tmp_path)
    assert_same(gradsum.load(path, map_location="cpu", weights_only=True), obj)
    assert_same(gradsum.load(path, "cpu", weights_only=False, mmap=True), obj)
    torch = pytest.importorskip("torch")
    assert_same(gradsum.load(path, map_location=torch.device("cpu")), obj)
    for bad in ("cuda", "cuda:0", {"cuda:0": "cpu"}, lambda s, loc: s):
        with pytest.raises(ValueError, match="map_location"):
            gradsum.load(path, map_location=bad)
    with pytest.raises(ValueError, match="pickle_module"):
        gradsum.load(path, pickle_module=pickle)
    with pytest.raises(FileNotFoundError):
        gradsum.load(tmp_path / "missing.safetensors")


def test_missing_safetensors_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint names installs that work today (gradsum itself is not on PyPI)."""
    hint = re.escape("pip install safetensors (in a clone of gradsum: pip install -e "
                     "'.[checkpoint]')")
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=hint):
        gradsum.save({}, "unused.safetensors")
    with pytest.raises(ImportError, match=hint):
        gradsum.load("unused.safetensors")


def test_format_is_plain_safetensors_with_json_tree(tmp_path: Path) -> None:
    path, _ = sample_file(tmp_path)
    raw = path.read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    meta = header["__metadata__"]
    assert meta["gradsum.format"] == "gradsum.checkpoint" and meta["gradsum.version"] == "1"
    tree = json.loads(meta["gradsum.tree"])
    assert set(tree) == {"root", "tensors", "storages"}
    w = tree["tensors"][0]
    assert w == {"storage": "0", "kind": "tensor", "requires_grad": True, "dtype": "float32",
                 "shape": [2, 2]}
    arrays = stnp.load_file(str(path))  # any safetensors reader sees the raw tensors
    np.testing.assert_array_equal(arrays["0"], [[1.0, -2.0], [3.5, 0.25]])


# -- atomic writes ----------------------------------------------------------------------------


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()])
def test_failed_save_keeps_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    path = tmp_path / "ckpt.safetensors"
    gradsum.save({"v": gradsum.tensor([1.0]), "step": 1}, path)
    real = serialization._write_all

    def half_then_fail(fh: Any, data: bytes) -> None:
        real(fh, data[: len(data) // 2])
        raise exc

    monkeypatch.setattr(serialization, "_write_all", half_then_fail)
    with pytest.raises(type(exc)):
        gradsum.save({"v": gradsum.tensor([2.0]), "step": 2}, path)
    assert gradsum.load(path)["step"] == 1
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    with pytest.raises(type(exc)):  # a first save that fails leaves nothing at all
        gradsum.save({"step": 3}, tmp_path / "new.safetensors")
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_failed_rename_or_fsync_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ckpt.safetensors"
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
        assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    gradsum.save("new", path)
    assert gradsum.load(path) == "new" and os.listdir(tmp_path) == ["ckpt.safetensors"]


def test_save_into_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="makedirs"):
        gradsum.save(1, tmp_path / "nope" / "c.safetensors")


def test_save_keeps_permissions_of_replaced_file(tmp_path: Path) -> None:
    path = tmp_path / "c.safetensors"
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
    bad = tmp_path / "trunc.safetensors"
    for cut in sorted({0, 1, 7, 8, 9, 20, len(data) // 2, len(data) - 8, len(data) - 1}):
        bad.write_bytes(data[:cut])
        err = check_error(bad)
        assert ("empty" if cut == 0 else "") in str(err)


def test_every_flipped_byte_is_detected(tmp_path: Path) -> None:
    path, obj = sample_file(tmp_path)
    data = path.read_bytes()
    bad = tmp_path / "flip.safetensors"
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 0xFF
        bad.write_bytes(bytes(flipped))
        with pytest.raises(CheckpointError, match=r"flip\.safetensors"):
            gradsum.load(bad)
    bad.write_bytes(data)
    assert_same(gradsum.load(bad), obj)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.safetensors"
    path.write_bytes(b"")
    check_error(path, "empty")


def test_pickle_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"w": [1.0, 2.0]}, fh)
    check_error(path, "pickle", "never unpickles")


def test_torch_save_files_are_refused(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2)}, path)
    check_error(path, "torch.save", "weights_only=True")


def test_foreign_safetensors_file(tmp_path: Path) -> None:
    path = tmp_path / "hf.safetensors"
    stnp.save_file({"weight": np.ones((2, 2), np.float32)}, str(path), metadata={"format": "pt"})
    check_error(path, "not a gradsum checkpoint", "safetensors.numpy.load_file")
    stnp.save_file({"weight": np.ones(2, np.float32)}, str(path))
    check_error(path, "not a gradsum checkpoint")


def test_other_garbage(tmp_path: Path) -> None:
    path = tmp_path / "junk.safetensors"
    for junk in (b"\x00" * 3, b"\xff" * 64, b"hello world, not a checkpoint",
                 (10).to_bytes(8, "little") + b"not json!!", (2).to_bytes(8, "little") + b"[]",
                 b"\x93NUMPY\x01\x00" + b" " * 100):
        path.write_bytes(junk)
        check_error(path)


def write_crafted(path: Path, tree: dict[str, Any], arrays: dict[str, Any],
                  **meta_overrides: str) -> None:
    """A file with valid checksums for ``tree`` (as a buggy or hostile writer could make)."""
    text = json.dumps(tree)
    meta = {"gradsum.format": "gradsum.checkpoint", "gradsum.version": "1", "gradsum.tree": text,
            "gradsum.tree_sha256": serialization._sha256(text), **meta_overrides}
    stnp.save_file(arrays, str(path), metadata=meta)


def crafted_parts() -> tuple[dict[str, Any], dict[str, Any]]:
    buf = io.BytesIO()
    gradsum.save({"w": gradsum.tensor([1.0, 2.0, 3.0])}, buf)
    raw = buf.getvalue()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    tree = json.loads(header["__metadata__"]["gradsum.tree"])
    return tree, stnp.load(raw)


def test_wrong_shapes_and_missing_tensors(tmp_path: Path) -> None:
    path = tmp_path / "crafted.safetensors"
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
    buf = io.BytesIO()
    gradsum.save({"w": gradsum.tensor([1.0, 2.0, 3.0])}, buf)
    raw = buf.getvalue()
    n = int.from_bytes(raw[:8], "little")
    header = raw[8:8 + n].replace(b'"shape":[3]', b'"shape":[5]')
    path = tmp_path / "shape.safetensors"
    path.write_bytes(raw[:8] + header + raw[8 + n:])
    check_error(path, "safetensors could not read")


# -- no code execution ------------------------------------------------------------------------


class Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


def test_loading_never_executes_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.safetensors"
    evil.write_bytes(pickle.dumps({"w": Payload(marker)}))
    pickle.loads(evil.read_bytes())  # the payload is live: plain unpickling runs it
    assert marker.exists()
    marker.unlink()
    check_error(evil, "pickle")
    for proto in range(0, pickle.HIGHEST_PROTOCOL + 1):
        evil.write_bytes(pickle.dumps(Payload(marker), protocol=proto))
        with pytest.raises(CheckpointError):
            gradsum.load(evil)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.save({"w": Payload(marker)}, evil)
        check_error(evil, "torch.save")
    assert not marker.exists()


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
        back = roundtrip(sched.state_dict(), tmp_path / f"{name}.safetensors")
        assert_same(sched.state_dict(), back, name)
        opt2 = optim.SGD([p], lr=0.1)
        sched2 = make(opt2)
        sched2.load_state_dict(back)
        opt2.load_state_dict(roundtrip(opt.state_dict(), tmp_path / "o.safetensors"))
        for _ in range(5):
            sched.step()
            sched2.step()
            assert sched.get_last_lr() == sched2.get_last_lr(), name


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_resume_is_bitwise_identical(tmp_path: Path, opt_name: str) -> None:
    path = tmp_path / "ckpt.safetensors"
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
