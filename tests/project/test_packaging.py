"""Packaging: the version written once, the SPDX license and its file, the metadata a package
index shows, and a wheel that carries the license, the type marker and the bundled data."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import gradsum

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on 3.10 needs tomli")

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def test_version_is_written_once():
    assert "version" not in PROJECT and PROJECT["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "gradsum.__version__"}
    init = (ROOT / "src" / "gradsum" / "__init__.py").read_text()
    assert len(re.findall(r"^__version__ = ", init, re.M)) == 1
    assert re.fullmatch(r"\d+\.\d+\.\d+", gradsum.__version__)


def test_installed_metadata_and_command_agree_with_the_package():
    try:
        installed = importlib.metadata.version("gradsum")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("gradsum is imported from the source tree, not installed")
    assert installed == gradsum.__version__
    proc = subprocess.run([sys.executable, "-m", "gradsum", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout == f"gradsum {gradsum.__version__}\n"


def test_license_is_an_spdx_expression_with_its_file():
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the gradsum authors\n")
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text
    # setuptools >= 77 reads the SPDX form, and refuses License :: classifiers beside it
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]


def test_index_metadata():
    urls = PROJECT["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(u.startswith("https://github.com/gradsum/gradsum") for u in urls.values())
    assert PROJECT["keywords"] and "autograd" in PROJECT["keywords"]
    classifiers = set(PROJECT["classifiers"])
    assert "Typing :: Typed" in classifiers and (ROOT / "src" / "gradsum" / "py.typed").exists()
    assert any(c.startswith("Development Status ::") for c in classifiers)
    # the Python versions named are the ones requires-python admits, 3.10 up to the newest tested
    floor = PROJECT["requires-python"]
    assert floor == ">=3.10"
    named = sorted(int(c.rsplit(".", 1)[1]) for c in classifiers
                   if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert named == [10, 11, 12, 13]


def test_dependencies():
    assert PROJECT["dependencies"] == ["numpy>=2.0"]  # NEP 50's promotion is torch's rule
    extras = PROJECT["optional-dependencies"]
    assert not [r for r in extras["test"] if r.startswith("mkl")]  # ~1 GB: its own extra
    assert [r.split(";")[0] for r in extras["mkl"]] == ["mkl>=2024"]


def test_wheel_contents(tmp_path):
    """``pip wheel .`` with the setuptools installed here (no download): the license, the type
    marker, the digits and their license, and the metadata's version and license."""
    setuptools = pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} is older than the 77 pyproject needs")
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if pip.returncode != 0:
        pytest.skip("pip is not installed")
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources
    src = tmp_path / "src-copy"
    shutil.copytree(ROOT / "src", src / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(src)], capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("gradsum-*.whl")
    assert wheel.name == f"gradsum-{gradsum.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    info = f"gradsum-{gradsum.__version__}.dist-info"
    assert {f"{info}/licenses/LICENSE", "gradsum/py.typed", "gradsum/data/digits.npz",
            "gradsum/data/LICENSE-digits.txt", "gradsum/__main__.py"} <= names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/"))]
    meta = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert f"\nVersion: {gradsum.__version__}\n" in meta
    assert "\nLicense-Expression: MIT\n" in meta and "\nRequires-Dist: numpy>=2.0\n" in meta
    entry = zipfile.ZipFile(wheel).read(f"{info}/entry_points.txt").decode()
    assert "gradsum = gradsum.__main__:main" in entry
