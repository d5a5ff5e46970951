"""The README tells the truth: its snippets run and print what it shows, its quick start is
the one CI runs, its links stay inside the repository, and its sample of ``gradsum demo | cat``
is what the demo prints now, line by line (masking only the seconds, and the one number that
is rounding noise).

When the demo's output changes (its wording, or its numbers after a change of arithmetic),
``test_demo_sample_output`` fails with a diff; rewrite the README's sample from a fresh run with

    python tests/docs/test_readme.py --update

and review the diff (``git diff README.md``) before committing it.
"""

from __future__ import annotations

import difflib
import doctest
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

#: the sample block: a fence, the command, the output, a fence
SAMPLE = re.compile(r"(```text\n\$ gradsum demo \| cat\n)(.*?)(```\n)", re.S)
#: what differs from run to run: the seconds of the results table and of the last line; and
#: from machine to machine: step 1's difference between the accumulated and the full-batch
#: gradient, rounding noise whose last digits depend on the BLAS kernel (OpenBLAS picks one per
#: CPU: 1.12e-08 on SkylakeX's, 7.45e-09 on Haswell's, 1.49e-08 on Sandybridge's), checked
#: against a bound instead
MASKS = [
    (re.compile(r" +\d+\.\d+ │$"), " <seconds> │"),
    (re.compile(r"^(all checks passed in )\d+(\.\d+)? s$"), r"\1<seconds> s"),
    (re.compile(r"(: max abs difference )\d\.\d\de-\d\d$"), r"\1<rounding noise>"),
]
NOISE = re.compile(r": max abs difference (\S+)$", re.M)
#: what the README's install gives the demo (the `demo` extra)
DEMO_PACKAGES = ("rich", "matplotlib")
#: environment variables that would change how rich lays out or colours piped output
LAYOUT_VARS = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES",
               "GRADSUM_STRICT")


def test_readme_snippets():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} README example(s) failed"
    assert result.attempted > 10


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_quick_start_is_what_ci_runs():
    """The clone, the venv and the two commands, each verbatim in a code block; .ci/run runs
    the venv step and both commands verbatim."""
    quick = _section("Quick start")
    blocks = re.findall(r"```bash\n(.*?)```", quick, re.S)
    commands = [ln for b in blocks for ln in b.splitlines() if ln and not ln.startswith("#")]
    assert commands == [
        "git clone https://github.com/gradsum/gradsum gradsum && cd gradsum",
        "python3.11 -m venv .venv && . .venv/bin/activate",
        'pip install -e ".[demo]" && gradsum demo',
        'pip install -e ".[test]" && python -m pytest',
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    for command in commands[2:]:
        assert f"\n{command}\n" in ci, f".ci/run does not run {command!r} verbatim"
    assert "python3.11 -m venv .venv" in ci
    # (the size and time of the suite are said, and the size is of the order it has)
    said = re.search(r"about ([\d,]+) tests, [\d-]+ minutes on 2 cores", quick)
    assert said and int(said.group(1).replace(",", "")) >= 20_000, said


def test_links_stay_in_the_repository():
    text = README.read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not t.startswith(("http://", "https://", "mailto:"))]
    assert local, "the README links no file"
    for target in local:
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT), f"{target} is outside the repository"
        assert path.exists(), f"{target} does not exist"
    for doc in ("docs/semantics.md", "docs/checkpoints.md", "docs/ARCHITECTURE.md",
                "docs/benchmarks.md"):
        assert doc in local, f"the README does not link {doc}"


def test_no_machine_paths():
    text = README.read_text()
    for prefix in ("/tmp/", "/work/", "/home/", "/Users/", "/root/", "site-packages"):
        assert prefix not in text, prefix


def test_the_mkl_extra_says_its_size():
    mkl = README.read_text().split("### Faster matrix products")[1].split("\n## ")[0]
    assert "1 GB" in mkl


# -- the sample output of `gradsum demo | cat` ---------------------------------------------------
def _gradsum_command() -> list[str]:
    script = Path(sys.executable).with_name("gradsum")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gradsum"]


def demo_output() -> str:
    """``gradsum demo | cat`` as the README's quick start runs it: in a fresh folder, piped,
    with the `demo` extra's packages and without Graphviz's ``dot`` program (which no extra
    installs; folders holding one are left off PATH)."""
    env = {k: v for k, v in os.environ.items() if k not in LAYOUT_VARS}
    env["PYTHONIOENCODING"] = "utf-8"  # the sample's block characters, whatever the locale
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if d and shutil.which("dot", path=d) is None)
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([*_gradsum_command(), "demo"], capture_output=True, text=True,
                              encoding="utf-8", cwd=cwd, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _masked(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        line = line.rstrip()  # rich pads a table's title line to the table's width
        for pattern, repl in MASKS:
            line = pattern.sub(repl, line)
        out.append(line)
    return out


def test_demo_sample_output():
    missing = [m for m in DEMO_PACKAGES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the sample is the demo extra's output; missing: {', '.join(missing)}")
    match = SAMPLE.search(README.read_text())
    assert match, "the README has no sample block of `gradsum demo | cat`"
    expected = _masked(match.group(2).splitlines())
    output = demo_output()
    actual = _masked(output.splitlines())
    for sample in (match.group(2), output):
        assert 0 <= float(NOISE.findall(sample)[0]) < 1e-6
    if actual != expected:
        diff = "\n".join(difflib.unified_diff(expected, actual, "README.md", "gradsum demo",
                                              lineterm=""))
        pytest.fail("the README's sample differs from what `gradsum demo | cat` prints; "
                    "regenerate it with `python tests/docs/test_readme.py --update`:\n" + diff)


def update_readme() -> bool:
    """Rewrite the README's sample block from a fresh run; returns whether it changed."""
    text = README.read_text()
    match = SAMPLE.search(text)
    if match is None:
        raise SystemExit("README.md has no sample block of `gradsum demo | cat`")
    fresh = "".join(line.rstrip() + "\n" for line in demo_output().splitlines())
    if fresh == match.group(2):
        return False
    README.write_text(text[:match.start(2)] + fresh + text[match.end(2):])
    return True


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/docs/test_readme.py --update  (rewrites README.md's "
                         "sample of `gradsum demo | cat` from a fresh run)")
    print("README.md: sample rewritten" if update_readme() else "README.md: sample unchanged")
