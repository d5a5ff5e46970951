"""``import torch`` resolved to gradsum: :mod:`gradsum.porting` and ``gradsum run script.py``.

The alias maps every module path ``torch[.a.b]`` to ``gradsum[.a.b]`` with the same module object
under both names; a path gradsum lacks raises ModuleNotFoundError naming the gradsum module;
leaving the context puts back the ``torch`` modules that were there before (the real torch in
this process, when another test imported it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import gradsum
import gradsum.nn.functional
import gradsum.utils.data
from gradsum.porting import (
    TorchAliasFinder,
    install_torch_alias,
    is_torch_alias_installed,
    run_script,
    torch_alias,
    uninstall_torch_alias,
)
from mpi_helpers import needs_mpi


def _torch_entries() -> dict[str, types.ModuleType]:
    return {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}


@pytest.fixture(autouse=True)
def _alias_left_as_found():
    before = _torch_entries()
    yield
    assert not is_torch_alias_installed(), "a test left the alias installed"
    after = _torch_entries()  # (a test may import the real torch: entries may be added)
    assert all(after.get(k) is v for k, v in before.items()), "torch entries not restored"
    assert not [k for k, v in after.items() if v.__name__.startswith("gradsum")], after


# -- the alias in this process ------------------------------------------------------------------
def test_import_forms_resolve_to_the_gradsum_modules() -> None:
    with torch_alias() as lib:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim
        from torch.nn import Linear
        from torch.utils.data import DataLoader, TensorDataset
        assert sys.modules["torch.nn"] is gradsum.nn
        assert sys.modules["torch.utils.data"] is gradsum.utils.data
    assert lib is gradsum and torch is gradsum
    assert nn is gradsum.nn and torch.nn is gradsum.nn
    assert F is gradsum.nn.functional
    assert torch.optim is gradsum.optim
    assert DataLoader is gradsum.utils.data.DataLoader
    assert TensorDataset is gradsum.utils.data.TensorDataset
    assert Linear is gradsum.nn.Linear
    # the modules keep their own names: nothing was executed twice, nothing renamed
    assert nn.__name__ == "gradsum.nn" and nn.__spec__.name == "gradsum.nn"


#: module paths imported at the top of public training scripts (nanoGPT, pytorch/examples,
#: timm- and Lightning-style code), each a module in torch and in gradsum
SCRIPT_MODULES = [
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.parallel", "torch.nn.modules.linear", "torch.nn.modules.conv",
    "torch.nn.modules.loss", "torch.optim", "torch.optim.lr_scheduler", "torch.autograd",
    "torch.autograd.functional", "torch.utils", "torch.utils.data", "torch.utils.checkpoint",
    "torch.backends", "torch.backends.cudnn", "torch.cuda", "torch.amp", "torch.onnx",
    "torch.distributed", "torch.serialization", "torch.func", "torch.linalg", "torch.special",
    "torch.testing",
]


@pytest.mark.parametrize("path", SCRIPT_MODULES)
def test_script_imports_are_the_gradsum_modules_of_the_same_path(path: str) -> None:
    import importlib.util

    with torch_alias():
        aliased = importlib.import_module(path)
    own = importlib.import_module("gradsum" + path[len("torch"):])
    assert aliased is own and isinstance(own, types.ModuleType)
    if importlib.util.find_spec("torch") is not None:  # the same path is a module in torch
        assert isinstance(importlib.import_module(path), types.ModuleType)


def test_a_missing_path_names_the_gradsum_module() -> None:
    with torch_alias(), pytest.raises(ModuleNotFoundError) as info:
        import torch.no_such_module
    assert info.value.name == "torch.no_such_module"
    msg = str(info.value)
    assert msg.startswith("No module named 'gradsum.no_such_module'")  # Python's phrase first
    assert "'torch.no_such_module'" in msg and "run the script under PyTorch" in msg
    with torch_alias(), pytest.raises(ModuleNotFoundError, match=r"'gradsum\.nn\.no_such_file'"):
        import torch.nn.no_such_file  # noqa: F401
    # from-import of a missing name: Python's ImportError, as under torch
    with torch_alias(), pytest.raises(ImportError, match="cannot import name 'no_such_file'"):
        from torch.nn import no_such_file  # noqa: F401


def test_a_failing_import_inside_gradsum_is_not_masked(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    # a gradsum module whose own import fails: the real error comes through, not "no module"
    (tmp_path / "_porting_broken.py").write_text("import a_module_that_is_not_there\n")
    monkeypatch.setattr(gradsum, "__path__", [*gradsum.__path__, str(tmp_path)])
    try:
        with torch_alias(), pytest.raises(ModuleNotFoundError) as info:
            import torch._porting_broken  # noqa: F401
        assert info.value.name == "a_module_that_is_not_there"
    finally:
        sys.modules.pop("gradsum._porting_broken", None)


def test_a_module_attribute_of_a_gradsum_package_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = types.ModuleType("gradsum._porting_namespace")
    monkeypatch.setattr(gradsum, "_porting_namespace", namespace, raising=False)
    with torch_alias():
        import torch._porting_namespace as ns
    assert ns is namespace
    # an attribute that is not a module is not importable, as in torch
    monkeypatch.setattr(gradsum, "_porting_function", len, raising=False)
    with torch_alias(), pytest.raises(ModuleNotFoundError, match=r"gradsum\._porting_function"):
        import torch._porting_function  # noqa: F401


def test_finder_ignores_other_names() -> None:
    finder = TorchAliasFinder()
    assert finder.find_spec("numpy", None) is None
    assert finder.find_spec("torchvision", None) is None  # a prefix of the name, not a path
    assert finder.find_spec("torch.nn", None).name == "torch.nn"


def test_install_uninstall_and_nesting() -> None:
    assert not is_torch_alias_installed()
    install_torch_alias()
    try:
        install_torch_alias()  # twice: a no-op
        assert sys.meta_path.count(sys.meta_path[0]) == 1
        with torch_alias():
            import torch
        assert is_torch_alias_installed()  # the block leaves an alias installed before it
        assert torch is gradsum
    finally:
        uninstall_torch_alias()
    uninstall_torch_alias()  # twice: a no-op
    assert not is_torch_alias_installed()


def test_the_real_torch_comes_back() -> None:
    torch = pytest.importorskip("torch", reason="the real torch is what is put back")
    assert sys.modules["torch"] is torch
    with torch_alias():
        import torch as aliased
        assert sys.modules["torch"] is gradsum and aliased is gradsum
    assert sys.modules["torch"] is torch
    import torch as again
    assert again is torch and again.ones(2).sum().item() == 2.0


def test_run_script_is_python_script_py(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    (tmp_path / "helper_mod.py").write_text("VALUE = 7\n")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        import torch.nn as nn
        import helper_mod
        print(__name__, torch.__name__, nn.__name__, helper_mod.VALUE)
        print(sys.argv[1:], __file__ == sys.argv[0], sys.path[0])
        sys.path.insert(0, "/a/path/the/script/adds")
    """))
    argv, path0 = sys.argv[:], sys.path[0]
    run_script(str(script), ["--lr", "0.1"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "__main__ gradsum gradsum.nn 7"
    assert out[1] == f"['--lr', '0.1'] True {tmp_path.resolve()}"
    assert sys.argv == argv and sys.path[0] == path0
    assert "/a/path/the/script/adds" not in sys.path
    sys.modules.pop("helper_mod", None)


# -- the command line ---------------------------------------------------------------------------
def _gradsum(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradsum", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_gradsum_run_a_torch_script(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader, TensorDataset
        assert torch.nn is nn is sys.modules["gradsum.nn"]
        x = torch.tensor([[1.0, -2.0]], requires_grad=True)
        F.relu(nn.Flatten()(x)).sum().backward()
        print(type(x).__module__.split(".")[0], x.grad.tolist(), sys.argv[1:])
        print(__file__, sys.path[0])
        sys.exit(int(sys.argv[-1]))
    """))
    res = _gradsum("run", str(script), "--flag", "3", cwd=tmp_path.parent)
    assert res.returncode == 3, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "gradsum [[1.0, 0.0]] ['--flag', '3']"
    assert lines[1] == f"{script} {tmp_path}"


def test_gradsum_run_reports_the_scripts_exception(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("import torch\nimport torch.no_such_module\n")
    res = _gradsum("run", str(script))
    assert res.returncode == 1
    lines = res.stderr.splitlines()
    assert lines[-1].startswith("ModuleNotFoundError: No module named 'gradsum.no_such_module'")
    # the traceback starts in the script, as python's does (then the alias's frames)
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f'  File "{script}", line 2, in <module>', res.stderr
    assert "runpy" not in res.stderr


def test_gradsum_run_a_module(tmp_path: Path) -> None:
    (tmp_path / "portmod.py").write_text("import torch, sys\nprint(torch.__name__, sys.argv[1:])\n")
    res = _gradsum("run", "-m", "portmod", "x", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "gradsum ['x']\n"


def test_gradsum_run_a_missing_script_is_pythons_error(tmp_path: Path) -> None:
    res = _gradsum("run", str(tmp_path / "nope.py"))
    python = subprocess.run([sys.executable, str(tmp_path / "nope.py")], capture_output=True,
                            text=True, timeout=60)
    assert res.returncode == python.returncode == 2
    assert res.stderr.split(": ", 1)[1] == python.stderr.split(": ", 1)[1]


@needs_mpi
def test_gradsum_run_n_ranks_resolve_torch_to_gradsum(tmp_path: Path) -> None:
    script = tmp_path / "ddp.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        import torch.distributed as dist
        dist.init_process_group("gloo")  # torch's CPU backend: over MPI in gradsum
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        sys.stdout.write(f"{torch.__name__} {dist.get_backend()} {dist.get_rank()} "
                         f"{dist.get_world_size()} {t.item()}\\n")
        dist.destroy_process_group()
    """))
    res = _gradsum("run", "-n", "2", "--timeout", "60", str(script))
    assert res.returncode == 0, res.stderr
    assert sorted(res.stdout.splitlines()) == ["[0] gradsum gloo 0 2 3.0",
                                               "[1] gradsum gloo 1 2 3.0"]  # rank prefixes


def test_porting_main_without_a_script_is_a_usage_error() -> None:
    res = subprocess.run([sys.executable, "-m", "gradsum.porting"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and res.stderr.startswith("usage: python -m gradsum.porting")
