"""torch's import paths resolve in gradsum to the same objects: ``torch.nn.modules.<file>.<X>``
for every class (and public function) gradsum.nn has, read from torch's own files, plus the
other module paths real scripts import from (``torch.optim.lr_scheduler._LRScheduler``,
``torch.utils.data.dataloader.DataLoader``, ``torch.autograd.function.Function``, ...).
``torch.nn.modules.utils``'s helpers are checked against torch's on the same inputs.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import OrderedDict
from typing import Any

import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

#: torch files gradsum has nothing from (a cross-entropy fused with a linear layer; autograd
#: Functions behind modules) and classes there that gradsum lacks, with the reason
SKIPPED_FILES = {
    "_functions": "torch's internal autograd Functions (SyncBatchNorm's, CrossMapLRN2d's)",
    "linear_cross_entropy": "LinearCrossEntropyLoss (torch 2.13's chunked fused loss) is absent",
    "linear_cross_entropy_options": "LinearCrossEntropyLoss's options: absent with it",
}
ABSENT = {
    "CrossMapLRN2d": "Lua-torch's cross-map LRN, not in gradsum (LocalResponseNorm is)",
    "FractionalMaxPool2d": "fractional max pooling is not in gradsum",
    "FractionalMaxPool3d": "fractional max pooling is not in gradsum",
    "LinearCrossEntropyLoss": "torch 2.13's chunked linear + cross-entropy is not in gradsum",
    # torch's private bases gradsum's classes do not have (each family shares another base)
    "_ConvTransposeMixin": "a deprecated mixin torch keeps for old subclasses",
    "_ReflectionPadNd": "gradsum's reflection pads share _PadNd",
    "_ReplicationPadNd": "gradsum's replication pads share _PadNd",
    "_AdaptiveMaxPoolNd": "gradsum's adaptive pools have no shared base",
    "_AdaptiveAvgPoolNd": "gradsum's adaptive pools have no shared base",
    "_LazyProtocol": "a typing Protocol for type checkers only",
    "_WrappedHook": "torch's weakref hook wrapper; gradsum's hooks are kept differently",
    "register_module_backward_hook": "the deprecated non-full global backward hook",
    "apply_permutation": "a deprecated RNN helper (index_select along a dimension)",
    "register_module_buffer_registration_hook": "global registration hooks are not in gradsum",
    "register_module_module_registration_hook": "global registration hooks are not in gradsum",
    "register_module_parameter_registration_hook": "global registration hooks are not in "
                                                   "gradsum",
}


def _torch_files() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(torch.nn.modules.__path__)
                  if m.name not in SKIPPED_FILES)


def _torch_names(file: str) -> list[str]:
    """What a script may import from torch.nn.modules.<file>: its ``__all__``, the classes
    defined there (private bases too) and its public functions."""
    mod = importlib.import_module(f"torch.nn.modules.{file}")
    names = list(getattr(mod, "__all__", []))
    for n, v in vars(mod).items():
        if getattr(v, "__module__", None) != mod.__name__ or n in names:
            continue
        if inspect.isclass(v) or (inspect.isfunction(v) and not n.startswith("_")):
            names.append(n)
    return names


def _gradsum_nn_object(name: str) -> Any:
    """gradsum's object of that name: gradsum.nn's, or one of its submodules' (private
    bases such as _BatchNorm), or None."""
    if hasattr(gradsum.nn, name):
        return getattr(gradsum.nn, name)
    for pkg in (gradsum.nn.modules, gradsum.nn):  # (the files defining gradsum.nn)
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.ispkg:
                continue
            value = vars(importlib.import_module(f"{pkg.__name__}.{info.name}")).get(name)
            if value is not None and getattr(value, "__module__", "").startswith("gradsum.nn."):
                return value
    return None


@pytest.mark.parametrize("file", _torch_files())
def test_every_torch_module_file_exists(file):
    mod = importlib.import_module(f"gradsum.nn.modules.{file}")
    assert getattr(gradsum.nn.modules, file) is mod


@pytest.mark.parametrize("file", _torch_files())
def test_each_name_gradsum_has_resolves_to_the_same_object(file):
    if file == "utils":
        pytest.skip("torch.nn.modules.utils holds helpers (checked below)")
    mod = importlib.import_module(f"gradsum.nn.modules.{file}")
    tmod = importlib.import_module(f"torch.nn.modules.{file}")
    checked = 0
    for name in _torch_names(file):
        if name in ABSENT:
            assert _gradsum_nn_object(name) is None, f"{name} exists now: drop it from ABSENT"
            assert not hasattr(mod, name)
            continue
        want = _gradsum_nn_object(name)
        assert want is not None, f"torch.nn.modules.{file}.{name}: gradsum lacks it and " \
                                 "ABSENT does not say why"
        assert getattr(mod, name) is want, name
        assert inspect.isclass(want) == inspect.isclass(getattr(tmod, name)), name
        checked += 1
    assert checked
    # the same public __all__ (restricted to what gradsum has)
    if hasattr(tmod, "__all__"):
        assert list(mod.__all__) == [n for n in tmod.__all__ if n not in ABSENT]


def test_the_package_re_exports_torch_s_list():
    want = {n for n in torch.nn.modules.__all__ if n not in ABSENT
            and n != "LinearCrossEntropyOptions"}
    assert set(gradsum.nn.modules.__all__) == want
    for n in want:
        assert getattr(gradsum.nn.modules, n) is getattr(gradsum.nn, n)


def test_private_bases_real_scripts_subclass():
    from gradsum.nn.modules.batchnorm import _BatchNorm, _NormBase
    from gradsum.nn.modules.conv import _ConvNd
    from gradsum.nn.modules.dropout import _DropoutNd
    from gradsum.nn.modules.instancenorm import _InstanceNorm
    from gradsum.nn.modules.loss import _Loss, _WeightedLoss
    from gradsum.nn.modules.module import Module
    from gradsum.nn.modules.pooling import _MaxPoolNd

    for m, bases in [(gradsum, (_BatchNorm, _NormBase, _ConvNd, _Loss, _WeightedLoss,
                                _DropoutNd, _InstanceNorm, _MaxPoolNd, Module)),
                     (torch, (torch.nn.modules.batchnorm._BatchNorm,
                              torch.nn.modules.batchnorm._NormBase,
                              torch.nn.modules.conv._ConvNd, torch.nn.modules.loss._Loss,
                              torch.nn.modules.loss._WeightedLoss,
                              torch.nn.modules.dropout._DropoutNd,
                              torch.nn.modules.instancenorm._InstanceNorm,
                              torch.nn.modules.pooling._MaxPoolNd,
                              torch.nn.modules.module.Module))]:
        got = [isinstance(m.nn.BatchNorm2d(3), bases[0]), isinstance(m.nn.BatchNorm1d(3),
                                                                      bases[1]),
               isinstance(m.nn.Conv2d(1, 1, 1), bases[2]),
               isinstance(m.nn.ConvTranspose1d(1, 1, 1), bases[2]),
               isinstance(m.nn.MSELoss(), bases[3]), isinstance(m.nn.MSELoss(), bases[4]),
               isinstance(m.nn.CrossEntropyLoss(), bases[4]), isinstance(m.nn.Dropout(), bases[5]),
               isinstance(m.nn.InstanceNorm2d(2), bases[6]), isinstance(m.nn.InstanceNorm2d(2),
                                                                        bases[1]),
               isinstance(m.nn.MaxPool2d(2), bases[7]), isinstance(m.nn.Linear(1, 1), bases[8])]
        if m is gradsum:
            g_got = got
        else:
            assert g_got == got


def test_a_user_subclass_of_a_private_base_works_as_in_torch():
    def f(m, base):
        class Frozen(base):  # a batchnorm that always uses its running statistics
            def forward(self, x):
                return m.nn.functional.batch_norm(x, self.running_mean, self.running_var,
                                                  self.weight, self.bias, False, 0.0, self.eps)

        m.manual_seed(0)
        bn = Frozen(3)
        return bn(m.ones(2, 3) * 2).tolist(), sorted(bn.state_dict())

    import torch.nn.modules.batchnorm as tb

    from gradsum.nn.modules.batchnorm import _BatchNorm
    assert f(gradsum, _BatchNorm) == f(torch, tb._BatchNorm)


def test_whole_file_imports_as_scripts_write_them():
    import gradsum.nn.modules.conv as conv
    from gradsum.nn.modules.linear import Linear
    from gradsum.nn.modules.module import Module

    assert conv.Conv2d is gradsum.nn.Conv2d and Linear is gradsum.nn.Linear
    assert gradsum.nn.modules.module.Module is Module is gradsum.nn.Module
    assert gradsum.nn.modules.rnn.LSTM is gradsum.nn.LSTM
    assert gradsum.nn.modules.sparse.Embedding is gradsum.nn.Embedding


def test_module_is_the_torch_file_that_defines_the_class():
    # each class is defined in torch's file (torch.nn.modules.linear.Linear), so inspect.getsource,
    # doctest discovery and by-reference pickles find it under torch's path
    assert gradsum.nn.Linear.__module__ == "gradsum.nn.modules.linear"
    assert "class Linear" in inspect.getsource(gradsum.nn.modules.linear.Linear)


# -- other paths scripts import from ----------------------------------------------------------
PATHS = [
    "nn.modules.Linear", "nn.modules.module.Module", "nn.modules.batchnorm._BatchNorm",
    "nn.modules.conv._ConvNd", "nn.modules.loss._Loss", "nn.modules.loss._WeightedLoss",
    "nn.modules.utils._pair", "nn.modules.utils.consume_prefix_in_state_dict_if_present",
    "nn.parameter.Parameter", "nn.parameter.UninitializedParameter", "nn.parameter.Buffer",
    "nn.utils.rnn.pad_sequence", "nn.utils.rnn.pack_padded_sequence",
    "nn.utils.rnn.pad_packed_sequence", "nn.utils.rnn.PackedSequence",
    "nn.utils.clip_grad.clip_grad_norm_", "nn.utils.clip_grad_norm_",
    "nn.init.xavier_uniform_", "nn.init.kaiming_normal_", "nn.init.calculate_gain",
    "nn.init._calculate_fan_in_and_fan_out",
    "optim.lr_scheduler._LRScheduler", "optim.lr_scheduler.LRScheduler",
    "optim.lr_scheduler.ReduceLROnPlateau", "optim.optimizer.Optimizer",
    "optim.sgd.SGD", "optim.adam.Adam", "optim.adamw.AdamW", "optim.swa_utils.AveragedModel",
    "utils.data.dataloader.DataLoader", "utils.data.dataloader.default_collate",
    "utils.data.dataset.Dataset", "utils.data.dataset.TensorDataset",
    "utils.data.dataset.Subset", "utils.data.dataset.random_split",
    "utils.data.dataset.IterableDataset", "utils.data.dataset.ConcatDataset",
    "utils.data.sampler.Sampler", "utils.data.sampler.RandomSampler",
    "utils.data.sampler.SequentialSampler", "utils.data.sampler.BatchSampler",
    "utils.data.distributed.DistributedSampler",
    "utils.data._utils.collate.default_collate", "utils.data._utils.collate.default_convert",
    "autograd.function.Function", "autograd.function.once_differentiable",
    "autograd.Variable", "autograd.variable.Variable", "autograd.Function",
    "autograd.grad", "autograd.functional.hessian",
]


def _resolve(root: Any, dotted: str) -> Any:
    """``root.a.b.c``, importing submodules on the way as ``import torch.a.b`` would."""
    cur = root
    for part in dotted.split("."):
        if hasattr(cur, part):
            cur = getattr(cur, part)
        elif inspect.ismodule(cur):
            cur = importlib.import_module(f"{cur.__name__}.{part}")
        else:
            raise AttributeError(f"{cur!r} has no attribute {part!r}")
    return cur


@pytest.mark.parametrize("path", PATHS)
def test_path_exists_with_torch_s_kind(path):
    t, g = _resolve(torch, path), _resolve(gradsum, path)
    assert inspect.isclass(t) == inspect.isclass(g)
    assert callable(t) == callable(g)
    short = path.rsplit(".", 1)[-1]
    flat = {"nn": gradsum.nn, "optim": gradsum.optim, "utils": gradsum.utils.data,
            "autograd": gradsum.autograd}[path.split(".")[0]]
    if hasattr(flat, short) and path.split(".")[0] != "autograd":
        assert g is getattr(flat, short), path  # one object under every path


# -- torch.nn.modules.utils's helpers ------------------------------------------------------------
@pytest.mark.parametrize("value", [3, (1, 2), [4], "ab", (1, 2, 3), 2.5, range(2)])
@pytest.mark.parametrize("helper", ["_single", "_pair", "_triple", "_quadruple"])
def test_ntuple_helpers(helper, value):
    import torch.nn.modules.utils as tu

    from gradsum.nn.modules import utils as gu
    assert getattr(gu, helper)(value) == getattr(tu, helper)(value)
    assert getattr(gu, helper).__name__ == getattr(tu, helper).__name__
    assert gu._ntuple(5, "five")(value) == tu._ntuple(5, "five")(value)


@pytest.mark.parametrize("args", [((1, 2), 2), ((1, 2, 3), 1), ((), 3)])
def test_reverse_repeat_tuple(args):
    import torch.nn.modules.utils as tu

    from gradsum.nn.modules import utils as gu
    assert gu._reverse_repeat_tuple(*args) == tu._reverse_repeat_tuple(*args)


@pytest.mark.parametrize("out_size,defaults", [(5, [2, 3]), ([None, 4], [7, 8, 9]),
                                               ([2, None], [1, 6, 5]), ([None, None], [3, 4])])
def test_list_with_default(out_size, defaults):
    import torch.nn.modules.utils as tu

    from gradsum.nn.modules import utils as gu

    def run(fn):
        try:
            return fn(out_size, defaults)
        except Exception as e:
            return type(e), str(e)

    assert run(gu._list_with_default) == run(tu._list_with_default)


def test_consume_prefix_in_state_dict_if_present():
    import torch.nn.modules.utils as tu

    from gradsum.nn.modules import utils as gu

    def run(lib, consume):
        model = lib.nn.DataParallel(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)))
        sd = model.state_dict()
        consume(sd, "module.")
        meta = sorted(sd._metadata)
        bare = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        result = bare.load_state_dict(sd)
        other = OrderedDict([("a.w", 1), ("module.b", 2), ("modulec", 3)])
        consume(other, "module.")
        return list(sd), meta, (list(result.missing_keys), list(result.unexpected_keys)), \
            list(other.items())

    assert run(gradsum, gu.consume_prefix_in_state_dict_if_present) == \
        run(torch, tu.consume_prefix_in_state_dict_if_present)


_SCRIPT = '''
import torch
import torch.nn as nn
import torch.nn.modules.conv as conv
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import _pair
from torch.optim.lr_scheduler import _LRScheduler
from torch.utils.data._utils.collate import default_collate


class FrozenBN(_BatchNorm):  # a subclass of a private base, as detection codebases write
    def forward(self, x):
        return nn.functional.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                        self.bias, False, 0.0, self.eps)


torch.manual_seed(0)
net = nn.Sequential(conv.Conv2d(1, 2, _pair(3)), FrozenBN(2))
x = torch.FloatTensor(2, 1, 5, 5).fill_(0.5)
y = net(x.type(torch.FloatTensor))
print(isinstance(y, torch.FloatTensor), y.type(), tuple(y.shape))
net.type(torch.DoubleTensor)
print(isinstance(net[0].weight, torch.DoubleTensor), net[1].running_var.type())
eps = x.new(x.size()).fill_(1.0)
print(tuple(eps.shape), issubclass(_LRScheduler, torch.optim.lr_scheduler.LRScheduler))
print(default_collate([(1, 2.0), (3, 4.0)])[0].tolist())
'''


def test_a_script_using_these_paths_runs_unchanged_under_both(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "paths_script.py"
    script.write_text(_SCRIPT)
    runs = [subprocess.run([sys.executable, *prefix, str(script)], capture_output=True,
                           text=True, timeout=120)
            for prefix in ([], ["-m", "gradsum.porting"])]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert runs[1].stdout == runs[0].stdout
    assert runs[1].stdout.startswith("True torch.FloatTensor (2, 2, 3, 3)")
