"""Devices and accelerators side by side with torch 2.13's CPU-only build (the installed torch
is that build, so its answers are the reference): ``device`` objects (parsing, equality,
hash, repr, pickling, the default-device context), every ``device=`` a script passes, the
``cuda``/``accelerator``/``mps``/``backends`` queries and the errors of GPU-only calls (type
and torch's first phrase), thread and precision settings, ``compile`` (eager results and
``_orig_mod.`` keys) and ``onnx``.

Each case is one program run with ``torch`` and with ``gradsum`` (passed in as ``m``); what
each returns, or the exception type and first phrase it raises, must agree.
"""

from __future__ import annotations

import copy
import inspect
import math
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import gradsum

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

if torch.cuda.is_available():  # (the reference must be a machine without a GPU)
    pytest.skip("these cases compare with torch on a machine without a GPU",
                allow_module_level=True)


def _plain(v: Any) -> Any:
    """A comparable form of a result: devices by repr, tensors by values and device."""
    if isinstance(v, (torch.device, gradsum.device)):
        return ("device", repr(v))
    if isinstance(v, (torch.Tensor, gradsum.Tensor)):
        return ("tensor", v.detach().tolist(), repr(v.device))
    if isinstance(v, (torch.nn.Module, gradsum.nn.Module)):
        return ("module", type(v).__name__)
    if isinstance(v, (tuple, list)):
        return type(v)(_plain(x) for x in v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _phrase(msg: str) -> str:
    """torch's first phrase: up to the first ': ', '. ' or newline (module names mapped)."""
    msg = msg.replace("torch.", "gradsum.")
    cut = len(msg)
    for sep in (": ", ". ", "\n"):
        i = msg.find(sep)
        if i != -1:
            cut = min(cut, i)
    return msg[:cut].rstrip(".")


def _run(fn: Callable[[Any], Any], lib: Any) -> tuple[Any, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", _plain(fn(lib)))
        except Exception as e:  # (type and message are what is compared)
            return ("raised", type(e), str(e))


def same(fn: Callable[[Any], Any], phrase: bool = True) -> tuple[Any, ...]:
    """Run ``fn`` with both; same result, or gradsum raises an instance of torch's exception
    type whose message starts with torch's first phrase (unless ``phrase`` is False: torch's
    argument parser words its TypeErrors in several ways)."""
    t = _run(fn, torch)
    g = _run(fn, gradsum)
    if t[0] == "ok":
        assert g == t, (g, t)
        return g
    assert g[0] == "raised", (g, t)
    torch_type = t[1]
    # (torch raises its own subclasses of builtin types: compare by the builtin base)
    base = next(c for c in torch_type.__mro__ if c.__module__ == "builtins")
    assert isinstance(g[1], type) and issubclass(g[1], base), (g, t)
    assert g[1].__name__ == torch_type.__name__ or torch_type.__module__.startswith("torch"), \
        (g, t)
    if phrase:
        first = _phrase(t[2])
        assert g[2].replace("torch.", "gradsum.").startswith(first), (g[2], first)
    return g


# -- device objects ----------------------------------------------------------------------------
DEVICE_ARGS = [
    ("cpu",), ("cpu", 0), ("cpu:0",), ("cuda",), ("cuda:1",), ("cuda", 3), ("cuda", None),
    ("mps",), ("meta",), ("xpu:3",), ("privateuseone",), ("hip:2",),
    ("gpu",), ("CPU",), (" cpu",), ("cpu:",), ("cuda:x",), ("cuda:-1",), ("cuda:01",),
    ("cuda:1 ",), ("cuda:1:2",), ("cuda:+1",), ("",), ("a1",), ("_x",), ("cu da",),
    ("cuda_x",), ("gpu:0",), ("Cuda:0",), ("cuda:99999999999",), ("cuda:127",),
    ("cuda:128",), ("cuda:300",), ("cuda:255",),
    ("cuda", -1), ("cuda:0", 1), ("cuda:1", None), ("cuda", "1"), ("cuda", True),
    (0,), (5,), (-1,), (True,), (1.0,), (None,), (), (b"cpu",),
]


@pytest.mark.parametrize("args", DEVICE_ARGS, ids=repr)
def test_device_construction(args: tuple[Any, ...]) -> None:
    def prog(m: Any) -> Any:
        d = m.device(*args)
        return repr(d), str(d), d.type, d.index, hash(d)

    same(prog)


@pytest.mark.parametrize("kwargs", [
    {"type": "cuda", "index": 0}, {"type": "cpu"}, {"type": "cuda", "index": None},
    {"index": 0}, {"x": 1}, {"device": "cpu"}, {"type": 1},
], ids=repr)
def test_device_keywords(kwargs: dict[str, Any]) -> None:
    same(lambda m: repr(m.device(**kwargs)))


def test_device_of_a_device_and_of_numpy_ints() -> None:
    import numpy as np

    same(lambda m: repr(m.device(m.device("cuda:2"))))
    same(lambda m: repr(m.device("cuda", np.int64(1))))
    same(lambda m: repr(m.device(m.device("cpu"), 0)))


@pytest.mark.parametrize("a,b", [
    ("cpu", "cpu"), ("cpu", "cpu:0"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0"),
    ("cuda:1", "cuda:2"), ("cpu", "meta"),
])
def test_device_equality_and_hash(a: str, b: str) -> None:
    same(lambda m: (m.device(a) == m.device(b), m.device(a) != m.device(b),
                    hash(m.device(a)) == hash(m.device(b))))


def test_device_never_equals_a_string() -> None:
    """torch 2.13: ``device("cpu") == "cpu"`` is False, both ways; ``!=`` is True."""
    same(lambda m: (m.device("cpu") == "cpu", "cpu" == m.device("cpu"),  # noqa: SIM300
                    m.device("cpu") != "cpu", m.device("cpu") == 1,
                    m.device("cpu") == None))  # noqa: E711
    same(lambda m: m.zeros(1).device == "cpu")
    same(lambda m: {m.device("cpu"): 1}.get(m.device("cpu")))


def test_device_ordering_refused() -> None:
    same(lambda m: m.device("cpu") < m.device("cpu"))
    same(lambda m: m.device("cpu") < 1)


def test_device_is_immutable_and_final() -> None:
    same(lambda m: setattr(m.device("cpu"), "type", "cuda"))
    same(lambda m: setattr(m.device("cpu"), "index", 1))
    same(lambda m: type("Sub", (m.device,), {}))


def test_device_pickle_copy_format() -> None:
    for s in ("cpu", "cuda:1", "cpu:0"):
        same(lambda m, s=s: repr(pickle.loads(pickle.dumps(m.device(s)))))
        same(lambda m, s=s: m.device(s).__reduce__()[1])
        same(lambda m, s=s: (repr(copy.copy(m.device(s))), repr(copy.deepcopy(m.device(s))),
                             copy.copy(m.device(s)) == m.device(s)))
        same(lambda m, s=s: (f"{m.device(s)}", format(m.device(s)), bool(m.device(s))))
    same(lambda m: (m.device.__name__, m.device.__qualname__,
                    m.device.__module__.replace("gradsum", "torch")))


def test_device_in_annotations_evaluated_at_import() -> None:
    """``def f(d: torch.device)`` in a script without postponed annotations evaluates the
    name when the function is defined: it must be a class."""
    namespace: dict[str, Any] = {"torch": gradsum}
    code = compile("def f(d: torch.device) -> torch.device:\n    return d\n", "<script>",
                   "exec", dont_inherit=True)  # (not this file's postponed annotations)
    exec(code, namespace)
    assert namespace["f"].__annotations__["d"] is gradsum.device
    assert isinstance(gradsum.zeros(1).device, gradsum.device)


def test_tensor_device_and_flags() -> None:
    same(lambda m: (m.ones(2).device, m.ones(2).device.type, m.ones(2).device.index))
    same(lambda m: tuple(getattr(m.ones(1), n) for n in (
        "is_cuda", "is_xpu", "is_mps", "is_meta", "is_cpu", "is_ipu", "is_xla", "is_vulkan",
        "is_mtia", "is_maia")))
    same(lambda m: (m.ones(1).get_device(), m.ones(1).is_pinned()))
    same(lambda m: m.ones(2).cpu().tolist())
    same(lambda m: (lambda x: x.cpu() is x)(m.ones(2)))


# -- every device= a script passes -------------------------------------------------------------
DEVICES = ["cpu", "cpu:0", "cpu:1", "cuda", "cuda:1", "mps", "xpu", "hip", "xla", "vulkan",
           "lazy", "ipu", "mtia", "hpu", "privateuseone", "gpu", 0, -1, 1.0]
FACTORIES: dict[str, Callable[[Any, Any], Any]] = {
    "zeros": lambda m, d: m.zeros(2, device=d),
    "ones": lambda m, d: m.ones(2, device=d),
    "empty": lambda m, d: m.empty(2, device=d).shape,
    "full": lambda m, d: m.full((2,), 3.0, device=d),
    "arange": lambda m, d: m.arange(3, device=d),
    "linspace": lambda m, d: m.linspace(0, 1, 3, device=d),
    "eye": lambda m, d: m.eye(2, device=d),
    "rand": lambda m, d: m.rand(2, device=d).shape,
    "randn": lambda m, d: m.randn(2, device=d).shape,
    "randint": lambda m, d: m.randint(0, 3, (2,), device=d).shape,
    "randperm": lambda m, d: m.randperm(3, device=d).shape,
    "tensor": lambda m, d: m.tensor([1.0], device=d),
    "as_tensor": lambda m, d: m.as_tensor([1.0], device=d),
    "zeros_like": lambda m, d: m.zeros_like(m.ones(2), device=d),
    "randn_like": lambda m, d: m.randn_like(m.ones(2), device=d).shape,
    "new_zeros": lambda m, d: m.ones(1).new_zeros(2, device=d),
    "new_tensor": lambda m, d: m.ones(1).new_tensor([2.0], device=d),
    "normal": lambda m, d: m.normal(0.0, 1.0, (2,), device=d).shape,
    "to": lambda m, d: m.ones(2).to(d),
    "to_kw": lambda m, d: m.ones(2).to(device=d),
    "Linear": lambda m, d: m.nn.Linear(2, 2, device=d).weight.device,
    "Module.to": lambda m, d: m.nn.Linear(2, 2).to(d),
}


@pytest.mark.parametrize("dev", DEVICES, ids=repr)
@pytest.mark.parametrize("name", list(FACTORIES))
def test_device_argument(name: str, dev: Any) -> None:
    same(lambda m: FACTORIES[name](m, dev), phrase=not isinstance(dev, float))


@pytest.mark.parametrize("dev", ["cpu", "cuda", "mps"])
def test_device_object_argument(dev: str) -> None:
    same(lambda m: m.zeros(2, device=m.device(dev)))
    same(lambda m: m.ones(2).to(m.device(dev)))
    same(lambda m: m.nn.Linear(1, 1).to(m.device(dev)))


def test_to_identity_and_copies() -> None:
    same(lambda m: (lambda x: (x.to("cpu") is x, x.to(m.device("cpu")) is x,
                               x.to("cpu:0") is x, x.to("cpu", copy=True) is x))(m.ones(2)))
    same(lambda m: m.ones(2).to("cpu", m.float64).dtype.__repr__().split(".")[-1])
    same(lambda m: m.ones(2).to("cuda", m.float64))


@pytest.mark.parametrize("call", [
    lambda m: m.ones(1).cuda(), lambda m: m.ones(1).cuda(1), lambda m: m.ones(1).cuda("cpu"),
    lambda m: m.ones(1).cuda("cuda:1"), lambda m: m.ones(1).cuda(non_blocking=True),
    lambda m: m.ones(1).xpu(), lambda m: m.ones(1).xpu("cpu"), lambda m: m.ones(1).xpu(0),
    lambda m: m.ones(1).pin_memory(), lambda m: m.ones(1).pin_memory("cpu"),
    lambda m: m.nn.Linear(2, 2).cuda(), lambda m: m.nn.Linear(2, 2).cuda(0),
    lambda m: m.nn.Linear(2, 2).cuda("cpu"), lambda m: m.nn.Sequential().cuda(),
    lambda m: m.nn.Sequential().cuda(0), lambda m: m.nn.Sequential().to("cuda"),
    lambda m: m.nn.Sequential().to("gpu"), lambda m: m.nn.Sequential().to(0),
    lambda m: m.nn.Linear(2, 2).xpu(), lambda m: m.nn.Linear(2, 2).ipu(),
    lambda m: m.nn.Linear(2, 2).mtia(), lambda m: m.nn.Linear(2, 2).cpu(),
    lambda m: m.nn.Linear(2, 2).to("cuda", m.float64),
    lambda m: m.nn.Parameter(m.ones(1)).cuda(),
    lambda m: m.nn.LSTM(2, 2, device="cuda"), lambda m: m.nn.Embedding(2, 2, device="cuda"),
    lambda m: m.nn.LayerNorm(2, device="cuda"), lambda m: m.nn.Conv2d(1, 1, 1, device="mps"),
    lambda m: hasattr(m.ones(1), "mps"), lambda m: hasattr(m.nn.Module, "mps"),
])
def test_gpu_transfers_fail_as_torch_cpu_build(call: Callable[[Any], Any]) -> None:
    same(call)


def test_default_device_context() -> None:
    def ctx(dev: str, body: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def prog(m: Any) -> Any:
            with m.device(dev):
                return body(m)
        return prog

    same(ctx("cpu", lambda m: m.zeros(1).device))
    same(ctx("cuda", lambda m: 1))
    same(ctx("cuda", lambda m: m.zeros(1)))
    same(ctx("cuda", lambda m: m.tensor([1.0])))
    same(ctx("cuda", lambda m: m.randn(2)))
    same(ctx("cuda", lambda m: m.nn.Linear(1, 1)))
    same(ctx("cuda", lambda m: (m.ones(1, device="cpu") + 1)))
    same(ctx("cuda", lambda m: m.zeros(1, device="cpu").device))
    same(ctx("cuda", lambda m: m.get_default_device()))
    same(ctx("cuda:1", lambda m: m.get_default_device()))
    same(ctx("cpu", lambda m: m.get_default_device()))
    same(lambda m: m.get_default_device())  # restored after each block
    same(lambda m: m.zeros(1))

    def nested(m: Any) -> Any:
        with m.device("cuda"), m.device("cpu"):
            inner = m.zeros(1).device
        return inner, m.get_default_device()

    same(nested)


def test_set_default_device() -> None:
    def prog(m: Any) -> Any:
        out = []
        for dev in ("cuda", None, "cpu", None):
            m.set_default_device(dev)
            try:
                out.append(repr(m.zeros(1).device))
            except AssertionError as e:
                out.append(str(e)[:36])
        return out

    same(prog)


# -- torch.cuda ----------------------------------------------------------------------------------
CUDA_CALLS = [
    "is_available()", "device_count()", "current_device()", "is_initialized()",
    "synchronize()", "synchronize('cuda')", "empty_cache()", "memory_allocated()",
    "memory_allocated(0)", "memory_allocated('cpu')", "max_memory_allocated()",
    "memory_reserved()", "max_memory_reserved()", "memory_stats()", "memory_cached()",
    "max_memory_cached()", "reset_peak_memory_stats()", "reset_max_memory_allocated()",
    "reset_accumulated_memory_stats()", "get_device_name()", "get_device_name(0)",
    "get_device_properties(0)", "get_device_capability()", "is_bf16_supported()",
    "is_bf16_supported(including_emulation=False)", "is_tf32_supported()", "seed()",
    "seed_all()", "initial_seed()", "init()", "get_rng_state()", "get_rng_state_all()",
    "set_rng_state_all([])", "ipc_collect()", "mem_get_info()", "current_stream()",
    "default_stream()", "get_arch_list()", "get_gencode_flags()", "get_sync_debug_mode()",
    "manual_seed(0)", "manual_seed_all(0)", "manual_seed(1.5)", "manual_seed('a')",
    "manual_seed(None)", "set_device(0)", "set_device('cuda:1')", "set_device(-1)",
    "set_device('cpu')", "set_device(None)", "set_device('cuda')", "set_device(1.5)",
    "device(0).__enter__()", "device(-1).__enter__()", "device(None).__enter__()",
    "device('cpu')", "device('cuda:1').idx", "device(0).__exit__(None, None, None)",
    "device_of(m.ones(1)).__enter__()", "Event()", "Event(enable_timing=True)", "Stream()",
    "stream(None).__enter__()", "FloatTensor()", "FloatTensor([1.0])", "LongTensor([1])",
    "isinstance(m.ones(1), m.cuda.FloatTensor)", "isinstance(m.ones(1), m.cuda.LongTensor)",
    "FloatTensor.__name__", "issubclass(m.cuda.OutOfMemoryError, RuntimeError)",
]


@pytest.mark.parametrize("call", CUDA_CALLS)
def test_cuda_namespace(call: str) -> None:
    same(lambda m: eval(f"m.cuda.{call}" if not call.startswith(("isinstance", "issubclass"))
                        else call, {"m": m}))


def test_cuda_set_rng_state_accepts_a_state() -> None:
    same(lambda m: m.cuda.set_rng_state(m.zeros(5, dtype=m.uint8)))


def test_cuda_device_selection_idiom() -> None:
    def prog(m: Any) -> Any:
        device = m.device("cuda" if m.cuda.is_available() else "cpu")
        m.manual_seed(0)
        m.cuda.manual_seed_all(0)
        model = m.nn.Linear(3, 1).to(device)
        x = m.ones(2, 3, device=device)
        return model(x).device, device.type == "cuda", str(device)

    same(prog)


def test_cuda_is_importable_as_a_package() -> None:
    import gradsum.cuda as gcuda

    assert gcuda is gradsum.cuda and gcuda.__name__ == "gradsum.cuda"
    assert gradsum.cuda.__path__  # a package: submodules (cuda.amp) live in it


# -- torch.accelerator, torch.mps ---------------------------------------------------------------
@pytest.mark.parametrize("call", [
    "is_available()", "current_accelerator()", "current_accelerator(check_available=True)",
    "device_count()", "current_device_index()", "current_device_idx()", "synchronize()",
    "current_stream()", "empty_cache()", "memory_allocated()", "get_memory_info()",
    "set_device_index(0)", "device_index(0).__enter__()", "device_index(None).__enter__()",
])
def test_accelerator_namespace(call: str) -> None:
    same(lambda m: eval(f"m.accelerator.{call}", {"m": m}))


@pytest.mark.parametrize("call", [
    "is_available()", "device_count()", "synchronize()", "empty_cache()",
    "current_allocated_memory()", "driver_allocated_memory()", "recommended_max_memory()",
    "get_rng_state()", "seed()", "manual_seed(0)",
])
def test_mps_namespace(call: str) -> None:
    same(lambda m: eval(f"m.mps.{call}", {"m": m}))


def test_accelerator_idiom() -> None:
    same(lambda m: repr(m.accelerator.current_accelerator() if m.accelerator.is_available()
                        else m.device("cpu")))


# -- torch.backends ------------------------------------------------------------------------------
def test_cudnn_switches_as_module_attributes() -> None:
    def prog(m: Any) -> Any:
        import importlib

        cudnn = importlib.import_module(f"{m.__name__}.backends.cudnn")
        assert cudnn is m.backends.cudnn
        before = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32,
                  cudnn.benchmark_limit, cudnn.is_available(), cudnn.version(),
                  cudnn.is_acceptable(m.ones(1)))
        cudnn.benchmark = True
        cudnn.deterministic = True
        after = (cudnn.benchmark, cudnn.deterministic)
        with cudnn.flags(enabled=False, benchmark=False):
            inside = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic)
        restored = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic)
        cudnn.benchmark = False
        cudnn.deterministic = False
        return before, after, inside, restored

    same(prog)


@pytest.mark.parametrize("name,value", [("benchmark", 1), ("deterministic", "yes"),
                                        ("allow_tf32", 1), ("enabled", None)])
def test_cudnn_refuses_non_bools(name: str, value: Any) -> None:
    same(lambda m: setattr(m.backends.cudnn, name, value))


def test_backends_cuda_matmul_and_precision() -> None:
    def prog(m: Any) -> Any:
        mm = m.backends.cuda.matmul
        out = [mm.allow_tf32, mm.allow_fp16_reduced_precision_reduction,
               mm.allow_bf16_reduced_precision_reduction, m.get_float32_matmul_precision()]
        mm.allow_tf32 = True
        out += [mm.allow_tf32, m.get_float32_matmul_precision()]
        mm.allow_tf32 = False
        out += [m.get_float32_matmul_precision()]
        for p in ("high", "medium", "ultra", "highest"):
            m.set_float32_matmul_precision(p)
            out += [m.get_float32_matmul_precision(), mm.allow_tf32]
        return out

    same(prog)
    same(lambda m: m.backends.cuda.matmul.foo)
    same(lambda m: setattr(m.backends.cuda.matmul, "foo", True))
    same(lambda m: setattr(m.backends.cuda.matmul, "allow_tf32", 1))


def test_precision_warning_for_an_unknown_value() -> None:
    for lib in (torch, gradsum):
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("ultra")
        assert lib.get_float32_matmul_precision() == "highest"


def test_backends_sdp_switches() -> None:
    def prog(m: Any) -> Any:
        b = m.backends.cuda
        out = [b.is_built(), b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled(),
               b.math_sdp_enabled(), b.cudnn_sdp_enabled()]
        b.enable_flash_sdp(False)
        out.append(b.flash_sdp_enabled())
        b.enable_flash_sdp(True)
        with b.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
            out.append((b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled()))
        out.append((b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled()))
        return out

    same(prog)


def test_backends_mps_and_others() -> None:
    same(lambda m: (m.backends.mps.is_available(), m.backends.mps.is_built()))
    same(lambda m: m.backends.mps.is_macos13_or_newer())
    same(lambda m: (m.backends.opt_einsum.is_available(), m.backends.opt_einsum.enabled,
                    m.backends.opt_einsum.strategy))
    same(lambda m: m.backends.mkldnn.enabled)
    # gradsum has neither oneDNN kernels nor OpenMP: it says so where torch's build says True
    assert torch.backends.mkldnn.is_available() and not gradsum.backends.mkldnn.is_available()
    assert torch.backends.openmp.is_available() and not gradsum.backends.openmp.is_available()
    assert isinstance(gradsum.backends.mkl.is_available(), bool)  # (the existing switch)


# -- threads, determinism ------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, -1, 1.5, True, "2"])
def test_set_num_threads_refuses(n: Any) -> None:
    same(lambda m: m.set_num_threads(n))


def test_set_num_threads_round_trip() -> None:
    def prog(m: Any) -> Any:
        before = m.get_num_threads()
        m.set_num_threads(1)
        one = m.get_num_threads()
        m.set_num_threads(before)
        return one, m.get_num_threads() == before

    same(prog)
    same(lambda m: isinstance(m.get_num_interop_threads(), int))


def test_set_num_threads_bounds_numpy_blas() -> None:
    """Where NumPy bundles OpenBLAS, the bound reaches it (read back from OpenBLAS)."""
    import ctypes
    import glob
    import os

    import numpy

    paths = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs",
                                   "*openblas*"))
    getter = None
    for p in paths:
        lib = ctypes.CDLL(p)
        for sym in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                    "openblas_get_num_threads64_", "openblas_get_num_threads"):
            getter = getter or getattr(lib, sym, None)
    if getter is None:
        pytest.skip("NumPy's BLAS here is not a bundled OpenBLAS")
    before = gradsum.get_num_threads()
    try:
        gradsum.set_num_threads(1)
        assert getter() == 1
    finally:
        gradsum.set_num_threads(before)
    assert gradsum.get_num_threads() == before


