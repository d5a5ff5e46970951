"""Checkpoints side by side with torch: files written by ``torch.save`` load in gradsum (zip and
legacy formats, plain safetensors by name), files written by ``gradsum.save`` load in torch
(``weights_only`` True and False, into the torch twin of a model), the refusals carry torch's
messages, tensors pickle as torch's, and a torch-written file loads with torch not importable."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def bits(t: Any) -> tuple[str, tuple[int, ...], bytes]:
    """A tensor of either library as (dtype name, shape, its elements' bytes in C order)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        name = str(t.dtype).removeprefix("torch.")
        arr = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).contiguous().numpy()
        return name, tuple(t.shape), arr.tobytes()
    arr = np.ascontiguousarray(t._array)
    return t.dtype.name, tuple(t.shape), arr.tobytes()


def strides(t: Any) -> tuple[int, ...]:
    if isinstance(t, torch.Tensor):
        return tuple(t.stride())
    return tuple(s // t._array.itemsize for s in t._array.strides)


def sample(lib: Any, name: str) -> dict[str, Any]:
    """The same tensors in either library: plain, 0-d, empty, transposed, strided, a slice."""
    dt = getattr(lib, name)
    base = lib.arange(24, dtype=lib.float64).reshape(4, 6)
    base = (base * 1.25 - 7.5) if dt.is_floating_point else base
    full = base.to(dt) if name != "bool" else (base.remainder(3) == 0)
    return {"plain": full, "zero_d": full[1, 2].clone(), "empty": full[:0],
            "empty3d": lib.zeros(2, 0, 3, dtype=dt), "t": full.t(), "step": full[::2, 1::2],
            "row": full[2]}


def check_same(g: Any, t: Any, where: str = "obj") -> None:
    """gradsum object ``g`` equals torch object ``t``: types, tensors bitwise with the same
    strides and requires_grad, containers recursively."""
    if isinstance(t, torch.Tensor):
        assert isinstance(g, gradsum.Tensor), where
        assert bits(g) == bits(t), where
        if t.numel():  # (gradsum's own empty tensors may have NumPy's 0 strides)
            assert strides(g) == strides(t), where
        assert g.requires_grad == t.requires_grad, where
        assert isinstance(g, gradsum.nn.Parameter) == isinstance(t, torch.nn.Parameter), where
    elif isinstance(t, torch.dtype):
        assert g is getattr(gradsum, str(t).removeprefix("torch.")), where
    elif isinstance(t, dict):
        assert type(g).__name__ == type(t).__name__ and list(g) == list(t), where
        for k in t:
            check_same(g[k], t[k], f"{where}[{k!r}]")
    elif isinstance(t, (list, tuple)):
        assert type(g) is type(t) and len(g) == len(t), where
        for i, (a, b) in enumerate(zip(g, t)):
            check_same(a, b, f"{where}[{i}]")
    else:
        assert g == t and type(g) is type(t), where


# -- torch.save -> gradsum.load ---------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("name", DTYPES)
def test_torch_files_load_in_gradsum(tmp_path: Path, name: str, legacy: bool) -> None:
    obj = sample(torch, name)
    if name in ("float32", "float64"):
        obj["grad"] = torch.ones(3, dtype=getattr(torch, name), requires_grad=True)
        obj["param"] = torch.nn.Parameter(torch.zeros(2, 2, dtype=getattr(torch, name)))
        obj["frozen"] = torch.nn.Parameter(torch.zeros(1), requires_grad=False)
    obj["dtype"] = getattr(torch, name)
    path = tmp_path / "t.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    for weights_only in (True, False):
        check_same(gradsum.load(path, weights_only=weights_only), obj)
    if legacy:  # as torch: mmap needs the zip format
        for lib in (torch, gradsum):
            with pytest.raises(RuntimeError, match="mmap can only be used with files saved"):
                lib.load(path, mmap=True)
    else:
        check_same(gradsum.load(path, mmap=True), obj)
    with open(path, "rb") as fh, pytest.raises(
            ValueError, match="f must be a file path in order to use the mmap"):
        gradsum.load(fh, mmap=True)


def test_torch_file_storages_views_and_identity(tmp_path: Path) -> None:
    """Views of one storage load over one buffer, the same tensor twice loads as one object,
    in gradsum as in torch."""
    def program(lib: Any, save: Any, load: Any) -> list[Any]:
        a = lib.arange(12.0).reshape(3, 4)
        obj = {"a": a, "v": a[1:], "t": a.t(), "list": [a, (a[0], {"x": a})]}
        path = tmp_path / "shared.pt"
        save(obj, path)
        back = load(path)
        facts = [back["a"] is back["list"][0], back["list"][1][1]["x"] is back["a"],
                 back["v"] is back["a"]]
        back["a"].add_(100)
        return facts + [back["v"].tolist(), back["t"].tolist(), back["list"][1][0].tolist()]

    expected = program(torch, torch.save, torch.load)
    assert program(torch, torch.save, gradsum.load) == expected  # torch's file in gradsum
    assert program(gradsum, gradsum.save, torch.load) == expected  # gradsum's file in torch
    assert program(gradsum, gradsum.save, gradsum.load) == expected


def twin_models(seed: int = 0) -> tuple[Any, Any]:
    """A torch model and its gradsum twin (same architecture and names)."""
    def build(lib: Any) -> Any:
        nn = lib.nn
        return nn.Sequential(nn.Linear(5, 8), nn.LayerNorm(8), nn.Tanh(), nn.Linear(8, 3))

    torch.manual_seed(seed)
    return build(torch), build(gradsum)


def test_torch_state_dicts_load_into_gradsum_twins(tmp_path: Path) -> None:
    tm, gm = twin_models()
    topt = torch.optim.AdamW(tm.parameters(), lr=1e-2, betas=(0.8, 0.9))
    tsched = torch.optim.lr_scheduler.MultiStepLR(topt, milestones=[1, 3], gamma=0.5)
    x = torch.randn(4, 5)
    for _ in range(2):
        topt.zero_grad()
        tm(x).square().mean().backward()
        topt.step()
        tsched.step()
    path = tmp_path / "ckpt.pt"
    torch.save({"model": tm.state_dict(), "optim": topt.state_dict(),
                "sched": tsched.state_dict(), "epoch": 2, "milestones": Counter([1, 3])}, path)
    ckpt = gradsum.load(path)
    check_same(ckpt["model"], tm.state_dict())
    check_same(ckpt["optim"], topt.state_dict())
    assert ckpt["model"]._metadata == tm.state_dict()._metadata
    gm.load_state_dict(ckpt["model"])
    gopt = gradsum.optim.AdamW(gm.parameters(), lr=1e-2, betas=(0.8, 0.9))
    gopt.load_state_dict(ckpt["optim"])
    gsched = gradsum.optim.lr_scheduler.MultiStepLR(gopt, milestones=[1, 3], gamma=0.5)
    gsched.load_state_dict(ckpt["sched"])
    gx = gradsum.from_numpy(x.numpy().copy())
    np.testing.assert_allclose(gm(gx).detach().numpy(), tm(x).detach().numpy(), rtol=1e-5,
                               atol=1e-7)  # (the forward's sums are not torch's, bit for bit)
    for opt, model, inp in ((topt, tm, x), (gopt, gm, gx)):  # one more step in each
        opt.zero_grad()
        model(inp).square().mean().backward()
        opt.step()
    for (n, tp), gp in zip(tm.state_dict().items(), gm.state_dict().values()):
        np.testing.assert_allclose(gp.numpy(), tp.numpy(), rtol=1e-6, atol=1e-7, err_msg=n)


# -- gradsum.save -> torch.load ---------------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("name", DTYPES)
def test_gradsum_files_load_in_torch(tmp_path: Path, name: str, legacy: bool) -> None:
    obj = sample(gradsum, name)
    expected = sample(torch, name)
    if name in ("float32", "float64"):
        obj["grad"] = gradsum.ones(3, dtype=getattr(gradsum, name), requires_grad=True)
        obj["param"] = gradsum.nn.Parameter(gradsum.zeros(2, 2, dtype=getattr(gradsum, name)))
        expected["grad"] = torch.ones(3, dtype=getattr(torch, name), requires_grad=True)
        expected["param"] = torch.nn.Parameter(torch.zeros(2, 2, dtype=getattr(torch, name)))
    obj["nested"] = OrderedDict(step=3, betas=(0.9, 0.999), dtype=getattr(gradsum, name))
    expected["nested"] = OrderedDict(step=3, betas=(0.9, 0.999), dtype=getattr(torch, name))
    path = tmp_path / "g.pt"
    gradsum.save(obj, path, _use_new_zipfile_serialization=not legacy)
    for weights_only in (True, False):
        back = torch.load(path, weights_only=weights_only)
        check_same(obj, back)
        for key, t in expected.items():
            if isinstance(t, torch.Tensor):
                assert torch.equal(back[key], t) and back[key].stride() == t.stride(), key
    if not legacy:
        check_same(obj, torch.load(path, mmap=True))


def test_gradsum_state_dict_loads_into_torch_twin(tmp_path: Path) -> None:
    tm, gm = twin_models(1)
    gradsum.manual_seed(3)
    gm.apply(lambda m: [p.data.normal_() for p in m.parameters(recurse=False)])
    path = tmp_path / "sd.pt"
    gradsum.save(gm.state_dict(), path)
    tm.load_state_dict(torch.load(path))  # weights_only=True, torch's default
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    np.testing.assert_allclose(tm(torch.from_numpy(x)).detach().numpy(),
                               gm(gradsum.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-7)


def test_safetensors_state_dicts_load_by_name(tmp_path: Path) -> None:
    st = pytest.importorskip("safetensors.torch")
    tm, gm = twin_models(2)
    tm[0].weight.data = tm[0].weight.data.to(torch.float64).float()  # (a plain float32 sd)
    path = tmp_path / "model.safetensors"
    st.save_file(tm.state_dict(), str(path), metadata={"format": "pt"})
    sd = gradsum.load(path)
    assert sorted(sd) == sorted(tm.state_dict())
    gm.load_state_dict(sd)
    for name, t in tm.state_dict().items():
        assert bits(sd[name]) == bits(t), name
    bf = {"w": torch.randn(3, 2).to(torch.bfloat16), "i": torch.tensor([1, -2], dtype=torch.int8)}
    st.save_file(bf, str(path))
    back = gradsum.load(path)
    assert bits(back["w"]) == bits(bf["w"]) and bits(back["i"]) == bits(bf["i"])


# -- arbitrary objects, weights_only and its refusals ----------------------------------------


class Config:
    """A custom class saved inside a checkpoint (module level: pickle finds it by name)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and other.depth == self.depth


def test_whole_modules_arrays_and_custom_classes(tmp_path: Path) -> None:
    _, gm = twin_models()
    path = tmp_path / "model.pt"
    arr = np.arange(6.0).reshape(2, 3)
    gradsum.save({"model": gm, "arr": arr, "cfg": Config(3)}, path)
    back = gradsum.load(path, weights_only=False)
    assert type(back["model"]) is type(gm) and back["cfg"] == Config(3)
    np.testing.assert_array_equal(back["arr"], arr)
    x = gradsum.randn(2, 5)
    np.testing.assert_array_equal(back["model"](x).detach().numpy(), gm(x).detach().numpy())
    assert type(back["model"][0].weight) is gradsum.nn.Parameter
    gradsum.save(Config(1), tmp_path / "cfg.pt")
    with gradsum.serialization.safe_globals([Config]):
        assert gradsum.load(tmp_path / "cfg.pt", weights_only=True) == Config(1)
    torch.save(arr, tmp_path / "arr.pt")  # torch's numpy pickles load in gradsum too
    np.testing.assert_array_equal(gradsum.load(tmp_path / "arr.pt", weights_only=False), arr)


def refusal(lib: Any, obj: Any, path: Path, **kw: Any) -> str:
    lib.save(obj, path)
    with pytest.raises(pickle.UnpicklingError) as info:
        lib.load(path, **kw)
    return str(info.value)


@pytest.mark.parametrize("what", ["custom_class", "os_system", "numpy", "function"])
def test_weights_only_refusals_carry_torchs_message(tmp_path: Path, what: str) -> None:
    obj = {"custom_class": Config(2), "os_system": os.system,
           "numpy": np.zeros(2), "function": len}[what]
    theirs = refusal(torch, obj, tmp_path / "t.pt")
    ours = refusal(gradsum, obj, tmp_path / "g.pt")
    assert ours.startswith("Weights only load failed.")
    detail = theirs.split("\n\n")[1] if "is blocked" in theirs else \
        theirs.split("WeightsUnpickler error: ")[1].split("\n\n")[0]
    assert detail.replace("torch.serialization", "gradsum.serialization") in ours
    assert "weights_only` set to `False`" in ours and "arbitrary code execution" in ours
    assert ours.endswith(theirs[theirs.index("\n\nCheck the documentation"):])
    # torch's file is refused by gradsum in the same words
    assert refusal(gradsum, obj, tmp_path / "t2.pt") == ours or what == "os_system"


def test_safe_globals_allow_what_torch_allows(tmp_path: Path) -> None:
    for lib in (torch, gradsum):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"cfg": Config(5)}, path)
        assert lib.serialization.get_unsafe_globals_in_checkpoint(path) == [
            f"{__name__}.Config"]
        with lib.serialization.safe_globals([Config]):
            assert lib.load(path)["cfg"] == Config(5)
            assert Config in lib.serialization.get_safe_globals()
        assert Config not in lib.serialization.get_safe_globals()
        for each in (torch, gradsum):
            each.serialization.add_safe_globals([Config])
        try:
            assert gradsum.load(path)["cfg"] == Config(5)  # either library's file
            assert torch.load(path)["cfg"] == Config(5)
        finally:
            for each in (torch, gradsum):
                each.serialization.clear_safe_globals()
        with pytest.raises(pickle.UnpicklingError):
            lib.load(path)


def test_map_location_as_torch_cpu_build(tmp_path: Path) -> None:
    path = tmp_path / "t.pt"
    torch.save({"w": torch.ones(2)}, path)
    for loc in ("cuda", "cuda:1", {"cpu": "cuda:0"}):
        messages = []
        for lib in (torch, gradsum):
            with pytest.raises(RuntimeError) as info:
                lib.load(path, map_location=loc)
            messages.append(str(info.value))
        assert messages[1].startswith(messages[0].split(" but ")[0])
    for loc in ("cpu", {"cuda:0": "cpu"}, lambda s, location: s, lambda s, location: None):
        assert gradsum.load(path, map_location=loc)["w"].tolist() == [1.0, 1.0]
    assert gradsum.load(path, map_location=gradsum.device("cpu"))["w"].tolist() == [1.0, 1.0]


# -- tensors pickle and copy as torch's -------------------------------------------------------


def test_tensors_pickle_as_torchs() -> None:
    def program(lib: Any) -> list[Any]:
        leaf = lib.ones(2, requires_grad=True)
        leaf.grad = lib.ones(2)
        nonleaf = leaf * 2
        p = lib.nn.Parameter(lib.zeros(3))
        p.grad = lib.ones(3)
        p.tag = "w"
        plain = lib.arange(4)[1:]
        plain.note = [1]
        out = []
        for t in (leaf, nonleaf, p, plain):
            back = pickle.loads(pickle.dumps(t))
            out.append([type(back).__name__, back.requires_grad, back.is_leaf,
                        back.grad is None, back.tolist(), getattr(back, "tag", None),
                        getattr(back, "note", None), back.grad_fn is None])
        out.append(type(copy.deepcopy(p)).__name__)
        out.append(copy.deepcopy(leaf).grad is None)
        return out

    assert program(gradsum) == program(torch)


def test_gradsum_load_without_torch(tmp_path: Path) -> None:
    """A torch-written checkpoint loads with torch not importable at all."""
    path = tmp_path / "t.pt"
    a = torch.arange(6.0).reshape(2, 3)
    torch.save({"w": a, "v": a[1], "p": torch.nn.Parameter(torch.ones(2)), "n": 3}, path)
    torch.save({"w": a}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import gradsum\n"
        f"sd = gradsum.load({str(path)!r})\n"
        "assert type(sd['p']) is gradsum.nn.Parameter and sd['n'] == 3\n"
        "sd['w'].add_(1)\n"
        "print(sd['w'].tolist(), sd['v'].tolist())\n"
        f"print(gradsum.load({str(tmp_path / 'legacy.pt')!r})['w'].tolist())\n"
        "print('torch' in sys.modules and sys.modules['torch'] is None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == [
        "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [4.0, 5.0, 6.0]",
        "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]", "True"]


def test_saving_a_large_state_dict_writes_bytes_directly(tmp_path: Path) -> None:
    """Tensor bytes go to the archive as they are (not through pickle): a 64 MB state dict
    makes a pickle of a few hundred bytes per tensor and a file of about 64 MB."""
    sd = {f"layer{i}.weight": gradsum.zeros(1024, 1024) for i in range(16)}
    path = tmp_path / "big.pt"
    gradsum.save(sd, path)
    import zipfile

    z = zipfile.ZipFile(path)
    pkl = next(i for i in z.infolist() if i.filename.endswith("data.pkl"))
    assert pkl.file_size < 300 * len(sd)
    assert 64 * 2**20 <= os.path.getsize(path) < 64 * 2**20 + 64 * 1024
    back = torch.load(path)
    assert back["layer3.weight"].shape == (1024, 1024)


def test_whole_torch_module_loads_as_gradsum_module(tmp_path: Path) -> None:
    """``torch.save(model)`` (a whole module) loads with ``weights_only=False`` as gradsum's
    module of the same class path (``torch.nn.modules.linear.Linear`` ->
    ``gradsum.nn.modules.linear.Linear``), and computes the same outputs."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2))
    path = tmp_path / "whole.pt"
    torch.save(tm, path, _use_new_zipfile_serialization=False)  # (module classes as ids)
    legacy = gradsum.load(path, weights_only=False)
    assert type(legacy[2]) is gradsum.nn.Linear
    torch.save(tm, path)
    gm = gradsum.load(path, weights_only=False)
    assert type(gm) is gradsum.nn.Sequential and type(gm[0]) is gradsum.nn.Linear
    assert type(gm[0].weight) is gradsum.nn.Parameter and gm[0].weight.requires_grad
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(gm(gradsum.from_numpy(x)).detach().numpy(),
                               tm(torch.from_numpy(x)).detach().numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        gradsum.load(path)


def with_location(path: Path, location: str) -> None:
    """Rewrite a torch checkpoint as if its storages had been saved on ``location`` (a CPU
    build can't save CUDA tensors itself)."""
    import zipfile

    from gradsum.serialization.zip_format import write_archive

    z = zipfile.ZipFile(path)
    prefix = z.namelist()[0].split("/")[0]
    pkl = z.read(f"{prefix}/data.pkl")
    new = location.encode()
    pkl = pkl.replace(b"X\x03\x00\x00\x00cpu", b"X" + len(new).to_bytes(4, "little") + new)
    storages = {n.split("/")[-1]: np.frombuffer(z.read(n), np.uint8)
                for n in z.namelist() if "/data/" in n}
    z.close()
    with open(path, "wb") as fh:
        write_archive(fh, pkl, storages, prefix)


def test_storages_saved_on_cuda_load_as_in_torchs_cpu_build(tmp_path: Path) -> None:
    path = tmp_path / "gpu.pt"
    torch.save({"w": torch.arange(3.0)}, path)
    with_location(path, "cuda:0")
    messages = []
    for lib in (torch, gradsum):
        with pytest.raises(RuntimeError) as info:
            lib.load(path)
        messages.append(str(info.value))
        for loc in ("cpu", {"cuda:0": "cpu"}, lambda s, location: s.cpu()):
            assert lib.load(path, map_location=loc)["w"].tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(RuntimeError):
            lib.load(path, map_location={"cuda:1": "cpu"})
    assert messages[1].split(" but ")[0] == messages[0].split(" but ")[0]


def test_torch_tensor_kinds_gradsum_lacks_are_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "kinds.pt"
    torch.save({"s": torch.eye(2).to_sparse()}, path)
    with pytest.raises(pickle.UnpicklingError, match="kind of tensor gradsum does not have"):
        gradsum.load(path)
    torch.save({"c": torch.ones(2, dtype=torch.complex64)}, path)
    with pytest.raises((TypeError, pickle.UnpicklingError), match="complex64"):
        gradsum.load(path)


def _double(t: Any) -> Any:
    return t * 2


def _double_detached(t: Any) -> Any:
    return (t * 2).detach().requires_grad_(t.requires_grad)


def test_tensors_cross_process_boundaries() -> None:
    """Multiprocessing (what DataLoader workers do) pickles tensors as torch.multiprocessing
    does: leaves keep requires_grad; a non-leaf requiring grad is refused in torch's words."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork" if "fork" in
                                      multiprocessing.get_all_start_methods() else "spawn")
    messages = []
    for lib in (torch, gradsum):
        with ctx.Pool(1) as pool:
            out = pool.map(_double_detached, [lib.arange(3.0), lib.ones(2, requires_grad=True)])
            assert out[0].tolist() == [0.0, 2.0, 4.0]
            assert out[1].requires_grad and out[1].is_leaf and out[1].tolist() == [2.0, 2.0]
            with pytest.raises(multiprocessing.pool.MaybeEncodingError) as info:
                pool.map(_double, [lib.ones(2, requires_grad=True)])
            messages.append(str(info.value).split("Reason: ")[1])
    assert messages[0].replace("torch", "") == messages[1].replace("gradsum", "")


def test_tensor_and_parameter_attributes_interchange(tmp_path: Path) -> None:
    """Python attributes travel as torch writes them (_rebuild_from_type_v2,
    _rebuild_parameter_with_state), weights-only in both directions."""
    for save_lib, load_lib in ((gradsum, torch), (torch, gradsum), (gradsum, gradsum)):
        t = save_lib.ones(2)
        t.note = "x"
        p = save_lib.nn.Parameter(save_lib.zeros(2))
        p.tag = 3
        path = tmp_path / "attrs.pt"
        save_lib.save({"t": t, "p": p}, path)
        back = load_lib.load(path)
        assert back["t"].note == "x" and back["p"].tag == 3
        assert isinstance(back["p"], load_lib.nn.Parameter) and back["p"].requires_grad
