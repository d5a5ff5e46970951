"""Checkpoints in torch's own format, safe by default: :func:`save` and :func:`load`.

``gradsum.save(obj, f)`` writes what ``torch.save(obj, f)`` writes: a zip archive holding the
pickled object (tensors spelled ``torch._utils._rebuild_tensor_v2``, dtypes ``torch.float32``)
and the raw bytes of each storage. So files interchange both ways: ``torch.load`` reads
gradsum's files (also with ``weights_only=True``) and ``gradsum.load`` reads torch's, without
torch installed. The format is written and read by gradsum's own code (the standard library's
``zipfile`` and ``pickle``); no dependency is needed. See docs/checkpoints.md.

As in torch 2.6 and later, ``load`` defaults to ``weights_only=True``: an unpickler that builds
only tensors, storages, dtypes and plain containers from an allow-list and never imports or
calls anything else, so a malicious file can't run code. Whole modules, NumPy arrays and custom
classes save as in torch and load with ``weights_only=False`` (only for files you trust), or
with ``weights_only=True`` once their classes are allowed with :func:`add_safe_globals` or
:func:`safe_globals`.

``load`` also reads torch's legacy (non-zip) format, plain safetensors files (a dict name ->
tensor) and gradsum's earlier safetensors-based checkpoints. Writes to a path are atomic, and
every record's CRC-32 is checked on read: a damaged file is an error, never wrong numbers.

Resuming training bit for bit (model, optimizer moments and step counts, scheduler, RNG)::

    ckpt = {"model": model.state_dict(), "optim": opt.state_dict(),
            "sched": sched.state_dict(), "rng": gradsum.get_rng_state(), "step": step}
    gradsum.save(ckpt, "run/ckpt.pt")
    ...
    ckpt = gradsum.load("run/ckpt.pt")
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optim"])
    sched.load_state_dict(ckpt["sched"])
    gradsum.set_rng_state(ckpt["rng"])

Example:
    >>> import os, tempfile, gradsum
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
    >>> state = {"w": gradsum.tensor([1.5, -2.0]), "betas": (0.9, 0.999), 3: None}
    >>> gradsum.save(state, path)
    >>> back = gradsum.load(path)
    >>> back["w"], back["betas"], back[3]
    (tensor([ 1.5000, -2.0000]), (0.9, 0.999), None)
"""

from __future__ import annotations

import io
import os
import pickle
import pickletools
import sys
from typing import Any, BinaryIO, Union

from gradsum.serialization import rebuild as R
from gradsum.serialization.errors import FIX_CORRUPT as _FIX_CORRUPT
from gradsum.serialization.errors import CheckpointError
from gradsum.serialization.file_io import atomic_write, describe, read_bytes
from gradsum.serialization.ipc import register as _register_ipc
from gradsum.serialization.legacy_format import (
    MAGIC_NUMBER,
    PROTOCOL_VERSION,
    read_legacy,
    write_legacy,
)
from gradsum.serialization.rebuild import StorageType
from gradsum.serialization.safetensors_format import is_safetensors, load_safetensors
from gradsum.serialization.torch_pickler import TorchPickler
from gradsum.serialization.weights_only_unpickler import (
    UNSAFE_MESSAGE,
    _user_allowed_globals,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    python3_name,
    safe_globals,
    weights_only_message,
)
from gradsum.serialization.weights_only_unpickler import (
    Unpickler as WeightsOnlyUnpickler,
)
from gradsum.serialization.zip_format import ZipArchive, write_archive

__all__ = [
    "DEFAULT_PROTOCOL", "MAGIC_NUMBER", "PROTOCOL_VERSION", "UNSAFE_MESSAGE", "CheckpointError",
    "StorageType", "add_safe_globals", "clear_safe_globals",
    "get_safe_globals", "get_unsafe_globals_in_checkpoint", "load", "safe_globals", "save",
]

#: the pickle protocol ``save`` uses by default (torch's)
DEFAULT_PROTOCOL = 2

