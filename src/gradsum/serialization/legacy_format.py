"""torch's legacy (pre-1.6, non-zip) checkpoint format, as
``torch.save(obj, f, _use_new_zipfile_serialization=False)`` still writes it.

The file is a sequence of protocol-2 pickles followed by raw bytes: the magic number
``0x1950a86a20f9469cfc6c``, the protocol version ``1001``, a dict of system information, the
object itself (storages as persistent ids ``('storage', torch.FloatStorage, key, location,
numel, view_metadata)``), the list of storage keys, then for each key in that order its element
count as a little-endian int64 followed by its elements. The format has no checksums: a
damaged file is found only where its structure breaks.

Example:
    >>> import io, gradsum
    >>> buf = io.BytesIO()
    >>> gradsum.save({"w": gradsum.ones(2)}, buf, _use_new_zipfile_serialization=False)
    >>> _ = buf.seek(0)
    >>> gradsum.load(buf)
    {'w': tensor([1., 1.])}
"""

from __future__ import annotations

import io
import pickle
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

from gradsum._backend import xp
from gradsum.serialization.errors import FIX_CORRUPT, CheckpointError

__all__ = ["MAGIC_NUMBER", "PROTOCOL_VERSION", "write_legacy", "read_legacy"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_NUMEL = struct.Struct("<q")
_SYS_INFO = {
    "protocol_version": PROTOCOL_VERSION,
    "little_endian": True,
    "type_sizes": {"short": 2, "int": 4, "long": 4},
}


def write_legacy(fh: BinaryIO, pickled: bytes, storages: dict[str, Any], protocol: int) -> None:
    """Write the legacy layout: header pickles, ``pickled`` (made with legacy persistent ids),
    the key list and the storages' bytes."""
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, _SYS_INFO):
        pickle.dump(header, fh, protocol=protocol)
    fh.write(pickled)
    pickle.dump(list(storages), fh, protocol=protocol)
    for arr in storages.values():
        fh.write(_NUMEL.pack(arr.size))
        fh.write(memoryview(arr.view(xp.uint8).reshape(-1)))


def read_legacy(data: bytes, where: str, make_unpickler: Callable[[BinaryIO, Any], Any],
                load_plain: Callable[[BinaryIO], Any],
                restore: Callable[[Any, str], Any]) -> Any:
    """Read a legacy-format file held in ``data``.

    Args:
        data: the file's bytes.
        where: how messages name the file.
        make_unpickler: ``(stream, persistent_load) -> unpickler`` for the main pickle.
        load_plain: reads one of the header pickles (numbers, a dict, a list of keys).
        restore: ``(storage, location) -> storage``, map_location applied.
    """
    from gradsum.serialization.rebuild import Storage, StorageType

    fh = io.BytesIO(data)
    try:
        magic = load_plain(fh)
    except Exception:
        magic = None
    if magic != MAGIC_NUMBER:
        raise CheckpointError(
            f"Invalid magic number; corrupt file? {where} is a pickle but not a torch "
            "checkpoint (a legacy torch.save file starts with the magic number "
            f"{MAGIC_NUMBER:#x}). If you trust it, read it with pickle.load."
        )
    version = load_plain(fh)
    if version != PROTOCOL_VERSION:
        raise CheckpointError(f"Invalid protocol version: {version!r}: {where} is damaged or "
                              f"from an unknown torch. {FIX_CORRUPT}")
    sys_info = load_plain(fh)
    if type(sys_info) is not dict or sys_info.get("little_endian") is not True:
        raise CheckpointError(
            f"{where} was written on a big-endian machine or its header is damaged "
            f"({sys_info!r}); gradsum reads little-endian legacy checkpoints. Save it again "
            "with torch.save's default (zip) format."
        )
    storages: dict[str, Any] = {}
    pending: dict[str, tuple[Any, int]] = {}

    def persistent_load(pid: Any) -> Any:
        if type(pid) is tuple and len(pid) == 4 and pid[0] in ("module", b"module"):
            return pid[1]  # a module class with its source (whole modules, legacy format)
        if type(pid) is not tuple or len(pid) != 6 or pid[0] not in ("storage", b"storage"):
            raise pickle.UnpicklingError(
                f"{where}: unsupported persistent id {pid!r} in a legacy checkpoint")
        _, storage_type, key, location, numel, view = pid
        if not isinstance(storage_type, StorageType) or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"{where}: malformed storage id {pid!r}")
        key = str(key)
        if key not in storages:
            np_dtype = xp.dtype(storage_type.dtype.np)
            if numel * np_dtype.itemsize > len(data):
                raise CheckpointError(
                    f"{where}: a storage claims {numel} elements of {np_dtype}, more than the "
                    f"{len(data)}-byte file can hold. {FIX_CORRUPT}")
            arr = xp.empty(numel, dtype=np_dtype)
            storages[key] = restore(Storage(arr), _text(location))
            pending[key] = (storages[key].array, numel)
        root = storages[key]
        if view is None:
            return root
        if (type(view) is not tuple or len(view) != 3 or type(view[1]) is not int
                or type(view[2]) is not int or view[1] < 0 or view[1] + view[2] > numel):
            raise pickle.UnpicklingError(f"{where}: malformed storage view {view!r}")
        view_key = f"{key}/{view[0]}"
        if view_key not in storages:
            storages[view_key] = Storage(root.array[view[1]:view[1] + view[2]])
        return storages[view_key]

    result = make_unpickler(fh, persistent_load).load()
    keys = load_plain(fh)
    if type(keys) is not list:
        raise CheckpointError(f"{where}: the list of storage keys is damaged. {FIX_CORRUPT}")
    for key in keys:
        key = str(key)
        if key not in pending:
            raise CheckpointError(f"{where}: the file stores a storage {key!r} that no tensor "
                                  f"uses. {FIX_CORRUPT}")
        arr, numel = pending.pop(key)
        head = fh.read(_NUMEL.size)
        nbytes = numel * arr.itemsize
        if len(head) != _NUMEL.size or _NUMEL.unpack(head)[0] != numel:
            raise CheckpointError(f"{where}: storage {key!r} should hold {numel} elements but "
                                  f"its header says otherwise or is cut off. {FIX_CORRUPT}")
        got = fh.readinto(memoryview(arr.view(xp.uint8)))
        if got != nbytes:
            raise CheckpointError(f"{where}: storage {key!r} is cut off ({got} of {nbytes} "
                                  f"bytes). {FIX_CORRUPT}")
    if pending:
        raise CheckpointError(f"{where}: the storages {sorted(pending)} are missing from the "
                              f"file. {FIX_CORRUPT}")
    return result


def _text(value: Any) -> str:
    return value.decode("ascii") if isinstance(value, bytes) else str(value)
