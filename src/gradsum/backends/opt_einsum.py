"""``gradsum.backends.opt_einsum``: einsum contraction-path optimisation.

gradsum's ``einsum`` contracts in NumPy without the ``opt_einsum`` package, so, as torch does
where that package is not installed, :func:`is_available` is False, ``enabled`` False and
``strategy`` None.

Example:
    >>> import gradsum
    >>> gradsum.backends.opt_einsum.is_available(), gradsum.backends.opt_einsum.strategy
    (False, None)
"""

from __future__ import annotations

__all__ = ["enabled", "get_opt_einsum", "is_available", "strategy"]

enabled = False
strategy = None


def is_available() -> bool:
    """Whether the ``opt_einsum`` package is used: False."""
    return False


def get_opt_einsum() -> None:
    """The ``opt_einsum`` package if used: None."""
    return None
