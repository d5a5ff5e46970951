"""torch's zip checkpoint format (what ``torch.save`` writes since torch 1.6), read and written
with the standard library's :mod:`zipfile`.

An archive ``<name>.zip``-style file with one top-level folder ``<archive>/`` holding:
``data.pkl`` (the pickled object, tensors as persistent ids of storages), ``.format_version``,
``.storage_alignment`` (``64``), ``byteorder`` (``little``), ``data/<key>`` (the raw bytes of
each storage), ``version`` (``3``) and ``.data/serialization_id``. Records are stored
uncompressed and each one's data starts at a multiple of 64 bytes (padding in the local
header's extra field, id ``FB``, as torch pads), so a storage can be memory-mapped in place.
Every record carries the CRC-32 of its bytes; reading checks them, so a damaged file is an
error, never wrong numbers.

Example:
    >>> import io, numpy as np
    >>> from gradsum.serialization.zip_format import ZipArchive, write_archive
    >>> buf = io.BytesIO()
    >>> write_archive(buf, b"\\x80\\x02K\\x07.", {"0": np.arange(3.0)}, "archive")
    >>> z = ZipArchive(buf, "<buffer>")
    >>> z.prefix, z.record("data.pkl")
    ('archive', b'\\x80\\x02K\\x07.')
"""

from __future__ import annotations

import secrets
import struct
import zipfile
import zlib
from typing import Any, BinaryIO

from gradsum._backend import xp
from gradsum.serialization.errors import FIX_CORRUPT, CheckpointError

__all__ = ["ZipArchive", "write_archive", "ALIGNMENT"]

ALIGNMENT = 64
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zipfile's structFileHeader
_CHUNK = 1 << 24
_ZIP64_LIMIT = (1 << 31) - 1
#: what zipfile raises for a damaged archive (a flipped version field: NotImplementedError)
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error,
               NotImplementedError, struct.error, KeyError, UnicodeDecodeError, OverflowError)


