"""What a crash or a refused save leaves, and the errors that name the user's path.

A save killed part way (SIGKILL) used to leave its hidden ``.NAME.<hex>.tmp`` beside the
checkpoint forever (four kills left three of 48 MiB). Now the next save of the same path
removes the temporaries whose writer is gone; one whose writer still runs is locked and kept.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import gradsum
from gradsum.serialization.errors import CheckpointError

posix_only = pytest.mark.skipif(os.name != "posix", reason="SIGKILL and flock are POSIX")

#: a child that starts an atomic save of ARGV[1], writes 1 MiB, says so and hangs
_WRITER = textwrap.dedent("""
    import sys, time
    from gradsum.serialization.file_io import atomic_write
    def write(fh):
        fh.write(b"x" * (1 << 20)); fh.flush()
        print("writing", flush=True)
        time.sleep(60)
    atomic_write(sys.argv[1], write)
""")


def _start_writer(path: str) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", _WRITER, path], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "writing"
    return child


def _temporaries(path: str) -> list[str]:
    d, base = os.path.split(path)
    return glob.glob(os.path.join(glob.escape(d), "." + glob.escape(base) + ".*.tmp"))


@posix_only
def test_a_killed_save_leaves_a_temporary_that_the_next_save_removes(tmp_path):
    path = str(tmp_path / "model.pt")
    gradsum.save({"w": gradsum.ones(3)}, path)
    for _ in range(3):  # (three saves killed part way)
        child = _start_writer(path)
        child.send_signal(signal.SIGKILL)
        child.wait()
    # what a crash leaves, as docs/checkpoints.md says: its temporary (each killed save
    # removed the one before it, so one is left, not three)
    assert len(_temporaries(path)) == 1
    assert gradsum.load(path)["w"].tolist() == [1.0, 1.0, 1.0]  # the old file is intact
    gradsum.save({"w": gradsum.zeros(3)}, path)
    assert _temporaries(path) == []
    assert gradsum.load(path)["w"].tolist() == [0.0, 0.0, 0.0]


@posix_only
def test_the_temporary_of_a_save_still_running_is_kept(tmp_path):
    path = str(tmp_path / "model.pt")
    child = _start_writer(path)
    try:
        gradsum.save({"w": gradsum.ones(2)}, path)
        assert len(_temporaries(path)) == 1  # (the other writer's, locked)
    finally:
        child.kill()
        child.wait()
    gradsum.save({"w": gradsum.ones(2)}, path)
    assert _temporaries(path) == []


def test_other_files_are_left_alone(tmp_path):
    keep = [tmp_path / ".model.pt.notes.tmp", tmp_path / ".other.pt.0123456789ab.tmp",
            tmp_path / "model.pt.0123456789ab.tmp"]
    for k in keep:
        k.write_bytes(b"keep")
    gradsum.save({}, str(tmp_path / "model.pt"))
    assert all(k.exists() for k in keep)


def test_saving_to_a_directory_names_it():
    """torch: RuntimeError "... open file failed with strerror: Is a directory"."""
    d = os.path.dirname(os.path.abspath(__file__))
    with pytest.raises(RuntimeError, match=r"Is a directory.*" + "'" + d.replace("\\", "\\\\")):
        gradsum.save({}, d)
    assert not glob.glob(os.path.join(os.path.dirname(d), ".*.tmp"))


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs a non-root POSIX user (root writes any directory)")
def test_a_read_only_directory_names_the_target_and_the_fix(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"")
    os.chmod(tmp_path, 0o555)
    try:
        with pytest.raises(PermissionError, match=r"can't write .*model\.pt.*writable"):
            gradsum.save({}, str(path))
    finally:
        os.chmod(tmp_path, 0o755)


def test_a_deeply_nested_file_is_a_checkpoint_error(tmp_path, monkeypatch):
    """A file whose objects nest deeper than Python's recursion limit: CheckpointError naming
    the file, not a bare RecursionError (whichever reader recursed)."""
    obj: dict = {}
    cur = obj
    for _ in range(300):
        cur["a"] = {}
        cur = cur["a"]
    path = str(tmp_path / "deep.pt")
    gradsum.save(obj, path)
    import gradsum.serialization as S

    def recurse(*args, **kwargs):
        return recurse(*args, **kwargs)

    monkeypatch.setattr(S, "_unpickle", recurse)
    with pytest.raises(CheckpointError, match=r"deep\.pt.*nests its objects too deeply"):
        gradsum.load(path)


def test_a_header_nested_10000_deep_is_a_checkpoint_error(tmp_path):
    """A 20 KB safetensors file whose JSON header nests ``[`` 10,000 deep (the audit's case):
    CheckpointError naming the file, not a bare RecursionError."""
    header = b'{"a":' + b"[" * 10000 + b"]" * 10000 + b"}"
    path = tmp_path / "nested.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(CheckpointError, match=r"nested\.safetensors.*not valid JSON"):
        gradsum.load(str(path))
