"""Malicious and damaged checkpoints: ``gradsum.load`` (``weights_only=True``, the default)
never runs code from a file.

Each payload below would create a marker file if it ran (the first test shows they are live
under plain ``pickle.loads``). Wrapped in torch's zip format, in torch's legacy format and
given as a bare file, loading each must raise and leave no marker. Then hypothesis mutates the
bytes of valid and malicious files at random: every load raises one of the documented errors
or returns plain data, and no marker appears. Last, damaged files: a flipped byte in a record
is an error, never different numbers."""

from __future__ import annotations

import copyreg
import io
import json
import pickle
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradsum
from gradsum.serialization import CheckpointError
from gradsum.serialization.legacy_format import write_legacy
from gradsum.serialization.zip_format import write_archive

pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol")

#: what a refused or damaged file may raise (CheckpointError is a RuntimeError)
REFUSALS = (pickle.UnpicklingError, RuntimeError, ValueError, TypeError, EOFError)


def glob(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def text(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def payloads(marker: Path) -> dict[str, bytes]:
    """Pickles that create ``marker`` when unpickled without restriction."""
    shell = text(f"touch {marker}")
    code = text(f"open({str(marker)!r}, 'w').close()")
    p2, p4 = b"\x80\x02", b"\x80\x04"
    argv = b"]" + text("touch") + b"a" + text(str(marker)) + b"a"
    return {
        "os_system": p2 + glob("os", "system") + shell + b"\x85R.",
        "posix_system": p2 + glob("posix", "system") + shell + b"\x85R.",
        "builtins_eval": p2 + glob("builtins", "eval") + code + b"\x85R.",
        "builtins_exec": p2 + glob("builtins", "exec") + code + b"\x85R.",
        "py2_builtin_eval": p2 + glob("__builtin__", "eval") + code + b"\x85R.",
        "subprocess_popen": p2 + glob("subprocess", "Popen") + argv + b"\x85R.",
        "stack_global": p4 + text("builtins") + text("exec") + b"\x93" + code + b"\x85R.",
        "inst": b"(" + code + b"ibuiltins\nexec\n.",
        "obj": b"(" + glob("builtins", "exec") + code + b"o.",
        "newobj_ex": p4 + text(__name__) + text("EvilNew") + b"\x93" + b"(" + text(str(marker))
                     + b"t}" + b"\x92.",
        "ext1": p2 + b"\x82\xf0" + code + b"\x85R.",
        "build_setstate": p2 + glob(__name__, "Evil") + b")\x81" + b"}" + text("marker")
                          + text(str(marker)) + b"sb.",
        "reduce_in_dict": p2 + b"}" + text("w") + glob("builtins", "exec") + code
                          + b"\x85Rs.",
        "getattr_chain": p2 + glob("builtins", "getattr") + glob("builtins", "__import__")
                         + text("os") + b"\x85R" + text("system") + b"\x86R" + shell
                         + b"\x85R.",
        "persistent_module": p2 + b"(" + text("module") + glob("builtins", "exec") + b"tQ.",
        "persistent_text": b"Pos.system\n.",
        "allowed_then_exec": p2 + glob("collections", "OrderedDict") + b")R"
                             + glob("builtins", "exec") + code + b"\x85R.",
        "rebuild_on_fake_storage": p2 + glob("torch._utils", "_rebuild_tensor_v2")
                                   + b"(" + code + b"K\x00K\x10\x85K\x01\x85\x89}tR.",
    }


class EvilNew:
    """A class whose construction (NEWOBJ / NEWOBJ_EX -> __new__) creates the marker."""

    def __new__(cls, marker: str) -> EvilNew:
        open(marker, "w").close()
        return super().__new__(cls)


class Evil:
    """A class whose unpickling (BUILD -> __setstate__) creates the marker."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        open(state["marker"], "w").close()


@pytest.fixture(autouse=True)
def _extension_code() -> Any:
    """EXT1 0xf0 names builtins.exec while the tests run (as a hostile registry could)."""
    copyreg.add_extension("builtins", "exec", 0xF0)
    yield
    copyreg.remove_extension("builtins", "exec", 0xF0)


def zip_file(pickled: bytes) -> bytes:
    buf = io.BytesIO()
    write_archive(buf, pickled, {}, "archive")
    return buf.getvalue()


def legacy_file(pickled: bytes) -> bytes:
    buf = io.BytesIO()
    write_legacy(buf, pickled, {}, 2)
    return buf.getvalue()


def safetensors_file(pickled: bytes) -> bytes:
    header = {"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
              "__metadata__": {"gradsum.format": "gradsum.checkpoint",
                               "gradsum.version": "1", "pickle": pickled.decode("latin-1"),
                               "gradsum.tree": pickled.decode("latin-1"),
                               "gradsum.tree_sha256": "0" * 64}}
    head = json.dumps(header).encode()
    return len(head).to_bytes(8, "little") + head + b"\x00" * 4


WRAPPERS = {"zip": zip_file, "legacy": legacy_file, "bare": lambda p: p,
            "safetensors": safetensors_file}


def test_the_payloads_are_live(tmp_path: Path) -> None:
    """Without restriction each payload runs: the refusals below are not vacuous."""
    marker = tmp_path / "pwned"
    for name, data in payloads(marker).items():
        if name.startswith(("persistent", "rebuild")):
            continue  # (these need a persistent_load / torch to reach code)
        try:
            obj = pickle.loads(data)
            if hasattr(obj, "wait"):  # the Popen payload: let the child finish
                obj.wait()
        except Exception:  # e.g. exec's None passed on to a later opcode
            pass
        assert marker.exists(), name
        marker.unlink()


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", sorted(payloads(Path("m"))))
def test_malicious_files_never_run_code(tmp_path: Path, wrapper: str, name: str) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    path.write_bytes(WRAPPERS[wrapper](payloads(marker)[name]))
    with pytest.raises(REFUSALS) as info:
        gradsum.load(path)
    assert not marker.exists()
    if wrapper == "zip" and name in ("os_system", "builtins_eval", "subprocess_popen"):
        assert str(info.value).startswith("Weights only load failed.")
    with pytest.raises(REFUSALS):
        gradsum.load(path, mmap=True)
    assert not marker.exists()


#: where the payloads of the mutated malicious files would create their marker
MARKER = Path(tempfile.mkdtemp(prefix="gradsum-fuzz-")) / "pwned"


def valid_files() -> dict[str, bytes]:
    obj = {"w": gradsum.arange(6.0).reshape(2, 3), "ids": gradsum.tensor([1, 2]),
           "p": gradsum.nn.Parameter(gradsum.ones(2)), "lr": 0.1, "betas": (0.9, 0.99),
           "name": "os\nsystem\n"}
    obj["v"] = obj["w"][1]
    out = {}
    for legacy in (False, True):
        buf = io.BytesIO()
        gradsum.save(obj, buf, _use_new_zipfile_serialization=not legacy)
        out["legacy" if legacy else "zip"] = buf.getvalue()
    head = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    out["safetensors"] = len(head).to_bytes(8, "little") + head + np.ones(2, np.float32).tobytes()
    for name in ("builtins_exec", "os_system", "stack_global"):
        out[f"evil_{name}"] = zip_file(payloads(MARKER)[name])
        out[f"evil_legacy_{name}"] = legacy_file(payloads(MARKER)[name])
    return out


VALID = valid_files()


def is_plain(obj: Any) -> bool:
    """Only what a weights-only load may build."""
    if isinstance(obj, (gradsum.Tensor, gradsum.dtype, str, bytes, int, float, complex,
                        type(None))):
        return True
    if isinstance(obj, (list, tuple, set, frozenset)):
        return all(is_plain(v) for v in obj)
    if isinstance(obj, dict):
        return all(is_plain(k) and is_plain(v) for k, v in obj.items())
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(VALID)), data=st.data())
def test_random_mutations_raise_or_return_plain_data(tmp_path: Path, kind: str,
                                                     data: st.DataObject) -> None:
    raw = bytearray(VALID[kind])
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        op = data.draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        at = data.draw(st.integers(0, len(raw) - 1), label="at") if raw else 0
        if op == "flip" and raw:
            raw[at] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "set" and raw:
            raw[at] = data.draw(st.integers(0, 255))
        elif op == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and raw:
            del raw[at:at + data.draw(st.integers(1, 8))]
        elif op == "truncate":
            del raw[at:]
    try:
        back = gradsum.load(io.BytesIO(bytes(raw)))
    except REFUSALS:
        pass
    else:
        assert is_plain(back), type(back)
    assert not MARKER.exists()


# -- damaged files ----------------------------------------------------------------------------


@pytest.mark.parametrize("record", ["data.pkl", "data/0", "data/1", "byteorder", "version"])
def test_a_flipped_byte_in_a_record_is_an_error(tmp_path: Path, record: str) -> None:
    path = tmp_path / "ckpt.pt"
    gradsum.save({"w": gradsum.arange(8.0), "ids": gradsum.tensor([5, 6])}, path)
    raw = bytearray(path.read_bytes())
    info = zipfile.ZipFile(path).getinfo(f"ckpt/{record}")
    o = info.header_offset
    start = o + 30 + int.from_bytes(raw[o + 26:o + 28], "little") + int.from_bytes(
        raw[o + 28:o + 30], "little")
    for i in sorted({start, start + info.file_size // 2, start + info.file_size - 1}):
        bad = bytearray(raw)
        bad[i] ^= 0x10
        path.write_bytes(bytes(bad))
        for mmap in (False, True):
            with pytest.raises(CheckpointError, match=rf"ckpt\.pt.*{record}|{record}.*ckpt\.pt"):
                gradsum.load(path, mmap=mmap)


def test_a_damaged_legacy_file_is_an_error(tmp_path: Path) -> None:
    """The legacy format has no checksums: truncation and broken structure are errors."""
    buf = io.BytesIO()
    gradsum.save({"w": gradsum.arange(8.0)}, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    for cut in (len(raw) - 1, len(raw) - 32, len(raw) // 2, 30):
        with pytest.raises(REFUSALS):
            gradsum.load(io.BytesIO(raw[:cut]))