def test_deterministic_algorithms() -> None:
    def prog(m: Any) -> Any:
        out = [m.are_deterministic_algorithms_enabled(),
               m.is_deterministic_algorithms_warn_only_enabled(),
               m.get_deterministic_debug_mode()]
        m.use_deterministic_algorithms(True, warn_only=True)
        out += [m.are_deterministic_algorithms_enabled(),
                m.is_deterministic_algorithms_warn_only_enabled(),
                m.get_deterministic_debug_mode()]
        m.set_deterministic_debug_mode("error")
        out += [m.get_deterministic_debug_mode(), m.is_deterministic_algorithms_warn_only_enabled()]
        m.set_deterministic_debug_mode(0)
        out += [m.are_deterministic_algorithms_enabled(), m.get_deterministic_debug_mode()]
        return out

    same(prog)
    same(lambda m: m.use_deterministic_algorithms(1))
    same(lambda m: m.use_deterministic_algorithms("a"))
    same(lambda m: m.set_deterministic_debug_mode("x"))


# -- compile ---------------------------------------------------------------------------------
def _seeded_mlp(m: Any) -> Any:
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2))


def test_compile_module_wraps_and_prefixes_state_dict() -> None:
    def prog(m: Any) -> Any:
        model = _seeded_mlp(m)
        cm = m.compile(model, backend="eager")
        sd = cm.state_dict()
        return (type(cm).__name__, cm._orig_mod is model, list(sd),
                [n for n, _ in cm.named_parameters()], cm[0].weight is model[0].weight,
                cm.training, isinstance(cm, m.nn.Sequential))

    same(prog)


