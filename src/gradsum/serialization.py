"""Checkpoints that lose nothing and run no code: :func:`save` and :func:`load`.

``gradsum.save(obj, path)`` writes one `safetensors <https://github.com/huggingface/safetensors>`_
file; ``gradsum.load(path)`` reads it back. Nothing is ever pickled, so loading a file, even a
malicious one, cannot execute code: the file holds raw tensor bytes plus a JSON description.

What a checkpoint can hold (everything a ``state_dict`` is made of), round-tripped exactly:

* tensors (bitwise equal data, same dtype and shape, ``requires_grad`` restored) and
  ``gradsum.nn.Parameter`` (loaded as a ``Parameter`` again);
* ``None``, ``bool``, ``int`` (any size), ``float`` (including ``inf``, ``-inf``, ``nan``,
  ``-0.0``), ``str``, NumPy scalars (``numpy.float64`` stays ``numpy.float64``) and gradsum dtypes;
* ``dict`` (keys: ``str``, ``int``, ``bool``, ``float`` or ``None``, insertion order kept),
  ``collections.OrderedDict`` (with its attributes, e.g. a module ``state_dict``'s
  ``_metadata``), ``collections.Counter`` (``MultiStepLR``'s milestones), ``list`` and
  ``tuple`` (tuples stay tuples, e.g. Adam's ``betas``), nested freely.

Format (version 1). A standard safetensors file whose header ``__metadata__`` has:

* ``"gradsum.format": "gradsum.checkpoint"`` and ``"gradsum.version": "1"``;
* ``"gradsum.tree"``: JSON ``{"root": node, "tensors": [...], "storages": {...}}``. A node is a
  JSON ``null``/``true``/``false``/string/number for the plain values, or a one-key object:
  ``{"float": "nan"|"inf"|"-inf"}``, ``{"tuple": [node...]}`` (lists are JSON arrays),
  ``{"dict": [[key, node], ...]}``, ``{"odict": [[key, node], ...], "attrs": {...}}``,
  ``{"counter": [[key, node], ...]}``,
  ``{"dtype": "float32"}``, ``{"scalar": ["float64", value]}`` (NumPy scalar) or
  ``{"tensor": i}``, an index into ``tensors``. Each entry of ``tensors`` is
  ``{"storage": name, "kind": "tensor"|"parameter", "requires_grad": bool, "dtype": ...,
  "shape": [...]}``; each storage (a safetensors tensor of that name) is described by
  ``{"dtype": ..., "shape": [...], "sha256": hex digest of its bytes}``;
* ``"gradsum.tree_sha256"``: the SHA-256 of the tree text.

The checksums make every corruption an error instead of silently wrong numbers.

Sharing. The same tensor object appearing twice in ``obj`` is stored once and loads as one
object appearing twice. Distinct tensors viewing exactly the same memory (same buffer, shape,
strides and dtype, e.g. tied weights in a ``state_dict``, where each entry is a ``detach()``)
are stored once too and load as distinct tensors sharing one buffer (and version counter), as
with ``torch.load``. Partially overlapping views are stored as independent copies. Containers
appearing twice load as two equal copies. ``.grad`` is not saved (as in torch).

Writes are atomic: the bytes go to a temporary file in the target's directory, which is
flushed, ``fsync``-ed and then renamed over the target. A crash or an exception mid-save leaves
the previous checkpoint intact and no temporary file behind.

Requires the optional ``safetensors`` package: ``pip install safetensors`` (in a clone of
gradsum: ``pip install -e ".[checkpoint]"``).

Resuming training bit for bit (model, optimizer moments and step counts, scheduler, RNG)::

    ckpt = {
        "model": model.state_dict(),
        "optim": opt.state_dict(),
        "sched": sched.state_dict(),
        "rng": gradsum.get_rng_state(),
        "step": step,
    }
    gradsum.save(ckpt, "run/ckpt.safetensors")
    ...
    ckpt = gradsum.load("run/ckpt.safetensors")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optim"])
    sched.load_state_dict(ckpt["sched"])
    gradsum.set_rng_state(ckpt["rng"])
    step = ckpt["step"]

Example:
    >>> import os, tempfile, gradsum
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> state = {"w": gradsum.tensor([1.5, -2.0]), "betas": (0.9, 0.999), 3: None}
    >>> gradsum.save(state, path)
    >>> back = gradsum.load(path)
    >>> back["w"], back["betas"], back[3]
    (tensor([ 1.5000, -2.0000]), (0.9, 0.999), None)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
from collections import Counter, OrderedDict
from typing import Any, BinaryIO, Union

from gradsum import _dtype as D
from gradsum._backend import xp
from gradsum._tensor import Tensor

__all__ = ["CheckpointError", "load", "save"]

FORMAT = "gradsum.checkpoint"
VERSION = 1
_KEY_FORMAT = "gradsum.format"
_KEY_VERSION = "gradsum.version"
_KEY_TREE = "gradsum.tree"
_KEY_TREE_SHA = "gradsum.tree_sha256"
_MAX_HEADER = 100_000_000  # safetensors' own limit on the JSON header
_DTYPES: dict[str, D.dtype] = {d.name: d for d in D._ALL}
_INSTALL_HINT = "pip install safetensors (in a clone of gradsum: pip install -e '.[checkpoint]')"
_FIX_CORRUPT = (
    "The file is damaged (an interrupted copy or a disk error?): load an earlier checkpoint "
    "or save this one again from the live objects."
)

FileLike = Union[str, "os.PathLike[str]", BinaryIO]


class CheckpointError(ValueError):
    """A file that is not a readable gradsum checkpoint: truncated, corrupted or foreign.

    The message names the file, what is wrong with it and how to fix it.

    Example:
        >>> import io, gradsum
        >>> from gradsum.serialization import CheckpointError
        >>> try:
        ...     gradsum.load(io.BytesIO(b""))
        ... except CheckpointError as e:
        ...     print(isinstance(e, ValueError), "empty" in str(e))
        True True
    """


def _safetensors_numpy() -> Any:
    try:
        import safetensors.numpy as st
    except ImportError as e:
        raise ImportError(
            "gradsum.save/gradsum.load write safetensors files and need the optional "
            f"'safetensors' package, which is not installed: {_INSTALL_HINT}"
        ) from e
    return st


def _parameter_class() -> type | None:
    try:
        from gradsum.nn.parameter import Parameter
    except ImportError:
        return None
    return Parameter  # type: ignore[no-any-return]


# -- encoding ---------------------------------------------------------------------------------

_PLAIN_SCALARS = (type(None), bool, int, float, str)


class _Encoder:
    """Turns an object tree into a JSON-able tree plus the arrays to store."""

    def __init__(self) -> None:
        self.tensors: list[dict[str, Any]] = []
        self.storages: dict[str, dict[str, Any]] = {}
        self.arrays: dict[str, Any] = {}
        self._by_obj: dict[int, int] = {}
        self._by_memory: dict[tuple[Any, ...], str] = {}
        self._alive: list[Any] = []  # keep ids stable while encoding
        self._stack: set[int] = set()
        self._parameter = _parameter_class()

    def node(self, obj: Any, where: str) -> Any:
        kind = type(obj)
        if obj is None or kind is bool or kind is int or kind is str:
            return obj
        if kind is float:
            if math.isfinite(obj):
                return obj
            return {"float": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, Tensor):
            return {"tensor": self.tensor(obj, where)}
        if kind is D.dtype:
            return {"dtype": obj.name}
        if isinstance(obj, xp.generic) and obj.dtype.kind in "biuf":
            return {"scalar": [obj.dtype.name, self.node(obj.item(), where)]}
        if kind in (list, tuple, dict, OrderedDict, Counter):
            if id(obj) in self._stack:
                raise ValueError(
                    f"gradsum.save: {where} contains itself (a reference cycle); checkpoints "
                    "hold trees. Break the cycle before saving."
                )
            self._stack.add(id(obj))
            try:
                return self._container(obj, where)
            finally:
                self._stack.discard(id(obj))
        raise TypeError(
            f"gradsum.save can't store {where}, a {kind.__module__}.{kind.__qualname__}: "
            "checkpoints hold tensors, gradsum dtypes, None/bool/int/float/str, NumPy scalars, "
            "and dicts (str/int keys), lists and tuples of those; nothing is pickled so that "
            "loading can't run code. Convert it first (e.g. to a tensor or a plain value)."
        )

    def _container(self, obj: Any, where: str) -> Any:
        if type(obj) is list:
            return [self.node(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        if type(obj) is tuple:
            return {"tuple": [self.node(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        pairs = [[self.key(k, where), self.node(v, f"{where}[{k!r}]")] for k, v in obj.items()]
        if type(obj) is dict:
            return {"dict": pairs}
        if type(obj) is Counter:  # e.g. MultiStepLR's milestones
            return {"counter": pairs}
        attrs = {
            name: self.node(value, f"{where}.{name}") for name, value in vars(obj).items()
        }
        return {"odict": pairs, "attrs": attrs}

    def key(self, key: Any, where: str) -> Any:
        if type(key) in _PLAIN_SCALARS:
            return self.node(key, where)
        raise TypeError(
            f"gradsum.save can't store the key {key!r} ({type(key).__name__}) of {where}: dict "
            "keys must be str, int, bool, float or None. Convert the key first."
        )

    def tensor(self, t: Tensor, where: str) -> int:
        index = self._by_obj.get(id(t))
        if index is not None:
            return index
        if type(t) is Tensor:
            kind = "tensor"
        elif self._parameter is not None and type(t) is self._parameter:
            kind = "parameter"
        else:
            raise TypeError(
                f"gradsum.save can't store {where}, a tensor subclass {type(t).__qualname__}: "
                "only Tensor and nn.Parameter are restored on load. Save "
                "gradsum.Tensor._make(t._array) or t.detach() instead."
            )
        arr = xp.asarray(t._array)  # (a NumPy scalar as buffer becomes a 0-d array)
        dtype = D.from_numpy_dtype(arr.dtype)
        memory = (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str)
        name = self._by_memory.get(memory) if arr.size else None
        if name is None:
            name = str(len(self.storages))
            data = arr if arr.flags.c_contiguous else arr.copy(order="C")  # keeps 0-d
            if data.dtype.byteorder == ">":  # safetensors is little-endian
                data = data.astype(data.dtype.newbyteorder("<"))
            self.arrays[name] = data
            self.storages[name] = {
                "dtype": dtype.name,
                "shape": list(arr.shape),
                "sha256": _digest(data),
            }
            if arr.size:
                self._by_memory[memory] = name
        index = len(self.tensors)
        self.tensors.append({
            "storage": name,
            "kind": kind,
            "requires_grad": bool(t.requires_grad),
            "dtype": dtype.name,
            "shape": list(arr.shape),
        })
        self._by_obj[id(t)] = index
        self._alive.append(t)
        return index


def _digest(arr: Any) -> str:
    """SHA-256 of a C-contiguous array's bytes (without copying them)."""
    return hashlib.sha256(memoryview(arr).cast("B") if arr.size else b"").hexdigest()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _write_all(fh: BinaryIO, data: bytes) -> None:
    """Write ``data`` to ``fh`` in chunks (the step tests interrupt to check atomicity)."""
    view = memoryview(data)
    chunk = 1 << 24
    for start in range(0, len(view), chunk):
        fh.write(view[start:start + chunk])


