"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict`` (torch's names and behaviour), and torch's deprecated ``Container``.

Example:
    >>> import gradsum
    >>> from gradsum import nn
    >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> net(gradsum.ones(4, 2)).shape
    (4, 1)
    >>> net[1]
    ReLU()
    >>> len(nn.ModuleList([nn.ReLU(), nn.Tanh()]))
    2
"""

from __future__ import annotations

import operator
import typing
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gradsum._tensor import Tensor as _Tensor
from gradsum.nn import _messages
from gradsum.nn.modules.module import Module as _Module
from gradsum.nn.modules.module import _addindent
from gradsum.nn.parameter import Parameter as _Parameter

if typing.TYPE_CHECKING:
    from gradsum.nn.modules.module import Module

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(idx: Any, size: int) -> int:
    i = operator.index(idx)
    if not -size <= i < size:
        raise IndexError(_messages.container_index_out_range(i))
    return i % size


class Sequential(_Module):
    """Modules applied in order: ``Sequential(m1, m2)(x) == m2(m1(x))``.

    Built from positional modules (named ``"0"``, ``"1"``, ...) or one ``OrderedDict`` of
    named modules.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[_index(idx, len(keys))]]

    def __setitem__(self, idx: int, module: Module) -> None:
        keys = list(self._modules)
        setattr(self, keys[_index(idx, len(keys))], module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(keys))])
        # renumber like torch so that indices stay contiguous
        items = list(self._modules.items())
        self._modules.clear()
        for i, (_, m) in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Sequential) -> Sequential:
        """A new Sequential of ``self``'s modules then ``other``'s (the same objects)."""
        if not isinstance(other, Sequential):
            raise ValueError(_messages.add_operator_supports_only_objects(other))
        ret = Sequential()
        for layer in list(self) + list(other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(_messages.add_operator_supports_only_objects(other))
        offset = len(self)
        for i, module in enumerate(list(other)):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other: Any) -> None:
        if not isinstance(other, int):
            raise TypeError(_messages.unsupported_operand_type(self, other))
        if other <= 0:
            raise ValueError(_messages.non_positive_multiplication_factor(other, self))

    def __mul__(self, other: int) -> Sequential:
        """A new Sequential repeating ``self``'s modules (the same objects) ``other`` times."""
        self._check_factor(other)
        combined = Sequential()
        mods = list(self)
        for offset, module in enumerate(mods * other):
            combined.add_module(str(offset), module)
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        self._check_factor(other)
        mods = list(self._modules.values())
        offset = len(mods)
        for _ in range(other - 1):
            for i, module in enumerate(mods):
                self.add_module(str(i + offset), module)
            offset += len(mods)
        return self

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, _Module):
            raise AssertionError(_messages.sequential_insert_not_module(_Module))
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(_messages.sequential_index_out_range(index))
        if index < 0:
            index += n
        # torch's key shifting: "i" takes "i-1"'s module from the end down to ``index``
        # (so a Sequential built from an OrderedDict of other names raises KeyError, as torch)
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key: int | slice) -> Module:
        v = self[key]
        del self[key]
        return v

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(_Module):
    """A list of modules, registered so that their parameters are visible; it has no
    ``forward``."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_index(idx, len(self))))
        mods = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for m in list(self) + list(other):
            combined.append(m)
        return combined

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns ``self``."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(_messages.modulelist_extend_called_iterable(modules))
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``: torch's key shifting, kept as is (a
        negative ``index`` raises ``KeyError``, one past the end leaves a gap, like torch)."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def pop(self, key: int | slice) -> Module:
        v = self[key]
        del self[key]
        return v

    def __repr__(self) -> str:
        # Repeated identical blocks are shown once with a count, like torch.
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            line = f"({start}): {b}"
            if start != end:
                line = f"({start}-{end}): {end - start + 1} x {b}"
            lines.append(_addindent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(_Module):
    """An ordered dict of modules, registered under their keys; it has no ``forward``."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[Any] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[Any]) -> None:
        """Add ``(key, module)`` pairs from a mapping (a ``ModuleDict`` too) or an iterable of
        pairs, overwriting existing keys.

        Example:
            >>> from gradsum import nn
            >>> d = nn.ModuleDict({"a": nn.ReLU()})
            >>> d.update(nn.ModuleDict({"b": nn.Tanh()}))
            >>> list(d)
            ['a', 'b']
        """
        if not isinstance(modules, Iterable):
            raise TypeError(_messages.moduledict_update_called_iterable_key(modules))
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(_messages.moduledict_update_sequence_element_iterable(j, m))
            if len(m) != 2:
                raise ValueError(_messages.moduledict_update_sequence_element_length(j, m))
            self[m[0]] = m[1]


