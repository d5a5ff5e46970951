"""Reading and atomically writing checkpoint files.

A save to a path never leaves a half-written file: the bytes go to a temporary file in the
target's directory, which is flushed, ``fsync``-ed and renamed over the target.

Example:
    >>> import os, tempfile
    >>> from gradsum.serialization.file_io import atomic_write, read_bytes
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> atomic_write(path, lambda fh: fh.write(b"abc"))
    >>> read_bytes(path)
    b'abc'
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from typing import Any, BinaryIO

__all__ = ["atomic_write", "describe", "read_bytes", "write_all"]


def write_all(fh: BinaryIO, data: Any) -> None:
    """Write ``data`` (bytes or a buffer) to ``fh`` in chunks of 16 MiB."""
    view = memoryview(data).cast("B")
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


def atomic_write(path: str, write: Callable[[BinaryIO], Any]) -> None:
    """Call ``write(fh)`` on a temporary file next to ``path``, then rename it over ``path``.

    A crash, exception or Ctrl-C inside ``write`` leaves any previous file at ``path``
    intact and no temporary file behind. Writing through a symlink replaces its target;
    the replaced file's permissions are kept.
    """
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
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def describe(f: Any) -> str:
    """How messages name ``f`` (its path, or its ``name``, or its type)."""
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__} object>"


def read_bytes(f: Any) -> bytes:
    """The whole content of a path or a readable binary file object."""
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(
                f"gradsum.load: {describe(f)} returned {type(data).__name__} from read(); "
                "open the file in binary mode ('rb')."
            )
        return bytes(data)
    with open(os.fspath(f), "rb") as fh:
        return fh.read()