def test_compile_results_equal_the_eager_call() -> None:
    """gradsum's compiled module gives its own eager results, to the bit, with gradients."""
    model = _seeded_mlp(gradsum)
    cm = gradsum.compile(model)
    x = gradsum.randn(5, 3)
    out, ref = cm(x), model(x)
    assert out.tolist() == ref.tolist()
    out.sum().backward()
    g1 = model[0].weight.grad.clone()
    model.zero_grad()
    ref.sum().backward()
    assert model[0].weight.grad.tolist() == g1.tolist()


def test_compiled_state_dict_loads_only_into_a_compiled_model() -> None:
    def prog(m: Any) -> Any:
        cm = m.compile(_seeded_mlp(m))
        plain = _seeded_mlp(m)
        try:
            plain.load_state_dict(cm.state_dict())
            first = "loaded"
        except RuntimeError as e:
            first = str(e).split("\n")[0].replace("torch.", "gradsum.")
        cm.load_state_dict({"_orig_mod." + k: v for k, v in plain.state_dict().items()})
        return first, cm._orig_mod.state_dict().keys() == plain.state_dict().keys()

    same(prog)


def test_compile_functions_and_decorators() -> None:
    def prog(m: Any) -> Any:
        def f(x: Any) -> Any:
            """doubles"""
            return x * 2

        cf = m.compile(f, backend="eager")

        @m.compile  # (the one call that runs torch's inductor here: a short compile)
        def g(x: Any) -> Any:
            return x + 1

        @m.compile(backend="eager", fullgraph=True, dynamic=False)
        def h(x: Any) -> Any:
            return x - 1

        x = m.ones(2)
        return (cf(x), g(x), h(x), cf.__name__, cf.__doc__, m.compile(f, disable=True) is f,
                m.compiler.disable(f) is f, m.compiler.is_compiling(),
                m.compiler.is_dynamo_compiling())

    same(prog)


