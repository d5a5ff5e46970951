"""Side by side with torch: the legacy tensor types (``FloatTensor``, ``LongTensor``, ...),
their constructors and ``isinstance`` checks, ``Tensor.type()`` / ``Tensor.type(T)``,
``Module.type``, ``set_default_tensor_type`` and the CUDA types of torch's CPU build.

Each program runs once with ``torch`` and once with ``gradsum`` (passed in as ``m``); values,
dtypes, identity, ``requires_grad``/``grad_fn`` names, exception types and the opening phrase
of torch's message are compared.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradsum
from gradsum import _legacy_types

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

NAMES = ["DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
         "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]
DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _summary(x: Any) -> Any:
    """Tensors as (shape, dtype name, values, requires_grad, grad_fn name); dtypes by name;
    containers element-wise; the rest as is."""
    if isinstance(x, (torch.Tensor, gradsum.Tensor)):
        fn = x.grad_fn
        return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1],
                x.detach().float().tolist() if x.dtype != _lib(x).bool else x.tolist(),
                x.requires_grad, None if fn is None else type(fn).__name__)
    if isinstance(x, (torch.dtype, gradsum.dtype)):
        return ("dtype", str(x).split(".")[-1])
    if isinstance(x, (list, tuple)):
        return type(x)(_summary(v) for v in x)
    return x


def _lib(x: Any) -> Any:
    return torch if isinstance(x, torch.Tensor) else gradsum


def _outcome(fn: Callable[[Any], Any], m: Any) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", _summary(fn(m)))
    except Exception as e:
        return ("raised", type(e), str(e))


def same(fn: Callable[[Any], Any], phrase: int = 40) -> Any:
    """``fn(torch)`` and ``fn(gradsum)`` agree: the same summary, or the same exception type
    with gradsum's message starting with the first ``phrase`` characters of torch's."""
    want, got = _outcome(fn, torch), _outcome(fn, gradsum)
    if want[0] == "raised":
        assert got[0] == "raised", f"torch raised {want[1:]}, gradsum returned {got}"
        assert got[1] is want[1], (got, want)
        assert got[2].startswith(want[2][:phrase]), (got[2], want[2])
    else:
        assert got == want, f"gradsum: {got}\ntorch:   {want}"
    return got


# -- constructors --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", [[1, 2], [1.5, -2.5], [[0, 1], [2, 255]], [], [[]], [-1, 2],
                                  (3, 4), [True, False]])
def test_constructor_from_data(name, data):
    same(lambda m: getattr(m, name)(data))


@pytest.mark.parametrize("name", NAMES)
def test_constructor_sizes(name):
    # torch leaves the memory uninitialised (gradsum: zeros): shape, dtype and kind compared
    same(lambda m: [(tuple(t.shape), str(t.dtype).split(".")[-1], type(t).__name__)
                    for t in (getattr(m, name)(2, 3), getattr(m, name)(0),
                              getattr(m, name)(), getattr(m, name)(size=(4, 1)),
                              getattr(m, name)(np.int64(3)))])


@pytest.mark.parametrize("args,kwargs", [
    ((2.5,), {}), ((True,), {}), ((None,), {}), (("abc",), {}), (({1: 2},), {}),
    (((x for x in range(2)),), {}), ((iter([1, 2]),), {}), ((np.float32(2.0),), {}),
    ((2, 3.0), {}), ((-1,), {}), ((2, -1), {}), (([1, 2], 3), {}),
    (([1, 2],), {"requires_grad": True}), (([1, 2],), {"dtype": None}),
    ((2,), {"size": (3,)}), (([1],), {"device": "cuda"}), ((2, 3), {"device": "meta"}),
    (([[1], [2, 3]],), {}),
])
def test_constructor_refusals(args, kwargs):
    same(lambda m: m.FloatTensor(*args, **kwargs))


def test_constructor_keywords_and_cpu_device():
    same(lambda m: [m.FloatTensor(data=[1, 2]), m.FloatTensor([1, 2], device="cpu"),
                    m.LongTensor(range(3)), m.FloatTensor([m.tensor(1.0), m.tensor(2.0)])])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8"])
def test_constructor_from_tensor_is_an_alias_of_that_dtype_only(name, dtype):
    def f(m):
        src = m.tensor([1, 2], dtype=getattr(m, dtype))
        out = getattr(m, name)(src)
        out.add_(1) if out.dtype != m.bool else out.logical_not_()
        return out is src, src, out._version, src._version

    same(f, phrase=60)


def test_constructor_alias_of_a_tensor_that_requires_grad():
    def f(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        a = m.FloatTensor(w)
        (a * a).sum().backward()
        return a, w.grad, m.FloatTensor(m.tensor(2.0))

    same(f)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int64])
def test_constructor_shares_a_numpy_array_of_its_own_dtype(np_dtype):
    def f(m):
        arr = np.array([1, 2, 3, 4], dtype=np_dtype)
        out = [m.FloatTensor(arr), m.FloatTensor(arr[::2]), m.LongTensor(arr),
               m.FloatTensor(np.array(2.5)),
               # a 0-d integer array is a size, as a Python int (torch leaves it uninitialised)
               tuple(m.FloatTensor(np.array(2, dtype=np_dtype)).shape)]
        arr[0] = 9
        return out

    same(f)


# -- isinstance, issubclass, the classes themselves ---------------------------------------------
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_isinstance(name, dtype):
    same(lambda m: (isinstance(m.zeros(2, dtype=getattr(m, dtype)), getattr(m, name)),
                    isinstance(m.nn.Parameter(m.zeros(2, dtype=getattr(m, dtype)),
                                              requires_grad=False), getattr(m, name))))


def test_isinstance_of_other_objects_and_subclass_relations():
    same(lambda m: [isinstance(1, m.FloatTensor), isinstance([1.0], m.FloatTensor),
                    isinstance(np.zeros(2, np.float32), m.FloatTensor),
                    isinstance(m.FloatTensor([1]), m.FloatTensor),
                    isinstance(m.FloatTensor([1]), m.Tensor),
                    type(m.FloatTensor([1])) is m.Tensor,
                    issubclass(m.FloatTensor, m.Tensor), issubclass(m.Tensor, m.FloatTensor),
                    issubclass(m.nn.Parameter, m.FloatTensor),
                    issubclass(m.FloatTensor, m.DoubleTensor),
                    issubclass(m.FloatTensor, m.FloatTensor)])


@pytest.mark.parametrize("name", NAMES)
def test_class_attributes(name):
    same(lambda m: [getattr(m, name).__name__, getattr(m, name).__qualname__,
                    getattr(m, name).dtype, getattr(m, name).is_cuda,
                    getattr(m, name).is_sparse, getattr(m, name).is_xpu,
                    getattr(m, name).is_sparse_csr, getattr(m, name).__mro__[1] is object,
                    isinstance(getattr(m, name), type), getattr(m, name) == getattr(m, name)])


def test_repr_names_the_library():
    for name in NAMES:
        t, g = getattr(torch, name), getattr(gradsum, name)
        assert repr(t) == f"<class 'torch.{name}'>"
        assert repr(g) == f"<class 'gradsum.{name}'>"
        assert type(g).__name__ == type(t).__name__ == "tensortype"


def test_the_same_legacy_names_at_top_level():
    want = sorted(n for n in dir(torch) if n.endswith("Tensor") and n[0].isupper()
                  and isinstance(getattr(torch, n), type(torch.FloatTensor)))
    got = sorted(n for n in dir(gradsum) if n.endswith("Tensor")
                 and isinstance(getattr(gradsum, n), _legacy_types.tensortype))
    assert got == want == sorted(NAMES)


# -- Tensor.type -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_type_name_is_torch_spelling(dtype):
    same(lambda m: [m.zeros(2, dtype=getattr(m, dtype)).type(),
                    m.Tensor.type(m.zeros(2, dtype=getattr(m, dtype))),
                    m.zeros(2, dtype=getattr(m, dtype)).type(None),
                    m.zeros(2, dtype=getattr(m, dtype)).type(non_blocking=True)])
    assert gradsum.zeros(2, dtype=getattr(gradsum, dtype)).type().startswith("torch.")


def test_type_name_of_a_parameter_and_string_comparison():
    same(lambda m: [m.nn.Parameter(m.zeros(2)).type(),
                    m.nn.Parameter(m.zeros(2)).type() == "torch.FloatTensor",
                    m.nn.Linear(2, 2).weight.type()])


@pytest.mark.parametrize("target", [
    "FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor", "HalfTensor", "ByteTensor",
    "torch.FloatTensor", "torch.DoubleTensor", "torch.IntTensor", "torch.BoolTensor",
    "torch.Tensor", b"torch.LongTensor", "Tensor", "float64", "int64", "bool", "float32",
])
@pytest.mark.parametrize("src", ["float32", "float64", "int64"])
def test_type_conversion(target, src):
    def f(m):
        x = m.tensor([1.0, -2.0, 0.0]).to(getattr(m, src))
        if isinstance(target, str) and not target.startswith("torch."):
            tgt = getattr(m, target)  # a legacy type, Tensor or a dtype object
        else:
            tgt = target
        y = x.type(tgt)
        return y, y is x, x.type(tgt, True) is x, x.type(dtype=tgt, non_blocking=False) is x

    same(f)


@pytest.mark.parametrize("target", ["'torch.float64'", "'float64'", "'DoubleTensor'",
                                    "'torch.Foo'", "int", "3", "np.float64", "m.nn.Parameter",
                                    "m.float32, m.float64", "'torch.cuda.FloatTensor'",
                                    "m.FloatTensor, non_blocking=False, foo=1"])
def test_type_refusals(target):
    same(lambda m: eval(f"m.zeros(2).type({target})"), phrase=30)


def test_type_keeps_the_graph_and_returns_a_plain_tensor_from_a_parameter():
    def f(m):
        p = m.nn.Parameter(m.tensor([1.0, 2.0]))
        q = p.type(m.DoubleTensor)
        (q * q).sum().backward()
        return (type(q) is m.Tensor, q.requires_grad, type(q.grad_fn).__name__, q.is_leaf,
                p.grad, p.type(m.FloatTensor) is p, p.type("torch.FloatTensor") is p)

    same(f)


# -- Module.type -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dst", ["DoubleTensor", "float16", "'torch.FloatTensor'",
                                 "'torch.DoubleTensor'", "LongTensor", "dst_type=m.float64"])
def test_module_type(dst):
    def f(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))
        arg = dst if dst[0] in "'d" else f"m.{dst}"
        out = eval(f"net.type({arg})")
        return (out is net, net[0].weight.dtype, net[1].running_mean.dtype,
                net[1].num_batches_tracked.dtype, type(net[0].weight).__name__,
                net[0].weight.grad_fn)

    same(f)


# -- set_default_tensor_type -------------------------------------------------------------------
@pytest.fixture
def default_dtype():
    yield
    torch.set_default_dtype(torch.float32)
    gradsum.set_default_dtype(gradsum.float32)


@pytest.mark.parametrize("t", ["DoubleTensor", "HalfTensor", "'torch.DoubleTensor'",
                               "'torch.FloatTensor'", "LongTensor", "'torch.LongTensor'",
                               "float64", "3", "Tensor", "'torch.Tensor'", "'FloatTensor'",
                               "'torch.Foo'", "'torch.cuda.FloatTensor'"])
def test_set_default_tensor_type(t, default_dtype):
    def f(m):
        m.set_default_tensor_type(eval(t if t[0] in "'3" else f"m.{t}"))
        return (m.get_default_dtype(), m.tensor([1.0]).dtype, m.Tensor([1]).dtype,
                m.zeros(1).type(), m.FloatTensor([1]).dtype, m.ones(1).type(m.Tensor).dtype)

    same(f)


def test_set_default_tensor_type_warns_once_per_process(default_dtype):
    code = ("import warnings, {lib} as m\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    m.set_default_tensor_type(m.DoubleTensor)\n"
            "    m.set_default_tensor_type('torch.FloatTensor')\n"
            "print(len(w), w[0].category.__name__, str(w[0].message).split(' (Triggered')[0])\n")
    import subprocess
    import sys

    out = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                          text=True, check=True).stdout for lib in ("torch", "gradsum")]
    assert out[0] == out[1]
    assert out[1].startswith("1 UserWarning torch.set_default_tensor_type() is deprecated")


def test_set_default_dtype_and_legacy_types(default_dtype):
    def f(m):
        m.set_default_dtype(m.float64)
        return (m.FloatTensor([1]).dtype, m.Tensor([1]).dtype, m.Tensor(2, 3).dtype,
                m.zeros(2).type(), isinstance(m.zeros(2), m.DoubleTensor),
                m.tensor([1.0]).type(m.Tensor).dtype)

    same(f)


# -- torch.Tensor(...) -----------------------------------------------------------------------------
def test_tensor_class_constructor():
    same(lambda m: [m.Tensor([1, 2]), m.Tensor(), m.Tensor([[1.5], [2]]),
                    tuple(m.Tensor(2, 3).shape), m.Tensor(2, 3).dtype,
                    m.Tensor([True]), m.Tensor(np.array([1, 2]))])


# -- the CUDA types of a CPU-only build ------------------------------------------------------------
def _cuda_types(m: Any) -> Any:
    """``m.cuda``'s legacy types (gradsum's through gradsum.cuda once that exists)."""
    if m is torch:
        return torch.cuda
    if hasattr(gradsum, "cuda"):
        return gradsum.cuda
    return type("cuda", (), _legacy_types.CUDA_TYPES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("args", [([1.0],), (2,), ()])
def test_cuda_types_refuse_to_construct(name, args):
    same(lambda m: getattr(_cuda_types(m), name)(*args), phrase=70)


@pytest.mark.parametrize("name", NAMES)
def test_cuda_types_answer_as_in_a_cpu_build(name):
    same(lambda m: [isinstance(m.zeros(2, dtype=getattr(_cuda_types(m), name).dtype),
                               getattr(_cuda_types(m), name)),
                    getattr(_cuda_types(m), name).is_cuda,
                    getattr(_cuda_types(m), name).dtype,
                    getattr(_cuda_types(m), name).__module__.split(".")[-1],
                    getattr(_cuda_types(m), name) is getattr(m, name)])
    same(lambda m: m.zeros(2).type(getattr(_cuda_types(m), name)), phrase=40)
    same(lambda m: m.set_default_tensor_type(getattr(_cuda_types(m), name)), phrase=70)


def test_cuda_types_are_gradsum_cuda_s_when_it_exists():
    if not hasattr(gradsum, "cuda"):
        pytest.skip("gradsum.cuda (engineer A1's package) has not landed")
    for name in NAMES:
        assert getattr(gradsum.cuda, name) is _legacy_types.CUDA_TYPES[name]
        assert repr(getattr(gradsum.cuda, name)) == f"<class 'gradsum.cuda.{name}'>"


# -- Tensor.new: the legacy constructor of a tensor's own type -----------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool", "uint8"])
def test_tensor_new(dtype):
    def f(m):
        x = m.zeros(2, dtype=getattr(m, dtype))
        p = m.nn.Parameter(m.zeros(2)) if dtype == "float32" else x
        return [x.new(), x.new([1, 2]), x.new((2, 3)), x.new([[1], [0]], device="cpu"),
                (tuple(x.new(2, 3).shape), x.new(2, 3).dtype, tuple(x.new(size=(4,)).shape)),
                type(p.new(2)) is m.Tensor, p.new([1]).requires_grad]

    same(f)


@pytest.mark.parametrize("call", ["x.new(m.tensor([1.0, 2.0], dtype=m.float32))",
                                  "x.new(m.tensor([1, 2]))", "x.new([1, 2], dtype=m.int64)",
                                  "x.new([1, 2], requires_grad=True)", "x.new(2.5)",
                                  "x.new([1], device='cuda')"])
def test_tensor_new_refusals(call):
    def f(m):
        return eval(call, {"m": m, "x": m.zeros(2, dtype=m.float64)})

    same(f)


def test_tensor_new_of_its_own_dtype_is_an_alias():
    def f(m):
        x = m.zeros(2, dtype=m.float64)
        y = m.tensor([1.0, 2.0], dtype=m.float64)
        z = x.new(y)
        z.add_(1)
        return y, z is y, y._version

    same(f)


def test_set_default_tensor_type_warns_every_time_with_warn_always():
    code = ("import warnings, {lib} as m\n"
            "m.set_warn_always(True)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    m.set_default_tensor_type(m.DoubleTensor)\n"
            "    m.set_default_tensor_type('torch.FloatTensor')\n"
            "print(len(w))\n")
    import subprocess
    import sys

    out = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                          text=True, check=True).stdout for lib in ("torch", "gradsum")]
    assert out[0] == out[1] == "2\n"


# -- Size: what Tensor.size() returns, a size to the legacy constructors ---------------------------
def test_size_is_a_size_to_legacy_constructors():
    same(lambda m: [tuple(m.FloatTensor(m.zeros(2, 3).size()).shape),
                    tuple(m.FloatTensor(m.Size([4, 1])).shape),
                    tuple(m.zeros(2, 3).new(m.zeros(5).size()).shape),
                    tuple(m.Tensor(m.zeros(2, 3).size()).shape),
                    tuple(m.LongTensor(m.Size([])).shape),
                    m.FloatTensor((2, 3)), m.FloatTensor([2, 3])])  # (a tuple is data)


def test_size_behaves_as_torch_size():
    same(lambda m: [tuple(m.zeros(2, 3).size()), m.zeros(2, 3, 4).size()[1:] == (3, 4),
                    type(m.zeros(2, 3, 4).size()[1:]).__name__, m.zeros(2, 3).size()[0],
                    type(m.zeros(2).size() + (3,)).__name__,
                    type((3,) + m.zeros(2).size()).__name__,
                    type(m.zeros(2).size() * 2).__name__, m.zeros(2, 3).size().numel(),
                    m.Size().numel(), m.Size([True, 2]), isinstance(m.zeros(1).size(), tuple),
                    m.zeros(2, 3).size() == (2, 3), hash(m.Size([2])) == hash((2,)),
                    tuple(m.Size(np.array([2, 3])))])


@pytest.mark.parametrize("arg", ["[2.5]", "'ab'", "3", "[None]"])
def test_size_refusals(arg):
    same(lambda m: m.Size(eval(arg)), phrase=30)


def test_size_prints_and_pickles_as_a_tuple():
    import pickle

    s = gradsum.zeros(2, 3).size()
    assert repr(s) == "(2, 3)" and str(s) == "(2, 3)"
    back = pickle.loads(pickle.dumps(s))
    assert back == (2, 3) and type(back) is tuple
    assert type(gradsum.zeros(2, 3).shape) is tuple  # (the hot path stays a plain tuple)
