"""The ``gradsum`` command line behaves like a Unix tool: ``--version``, help in plain text,
usage errors with exit status 2 (argparse's form: the usage, then ``gradsum demo: error: ...``),
a quiet stop when the reader closes the pipe, and exit status 130 on Ctrl-C.

The demo's own behaviour (what it prints and writes) is tests/cli/test_demo.py's."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import gradsum
from gradsum.__main__ import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, main

#: what a reST docstring would leak into --help
MARKUP = re.compile(r"``|:(func|class|data|mod|meth|attr):|`~")


def gradsum_command() -> list[str]:
    """The installed console script when it sits beside this Python, else ``python -m``."""
    script = Path(sys.executable).with_name("gradsum")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gradsum"]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRADSUM_STRICT": "", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([*gradsum_command(), *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``main(args)``'s exit status (returned or raised by argparse), stdout and stderr."""
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# -- version and help ---------------------------------------------------------------------------
def test_version_is_the_package_version():
    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"gradsum {gradsum.__version__}\n"


@pytest.mark.parametrize("command", [[], ["demo"], ["run"]], ids=["gradsum", "demo", "run"])
def test_help_is_plain_text(capsys, command):
    code, out, _ = in_process(capsys, *command, "--help")
    assert code == 0
    assert out.startswith(f"usage: gradsum{' ' if command else ''}{' '.join(command)}")
    assert not MARKUP.search(out), out


def test_top_level_help_names_the_commands_and_version(capsys):
    _, out, _ = in_process(capsys, "--help")
    assert "--version" in out and "demo" in out and "run" in out


def test_unknown_option_shows_the_demos_usage():
    proc = run_cli("demo", "--bogus")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("usage: gradsum demo [-h] [--steps N]")
    assert proc.stderr.splitlines()[-1] == "gradsum demo: error: unrecognized arguments: --bogus"


def test_no_command_is_a_usage_error(capsys):
    code, _, err = in_process(capsys)
    assert code == 2 and err.startswith("usage: gradsum ")


# -- one-line usage errors ----------------------------------------------------------------------
BAD_OPTIONS = {
    "lr negative": (["--lr", "-1"], "argument --lr: must be a finite number above 0, got -1"),
    "lr nan": (["--lr", "nan"], "argument --lr: must be a finite number above 0, got nan"),
    "lr inf": (["--lr", "inf"], "argument --lr: must be a finite number above 0, got inf"),
    "lr text": (["--lr", "fast"], "argument --lr: expected a number, got 'fast'"),
    "steps 0": (["--steps", "0"], "argument --steps: must be at least 1, got 0"),
    "steps negative": (["--steps", "-5"], "argument --steps: must be at least 1, got -5"),
    "micro-batches 0": (["--micro-batches", "0"],
                        "argument --micro-batches: must be at least 1, got 0"),
    "batch-size above the data": (
        ["--batch-size", "5000"],
        "argument --batch-size: 5000 is more than the 1437 training samples"),
    "more micro-batches than samples": (
        ["--micro-batches", "9", "--batch-size", "4"],
        "argument --micro-batches: 9 micro-batches cannot split a batch of --batch-size 4"),
}


def assert_usage_error(code: int, out: str, err: str, message: str, *, exact: bool = True,
                       ) -> None:
    """argparse's form: the demo's usage, then one line ``gradsum demo: error: <message>``
    (``exact=False``: a line that starts so); exit status 2; nothing on stdout."""
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("usage: gradsum demo ")
    if exact:
        assert lines[-1] == f"gradsum demo: error: {message}"
    else:
        assert lines[-1].startswith(f"gradsum demo: error: {message}"), err
    assert all(ln.startswith(("usage:", " ")) for ln in lines[:-1]), err  # usage, then 1 line
    assert "Traceback" not in err


@pytest.mark.parametrize("case", list(BAD_OPTIONS))
def test_bad_option_values(capsys, tmp_path, case):
    args, message = BAD_OPTIONS[case]
    assert_usage_error(*in_process(capsys, "demo", *args, "--out", str(tmp_path / "o")),
                       message)
    assert not (tmp_path / "o").exists()  # checked before anything is written


def test_out_is_an_existing_file(capsys, tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("keep me")
    assert_usage_error(*in_process(capsys, "demo", "--steps", "1", "--out", str(target)),
                       f"argument --out: {str(target)!r} exists and is not a folder")
    assert target.read_text() == "keep me"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux's /proc")
def test_out_cannot_be_created(capsys):
    assert_usage_error(*in_process(capsys, "demo", "--steps", "1", "--out", "/proc/x"),
                       "argument --out: cannot create the folder '/proc/x': ", exact=False)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may write into any folder")
def test_out_is_not_writable(capsys, tmp_path):
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, out, err = in_process(capsys, "demo", "--steps", "1", "--out", str(folder))
    finally:
        folder.chmod(0o755)
    assert_usage_error(code, out, err, f"argument --out: cannot write into {str(folder)!r}: ",
                       exact=False)


def test_usage_error_from_the_console_script(tmp_path):
    """The same through the installed script: stderr is the usage and one error line."""
    proc = run_cli("demo", "--lr", "nan", cwd=tmp_path)
    assert_usage_error(proc.returncode, proc.stdout, proc.stderr,
                       "argument --lr: must be a finite number above 0, got nan")
    assert not (tmp_path / "gradsum-demo-out").exists()


# -- pipes and signals --------------------------------------------------------------------------
def test_closed_pipe_ends_quietly(tmp_path):
    """``gradsum demo | head -3``: no BrokenPipeError traceback; the status a shell reports for
    a tool stopped by a closed pipe (128 + SIGPIPE = 141), and the run stops early."""
    env = {**os.environ, "GRADSUM_STRICT": "", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen([*gradsum_command(), "demo", "--steps", "100000", "--no-plots"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env=env)
    assert proc.stdout is not None and proc.stderr is not None
    head = [proc.stdout.readline() for _ in range(3)]  # what head -3 reads, then it exits
    proc.stdout.close()
    try:
        err = proc.stderr.read()
        code = proc.wait(timeout=60)  # 100,000 steps would take minutes: it stopped early
    finally:
        proc.kill()
    assert head[0].startswith(b"gradsum demo: ")
    assert code == EXIT_BROKEN_PIPE == 141
    assert err == b""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_exits_130_with_one_line(tmp_path):
    env = {**os.environ, "GRADSUM_STRICT": "", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen(
        [*gradsum_command(), "demo", "--steps", "100000", "--no-plots"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a test runner in the background may ignore SIGINT, and Python keeps an ignored
        # SIGINT ignored: give the demo the disposition of a terminal's foreground job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    try:
        while True:  # until training has started (or the demo ended early: then fail)
            line = proc.stdout.readline()
            assert line, f"the demo ended before training: {proc.stderr.read()}"
            if "[1] micro-batched" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED == 130
    assert err == "gradsum demo: interrupted\n"