@pytest.mark.parametrize("kwargs", [
    {"mode": "max-autotune", "options": {"a": 1}}, {"mode": "bogus"}, {"backend": "nope"},
    {"backend": "eager", "mode": "reduce-overhead"}, {"backend": "aot_eager"},
], ids=repr)
def test_compile_argument_checks(kwargs: dict[str, Any]) -> None:
    same(lambda m: m.compile(lambda x: x, **kwargs)(m.ones(1)))


def test_compile_refuses_a_non_callable() -> None:
    same(lambda m: m.compile(5))


# -- onnx ------------------------------------------------------------------------------------
def test_onnx_is_importable_and_export_raises_an_import_error() -> None:
    import gradsum.onnx

    with pytest.raises(ImportError, match="captured graph"):
        gradsum.onnx.export(gradsum.nn.Linear(2, 1), (gradsum.ones(1, 2),), "unused.onnx")
    assert issubclass(gradsum.onnx.OnnxExporterError, ImportError)
    same(lambda m: m.onnx.is_in_onnx_export())


def test_names_are_exported() -> None:
    for name in ("device", "cuda", "accelerator", "mps", "backends", "compile", "compiler",
                 "onnx", "set_num_threads", "get_num_threads", "set_num_interop_threads",
                 "get_num_interop_threads", "set_float32_matmul_precision",
                 "get_float32_matmul_precision", "use_deterministic_algorithms",
                 "are_deterministic_algorithms_enabled", "get_default_device",
                 "set_default_device", "OutOfMemoryError"):
        assert (name in gradsum.__all__) == (name in torch.__all__), name  # (no submodules)
        g, t = getattr(gradsum, name), getattr(torch, name)
        kind = [inspect.ismodule, inspect.isclass, callable]
        assert [k(g) for k in kind] == [k(t) for k in kind], name


