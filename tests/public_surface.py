"""gradsum's public surface, as data: what a ported program can name.

``surface()`` collects, for the tree it runs in:

- ``modules``: for every public module (torch's namespaces and gradsum's own documented ones),
  the names ``dir()`` shows that do not start with ``_``, except imports from outside gradsum
  (typing's ``Any``, NumPy's functions) and modules that are not public (they are where a file
  lives, which moves) and backward-node classes (``MulBackward0``: torch keeps them out of its
  namespaces; their names are surface through ``grad_fn``, below);
- ``classes``: for every public class those modules export, the names ``dir()`` shows that do
  not start with a single ``_`` (dunders are kept: ``Tensor.__add__`` is surface; what a class
  has only from a base outside gradsum is recorded as that base, since Python's own classes
  differ between its versions), recorded
  once per class; ``aliases``: the other public names of the same class object;
- ``ops``: the names of the op registry :data:`gradsum.ops.OPS`;
- ``grad_fn``: for every entry of the op table (``tests/ops/opinfo``), by the op's name, the
  ``grad_fn.name()`` of each output of each sample, in float64 with grad on.

``python tests/public_surface.py --record`` writes it to ``tests/data/public_surface.json``;
``test_public_surface.py`` compares the tree with that record, so a move of code between files
can't drop, add or rename anything public by accident. Private names (``_array``, helpers
imported into a module) are free to change.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import re
import sys
import types
import zlib
from pathlib import Path
from typing import Any

import numpy as np

_NODE_NAME = re.compile(r"Backward\d*$")
RECORD = Path(__file__).parent / "data" / "public_surface.json"

#: the public modules: torch's namespaces that gradsum mirrors, and gradsum's own
PUBLIC_MODULES = (
    "gradsum", "gradsum.accelerator", "gradsum.amp", "gradsum.amp.autocast_mode",
    "gradsum.amp.grad_scaler", "gradsum.autograd", "gradsum.autograd.anomaly_mode",
    "gradsum.autograd.function", "gradsum.autograd.functional", "gradsum.autograd.grad_mode",
    "gradsum.autograd.gradcheck", "gradsum.autograd.graph", "gradsum.autograd.variable",
    "gradsum.backends", "gradsum.backends.cuda", "gradsum.backends.cudnn",
    "gradsum.backends.mha", "gradsum.backends.mkl", "gradsum.backends.mkldnn",
    "gradsum.backends.mps", "gradsum.backends.openmp", "gradsum.backends.opt_einsum",
    "gradsum.compiler", "gradsum.cpu", "gradsum.cpu.amp", "gradsum.cuda", "gradsum.cuda.amp",
    "gradsum.cuda.nvtx", "gradsum.distributed", "gradsum.distributed.run", "gradsum.func",
    "gradsum.linalg", "gradsum.mps", "gradsum.nn", "gradsum.nn.attention",
    "gradsum.nn.functional", "gradsum.nn.init", "gradsum.nn.modules",
    "gradsum.nn.modules.activation", "gradsum.nn.modules.adaptive",
    "gradsum.nn.modules.batchnorm", "gradsum.nn.modules.channelshuffle",
    "gradsum.nn.modules.container", "gradsum.nn.modules.conv", "gradsum.nn.modules.distance",
    "gradsum.nn.modules.dropout", "gradsum.nn.modules.flatten", "gradsum.nn.modules.fold",
    "gradsum.nn.modules.instancenorm", "gradsum.nn.modules.lazy", "gradsum.nn.modules.linear",
    "gradsum.nn.modules.loss", "gradsum.nn.modules.module", "gradsum.nn.modules.normalization",
    "gradsum.nn.modules.padding", "gradsum.nn.modules.pixelshuffle",
    "gradsum.nn.modules.pooling", "gradsum.nn.modules.rnn", "gradsum.nn.modules.sparse",
    "gradsum.nn.modules.transformer", "gradsum.nn.modules.upsampling",
    "gradsum.nn.modules.utils", "gradsum.nn.parallel", "gradsum.nn.parallel.distributed",
    "gradsum.nn.parameter", "gradsum.nn.utils", "gradsum.nn.utils.clip_grad",
    "gradsum.nn.utils.convert_parameters", "gradsum.nn.utils.fusion", "gradsum.nn.utils.init",
    "gradsum.nn.utils.parametrizations", "gradsum.nn.utils.parametrize", "gradsum.nn.utils.rnn",
    "gradsum.nn.utils.spectral_norm", "gradsum.nn.utils.stateless",
    "gradsum.nn.utils.weight_norm", "gradsum.onnx", "gradsum.ops", "gradsum.optim",
    "gradsum.optim.adadelta", "gradsum.optim.adafactor", "gradsum.optim.adagrad",
    "gradsum.optim.adam", "gradsum.optim.adamax", "gradsum.optim.adamw", "gradsum.optim.asgd",
    "gradsum.optim.lbfgs", "gradsum.optim.lr_scheduler", "gradsum.optim.muon",
    "gradsum.optim.nadam", "gradsum.optim.optimizer", "gradsum.optim.radam",
    "gradsum.optim.rmsprop", "gradsum.optim.rprop", "gradsum.optim.sgd",
    "gradsum.optim.swa_utils", "gradsum.porting", "gradsum.random", "gradsum.serialization",
    "gradsum.special", "gradsum.testing", "gradsum.toolkit", "gradsum.toolkit.dot",
    "gradsum.toolkit.ledger", "gradsum.toolkit.microbatch", "gradsum.toolkit.sanitizer",
    "gradsum.toolkit.transactional", "gradsum.utils", "gradsum.utils.checkpoint",
    "gradsum.utils.data", "gradsum.utils.data.dataloader", "gradsum.utils.data.dataset",
    "gradsum.utils.data.distributed", "gradsum.utils.data.sampler", "gradsum.utils.hooks",
    "gradsum.version", "gradsum.xpu",
)


def _module_names(mod: types.ModuleType) -> list[str]:
    out = []
    for name in dir(mod):
        if name.startswith("_"):
            continue
        value = getattr(mod, name)
        owner = getattr(value, "__module__", None)
        if isinstance(owner, str) and not owner.startswith("gradsum"):
            continue  # (typing's Any, NumPy's functions: imports the module happens to use)
        if inspect.isclass(value) and _NODE_NAME.search(name):
            continue  # (a backward node's class: its name is surface as grad_fn.name())
        if isinstance(value, types.ModuleType) and (
                f"{mod.__name__}.{name}" not in PUBLIC_MODULES
                and value.__name__ not in PUBLIC_MODULES):
            continue
        out.append(name)
    return sorted(out)


#: what Python itself puts in a class's namespace, differently by version: copyreg's cache
#: (set the first time an instance is pickled), 3.13's compiler facts and namedtuple's
#: ``__replace__``, 3.14's annotations
_SET_BY_PYTHON = frozenset({"__slotnames__", "__firstlineno__", "__static_attributes__",
                            "__replace__", "__annotate__", "__annotate_func__",
                            "__annotations_cache__"})


def _defined_by_python(cls: type, name: str) -> bool:
    """Whether ``cls`` has ``name`` only from a base or metaclass outside gradsum
    (``object.__init__``, ``BaseException.add_note``, ``enum.IntEnum.__format__``): Python's,
    which differs between its versions."""
    for klass in (*cls.__mro__, *type(cls).__mro__):  # (then the metaclass: enum's EnumType)
        if name in vars(klass):
            return not klass.__module__.startswith("gradsum")
    return False


def _class_names(cls: type) -> list[str]:
    if isinstance(cls, enum.EnumMeta):  # (an enum is its members and its own methods; what
        # dir() shows of enum's machinery and of the value's type varies with Python)
        own = {n for k in cls.__mro__ if k.__module__.startswith("gradsum") for n in vars(k)}
        return sorted({*cls.__members__, *(n for n in own if not n.startswith("_"))})
    names = [n for n in dir(cls) if (not n.startswith("_") or n.startswith("__"))
             and n not in _SET_BY_PYTHON and not _defined_by_python(cls, n)]
    # (what it has from Python is recorded as the bases it has it from)
    names += [f"(base {k.__qualname__})" for k in cls.__mro__[1:]
              if k.__module__ == "builtins" and k is not object]
    return sorted(names)


def _grad_fn_names() -> dict[str, list[list[list[str | None]]]]:
    sys.path.insert(0, str(Path(__file__).parent))
    import gradsum
    from ops import opinfo as opdb  # (the op table; imports torch only if it is there)
    out: dict[str, list[list[list[str | None]]]] = {}
    for info in opdb.OPINFOS:
        rng = np.random.default_rng(zlib.crc32(info.name.encode()))
        per_sample: list[list[str | None]] = []
        for sample in info.samples(rng):
            args, kwargs = opdb.convert(sample, "g", "float64", info.differentiable)
            try:
                outs = opdb.flat_outputs(info.op(*args, **kwargs))
            except Exception as exc:  # (a sample that raises records the exception's type)
                per_sample.append([f"raises {type(exc).__name__}"])
                continue
            per_sample.append([
                o.grad_fn.name() if isinstance(o, gradsum.Tensor) and o.grad_fn is not None
                else None for o in outs])
        out.setdefault(info.name, []).append(per_sample)
    # (an op with several entries: their order is not surface)
    return {name: sorted(entries, key=json.dumps) for name, entries in out.items()}


def _compressed(classes: dict[str, list[str]], bases: dict[str, str | None]
                ) -> dict[str, dict[str, Any]]:
    """Each class as its differences from its nearest recorded gradsum base (most classes are
    a Module or an Optimizer plus a few names), so the record stays small and readable."""
    out: dict[str, dict[str, Any]] = {}
    for key, names in classes.items():
        base = bases[key]
        if base is None:
            out[key] = {"base": None, "plus": names, "minus": []}
        else:
            have, inherited = set(names), set(classes[base])
            out[key] = {"base": base, "plus": sorted(have - inherited),
                        "minus": sorted(inherited - have)}
    return out


def expanded(record: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The full attribute lists back from :func:`_compressed`'s form."""
    out: dict[str, list[str]] = {}

    def names(key: str) -> list[str]:
        if key not in out:
            entry = record[key]
            base = set(names(entry["base"])) if entry["base"] else set()
            out[key] = sorted((base | set(entry["plus"])) - set(entry["minus"]))
        return out[key]

    for key in record:
        names(key)
    return out


