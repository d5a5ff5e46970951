"""Reading and atomically writing checkpoint files.

A save to a path never leaves a half-written file: the bytes go to a temporary file in the
target's directory, which is flushed, ``fsync``-ed and renamed over the target. What a crash
leaves: a save killed part way (SIGKILL, a power cut) leaves the previous file at the path
untouched and its hidden temporary ``.NAME.<12 hex digits>.tmp`` beside it; the next save of
the same path removes such temporaries. A save holds a lock on its temporary while it writes
(POSIX ``flock``), so the temporary of a save still running in another process is left alone.

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
import re
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


def _lock(fd: int) -> bool:
    """Take the exclusive lock of an open file without waiting; whether it was free (always
    True where there is no ``flock``)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def remove_stale_temporaries(path: str) -> list[str]:
    """Remove the temporaries that saves of ``path`` killed part way left beside it (their
    lock is free: no process writes them); returns their paths. A temporary another process
    is still writing is locked, and kept."""
    directory = os.path.dirname(os.path.abspath(path))
    pattern = re.compile(r"\." + re.escape(os.path.basename(path)) + r"\.[0-9a-f]{12}\.tmp")
    removed = []
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            if not pattern.fullmatch(name):
                continue
            stale = os.path.join(directory, name)
            try:
                fd = os.open(stale, os.O_RDONLY)
            except OSError:
                continue
            try:
                if _lock(fd):
                    os.unlink(stale)
                    removed.append(stale)
            except OSError:
                pass
            finally:
                os.close(fd)
    return removed


def atomic_write(path: str, write: Callable[[BinaryIO], Any]) -> None:
    """Call ``write(fh)`` on a temporary file next to ``path``, then rename it over ``path``.

    An exception or Ctrl-C inside ``write`` leaves any previous file at ``path`` intact and
    no temporary file behind; a crash leaves the temporary, which the next save of ``path``
    removes (see the module's docstring). Writing through a symlink replaces its target;
    the replaced file's permissions are kept.
    """
    if os.path.islink(path):  # write through a symlink, as open(path, "wb") would
        path = os.path.realpath(path)
    if os.path.isdir(path):
        raise RuntimeError(
            f"open file failed with strerror: Is a directory: gradsum.save can't write "
            f"{path!r}, which is a directory. Pass the path of a file in it, e.g. "
            f"os.path.join({path!r}, 'checkpoint.pt')."
        )
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"gradsum.save: can't write {path!r}: the directory {directory!r} does not exist. "
            "Create it first, e.g. os.makedirs(directory, exist_ok=True)."
        )
    remove_stale_temporaries(path)
    base = os.path.basename(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for a plain open()
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue
        except PermissionError as e:
            raise PermissionError(
                e.errno,
                f"Permission denied: gradsum.save can't write {path!r}: a save writes a "
                f"temporary file in {directory!r} and renames it over the target (so that a "
                "crash never leaves a half-written checkpoint), which needs write permission "
                "on the directory, not only on the file. Make the directory writable, or save "
                "to a path in a directory you can write.",
            ) from None
        break
    _lock(fd)  # (held while writing: a concurrent save's cleanup leaves this file alone)
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