@pytest.mark.parametrize("dev", ["cpu", "cpu:0", "cuda", "xpu", 0, "gpu"], ids=repr)
def test_generator_device(dev: Any) -> None:
    same(lambda m: (m.Generator(device=dev).device, m.Generator().device))
    same(lambda m: m.Generator(device=m.device("cpu")).manual_seed(0).initial_seed())


def test_cuda_amp_is_an_attribute_without_an_import() -> None:
    same(lambda m: m.cuda.amp.__name__.replace("gradsum", "torch"))
    same(lambda m: m.cuda.no_such_name)


def test_nanogpt_style_setup_runs_unchanged() -> None:
    """The device lines of a nanoGPT-style training script, as written there."""
    import contextlib

    def prog(m: Any) -> Any:
        device = "cuda" if m.cuda.is_available() else "cpu"
        device_type = "cuda" if "cuda" in device else "cpu"
        m.manual_seed(1337)
        m.cuda.manual_seed_all(1337)
        m.backends.cuda.matmul.allow_tf32 = True
        m.backends.cudnn.allow_tf32 = True
        m.backends.cudnn.benchmark = True
        dtype = ("bfloat16" if m.cuda.is_available() and m.cuda.is_bf16_supported()
                 else "float32")
        ctx = contextlib.nullcontext() if device_type == "cpu" else None
        model = m.nn.Sequential(m.nn.Embedding(11, 8), m.nn.Linear(8, 11))
        model.to(device)
        model = m.compile(model, backend="eager")  # (torch's inductor would take seconds)
        x = m.randint(0, 11, (4, 6))
        if device_type == "cuda":
            x = x.pin_memory().to(device, non_blocking=True)
        else:
            x = x.to(device)
        with ctx:
            logits = model(x)
        loss = m.nn.functional.cross_entropy(logits.view(-1, 11), x.view(-1))
        loss.backward()
        m.backends.cuda.matmul.allow_tf32 = False
        m.backends.cudnn.benchmark = False
        return (dtype, logits.shape[-1], loss.device, next(iter(model.state_dict())),
                m.get_float32_matmul_precision())

    same(prog)


