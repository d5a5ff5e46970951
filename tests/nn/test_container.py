"""Side by side with torch: the containers (Sequential, ModuleList, ModuleDict,
ParameterList, ParameterDict) and the deprecated Container."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch (the reference oracle) is not installed: pip install -e .[test]"
)

import gradsum  # noqa: E402
from diff_helpers import (  # noqa: E402  # noqa: E402
    same,
    same_error,
)
from nn_helpers import gradsum_repr  # noqa: E402


# -- containers --------------------------------------------------------------------------------
def test_module_dict_update_from_a_module_dict() -> None:
    def program(lib: Any) -> list[str]:
        d = lib.nn.ModuleDict({"z": lib.nn.ReLU()})
        d.update(lib.nn.ModuleDict({"a": lib.nn.ReLU(), "b": lib.nn.Tanh()}))
        return list(d)

    assert same(program) == ["z", "a", "b"]


@pytest.mark.parametrize("value,message", [
    (5, "ModuleDict.update should be called with an iterable of key/value pairs, but got int"),
    (["ab"], "str is not a Module subclass"),  # a 2-character string is a (key, value) pair
])
def test_module_dict_update_errors(value: Any, message: str) -> None:
    assert same_error(lambda lib: lib.nn.ModuleDict().update(value)) is TypeError
    with pytest.raises(TypeError, match=f"^{message}"):
        gradsum.nn.ModuleDict().update(value)


def test_sequential_insert_into_named_keys() -> None:
    def program(lib: Any) -> Any:
        s = lib.nn.Sequential(OrderedDict(a=lib.nn.ReLU(), b=lib.nn.Tanh()))
        s.insert(2, lib.nn.ReLU())  # at the end: a new key "2"
        return list(s._modules)

    assert same(program) == ["a", "b", "2"]
    same_error(lambda lib: lib.nn.Sequential(OrderedDict(a=lib.nn.ReLU(), b=lib.nn.Tanh()))
               .insert(1, lib.nn.ReLU()))


# -- ParameterList / ParameterDict ---------------------------------------------------------------
def _plist_program(lib: Any) -> list[Any]:
    nn = lib.nn
    pl = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(3, 2)])
    out: list[Any] = [len(pl), type(pl[1]).__name__, pl[1].requires_grad, pl[-1].shape]
    pl.append(lib.full((1,), 2.0))
    pl.extend([lib.ones(4)])
    pl += [nn.Parameter(lib.zeros(1), requires_grad=False)]
    pl[0] = lib.tensor([5.0, 6.0])
    out += [len(pl), type(pl[0]).__name__, pl[0].tolist(), pl[4].requires_grad]
    sl = pl[1:4:2]
    out += [type(sl).__name__, len(sl), sl[0] is pl[1], sl[1] is pl[3]]
    out += [[n for n, _ in pl.named_parameters()], list(pl.state_dict())]
    out += [[tuple(p.shape) for p in pl], gradsum_repr(pl)]
    pl.append("not a tensor")
    out += [gradsum_repr(pl).splitlines()[-2], len(list(pl.parameters()))]
    return out


def test_parameter_list_matches_torch() -> None:
    g, t = _plist_program(gradsum), _plist_program(torch)
    assert g == t


def test_parameter_list_errors_match_torch() -> None:
    same_error(lambda lib: lib.nn.ParameterList([lib.ones(1)])[3])
    same_error(lambda lib: lib.nn.ParameterList([lib.ones(1)])[-2])
    same_error(lambda lib: lib.nn.ParameterList().extend(lib.ones(2)))
    same_error(lambda lib: lib.nn.ParameterList()(lib.ones(1)))
    same_error(lambda lib: lib.nn.ParameterList([lib.ones(1)])["0"])
    e = same_error(lambda lib: lib.nn.ParameterList().extend(5))
    assert e is TypeError


def _pdict_program(lib: Any) -> list[Any]:
    nn = lib.nn
    pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(1))})
    out: list[Any] = [list(pd), type(pd["b"]).__name__]
    pd.update([("z", lib.ones(1)), ("c", lib.ones(3))])
    pd.update(OrderedDict([("y", lib.ones(1)), ("x", lib.ones(1))]))
    pd["m"] = lib.zeros(2, 2)
    out += [list(pd.keys()), [k for k, _ in pd.items()], [tuple(v.shape) for v in pd.values()]]
    out += [list(reversed(pd)), "m" in pd, "q" in pd, len(pd)]
    popped = pd.pop("z")
    out += [tuple(popped.shape), list(pd)]
    k, v = pd.popitem()
    out += [k, tuple(v.shape), list(pd)]
    out += [pd.get("q") is None, tuple(pd.get("a").shape)]
    out += [tuple(pd.setdefault("s", lib.ones(5)).shape), list(pd)]
    cp = pd.copy()
    out += [list(cp), cp["a"] is pd["a"]]
    merged = pd | nn.ParameterDict({"new": lib.ones(1)})
    out += [list(merged), list(pd)]
    pd |= nn.ParameterDict({"w": lib.ones(1)})
    out += [list(pd), list(pd.fromkeys(["u", "v"]))]
    out += [[n for n, _ in pd.named_parameters()], list(pd.state_dict())]
    del pd["a"]
    out += [list(pd), gradsum_repr(pd)]
    pd.clear()
    out += [len(pd), list(pd.parameters())]
    return out


def test_parameter_dict_matches_torch() -> None:
    assert _pdict_program(gradsum) == _pdict_program(torch)


def test_parameter_dict_errors_match_torch() -> None:
    assert same_error(lambda lib: lib.nn.ParameterDict()[3]) is TypeError
    assert same_error(lambda lib: lib.nn.ParameterDict()["nope"]) is AttributeError
    assert same_error(lambda lib: lib.nn.ParameterDict().update(3)) is TypeError
    assert same_error(lambda lib: lib.nn.ParameterDict().update([(1,)])) is ValueError
    assert same_error(lambda lib: lib.nn.ParameterDict().update([3])) is TypeError
    assert same_error(lambda lib: lib.nn.ParameterDict({"a.b": lib.ones(1)})) is KeyError
    same_error(lambda lib: lib.nn.ParameterDict()(lib.ones(1)))


def _containers_in_module(lib: Any) -> list[Any]:
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ws = nn.ParameterList([lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                        lib.tensor([[0.5, -1.0], [2.0, 0.0]])])
            self.bs = nn.ParameterDict({"first": lib.tensor([0.1, 0.2]),
                                        "second": lib.tensor([-0.3, 0.4])})

        def forward(self, x: Any) -> Any:
            x = x @ self.ws[0] + self.bs["first"]
            return (x.tanh() @ self.ws[1] + self.bs["second"]).pow(2).sum()

    net = Net()
    opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x = lib.tensor([[0.3, -0.2], [0.1, 0.5]])
    for _ in range(3):
        opt.zero_grad()
        net(x).backward()
        opt.step()
    return [list(net.state_dict()), [n for n, _ in net.named_parameters()], gradsum_repr(net),
            [p.detach().numpy().tolist() for p in net.parameters()]]


def test_containers_inside_a_module_train_like_torch() -> None:
    g, t = _containers_in_module(gradsum), _containers_in_module(torch)
    assert g[:3] == t[:3]
    for a, b in zip(g[3], t[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