def _entry_repr(p: Any, typename: bool) -> str:
    """One line of ``ParameterList``/``ParameterDict``'s ``extra_repr`` (torch's wording;
    the list shows the dtype, the dict the tensor type name, as torch does)."""
    if isinstance(p, _Tensor):
        size_str = "x".join(str(s) for s in p.shape)
        kind = "Parameter" if isinstance(p, _Parameter) else "Tensor"
        return f"{kind} containing: [{p.type() if typename else p.dtype} of size {size_str}]"
    return "Object of type: " + type(p).__name__


class ParameterList(_Module):
    """A list of parameters, registered under ``"0"``, ``"1"``, ... (torch's
    ``nn.ParameterList``). A plain tensor stored through indexing, ``append`` or ``extend``
    becomes a :class:`Parameter`; other objects are kept as they are (not registered).

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> pl = nn.ParameterList([nn.Parameter(gradsum.ones(2)), gradsum.zeros(3)])
        >>> type(pl[1]).__name__, len(pl), [n for n, _ in pl.named_parameters()]
        ('Parameter', 2, ['0', '1'])
        >>> pl
        ParameterList(
            (0): Parameter containing: [gradsum.float32 of size 2]
            (1): Parameter containing: [gradsum.float32 of size 3]
        )
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: Any) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(_messages.container_index_out_range(idx))
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        # every way of adding an entry ends here: the one place that wraps tensors
        key = self._get_abs_string_index(idx)
        if isinstance(param, _Tensor) and not isinstance(param, _Parameter):
            param = _Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a tensor becomes a Parameter); returns ``self``."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every element of ``values`` (a tensor is not unpacked: ``TypeError``)."""
        if not isinstance(values, Iterable) or isinstance(values, _Tensor):
            raise TypeError(_messages.parameterlist_extend_called_iterable(values))
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_entry_repr(p, False)}" for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_messages.parameterlist_not_callable())


class ParameterDict(_Module):
    """An ordered dict of parameters, registered under their (string) keys (torch's
    ``nn.ParameterDict``). A plain tensor stored under a key becomes a :class:`Parameter`.
    Built from an ``OrderedDict``, a ``ParameterDict`` or pairs, the order is kept; from a
    plain mapping the keys are sorted, like torch.

    Example:
        >>> import gradsum
        >>> from gradsum import nn
        >>> pd = nn.ParameterDict({"b": gradsum.ones(2), "a": gradsum.zeros(1)})
        >>> list(pd), [n for n, _ in pd.named_parameters()]
        (['a', 'b'], ['a', 'b'])
        >>> pd["c"] = gradsum.ones(3); len(pd), "c" in pd
        (3, True)
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(_messages.index_given_parameterdict_cannot_used(key))
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        # every way of adding an entry ends here: the one place that wraps tensors
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, _Tensor) and not isinstance(value, _Parameter):
            value = _Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameter objects."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None  # (put back so that the lookup and the deletion find it)
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any | None = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 (self.get is this)

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add ``(key, value)`` pairs from a mapping or an iterable of pairs (a plain,
        unordered mapping in sorted key order, like torch)."""
        if not isinstance(parameters, Iterable):
            raise TypeError(_messages.parametersdict_update_called_iterable_key(parameters))
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(_messages.parameterdict_update_sequence_element_iterable(j, p))
                if len(p) != 2:
                    raise ValueError(_messages.parameterdict_update_sequence_element_length(j, p))
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_entry_repr(p, True)}" for k, p in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError(_messages.parameterdict_not_callable())

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self


class Container(_Module):
    """Deprecated (torch's ``nn.Container``): a module whose keyword arguments become its
    children; warns ``FutureWarning`` at construction. Subclass :class:`Module` instead.

    Example:
        >>> import warnings
        >>> from gradsum import nn
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     nn.Container(fc=nn.Linear(1, 1))
        Container(
          (fc): Linear(in_features=1, out_features=1, bias=True)
        )
    """

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn(
            _messages.nn_container_deprecated_all_its(), FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