@pytest.mark.parametrize("dev", ["cpu", "cuda", "mps", None], ids=repr)
def test_module_to_empty(dev: Any) -> None:
    def prog(m: Any) -> Any:
        lin = m.nn.Linear(2, 2)
        w = lin.weight
        out = lin.to_empty(device=dev)
        return (out is lin, lin.weight is w, lin.weight.shape, lin.weight.requires_grad,
                type(lin.weight).__name__)

    same(prog)
    same(lambda m: m.nn.Sequential().to_empty(device="cuda"))
    same(lambda m: m.nn.Linear(1, 1).to_empty())


def test_module_to_empty_buffers_and_recurse() -> None:
    def prog(m: Any) -> Any:
        net = m.nn.Sequential(m.nn.BatchNorm1d(3))
        net.to_empty(device="cpu", recurse=False)
        kept = net[0].running_var.tolist()
        net.to_empty(device="cpu")
        return kept, net[0].running_var.shape, net[0].num_batches_tracked.dtype

    g = _run(prog, gradsum)
    t = _run(prog, torch)
    assert g[0] == t[0] == "ok"
    assert g[1][0] == t[1][0] == [1.0, 1.0, 1.0]  # (recurse=False: children untouched)
    assert list(g[1][1]) == list(t[1][1])
    assert str(g[1][2]).split(".")[-1] == str(t[1][2]).split(".")[-1]


