"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` (torch's names and behaviour).

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
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gradsum.nn.module import Module, _addindent


def _index(idx: Any, size: int) -> int:
    i = operator.index(idx)
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of range")
    return i % size


class Sequential(Module):
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
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        ret = Sequential()
        for layer in list(self) + list(other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        offset = len(self)
        for i, module in enumerate(list(other)):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other: Any) -> None:
        if not isinstance(other, int):
            raise TypeError(
                f"unsupported operand type(s) for *: {type(self)} and {type(other)}"
            )
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

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
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
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


class ModuleList(Module):
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
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
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


class ModuleDict(Module):
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
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but "
                "got " + type(modules).__name__
            )
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(
                    "ModuleDict update sequence element #" + str(j) + " should be Iterable; is"
                    + type(m).__name__
                )
            if len(m) != 2:
                raise ValueError(
                    "ModuleDict update sequence element #" + str(j) + " has length "
                    + str(len(m)) + "; 2 is required"
                )
            self[m[0]] = m[1]