def _aligned_info(name: str, offset: int, size: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    header = _LOCAL_HEADER.size + len(name.encode("utf-8")) + 4
    if size > _ZIP64_LIMIT:
        header += 20  # zipfile adds a zip64 extra record to the local header
    pad = -(offset + header) % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def _write_record(zf: zipfile.ZipFile, fh: BinaryIO, name: str, data: Any) -> None:
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
    info = _aligned_info(name, fh.tell(), view.nbytes)
    with zf.open(info, "w", force_zip64=view.nbytes > _ZIP64_LIMIT) as out:
        for start in range(0, view.nbytes, _CHUNK):
            out.write(view[start:start + _CHUNK])


def write_archive(fh: BinaryIO, pickled: bytes, storages: dict[str, Any], prefix: str) -> None:
    """Write torch's zip layout to ``fh`` (a seekable binary stream at offset 0).

    Args:
        fh: where the archive goes.
        pickled: the ``data.pkl`` bytes.
        storages: storage key -> contiguous little-endian array of its elements.
        prefix: the archive's folder name (torch: the file name without its extension).
    """
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _write_record(zf, fh, f"{prefix}/data.pkl", pickled)
        _write_record(zf, fh, f"{prefix}/.format_version", b"1")
        _write_record(zf, fh, f"{prefix}/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(zf, fh, f"{prefix}/byteorder", b"little")
        for key, arr in storages.items():
            _write_record(zf, fh, f"{prefix}/data/{key}", arr.view(xp.uint8).reshape(-1))
        _write_record(zf, fh, f"{prefix}/version", b"3\n")
        serialization_id = "".join(secrets.choice("0123456789") for _ in range(40))
        _write_record(zf, fh, f"{prefix}/.data/serialization_id", serialization_id.encode())


class ZipArchive:
    """A torch zip checkpoint opened for reading.

    Args:
        source: a path or a seekable binary stream.
        where: how messages name the file.
        path: the file's path when ``mmap`` may map storages in place, else None.
    """

    def __init__(self, source: Any, where: str, path: str | None = None) -> None:
        self.where = where
        self.path = path
        try:
            self.zf = zipfile.ZipFile(source)
        except _ZIP_ERRORS as e:
            raise CheckpointError(
                f"PytorchStreamReader failed reading zip archive: {e}: {where} is truncated "
                f"or damaged. {FIX_CORRUPT}"
            ) from None
        names = self.zf.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise CheckpointError(
                f"PytorchStreamReader failed locating file data.pkl: file not found: {where} is "
                "a zip archive but not a torch checkpoint (it needs exactly one "
                "<archive>/data.pkl record). Load it with the tool that wrote it."
            )
        self.prefix = pickles[0][: -len("/data.pkl")]
        self.names = set(names)
        for full in names:  # the small records: read once so that their CRC-32 is checked
            if full.startswith(f"{self.prefix}/") and not full.startswith(
                    f"{self.prefix}/data/") and not full.endswith("/"):
                self.record(full[len(self.prefix) + 1:])
        self.byteorder = "little"
        if f"{self.prefix}/byteorder" in self.names:
            order = self.record("byteorder").decode("ascii", "replace")
            if order not in ("little", "big"):
                raise CheckpointError(f"{where}: the byteorder record says {order!r}, not "
                                      f"'little' or 'big'. {FIX_CORRUPT}")
            self.byteorder = order

    def close(self) -> None:
        self.zf.close()

    def _info(self, name: str) -> zipfile.ZipInfo:
        full = f"{self.prefix}/{name}"
        if full not in self.names:
            raise CheckpointError(
                f"PytorchStreamReader failed locating file {name}: file not found: {self.where} "
                f"lacks the record {full!r}. {FIX_CORRUPT}"
            )
        return self.zf.getinfo(full)

    def _fail(self, name: str, e: Exception) -> CheckpointError:
        return CheckpointError(
            f"PytorchStreamReader failed reading file {name}: {e}: a record of {self.where} "
            f"is damaged. {FIX_CORRUPT}"
        )

    def record(self, name: str) -> bytes:
        """The bytes of ``<archive>/<name>``, their CRC-32 checked."""
        info = self._info(name)
        try:
            return self.zf.read(info)
        except _ZIP_ERRORS as e:
            raise self._fail(name, e) from None

    def storage(self, key: str, np_dtype: Any, numel: int, mmap: bool) -> Any:
        """The elements of storage ``key``: a fresh writable array (or, with ``mmap``, a
        copy-on-write map of the record), CRC-32 checked."""
        name = f"data/{key}"
        info = self._info(name)
        dt = xp.dtype(np_dtype)
        if self.byteorder == "big":
            dt = dt.newbyteorder(">")
        if type(numel) is not int or numel < 0 or info.file_size != numel * dt.itemsize:
            raise CheckpointError(
                f"{self.where}: storage {key!r} should hold {numel!r} elements of {dt} "
                f"({numel * dt.itemsize if type(numel) is int else '?'} bytes) but its record "
                f"has {info.file_size} bytes. {FIX_CORRUPT}"
            )
        if mmap and self.path is not None and info.compress_type == zipfile.ZIP_STORED:
            arr = self._mapped(info, dt, numel, name)
        else:
            arr = xp.empty(numel, dtype=dt)
            try:
                with self.zf.open(info) as src:
                    got = src.readinto(memoryview(arr.view(xp.uint8)))
                    if got != info.file_size or src.read(1):
                        raise zipfile.BadZipFile("the record is shorter than its header says")
            except _ZIP_ERRORS as e:
                raise self._fail(name, e) from None
        if self.byteorder == "big":
            arr = arr.astype(dt.newbyteorder("="))
        return arr

    def _mapped(self, info: zipfile.ZipInfo, dt: Any, numel: int, name: str) -> Any:
        path = self.path or ""
        with open(path, "rb") as fh:
            fh.seek(info.header_offset)
            header = fh.read(_LOCAL_HEADER.size)
        fields = _LOCAL_HEADER.unpack(header) if len(header) == _LOCAL_HEADER.size else None
        if fields is None or fields[0] != b"PK\x03\x04":
            raise self._fail(name, zipfile.BadZipFile("bad local file header"))
        offset = info.header_offset + _LOCAL_HEADER.size + fields[10] + fields[11]
        if numel == 0:
            return xp.empty(0, dtype=dt)
        arr = xp.memmap(path, dtype=dt, mode="c", offset=offset, shape=(numel,))
        if zlib.crc32(memoryview(arr.view(xp.uint8))) != info.CRC:
            raise self._fail(name, zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}"))
        return arr