@pytest.mark.parametrize("call", ["range_push('a')", "range_pop()", "mark('a')",
                                  "range_start('a')", "range_end(1)",
                                  "range('a {}', 1).__enter__()"])
def test_cuda_nvtx(call: str) -> None:
    same(lambda m: eval(f"m.cuda.nvtx.{call}", {"m": m}))


@pytest.mark.parametrize("call", [
    "set_per_process_memory_fraction(0.5)", "get_per_process_memory_fraction()",
    "memory_summary()", "memory_snapshot()", "list_gpu_processes()", "utilization()",
    "temperature()", "power_draw()", "clock_rate()", "memory_usage()", "device_memory_used()",
    "CUDAGraph()", "graph(None).__enter__()", "is_current_stream_capturing()",
    "reset_max_memory_cached()", "can_device_access_peer(0, 1)",
    "memory_stats_as_nested_dict()", "current_blas_handle()", "has_half", "has_magma",
    "make_graphed_callables(lambda x: x, (m.ones(1),))",
    "CudaError.__mro__[1:]", "DeferredCudaCallError.__mro__[1:]",
])
def test_cuda_namespace_rarer_calls(call: str) -> None:
    same(lambda m: eval(f"m.cuda.{call}", {"m": m}))


def test_version_module() -> None:
    same(lambda m: (m.version.cuda, m.version.hip, m.version.debug, m.version.xpu))
    assert gradsum.version.__version__ == gradsum.__version__


@pytest.mark.parametrize("call", ["cuda()", "to('cuda')", "to('cpu') is p", "is_pinned()",
                                  "pin_memory()", "is_cuda", "to(m.device('cpu')) is p"])
def test_packed_sequence_devices(call: str) -> None:
    def prog(m: Any) -> Any:
        p = m.nn.utils.rnn.pack_sequence([m.ones(2), m.ones(1)])
        return eval(f"p.{call}", {"m": m, "p": p})

    same(prog)


@pytest.mark.parametrize("call", [
    "is_available()", "device_count()", "current_device()", "synchronize()", "empty_cache()",
    "is_bf16_supported()", "is_initialized()", "memory_allocated()", "max_memory_allocated()",
    "memory_reserved()", "seed()", "seed_all()", "initial_seed()", "get_device_name()",
    "get_device_properties()", "get_rng_state()", "get_rng_state_all()", "init()",
    "mem_get_info()", "manual_seed(0)", "manual_seed_all(0)", "set_device(0)",
])
def test_xpu_namespace(call: str) -> None:
    same(lambda m: eval(f"m.xpu.{call}", {"m": m}))


@pytest.mark.parametrize("backends", ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION",
                                      ("MATH", "FLASH_ATTENTION"), "CUDNN_ATTENTION"])
@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 4)])
def test_sdpa_kernel_selects_as_torch_cpu(backends: Any, shape: tuple[int, ...]) -> None:
    """The grad_fn torch's CPU records (flash node or math graph), or its "No viable backend"
    error, under each kernel selection; switches restored after the block."""
    import numpy as np

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for _ in range(3)]

    def prog(m: Any) -> Any:
        from importlib import import_module

        att = import_module(f"{m.__name__}.nn.attention")
        names = backends if isinstance(backends, tuple) else (backends,)
        chosen = [getattr(att.SDPBackend, n) for n in names]
        q, k, v = (m.tensor(a, requires_grad=True) for a in arrays)
        with att.sdpa_kernel(chosen if len(chosen) > 1 else chosen[0]):
            out = m.nn.functional.scaled_dot_product_attention(q, k, v)
        out.sum().backward()
        after = (m.backends.cuda.flash_sdp_enabled(), m.backends.cuda.math_sdp_enabled())
        return (out.grad_fn.name(), np.round(out.detach().numpy(), 10).tolist(),
                np.round(q.grad.numpy(), 10).tolist(), after)

    same(prog)


def test_sdpa_kernel_argument_checks() -> None:
    same(lambda m: m.nn.attention.sdpa_kernel("math").__enter__())
    same(lambda m: [(k, int(b)) for k, b in m.nn.attention.SDPBackend.__members__.items()])


def test_backends_flash_switch_reaches_cpu_attention() -> None:
    def prog(m: Any) -> Any:
        q = m.ones(1, 1, 2, 4, requires_grad=True)
        m.backends.cuda.enable_flash_sdp(False)
        try:
            off = m.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn.name()
        finally:
            m.backends.cuda.enable_flash_sdp(True)
        on = m.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn.name()
        return off, on

    same(prog)


