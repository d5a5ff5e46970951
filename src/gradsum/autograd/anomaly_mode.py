"""Anomaly detection for the backward pass: ``detect_anomaly`` and ``set_detect_anomaly``.

With it on, every node created records the traceback of the forward call that made it, and
the engine (1) raises ``RuntimeError`` when a backward node returns nan (with ``check_nan``)
and (2) before any error of a node propagates, warns with that node's forward traceback, as
torch does. The mode is process-wide, like torch's.

Note "Anomaly mode costs nothing when off": the traceback is recorded by a replacement of
``Node.__init__`` installed only while the mode is on, and the engine reads the flag once
per backward (it then runs every node through :func:`apply_checked`).

Example:
    >>> import warnings
    >>> import gradsum
    >>> x = gradsum.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with gradsum.autograd.detect_anomaly():
    ...         y = x.sqrt() * 0.0        # d/dx sqrt(x) at 0 is inf, times 0: nan
    ...         try:
    ...             y.sum().backward()
    ...         except RuntimeError as e:
    ...             print(e)
    Function 'SqrtBackward0' returned nan values in its 0th output.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from typing import Any

from gradsum.autograd import _messages
from gradsum.autograd.graph import Node

#: ``[enabled, check_nan]``, process-wide (torch's AnomalyMode is a global, not per thread)
_anomaly: list[bool] = [False, True]
_plain_init = Node.__init__
#: the node whose backward is running under anomaly mode (the "parent" of nodes it creates)
_current: list[Node | None] = [None]


def _recording_init(self: Node) -> None:
    """``Node.__init__`` while anomaly mode is on: also keep the forward traceback."""
    _plain_init(self)
    md = self.metadata
    md["traceback_"] = traceback.format_stack()[:-2]  # (without this frame and __init__'s)
    if _current[0] is not None:
        md["parent_"] = _current[0]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on.

    Example:
        >>> import gradsum
        >>> gradsum.is_anomaly_enabled()
        False
    """
    return _anomaly[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward outputs for nan.

    Example:
        >>> import gradsum
        >>> gradsum.is_anomaly_check_nan_enabled()
        True
    """
    return _anomaly[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (torch's ``torch.set_anomaly_enabled``).

    Example:
        >>> import gradsum
        >>> gradsum.set_anomaly_enabled(True, check_nan=False)
        >>> gradsum.is_anomaly_enabled(), gradsum.is_anomaly_check_nan_enabled()
        (True, False)
        >>> gradsum.set_anomaly_enabled(False)
    """
    _anomaly[0] = bool(enabled)
    _anomaly[1] = bool(check_nan)
    # (note "Anomaly mode costs nothing when off": the recording constructor is swapped in)
    Node.__init__ = _recording_init if enabled else _plain_init  # type: ignore[method-assign]


class detect_anomaly:
    """Context manager that turns anomaly detection on (warns that it is on). As torch
    2.13's, it is not a decorator: calling an instance raises ``TypeError``.

    Example:
        >>> import warnings
        >>> import gradsum
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     with gradsum.autograd.detect_anomaly(check_nan=False):
        ...         print(gradsum.is_anomaly_enabled(), gradsum.is_anomaly_check_nan_enabled())
        True False
        >>> gradsum.is_anomaly_enabled()
        False
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(_messages.anomaly_enabled_warning(), UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Set anomaly detection on or off; as a function call, or a context manager that restores
    the previous setting on exit.

    Example:
        >>> import gradsum
        >>> with gradsum.autograd.set_detect_anomaly(True):
        ...     print(gradsum.is_anomaly_enabled())
        True
        >>> gradsum.is_anomaly_enabled()
        False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def _warn_stack(node: Node) -> None:
    """torch's ``print_stack``: the failing node's forward traceback, then those of the
    nodes whose backward created it (under ``create_graph``), as UserWarnings."""
    md = node.metadata
    stack = md.get("traceback_")
    if stack is None:
        warnings.warn(_messages.anomaly_no_traceback(node.name()), UserWarning, stacklevel=2)
        return
    warnings.warn(_messages.anomaly_traceback(node.name(), "".join(stack)), UserWarning,
                  stacklevel=2)
    parent = md.get("parent_")
    while parent is not None:
        pmd = parent.metadata
        pstack = pmd.get("traceback_")
        if pstack is None:
            warnings.warn(_messages.anomaly_no_traceback(parent.name()), UserWarning,
                          stacklevel=2)
        else:
            warnings.warn(_messages.anomaly_parent(parent.name(), "".join(pstack)),
                          UserWarning, stacklevel=2)
        parent = pmd.get("parent_")


def apply_checked(apply: Callable[..., tuple[Any, ...]], node: Node, *args: Any
                  ) -> tuple[Any, ...]:
    """``apply(node, *args)`` (the engine's ``_apply``) under anomaly mode: the nan check on
    the node's outputs, and the forward traceback warned before an error propagates."""
    prev = _current[0]
    _current[0] = node
    try:
        outs = apply(node, *args)
        if _anomaly[1]:
            from gradsum._backend import xp

            for i, o in enumerate(outs):
                if o is not None and o._array.dtype.kind in "fc" and xp.isnan(o._array).any():
                    raise RuntimeError(_messages.anomaly_nan(node.name(), i))
        return outs
    except Exception:
        _warn_stack(node)
        raise
    finally:
        _current[0] = prev