def surface() -> dict[str, Any]:
    from gradsum.ops import OPS
    modules: dict[str, list[str]] = {}
    classes: dict[str, list[str]] = {}
    owner: dict[type, str] = {}
    aliases: dict[str, str] = {}
    for mname in PUBLIC_MODULES:  # (all first: importing a submodule adds it to its parent)
        importlib.import_module(mname)
    for mname in PUBLIC_MODULES:
        mod = sys.modules[mname]
        modules[mname] = _module_names(mod)
        for name in modules[mname]:
            value = getattr(mod, name)
            if inspect.isclass(value) and (value.__module__ or "").startswith("gradsum"):
                key = f"{mname}.{name}"
                if value in owner:  # (one class under a second public name)
                    aliases[key] = owner[value]
                else:
                    owner[value] = key
                    classes[key] = _class_names(value)
    bases: dict[str, str | None] = {}
    for cls, key in owner.items():
        base_keys = [owner[b] for b in cls.__mro__[1:] if b in owner]
        bases[key] = base_keys[0] if base_keys else None
    return {"modules": modules, "classes": _compressed(classes, bases), "aliases": aliases,
            "ops": sorted(OPS),
            "grad_fn": _grad_fn_names()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/public_surface.py --record")
    RECORD.write_text(json.dumps(surface(), indent=0, sort_keys=True) + "\n")
    print(f"wrote {RECORD}")