@pytest.mark.parametrize("enabled", [True, False])
def test_mha_fastpath_switch(enabled: bool) -> None:
    """torch.backends.mha.set_fastpath_enabled(False) turns off the fused inference path:
    the encoder layer's all-masked row then gives the composed path's zeros, not the fused
    kernel's NaN."""
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    t_layer = torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
    states = [{k: v.numpy().copy() for k, v in mod.state_dict().items()}
              for mod in (t_mha, t_layer)]

    def prog(m: Any) -> Any:
        mha = m.nn.MultiheadAttention(4, 2, batch_first=True).eval()
        layer = m.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).eval()
        for mod, state in zip((mha, layer), states):  # (the same weights in both)
            mod.load_state_dict({k: m.tensor(v) for k, v in state.items()})
        kpm = m.tensor([[True, True, True], [False, False, True]])
        src = m.tensor(x)
        m.backends.mha.set_fastpath_enabled(enabled)
        try:
            with m.no_grad():
                a, _ = mha(src, src, src, key_padding_mask=kpm)
                b = layer(src, src_key_padding_mask=kpm)
        finally:
            m.backends.mha.set_fastpath_enabled(True)
        return (bool(np.isnan(a.numpy()).any()), bool(np.isnan(b.numpy()).any()),
                np.round(np.nan_to_num(a.numpy()), 5).tolist(),
                np.round(np.nan_to_num(b.numpy()), 5).tolist())

    same(prog)


@pytest.mark.parametrize("dev", [None, "cpu", "cuda", "mps", "xpu", "gpu", 0, "meta", "hip"],
                         ids=repr)
def test_get_device_module(dev: Any) -> None:
    same(lambda m: m.get_device_module(dev).__name__.replace("gradsum", "torch"))


def test_top_level_device_helpers() -> None:
    same(lambda m: m.get_device(m.ones(1)))
    same(lambda m: m.get_device(1))
    same(lambda m: (m.init_num_threads(), issubclass(m.AcceleratorError, RuntimeError),
                    m.cuda.AcceleratorError is m.AcceleratorError))


def test_module_compile_in_place() -> None:
    def prog(m: Any) -> Any:
        lin = _seeded_mlp(m)
        out = lin.compile(backend="eager")
        return out, type(lin).__name__, list(lin.state_dict()), lin(m.ones(1, 3)).shape

    same(prog)
    same(lambda m: m.nn.Linear(1, 1).compile(mode="bogus"))


# -- memory formats (the layout argument scripts pass next to device=) -------------------------
FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 2, 4, 5), (2, 3), (2, 1, 1, 5)])
def test_memory_format_layouts(fmt: str, shape: tuple[int, ...]) -> None:
    def prog(m: Any) -> Any:
        f = getattr(m, fmt)
        x = m.arange(float(math.prod(shape))).reshape(shape)
        y = x.to(memory_format=f)
        return (y.stride(), y.is_contiguous(), y.is_contiguous(memory_format=f), y.tolist(),
                x.is_contiguous(memory_format=f))

    same(prog)


@pytest.mark.parametrize("fmt", FORMATS)
def test_contiguous_with_memory_format(fmt: str) -> None:
    def prog(m: Any) -> Any:
        f = getattr(m, fmt)
        x = m.arange(120.0).reshape(2, 3, 4, 5).to(memory_format=m.channels_last)
        y = x.contiguous(memory_format=f)
        return y.stride(), y is x, y.tolist() == x.tolist()

    same(prog)
    same(lambda m: m.ones(2, 3).contiguous(memory_format=getattr(m, fmt)).stride())
    same(lambda m: m.ones(2, 3).t().contiguous(memory_format=getattr(m, fmt)).stride())


def test_memory_format_keeps_gradients_and_identity() -> None:
    def prog(m: Any) -> Any:
        x = m.arange(120.0).reshape(2, 3, 4, 5).requires_grad_()
        y = x.to(memory_format=m.channels_last)
        (y * m.arange(120.0).reshape(2, 3, 4, 5)).sum().backward()
        z = y.to(memory_format=m.channels_last)
        return (y.grad_fn.name(), x.grad.tolist(), z is y,
                x.to(memory_format=m.contiguous_format) is x,
                repr(m.channels_last).replace("gradsum", "torch"),
                x.to(m.float64, memory_format=m.channels_last).stride())

    same(prog)
    same(lambda m: m.ones(2, 3, 4, 5).to(memory_format=1), phrase=False)


def test_module_to_channels_last() -> None:
    def prog(m: Any) -> Any:
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4), m.nn.Linear(2, 2))
        w = net[0].weight
        out = net.to(memory_format=m.channels_last)
        return (out is net, net[0].weight is w, net[0].weight.stride(), net[0].bias.stride(),
                net[2].weight.stride(), net[0].weight.is_contiguous(memory_format=m.channels_last))

    same(prog)
    same(lambda m: m.nn.Conv3d(1, 2, 1).to(memory_format=m.channels_last))
    same(lambda m: m.nn.Conv3d(1, 2, 1).to(memory_format=m.channels_last_3d).weight.stride())
    same(lambda m: m.nn.Conv2d(1, 2, 1).to(m.float64, memory_format=m.channels_last)
         .weight.dtype.__repr__().split(".")[-1])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3)])
def test_clone_with_memory_format(fmt: str, shape: tuple[int, ...]) -> None:
    def prog(m: Any) -> Any:
        x = m.arange(float(math.prod(shape))).reshape(shape).requires_grad_()
        y = x.clone(memory_format=getattr(m, fmt))
        return y.stride(), y.tolist(), y.grad_fn.name()

    same(prog)