def _fsync_directory(directory: str) -> None:
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _atomic_write(path: str, data: bytes) -> None:
    if os.path.islink(path):  # write through a symlink, as open(path, "wb") would
        path = os.path.realpath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"gradsum.save: can't write {path!r}: the directory {directory!r} does not exist. "
            "Create it first, e.g. os.makedirs(directory, exist_ok=True)."
        )
    base = os.path.basename(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for a plain open()
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue
        break
    try:
        with os.fdopen(fd, "wb") as fh:
            with contextlib.suppress(OSError):  # keep the permissions of the file we replace
                os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            _write_all(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def save(obj: Any, f: FileLike) -> None:
    """Save ``obj`` (a state dict or any tree of tensors and plain values) to ``f``.

    Like ``torch.save`` but nothing is pickled: ``f`` becomes a safetensors file whose
    metadata describes the object tree (see the module docs for the format). Writing to a path
    is atomic; ``f`` may also be a binary file object (written directly, not atomically).

    Args:
        obj: tensors, ``nn.Parameter``, gradsum dtypes, ``None``/``bool``/``int``/``float``/
            ``str``, NumPy scalars, and ``dict``/``OrderedDict``/``list``/``tuple`` of them.
            Dict keys may be ``str``, ``int``, ``bool``, ``float`` or ``None``.
        f: a path (``str`` or ``os.PathLike``) or a writable binary file object.

    Raises:
        TypeError: ``obj`` contains something a checkpoint can't hold (the message says where).
        ValueError: ``obj`` contains a reference cycle.
        ImportError: ``safetensors`` is not installed (``pip install safetensors``).

    Example:
        >>> import os, tempfile, gradsum
        >>> path = os.path.join(tempfile.mkdtemp(), "state.safetensors")
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> gradsum.save({"w": w, "lr": 0.1, "steps": [1, 2]}, path)
        >>> back = gradsum.load(path)
        >>> back["w"].requires_grad, back["lr"], back["steps"]
        (True, 0.1, [1, 2])
    """
    st = _safetensors_numpy()
    enc = _Encoder()
    root = enc.node(obj, "obj")
    tree = _dumps({"root": root, "tensors": enc.tensors, "storages": enc.storages})
    metadata = {
        _KEY_FORMAT: FORMAT,
        _KEY_VERSION: str(VERSION),
        _KEY_TREE: tree,
        _KEY_TREE_SHA: _sha256(tree),
    }
    data = st.save(enc.arrays, metadata=metadata)
    if hasattr(f, "write"):
        _write_all(f, data)  # type: ignore[arg-type]
        return
    _atomic_write(os.fspath(f), data)  # type: ignore[arg-type]


# -- decoding ---------------------------------------------------------------------------------


def _describe(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__} object>"


def _read(f: Any) -> bytes:
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(
                f"gradsum.load: {_describe(f)} returned {type(data).__name__} from read(); "
                "open the file in binary mode ('rb')."
            )
        return bytes(data)
    with open(os.fspath(f), "rb") as fh:
        return fh.read()


def _check_options(map_location: Any, pickle_module: Any) -> None:
    if pickle_module is not None:
        raise ValueError(
            "gradsum.load never unpickles (loading a pickle can run code), so pickle_module "
            f"must be None, got {pickle_module!r}. Drop the argument."
        )
    if map_location is None or (
        not callable(map_location) and not isinstance(map_location, dict)
        and str(map_location) == "cpu"
    ):
        return
    raise ValueError(
        f"gradsum.load: map_location={map_location!r} is not supported: gradsum tensors live "
        "on the CPU, so map_location must be None or 'cpu'. Drop the argument or pass 'cpu'."
    )


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
        return CheckpointError(f"{self.where}: {what}. {_FIX_CORRUPT}")

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
            if self.parameter is None:  # pragma: no cover - gradsum.nn always ships
                raise CheckpointError(
                    f"{self.where} holds an nn.Parameter but gradsum.nn is not available. "
                    "Install the full gradsum package."
                )
            t = self.parameter(t, requires_grad=entry["requires_grad"])
        elif entry["requires_grad"]:
            t._requires_grad = True
        self.built[index] = t
        return t


def _short(obj: Any) -> str:
    text = _dumps(obj) if not isinstance(obj, str) else repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


def _sniff_foreign(data: bytes) -> str | None:
    """Why ``data`` is recognisably not a safetensors file, or None."""
    if data[:4] == b"PK\x03\x04":
        return (
            "it is a ZIP archive, the format torch.save writes (pickled objects). gradsum never "
            "unpickles, since loading a pickle can run arbitrary code. Convert it in a trusted "
            "environment: sd = torch.load(path, weights_only=True); gradsum.save({k: "
            "gradsum.from_numpy(v.numpy()) for k, v in sd.items()}, new_path)"
        )
    if data[:1] == b"\x80" and len(data) > 1 and 2 <= data[1] <= 5:
        return (
            "it is a pickle (written by pickle.dump or an old torch.save). gradsum never "
            "unpickles, since loading a pickle can run arbitrary code. Load it only if you trust "
            "it, then save the tensors with gradsum.save"
        )
    if data[:6] == b"\x93NUMPY":
        return "it is a NumPy .npy file. Load it with numpy.load and wrap with gradsum.from_numpy"
    return None


def _header(data: bytes, where: str) -> dict[str, str]:
    """Validate the safetensors framing and return gradsum's metadata."""
    if not data:
        raise CheckpointError(
            f"{where}: the file is empty (0 bytes), so it holds no checkpoint (was it created "
            "but never written, or truncated by a copy?). Load an earlier checkpoint or save "
            "again from the live objects."
        )
    # (a valid safetensors framing wins: a header length such as 0x380 = 896 starts the file
    # with b"\x80\x03", which also begins a pickle)
    framed = len(data) >= 9 and int.from_bytes(data[:8], "little") <= min(
        _MAX_HEADER, len(data) - 8) and data[8:9] == b"{"
    foreign = None if framed else _sniff_foreign(data)
    if foreign:
        raise CheckpointError(f"{where}: not a gradsum checkpoint: {foreign}.")
    if len(data) < 8:
        raise CheckpointError(
            f"{where}: the file is only {len(data)} bytes, shorter than a safetensors header. "
            f"{_FIX_CORRUPT}"
        )
    size = int.from_bytes(data[:8], "little")
    if size > min(_MAX_HEADER, len(data) - 8):
        raise CheckpointError(
            f"{where}: the header claims {size} bytes but the file has {len(data) - 8} after the "
            "8-byte length prefix: it is truncated or not a safetensors file. " + _FIX_CORRUPT
        )
    try:
        header = json.loads(data[8:8 + size].decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(
            f"{where}: the safetensors header is not valid JSON ({e}). {_FIX_CORRUPT}"
        ) from None
    if type(header) is not dict:
        raise CheckpointError(f"{where}: the safetensors header is not a JSON object. "
                              f"{_FIX_CORRUPT}")
    meta = header.get("__metadata__")
    if type(meta) is not dict or _KEY_FORMAT not in meta:
        raise CheckpointError(
            f"{where}: a safetensors file but not a gradsum checkpoint (its metadata has no "
            f"{_KEY_FORMAT!r}), e.g. one written by safetensors directly. Read its raw arrays "
            "with safetensors.numpy.load_file(path) and wrap them with gradsum.from_numpy."
        )
    if meta[_KEY_FORMAT] != FORMAT or type(meta.get(_KEY_VERSION)) is not str:
        raise CheckpointError(f"{where}: the gradsum metadata is damaged. {_FIX_CORRUPT}")
    version = meta[_KEY_VERSION]
    if not version.isdigit() or int(version) > VERSION:
        raise CheckpointError(
            f"{where}: written in checkpoint format version {version!r}; this gradsum reads "
            f"version {VERSION} and older. Upgrade gradsum (in its clone: git pull, then "
            "pip install -e .)."
        )
    tree, digest = meta.get(_KEY_TREE), meta.get(_KEY_TREE_SHA)
    if type(tree) is not str or type(digest) is not str or not tree.isascii():
        raise CheckpointError(f"{where}: the gradsum object tree is missing. {_FIX_CORRUPT}")
    if _sha256(tree) != digest:
        raise CheckpointError(
            f"{where}: the object tree does not match its SHA-256 checksum. {_FIX_CORRUPT}"
        )
    return meta


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def _parse_tree(text: str, where: str) -> dict[str, Any]:
    def bad(what: str) -> CheckpointError:
        return CheckpointError(f"{where}: {what}. {_FIX_CORRUPT}")

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
            + _FIX_CORRUPT
        )
    out = {}
    for name, info in storages.items():
        arr = arrays[name]
        dt = _DTYPES[info["dtype"]]
        if arr.dtype != dt.np or list(arr.shape) != info["shape"]:
            raise CheckpointError(
                f"{where}: tensor {name!r} is declared {dt.name} {info['shape']} in the object "
                f"tree but the file stores {arr.dtype} {list(arr.shape)}. {_FIX_CORRUPT}"
            )
        if not (arr.flags.writeable and arr.flags.aligned and arr.flags.c_contiguous
                and arr.dtype.isnative):
            arr = xp.array(arr, dtype=dt.np, order="C")
        if _digest(arr) != info["sha256"]:
            raise CheckpointError(
                f"{where}: the bytes of tensor {name!r} ({dt.name} {info['shape']}) do not "
                f"match their SHA-256 checksum. {_FIX_CORRUPT}"
            )
        out[name] = arr
    return out


def load(
    f: FileLike,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = True,
    mmap: bool | None = None,
) -> Any:
    """Load an object saved by :func:`save`; never executes code from the file.

    Takes ``torch.load``'s arguments for portability: ``map_location`` may be ``None`` or
    ``'cpu'`` (gradsum tensors live on the CPU); ``weights_only`` and ``mmap`` are accepted
    and ignored (a gradsum checkpoint only ever holds weights and plain values, so every load
    is a ``weights_only`` load); ``pickle_module`` must be ``None``.

    Args:
        f: a path (``str`` or ``os.PathLike``) or a readable binary file object.
        map_location: ``None`` or ``'cpu'``.
        pickle_module: must be ``None`` (nothing is unpickled).
        weights_only: accepted for torch compatibility; always effectively ``True``.
        mmap: accepted for torch compatibility; the file is read into memory.

    Returns:
        The saved object: tensors (fresh, writable buffers), ``nn.Parameter``, plain values and
        containers of the same types as saved.

    Raises:
        CheckpointError: (a ``ValueError``) the file is empty, truncated, corrupted, a pickle or
            ``torch.save`` file, or a safetensors file not written by gradsum; the message says
            which and how to fix it.
        FileNotFoundError: no file at ``f``.
        ValueError: an unsupported ``map_location`` or a ``pickle_module``.
        ImportError: ``safetensors`` is not installed (``pip install safetensors``).

    Example:
        >>> import os, tempfile, gradsum
        >>> path = os.path.join(tempfile.mkdtemp(), "rng.safetensors")
        >>> gradsum.save(gradsum.get_rng_state(), path)
        >>> state = gradsum.load(path, map_location="cpu", weights_only=True)
        >>> gradsum.set_rng_state(state)
        >>> gradsum.load(path, map_location="cuda")
        Traceback (most recent call last):
        ...
        ValueError: gradsum.load: map_location='cuda' is not supported: ...
    """
    del weights_only, mmap  # every gradsum load is weights-only; reading is always in memory
    _check_options(map_location, pickle_module)
    st = _safetensors_numpy()
    where = _describe(f)
    data = _read(f)
    meta = _header(data, where)
    tree = _parse_tree(meta[_KEY_TREE], where)
    try:
        raw = st.load(data)
    except Exception as e:  # SafetensorError: bad offsets, truncation, unknown dtype ...
        raise CheckpointError(
            f"{where}: safetensors could not read the tensors ({e}). {_FIX_CORRUPT}"
        ) from None
    arrays = _check_arrays(tree, raw, where)
    try:
        return _Decoder(where, tree, arrays).node(tree["root"])
    except RecursionError:
        raise CheckpointError(f"{where}: the object tree is nested too deeply to load. "
                              f"{_FIX_CORRUPT}") from None

