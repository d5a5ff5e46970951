"""Run PyTorch code unchanged: ``import torch`` resolved to gradsum.

:func:`install_torch_alias` puts a finder at the front of :data:`sys.meta_path` that maps every
module path ``torch[.a.b]`` to ``gradsum[.a.b]`` and registers the *same module object* under both
names, so ``torch.nn is gradsum.nn`` and ``from torch.utils.data import DataLoader`` gives
gradsum's class. A path gradsum does not have raises :class:`ModuleNotFoundError` naming the
gradsum module that is missing. :func:`torch_alias` does the same for the body of a ``with``
block and puts back whatever ``torch`` modules were imported before (the real torch, if any).
:func:`run_script` runs a file as ``__main__`` with the alias installed, as ``python script.py``
does (``sys.argv``, ``__file__``, ``sys.path[0]`` the script's directory); the command line
``gradsum run script.py [args...]`` (or ``python -m gradsum.porting script.py [args...]``) calls it.

Example:
    >>> import gradsum
    >>> with torch_alias():
    ...     import torch
    ...     import torch.nn as nn
    ...     from torch.utils.data import TensorDataset
    >>> torch is gradsum, nn is gradsum.nn
    (True, True)
    >>> TensorDataset is gradsum.utils.data.TensorDataset
    True
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import types
from collections.abc import Iterator, Sequence

__all__ = [
    "TorchAliasFinder",
    "install_torch_alias",
    "is_torch_alias_installed",
    "main",
    "run_script",
    "torch_alias",
    "uninstall_torch_alias",
]

_ALIAS = "torch"
_TARGET = "gradsum"


def _target_name(fullname: str) -> str:
    """``torch.nn.functional`` -> ``gradsum.nn.functional``."""
    return _TARGET + fullname[len(_ALIAS):]


def _is_aliased(fullname: str) -> bool:
    return fullname == _ALIAS or fullname.startswith(_ALIAS + ".")


def _resolve(fullname: str) -> types.ModuleType:
    """The gradsum module that ``fullname`` (a ``torch`` path) stands for.

    A gradsum package attribute that is a module (a namespace assigned in ``__init__``) counts
    as much as a submodule file, as it does for attribute access after ``import torch``.
    """
    target = _target_name(fullname)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name != target:  # the gradsum module exists but an import inside it failed
            raise
        parent_name, _, child = target.rpartition(".")
        parent = sys.modules.get(parent_name)
        found = getattr(parent, child, None) if parent is not None else None
        if isinstance(found, types.ModuleType):
            return found
        raise ModuleNotFoundError(
            f"No module named '{target}' (imported as '{fullname}' through gradsum's torch "
            "alias): gradsum has no module at this path; import what the script needs from an "
            "existing gradsum module, or run the script under PyTorch",
            name=fullname,
        ) from None


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system the gradsum module itself (nothing is executed again)."""

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module
        self._own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        # The import system keeps the module's own __name__, __loader__ and __file__ (it sets
        # only missing ones) but always assigns __spec__; exec_module puts gradsum's back.
        return self._module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run (the gradsum module ran when first imported): restore its spec, so
        that the module stays gradsum's under both names (reload, pickling, spawn)."""
        module.__spec__ = self._own_spec


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """A :data:`sys.meta_path` finder mapping ``torch[.x.y]`` to ``gradsum[.x.y]``.

    Example:
        >>> finder = TorchAliasFinder()
        >>> finder.find_spec("numpy", None) is None
        True
        >>> finder.find_spec("torch.nn", None).name
        'torch.nn'
    """

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for the gradsum module behind ``fullname``; ``None`` for other names."""
        if not _is_aliased(fullname):
            return None
        module = _resolve(fullname)
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=hasattr(module, "__path__"))
        return spec


#: the one finder instance :func:`install_torch_alias` puts on ``sys.meta_path``
_FINDER = TorchAliasFinder()
#: ``torch`` modules that were in sys.modules before the alias took their names
_displaced: list[dict[str, types.ModuleType]] = []


def is_torch_alias_installed() -> bool:
    """Whether ``import torch`` resolves to gradsum now.

    Example:
        >>> is_torch_alias_installed()
        False
    """
    return _FINDER in sys.meta_path


def install_torch_alias() -> None:
    """Make ``import torch`` (and every ``torch.x.y`` path) import gradsum's module.

    ``torch`` modules already imported (the real PyTorch, say) are taken out of
    :data:`sys.modules` and put back by :func:`uninstall_torch_alias`; objects already bound to
    them elsewhere keep pointing at them. Installing twice is a no-op.

    Example:
        >>> import gradsum
        >>> install_torch_alias()
        >>> import torch.nn.functional as F
        >>> F is gradsum.nn.functional
        True
        >>> uninstall_torch_alias()
    """
    if is_torch_alias_installed():
        return
    _displaced.append({name: mod for name, mod in sys.modules.items() if _is_aliased(name)})
    for name in _displaced[-1]:
        del sys.modules[name]
    sys.meta_path.insert(0, _FINDER)
    importlib.invalidate_caches()


def uninstall_torch_alias() -> None:
    """Undo :func:`install_torch_alias`: ``torch`` names leave :data:`sys.modules` (the real
    torch modules displaced by the alias come back). Uninstalling when not installed is a no-op.

    Example:
        >>> uninstall_torch_alias()
        >>> is_torch_alias_installed()
        False
    """
    if not is_torch_alias_installed():
        return
    sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if _is_aliased(n)]:
        del sys.modules[name]
    if _displaced:
        sys.modules.update(_displaced.pop())
    importlib.invalidate_caches()


@contextlib.contextmanager
def torch_alias() -> Iterator[types.ModuleType]:
    """``with torch_alias():`` the torch alias for the body; yields the ``gradsum`` module.

    If the alias was already installed, it stays installed after the block.

    Example:
        >>> with torch_alias() as torch:
        ...     x = torch.ones(2)
        >>> type(x).__module__.split(".")[0]
        'gradsum'
    """
    was = is_torch_alias_installed()
    install_torch_alias()
    try:
        yield importlib.import_module(_TARGET)
    finally:
        if not was:
            uninstall_torch_alias()


def run_script(path: str, args: Sequence[str] = (), *, module: bool = False) -> None:
    """Run ``path`` as ``__main__`` with ``import torch`` resolved to gradsum.

    As ``python path args...`` does: ``sys.argv`` is ``[path, *args]``, the script's
    ``__file__`` is its absolute path, and ``sys.path[0]`` is its directory (so its sibling
    modules import); both are restored afterwards. With ``module=True``, ``path`` is a module
    name run as ``python -m`` runs it. Exceptions and :class:`SystemExit` propagate, as from
    the script itself.

    Example:
        >>> import pathlib, tempfile
        >>> d = tempfile.mkdtemp()
        >>> p = pathlib.Path(d, "t.py")
        >>> _ = p.write_text("import sys, torch\\nprint(torch.__name__, sys.argv[1:])\\n")
        >>> run_script(str(p), ["--steps", "3"])
        gradsum ['--steps', '3']
    """
    import gradsum  # noqa: F401  (the alias needs the package importable; fail early if not)

    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *args]
    if not module:
        # as python does: __file__ absolute, sys.argv[0] as given, sys.path[0] the directory
        # of the script with symbolic links resolved
        script_dir = os.path.dirname(os.path.realpath(path))
        if sys.path:
            sys.path[0] = script_dir
        else:
            sys.path.append(script_dir)
    try:
        with torch_alias():
            if module:
                runpy.run_module(path, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(os.path.abspath(path), run_name="__main__")
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def _script_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without its leading frames of this module and of runpy: a traceback that starts
    in the script, as ``python script.py`` shows it."""
    here = os.path.realpath(__file__)
    start = tb
    while start is not None:
        name = start.tb_frame.f_code.co_filename
        if not (name.startswith("<frozen runpy") or os.path.basename(name) == "runpy.py"
                or os.path.realpath(name) == here):
            return start
        start = start.tb_next
    return tb


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gradsum.porting [-m] script.py [args...]``: run a torch script on gradsum.

    Returns the exit status. A script's ``sys.exit(n)`` propagates as :class:`SystemExit`; an
    uncaught exception goes to :data:`sys.excepthook` (an MPI job's hook aborts the job), with
    the traceback starting in the script, and the status is 1, as under ``python script.py``.
    """
    return _main_outcome(argv)[0]


def _main_outcome(argv: Sequence[str] | None = None) -> tuple[int, Exception | None]:
    """:func:`main`'s status, and the uncaught exception of the script if one ended it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    module = bool(argv) and argv[0] == "-m"
    if module:
        argv = argv[1:]
    if not argv:
        print("usage: python -m gradsum.porting [-m] script.py [args...]", file=sys.stderr)
        return 2, None
    if not module and not os.path.isfile(argv[0]):  # python's message and status
        print(f"gradsum run: can't open file {os.path.abspath(argv[0])!r}: [Errno 2] No such "
              "file or directory", file=sys.stderr)
        return 2, None
    try:
        run_script(argv[0], argv[1:], module=module)
    except Exception as e:  # (as the interpreter reports an uncaught exception)
        tb = _script_frames(e.__traceback__)
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1, e
    return 0, None


if __name__ == "__main__":
    # Run through the imported module (not this __main__ copy), so that the finder installed
    # is gradsum.porting's own and is_torch_alias_installed() sees it.
    from gradsum.porting import main as _main

    sys.exit(_main())
