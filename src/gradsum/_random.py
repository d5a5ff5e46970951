"""Random number generation: a torch-like ``Generator`` over NumPy's PCG64, and the default one.

As in torch, the default generator starts each process from a random 64-bit seed (drawn
from the operating system's randomness; :func:`initial_seed` returns it), so two runs draw
different numbers unless seeded: ``manual_seed(s)`` makes every random op reproducible.
``get_rng_state``/``set_rng_state`` capture and restore the stream (checkpoints use them to
resume bit for bit). A ``Generator()`` made by the user starts, as torch's, from the fixed
seed 67280421310721.

Example:
    >>> import gradsum
    >>> _ = gradsum.manual_seed(0)
    >>> a = gradsum.rand(3)
    >>> _ = gradsum.manual_seed(0)
    >>> gradsum.equal(a, gradsum.rand(3))
    True
"""

from __future__ import annotations

import math
import os
from typing import Any

from gradsum import _device
from gradsum._backend import xp

#: the initial seed of a ``Generator()`` (torch's ``default_rng_seed_val``)
DEFAULT_SEED = 67280421310721


def _nondeterministic_seed() -> int:
    """A 64-bit seed from the operating system's randomness (torch's
    ``getNonDeterministicRandom``)."""
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """A source of random numbers with ``manual_seed``, ``seed``, ``get_state``/``set_state``."""

    def __init__(self, device: Any = "cpu") -> None:
        d = _device.as_device(device, "Generator")
        if d.type != "cpu":  # (torch's CPU build: no generator of another device)
            kind = d.type.upper()
            raise RuntimeError(f"Cannot get {kind} generator without ATen_{d.type} library: "
                               "gradsum runs on the CPU only; use torch.Generator() (the CPU).")
        self._seed = DEFAULT_SEED
        self._rng = xp.random.Generator(xp.random.PCG64(self._seed))

    @property
    def device(self) -> Any:
        """The generator's device: ``device(type='cpu')``."""
        return _device._CPU

    def manual_seed(self, seed: int) -> Generator:
        """Reset the stream from ``seed`` (an int in ``[-2**63, 2**64)``; a negative one wraps
        to ``2**64 + seed``, as in torch); returns the generator."""
        self._seed = _seed_value(seed)
        self._rng = xp.random.Generator(xp.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Reseed from a random 64-bit value of the operating system; returns it."""
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream started from (the last ``manual_seed``/``seed``)."""
        return self._seed

    def get_state(self) -> dict[str, Any]:
        """The full state as a JSON-serialisable dict."""
        return {"seed": self._seed, "bit_generator": _jsonable(self._rng.bit_generator.state)}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a state returned by :meth:`get_state`."""
        self._seed = int(state["seed"])
        bg = xp.random.PCG64()
        bg.state = state["bit_generator"]
        self._rng = xp.random.Generator(bg)


def _seed_value(seed: Any) -> int:
    """torch's check of a seed: an int (not a float or str) in ``[-2**63, 2**64)``, negative
    ones taken modulo ``2**64``."""
    if not isinstance(seed, (int, xp.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}. Pass "
                           "an int, e.g. manual_seed(int(seed)).")
    value = int(seed)
    if not -(2**63) <= value < 2**64:
        raise ValueError(f"Overflow when unpacking long long: the seed {value} is outside "
                         "[-2**63, 2**64). Reduce it, e.g. seed % 2**64.")
    return value % 2**64


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, xp.integer):
        return int(obj)
    return obj


#: the generator of every random op called without ``generator=``; as torch's, it starts
#: from a random seed in each process
default_generator = Generator()
default_generator.seed()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (all random ops without ``generator=`` use it); like
    ``torch.manual_seed``, ``seed`` goes through ``int()`` first."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from a random 64-bit value of the operating system (as
    ``torch.seed``); returns it."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's initial seed: the last ``manual_seed``/``seed``, else the
    random seed this process started with (as ``torch.initial_seed``)."""
    return default_generator.initial_seed()


def get_rng_state() -> dict[str, Any]:
    """The default generator's state (JSON-serialisable)."""
    return default_generator.get_state()


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore the default generator's state."""
    default_generator.set_state(state)


def rng(generator: Generator | None) -> Any:
    """The NumPy generator behind ``generator`` (or the default one)."""
    return (generator or default_generator)._rng


def _num(v: Any) -> str:
    """A number as torch prints it in these messages (``5`` for 5.0, ``-0.1``)."""
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def _bad(msg: str) -> None:
    raise RuntimeError(msg + ". Pass arguments within the distribution's domain.")


def sample(kind: str, shape: tuple[int, ...], dtype: Any, generator: Generator | None,
           *args: Any, **kwargs: Any) -> Any:
    """Draw an array for the in-place random fills (``normal_``, ``uniform_``, ...)."""
    r = rng(generator)
    if kind == "normal_":
        mean = kwargs.get("mean", args[0] if args else 0.0)
        std = kwargs.get("std", args[1] if len(args) > 1 else 1.0)
        if not std >= 0.0:
            _bad(f"normal expects std >= 0.0, but found std {_num(std)}")
        return (r.standard_normal(shape) * std + mean).astype(dtype)
    if kind == "uniform_":
        lo = kwargs.get("from_", kwargs.get("a", args[0] if args else 0.0))
        hi = kwargs.get("to", kwargs.get("b", args[1] if len(args) > 1 else 1.0))
        for name, v in (("from", lo), ("to", hi)):
            if dtype.kind in "fV" and not math.isfinite(float(v)):
                _bad(f"{name} is out of bounds for {'double' if dtype.itemsize == 8 else 'float'}")
        if lo > hi:
            _bad(f"uniform_ expects to return a [from, to) range, but found from={_num(lo)} > "
                 f"to={_num(hi)}")
        return r.uniform(lo, hi, shape).astype(dtype)
    if kind == "bernoulli_":
        p = kwargs.get("p", args[0] if args else 0.5)
        if isinstance(p, (int, float)) and not 0.0 <= p <= 1.0:
            _bad(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        return (r.random(shape) < p).astype(dtype)
    if kind == "exponential_":
        lambd = kwargs.get("lambd", args[0] if args else 1.0)
        if not lambd > 0.0:
            _bad(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
        return r.exponential(1.0 / lambd, shape).astype(dtype)
    if kind == "random_":
        lo = args[0] if len(args) > 1 else 0
        hi = args[1] if len(args) > 1 else (args[0] if args else 2**24)
        if lo >= hi:
            _bad(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        return r.integers(lo, hi, shape).astype(dtype)
    raise ValueError(f"unknown random fill {kind}")
