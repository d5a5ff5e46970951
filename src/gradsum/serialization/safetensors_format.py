"""Plain safetensors files (as ``safetensors.torch.save_file`` and Hugging Face write them) and
gradsum's own format 1 (safetensors + a JSON object tree, what ``gradsum.save`` wrote before it
wrote torch's zip format), read with gradsum's own reader: the ``safetensors`` package is not
needed.

A safetensors file is an 8-byte little-endian header length, a JSON header ``{name: {"dtype",
"shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`` and the raw little-endian
bytes. A plain file loads as a dict name -> tensor. A gradsum format-1 file has in its
``__metadata__`` ``"gradsum.format": "gradsum.checkpoint"``, ``"gradsum.version": "1"``,
``"gradsum.tree"`` (JSON ``{"root": node, "tensors": [...], "storages": {...}}``, see
docs/checkpoints.md) and ``"gradsum.tree_sha256"``; every storage's SHA-256 is in the tree, so
every flipped byte is an error. It loads as the object it held.

Example:
    >>> import json, numpy as np
    >>> from gradsum.serialization.safetensors_format import load_safetensors
    >>> body = np.array([1.5, -2.0], dtype=np.float32).tobytes()
    >>> head = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    >>> load_safetensors(len(head).to_bytes(8, "little") + head + body, "<bytes>")
    {'w': tensor([ 1.5000, -2.0000])}
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter, OrderedDict
from typing import Any

from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor
from gradsum.serialization.errors import FIX_CORRUPT, CheckpointError

__all__ = ["is_safetensors", "load_safetensors", "FORMAT", "KEY_FORMAT"]

FORMAT = "gradsum.checkpoint"
VERSION = 1
KEY_FORMAT = "gradsum.format"
_KEY_VERSION = "gradsum.version"
_KEY_TREE = "gradsum.tree"
_KEY_TREE_SHA = "gradsum.tree_sha256"
MAX_HEADER = 100_000_000  # safetensors' own limit on the JSON header
_DTYPES: dict[str, D.dtype] = {d.name: d for d in D._ALL}
_PLAIN_SCALARS = (type(None), bool, int, float, str)

#: safetensors' dtype codes -> gradsum dtype names
SAFETENSORS_DTYPES = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
    "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool_",
}


def is_safetensors(data: bytes) -> bool:
    """Whether ``data`` starts as a safetensors file: a header length that fits, then ``{``.
    (A valid framing wins over other formats: a header length such as 0x380 = 896 starts
    the file with b"\\x80\\x03", which also begins a pickle.)"""
    return (len(data) >= 9 and int.from_bytes(data[:8], "little") <= min(
        MAX_HEADER, len(data) - 8) and data[8:9] == b"{")


def _parameter_class() -> Any:
    from gradsum.nn.parameter import Parameter

    return Parameter


def _digest(arr: Any) -> str:
    """SHA-256 of a C-contiguous array's bytes (without copying them)."""
    return hashlib.sha256(memoryview(arr.view(xp.uint8)) if arr.size else b"").hexdigest()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _read_arrays(data: bytes, size: int, header: dict[str, Any], where: str) -> dict[str, Any]:
    """Each tensor of a safetensors file as a fresh, writable array."""
    body = memoryview(data)[8 + size:]
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if (type(info) is not dict or info.get("dtype") not in SAFETENSORS_DTYPES
                or not _is_shape(info.get("shape")) or type(info.get("data_offsets")) is not list
                or len(info["data_offsets"]) != 2
                or any(type(v) is not int for v in info["data_offsets"])):
            raise CheckpointError(
                f"{where}: safetensors entry {name!r} is {_short(info)}: it needs a dtype "
                f"({', '.join(SAFETENSORS_DTYPES)}), a shape and two data offsets. "
                + FIX_CORRUPT)
        dt = getattr(D, SAFETENSORS_DTYPES[info["dtype"]])
        np_dtype = xp.dtype(dt.np).newbyteorder("<")  # (bfloat16 without ml_dtypes: TypeError)
        begin, end = info["data_offsets"]
        count = math.prod(info["shape"])
        if not 0 <= begin <= end <= len(body) or end - begin != count * np_dtype.itemsize:
            raise CheckpointError(
                f"{where}: safetensors entry {name!r} ({info['dtype']} {info['shape']}) has "
                f"data offsets [{begin}, {end}] for {count * np_dtype.itemsize} bytes in a "
                f"{len(body)}-byte body. {FIX_CORRUPT}")
        arr = xp.frombuffer(body[begin:end], dtype=np_dtype).reshape(info["shape"])
        out[name] = arr.astype(np_dtype.newbyteorder("="), copy=True)
    return out


def load_safetensors(data: bytes, where: str) -> Any:
    """A plain safetensors file as a dict name -> tensor, or what a gradsum format-1 file
    holds."""
    size, header = _header(data, where)
    meta = header.get("__metadata__")
    if type(meta) is dict and KEY_FORMAT in meta:
        tree = _gradsum_tree(meta, where)
        arrays = _check_arrays(tree, _read_arrays(data, size, header, where), where)
        try:
            return _Decoder(where, tree, arrays).node(tree["root"])
        except RecursionError:
            raise CheckpointError(f"{where}: the object tree is nested too deeply to load. "
                                  f"{FIX_CORRUPT}") from None
    return {name: Tensor._make(arr) for name, arr in _read_arrays(data, size, header,
                                                                    where).items()}


# -- gradsum format 1 -------------------------------------------------------------------------


class _Decoder:
    """Rebuilds the object tree from a validated checkpoint."""

    def __init__(self, where: str, tree: dict[str, Any], arrays: dict[str, Any]) -> None:
        self.where = where
        self.tensors = tree["tensors"]
        self.arrays = arrays
        self.built: dict[int, Tensor] = {}
        self.versions: dict[str, list[int]] = {}
        self.parameter = _parameter_class()

    def fail(self, what: str) -> CheckpointError:
        return CheckpointError(f"{self.where}: {what}. {FIX_CORRUPT}")

    def node(self, node: Any) -> Any:
        kind = type(node)
        if node is None or kind in (bool, int, float, str):
            return node
        if kind is list:
            return [self.node(v) for v in node]
        if kind is not dict or len(node) not in (1, 2):
            raise self.fail(f"the object tree has an unknown node {_short(node)}")
        if len(node) == 2 and set(node) != {"odict", "attrs"}:
            raise self.fail(f"the object tree has an unknown node {_short(node)}")
        tag = "odict" if "odict" in node else next(iter(node))
        value = node[tag]
        if tag == "float" and value in ("nan", "inf", "-inf"):
            return float(value)
        if tag == "tuple" and type(value) is list:
            return tuple(self.node(v) for v in value)
        if tag in ("dict", "odict", "counter") and type(value) is list:
            out: dict[Any, Any] = {"dict": dict, "odict": OrderedDict, "counter": Counter}[tag]()
            for pair in value:
                if type(pair) is not list or len(pair) != 2:
                    raise self.fail(f"a dict entry is {_short(pair)}, not a [key, value] pair")
                key = self.node(pair[0])
                if type(key) not in _PLAIN_SCALARS:
                    raise self.fail(f"a dict key is {_short(pair[0])}, not a plain value")
                out[key] = self.node(pair[1])
            attrs = node.get("attrs", {})
            if tag == "odict" and type(attrs) is not dict:
                raise self.fail(f"OrderedDict attributes are {_short(attrs)}, not an object")
            for name, attr in attrs.items():
                if not name.isidentifier() or name.startswith("__"):
                    raise self.fail(f"an OrderedDict has the invalid attribute name {name!r}")
                setattr(out, name, self.node(attr))
            return out
        if tag == "dtype" and value in _DTYPES:
            return _DTYPES[value]
        if tag == "scalar" and type(value) is list and len(value) == 2:
            return self.scalar(value)
        if tag == "tensor" and type(value) is int and 0 <= value < len(self.tensors):
            return self.tensor(value)
        raise self.fail(f"the object tree has an invalid node {_short(node)}")

    def scalar(self, value: list[Any]) -> Any:
        name, item = value
        try:
            dt = xp.dtype(name) if type(name) is str else None
        except TypeError:
            dt = None
        item = self.node(item)
        if dt is None or dt.kind not in "biuf" or type(item) not in (bool, int, float):
            raise self.fail(f"the object tree has an invalid NumPy scalar {_short(value)}")
        return dt.type(item)

    def tensor(self, index: int) -> Tensor:
        t = self.built.get(index)
        if t is not None:
            return t
        entry = self.tensors[index]
        name = entry["storage"]
        arr = self.arrays[name]
        if entry["requires_grad"] and arr.dtype.kind != "f":
            raise self.fail(f"tensor #{index} is {arr.dtype} but marked requires_grad=True")
        t = Tensor._make(arr)
        version = self.versions.setdefault(name, t._vc)
        t._vc = version
        if entry["kind"] == "parameter":
            t = self.parameter(t, requires_grad=entry["requires_grad"])
        elif entry["requires_grad"]:
            t._requires_grad = True
        self.built[index] = t
        return t


def _short(obj: Any) -> str:
    text = _dumps(obj) if not isinstance(obj, str) else repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def _header(data: bytes, where: str) -> tuple[int, dict[str, Any]]:
    """Validate the safetensors framing; return the header's size and its JSON object."""
    if len(data) < 8:
        raise CheckpointError(
            f"{where}: the file is only {len(data)} bytes, shorter than a safetensors header. "
            f"{FIX_CORRUPT}"
        )
    size = int.from_bytes(data[:8], "little")
    if size > min(MAX_HEADER, len(data) - 8):
        raise CheckpointError(
            f"{where}: the header claims {size} bytes but the file has {len(data) - 8} after the "
            "8-byte length prefix: it is truncated or not a safetensors file. " + FIX_CORRUPT
        )
    try:
        header = json.loads(data[8:8 + size].decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(
            f"{where}: the safetensors header is not valid JSON ({e}). {FIX_CORRUPT}"
        ) from None
    if type(header) is not dict:
        raise CheckpointError(f"{where}: the safetensors header is not a JSON object. "
                              f"{FIX_CORRUPT}")
    return size, header


def _gradsum_tree(meta: dict[str, Any], where: str) -> dict[str, Any]:
    """The object tree of a gradsum format-1 file, its checksum verified."""
    if meta[KEY_FORMAT] != FORMAT or type(meta.get(_KEY_VERSION)) is not str:
        raise CheckpointError(f"{where}: the gradsum metadata is damaged. {FIX_CORRUPT}")
    version = meta[_KEY_VERSION]
    if not version.isdigit() or int(version) > VERSION:
        raise CheckpointError(
            f"{where}: written in checkpoint format version {version!r}; this gradsum reads "
            f"version {VERSION} and older. Upgrade gradsum (in its clone: git pull, then "
            "pip install -e .)."
        )
    tree, digest = meta.get(_KEY_TREE), meta.get(_KEY_TREE_SHA)
    if type(tree) is not str or type(digest) is not str or not tree.isascii():
        raise CheckpointError(f"{where}: the gradsum object tree is missing. {FIX_CORRUPT}")
    if _sha256(tree) != digest:
        raise CheckpointError(
            f"{where}: the object tree does not match its SHA-256 checksum. {FIX_CORRUPT}"
        )
    return _parse_tree(tree, where)


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def _parse_tree(text: str, where: str) -> dict[str, Any]:
    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"{where}: {what}. {FIX_CORRUPT}")

    try:
        tree = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise bad(f"the object tree is not valid JSON ({e})") from None
    if type(tree) is not dict or set(tree) != {"root", "tensors", "storages"}:
        raise bad("the object tree lacks its 'root', 'tensors' and 'storages' entries")
    storages, tensors = tree["storages"], tree["tensors"]
    if type(storages) is not dict or type(tensors) is not list:
        raise bad("the object tree's 'tensors' or 'storages' table is malformed")
    for name, info in storages.items():
        if (type(info) is not dict or info.get("dtype") not in _DTYPES
                or not _is_shape(info.get("shape")) or type(info.get("sha256")) is not str):
            raise bad(f"storage {name!r} is described as {_short(info)}")
    for i, entry in enumerate(tensors):
        if (type(entry) is not dict or entry.get("storage") not in storages
                or entry.get("kind") not in ("tensor", "parameter")
                or type(entry.get("requires_grad")) is not bool):
            raise bad(f"tensor #{i} is described as {_short(entry)}, referencing a missing "
                      "storage or with an unknown kind")
        info = storages[entry["storage"]]
        if entry.get("dtype") != info["dtype"] or entry.get("shape") != info["shape"]:
            raise bad(f"tensor #{i} is declared {entry.get('dtype')} {entry.get('shape')} but "
                      f"its storage {entry['storage']!r} holds {info['dtype']} {info['shape']}")
    return tree


def _is_shape(shape: Any) -> bool:
    return type(shape) is list and all(type(n) is int and n >= 0 for n in shape)


def _check_arrays(tree: dict[str, Any], arrays: dict[str, Any], where: str) -> dict[str, Any]:
    storages = tree["storages"]
    missing = sorted(set(storages) - set(arrays))
    extra = sorted(set(arrays) - set(storages))
    if missing or extra:
        raise CheckpointError(
            f"{where}: the object tree references tensors {missing} that the file lacks"
            f"{' and the file has unreferenced tensors ' + str(extra) if extra else ''}. "
            + FIX_CORRUPT
        )
    out = {}
    for name, info in storages.items():
        arr = arrays[name]
        dt = _DTYPES[info["dtype"]]
        if arr.dtype != dt.np or list(arr.shape) != info["shape"]:
            raise CheckpointError(
                f"{where}: tensor {name!r} is declared {dt.name} {info['shape']} in the object "
                f"tree but the file stores {arr.dtype} {list(arr.shape)}. {FIX_CORRUPT}"
            )
        if not (arr.flags.writeable and arr.flags.aligned and arr.flags.c_contiguous
                and arr.dtype.isnative):
            arr = xp.array(arr, dtype=dt.np, order="C")
        if _digest(arr) != info["sha256"]:
            raise CheckpointError(
                f"{where}: the bytes of tensor {name!r} ({dt.name} {info['shape']}) do not "
                f"match their SHA-256 checksum. {FIX_CORRUPT}"
            )
        out[name] = arr
    return out