_register_ipc()  # tensors through multiprocessing, as torch.multiprocessing's reductions

FileLike = Union[str, "os.PathLike[str]", BinaryIO]

_CUDA_MESSAGE = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
    "False. If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU."
).replace("torch.cuda", "gradsum.cuda").replace("torch.load", "gradsum.load").replace(
    "torch.device", "gradsum.device")


def _archive_name(f: Any) -> str:
    """torch's folder name inside the zip: the file's name without its extension."""
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or "archive"
    return "archive"


def save(obj: Any, f: FileLike, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to ``f`` in torch's checkpoint format (``torch.save``).

    ``obj`` may be anything picklable: a state dict, an optimizer state dict, a whole module
    (``gradsum.save(model, path)``), NumPy arrays, custom classes, tensors inside any
    containers. Tensors viewing one buffer (tied weights, slices) share one storage, as in
    torch. ``.grad`` is not saved. Writing to a path is atomic (a temporary file next to it,
    flushed, ``fsync``-ed and renamed); a binary file object is written directly.

    Args:
        obj: what to save.
        f: a path (``str`` or ``os.PathLike``) or a writable binary file object.
        pickle_module: must be :mod:`pickle` (torch's default); accepted for portability.
        pickle_protocol: the pickle protocol (torch's default, 2).
        _use_new_zipfile_serialization: ``False`` writes torch's legacy (non-zip) format.
        _disable_byteorder_record: accepted for torch compatibility (the record is written).

    Raises:
        pickle.PicklingError / TypeError / AttributeError: something in ``obj`` can't be
            pickled (as with ``torch.save``), e.g. a lambda.
        FileNotFoundError: the target's directory does not exist.

    Example:
        >>> import io, gradsum, zipfile
        >>> buf = io.BytesIO()
        >>> gradsum.save({"w": gradsum.ones(2, requires_grad=True), "lr": 0.1}, buf)
        >>> sorted(zipfile.ZipFile(buf).namelist())[:3]
        ['archive/.data/serialization_id', 'archive/.format_version', 'archive/.storage_alignment']
        >>> _ = buf.seek(0)
        >>> gradsum.load(buf)["w"]
        tensor([1., 1.], requires_grad=True)
    """
    if pickle_module is not pickle:
        raise ValueError(
            f"gradsum.save writes with the standard pickle module; got pickle_module="
            f"{pickle_module!r}. Drop the argument."
        )
    legacy = not _use_new_zipfile_serialization
    buf = io.BytesIO()
    pickler = TorchPickler(buf, protocol=pickle_protocol, legacy=legacy)
    pickler.dump(obj)
    pickled = buf.getvalue()

    def write(fh: BinaryIO) -> None:
        if legacy:
            write_legacy(fh, pickled, pickler.storages, pickle_protocol)
        else:
            write_archive(fh, pickled, pickler.storages, _archive_name(f))

    if isinstance(f, (str, os.PathLike)):
        atomic_write(os.fspath(f), write)
    elif hasattr(f, "write"):
        if legacy or (hasattr(f, "seekable") and f.seekable() and f.tell() == 0):
            write(f)  # type: ignore[arg-type]
        else:  # zipfile needs offsets from 0: build the archive, then copy it
            tmp = io.BytesIO()
            write(tmp)
            f.write(tmp.getbuffer())  # type: ignore[union-attr]
    else:
        raise TypeError(f"gradsum.save: f must be a path or a writable binary file object, "
                        f"got {type(f).__name__}")


# -- loading ----------------------------------------------------------------------------------


def _restore(storage: R.Storage, location: str, map_location: Any) -> R.Storage:
    """Apply ``map_location`` to a storage saved at ``location``, as torch does."""
    if callable(map_location) and not isinstance(map_location, (str, dict)) and \
            not _is_device(map_location):
        result = map_location(storage, location)
        if result is not None:
            if not isinstance(result, R.Storage):
                raise TypeError(
                    f"gradsum.load: map_location returned {type(result).__name__} for a "
                    f"storage at {location!r}; return the storage it was given (or None)."
                )
            return result
        target = location
    elif isinstance(map_location, dict):
        target = str(map_location.get(location, location))
    elif map_location is None:
        target = location
    else:
        target = str(map_location)
    kind = target.split(":")[0]
    if kind == "cpu":
        return storage
    if kind == "cuda":
        raise RuntimeError(_CUDA_MESSAGE)
    raise RuntimeError(
        f"don't know how to restore data location of {target!r}: gradsum runs on the CPU "
        "only (torch's CPU build has no such device either). Pass map_location='cpu'."
    )


def _is_device(obj: Any) -> bool:
    dev = R.torch_names()["torch.device"]
    return isinstance(dev, type) and isinstance(obj, dev)


class _Loader:
    """What the unpicklers share: storage ids resolved to storages, map_location applied."""

    def __init__(self, where: str, map_location: Any, weights_only: bool, mmap: bool) -> None:
        self.where = where
        self.map_location = map_location
        self.weights_only = weights_only
        self.mmap = mmap
        self.archive: ZipArchive | None = None
        self.storages: dict[str, R.Storage] = {}

    def zip_persistent_load(self, pid: Any) -> R.Storage:
        if type(pid) is not tuple or len(pid) != 5 or _text(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                f"{self.where}: unsupported persistent id {pid!r}: only storages are allowed")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, R.StorageType):
            raise pickle.UnpicklingError(
                f"{self.where}: the storage id {pid!r} names no storage type")
        key = _text(key)
        if key not in self.storages:
            assert self.archive is not None
            arr = self.archive.storage(key, storage_type.dtype.np, numel, self.mmap)
            self.storages[key] = _restore(R.Storage(arr), _text(location), self.map_location)
        return self.storages[key]

    def unpickler(self, fh: BinaryIO, persistent_load: Any, encoding: str) -> Any:
        if self.weights_only:
            return WeightsOnlyUnpickler(fh, persistent_load, encoding=encoding)
        return _FullUnpickler(fh, persistent_load, encoding)


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any class loads (only for trusted files); torch's names map to
    gradsum's objects, so whole modules and torch files load without torch."""

    def __init__(self, fh: BinaryIO, persistent_load: Any, encoding: str) -> None:
        super().__init__(fh, encoding=encoding)
        self._persistent = persistent_load

    def persistent_load(self, pid: Any) -> Any:
        return self._persistent(pid)

    def find_class(self, module: str, name: str) -> Any:
        table = R.torch_names()
        full = f"{module}.{name}"
        if full in table:
            return table[full]
        user = _user_allowed_globals()
        if full in user:
            return user[full]
        if module == "torch" or module.startswith("torch."):
            try:
                return super().find_class("gradsum" + module[len("torch"):], name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(
                    f"the checkpoint needs {full}, which gradsum does not have (looked for "
                    f"gradsum{module[len('torch'):]}.{name}). Save only the state dict in torch "
                    "(torch.save(model.state_dict(), path)) and load that."
                ) from None
        moved = R.former_nn_class(module, name)  # (a whole module saved before the nn move)
        if moved is not None:
            return moved
        return super().find_class(module, name)


def _text(value: Any) -> str:
    return value.decode("ascii") if isinstance(value, bytes) else str(value)


def _wrap_malformed(e: Exception, where: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"{where}: the pickle in the checkpoint is malformed ({type(e).__name__}: {e}). "
        "The file is damaged or was not written by torch.save / gradsum.save."
    )


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object saved by :func:`save` or ``torch.save`` (``torch.load``).

    Reads torch's zip format (written by torch or gradsum), torch's legacy format, plain
    safetensors files (as a dict name -> tensor) and gradsum's earlier safetensors-based
    checkpoints; the format is told by the file's first bytes. torch is never imported.

    Args:
        f: a path (``str`` or ``os.PathLike``) or a readable binary file object.
        map_location: ``None``, ``'cpu'``, a ``gradsum.device``, a dict from saved to wanted
            locations, or a callable ``(storage, location) -> storage or None``. CUDA
            targets fail as in torch's CPU build.
        pickle_module: must be None or :mod:`pickle`; with one (and ``weights_only`` not
            given), the load is not weights-only, as in torch.
        weights_only: ``True`` (the default): build only tensors, storages, dtypes, devices
            and plain containers, plus what :func:`add_safe_globals` allowed; never run code.
            ``False``: unpickle anything (whole modules, custom classes). Do this only for
            files you trust: a pickle can run arbitrary code.
        mmap: map storages from the file copy-on-write instead of reading them; the results
            are equal. As in torch, ``f`` must be a path (ValueError otherwise) and a zip
            checkpoint (RuntimeError for the legacy format; safetensors files are read).
        pickle_load_args: ``encoding`` for Python 2 strings (``weights_only=False``), as
            torch's.

    Returns:
        The saved object, tensors as fresh leaves (``requires_grad`` restored, no ``.grad``).

    Raises:
        pickle.UnpicklingError: a ``weights_only`` load met something not allowed (the
            message is torch's, with both fixes), or a malformed pickle.
        CheckpointError: (a ``RuntimeError``) the file is empty, truncated, damaged (a CRC-32
            or SHA-256 mismatch) or no checkpoint.
        RuntimeError: a CUDA ``map_location`` or a storage saved on CUDA without one.

    Example:
        >>> import io, gradsum
        >>> buf = io.BytesIO()
        >>> gradsum.save({"step": 3, "w": gradsum.zeros(2)}, buf)
        >>> _ = buf.seek(0)
        >>> gradsum.load(buf, map_location="cpu")
        {'step': 3, 'w': tensor([0., 0.])}
        >>> _ = buf.seek(0)
        >>> try:
        ...     gradsum.load(buf, map_location="cuda")
        ... except RuntimeError as e:
        ...     print(str(e)[:49])
        Attempting to deserialize object on a CUDA device
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError(
            "Can not safely load weights when explicit pickle_module is specified: drop "
            "pickle_module, or pass weights_only=False for a file you trust."
        )
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(f"gradsum.load reads with the standard pickle module; got "
                         f"pickle_module={pickle_module!r}. Drop the argument.")
    encoding = pickle_load_args.pop("encoding", "utf-8" if not weights_only else "bytes")
    if pickle_load_args:
        raise TypeError(f"gradsum.load got unexpected keyword arguments "
                        f"{sorted(pickle_load_args)}")
    where = describe(f)
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if mmap and path is None:
        raise ValueError("f must be a file path in order to use the mmap argument (got "
                         f"{where}); pass the checkpoint's path, or drop mmap=True.")
    data = read_bytes(f) if path is None or not mmap else None
    if data is None:
        with open(path, "rb") as fh:  # type: ignore[arg-type]
            head = fh.read(16)
    else:
        head = data[:16]
    if not head:
        raise CheckpointError(
            f"{where}: the file is empty (0 bytes), so it holds no checkpoint (was it created "
            "but never written, or truncated by a copy?). Load an earlier checkpoint or save "
            "again from the live objects."
        )
    loader = _Loader(where, map_location, bool(weights_only), bool(mmap and path))
    try:
        if head[:4] == b"PK\x03\x04":
            return _load_zip(loader, io.BytesIO(data) if data is not None else path, path,
                             encoding)
        if data is None:
            data = read_bytes(path)
        if is_safetensors(data):
            return _map_safetensors(load_safetensors(data, where), map_location)
        if data[:1] == b"\x80":
            if mmap:
                raise RuntimeError(
                    "mmap can only be used with files saved with `torch.save(" + str(path)
                    + ", _use_new_zipfile_serialization=True), please torch.save your "
                    "checkpoint with this option in order to use mmap. (gradsum.save writes "
                    "that format by default.) Or drop mmap=True."
                )
            return _load_legacy(loader, data, encoding)
    except pickle.UnpicklingError as e:
        if weights_only and not str(e).startswith(where):
            raise pickle.UnpicklingError(weights_only_message(str(e))) from None
        raise
    except RecursionError:  # (whichever part of a reader recursed: a damaged or hostile file)
        raise CheckpointError(
            f"{where}: the checkpoint nests its objects too deeply to read (Python's recursion "
            f"limit is {sys.getrecursionlimit()}). {_FIX_CORRUPT} If you wrote it yourself from "
            "an object this deep, load it under a higher sys.setrecursionlimit."
        ) from None
    raise CheckpointError(
        f"Invalid magic number; corrupt file? {where} is neither a torch checkpoint (a zip "
        "archive or a legacy pickle) nor a safetensors file. " + _sniff(data)
    )


def _sniff(data: bytes) -> str:
    if data[:6] == b"\x93NUMPY":
        return "It is a NumPy .npy file: load it with numpy.load and wrap with gradsum.from_numpy."
    if len(data) < 8:
        return f"It is only {len(data)} bytes: it is truncated or not a checkpoint."
    return "It is damaged or in another format."


def _map_safetensors(obj: Any, map_location: Any) -> Any:
    if map_location is not None:  # (the tensors are on the CPU: only check the target)
        _restore(R.Storage(None), "cpu", map_location)
    return obj


def _unpickle(loader: _Loader, fh: BinaryIO, persistent_load: Any, encoding: str) -> Any:
    unpickler = loader.unpickler(fh, persistent_load, encoding)
    if not loader.weights_only:
        return unpickler.load()
    try:
        return unpickler.load()
    except (pickle.UnpicklingError, CheckpointError, RuntimeError, TypeError):
        raise
    except (IndexError, KeyError, ValueError, EOFError, UnicodeDecodeError, OverflowError,
            MemoryError, AttributeError, RecursionError) as e:
        raise _wrap_malformed(e, loader.where) from None


def _load_zip(loader: _Loader, source: Any, path: str | None, encoding: str) -> Any:
    archive = ZipArchive(source, loader.where, path)
    loader.archive = archive
    try:
        pickled = archive.record("data.pkl")
        return _unpickle(loader, io.BytesIO(pickled), loader.zip_persistent_load, encoding)
    finally:
        archive.close()


def _load_legacy(loader: _Loader, data: bytes, encoding: str) -> Any:
    def plain(fh: BinaryIO) -> Any:
        return _unpickle(loader, fh, None, encoding)

    def make(fh: BinaryIO, persistent_load: Any) -> Any:
        class _Checked:
            def load(self) -> Any:
                return _unpickle(loader, fh, persistent_load, encoding)
        return _Checked()

    return read_legacy(data, loader.where, make, plain,
                       lambda storage, location: _restore(storage, location,
                                                          loader.map_location))


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The ``module.name`` globals a checkpoint references that a ``weights_only`` load would
    refuse (torch's ``torch.serialization.get_unsafe_globals_in_checkpoint``); read without
    unpickling anything.

    Example:
        >>> import io, collections, gradsum
        >>> buf = io.BytesIO()
        >>> gradsum.save({"c": collections.defaultdict(int)}, buf)
        >>> _ = buf.seek(0)
        >>> gradsum.serialization.get_unsafe_globals_in_checkpoint(buf)
        ['builtins.int', 'collections.defaultdict']
    """
    where = describe(f)
    data = read_bytes(f)
    if data[:4] == b"PK\x03\x04":
        archive = ZipArchive(io.BytesIO(data), where)
        try:
            pickled = archive.record("data.pkl")
        finally:
            archive.close()
    else:
        pickled = data
    allowed = set(R.torch_names()) | set(_user_allowed_globals())
    found: set[str] = set()
    strings: list[str] = []
    for opcode, arg, _ in pickletools.genops(pickled):
        if opcode.name == "GLOBAL":
            module, name = python3_name(*str(arg).split(" ", 1))
            found.add(f"{module}.{name}")
        elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.add(".".join(python3_name(strings[-2], strings[-1])))
        elif isinstance(arg, str):
            strings.append(arg)
    return sorted(name for name in found if name not in allowed)
