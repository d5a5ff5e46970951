"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state for
the length of a ``with`` block (torch's ``torch.optim.swap_in_optimizer_params_and_state``).

Example:
    >>> import gradsum
    >>> from gradsum import nn, optim
    >>> w = nn.Parameter(gradsum.ones(2))
    >>> opt = optim.SGD([w], lr=0.5, momentum=0.9)
    >>> w.grad = gradsum.ones(2)
    >>> opt.step()
    >>> other = nn.Parameter(gradsum.zeros(2))
    >>> other.grad = gradsum.ones(2)
    >>> saved = {"state": {0: {"momentum_buffer": gradsum.zeros(2)}},
    ...          "param_groups": opt.state_dict()["param_groups"]}
    >>> with optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
    ...     opt.step()
    >>> other.tolist(), w.tolist()          # the live parameter and state are untouched
    ([-0.5, -0.5], [0.5, 0.5])
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from gradsum._tensor import Tensor
from gradsum.optim import _messages
from gradsum.optim.optimizer import Optimizer

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state: Any) -> dict[Any, Any]:
    """``state`` maps packed parameter ids to per-parameter state dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(_messages.swapin_state_not_dict(_NAME, state))
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(_messages.swapin_state_not_packed(_NAME))
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(_messages.swapin_param_state_not_dict(_NAME))
    return state


def _check_groups(optimizer: Optimizer, groups: Any) -> list[dict[str, Any]]:
    if not isinstance(groups, list):
        raise RuntimeError(_messages.swapin_groups_not_list(_NAME, groups))
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError(_messages.swapin_group_count(groups, optimizer))
    return groups


def _check_group(idx: int, group: dict[str, Any], swapin_group: Any) -> list[int]:
    """The packed ids of one swap-in group, checked against its live group (same number of
    parameters, the same keys)."""
    if not isinstance(swapin_group, dict):
        raise RuntimeError(_messages.swapin_group_not_dict(_NAME))
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(_messages.swapin_params_not_packed(_NAME))
    if len(group["params"]) != len(ids):
        raise RuntimeError(_messages.swapin_param_count(idx))
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(_messages.swapin_group_keys(_NAME, idx, swapin_only, live_only))
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer,
                                       swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the block, ``optimizer`` works on ``swapin_parameters`` (given in the order of
    its parameters, e.g. ``model.named_parameters()``'s) with the state and group options of
    ``swapin_optim_state`` (a :meth:`~Optimizer.state_dict`-shaped dict); on exit its own
    parameters, options and state come back. The per-parameter state dicts are shallow
    copies: in-place updates of their tensors reach ``swapin_optim_state``, new entries do not.

    Raises:
        RuntimeError: the optimizer has no state yet, or ``swapin_optim_state`` is not shaped
            like this optimizer's state dict (torch's checks and texts).
    """
    if not optimizer.state:
        raise RuntimeError(_messages.swapin_state_uninitialized(_NAME))
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(_messages.swapin_dcp_style(_NAME))
    state = _check_state(swapin_optim_state.get("state"))
    swapin_groups = _check_groups(optimizer, swapin_optim_state.get("param_groups"))
    flat = list(swapin_parameters.values())
    offset = 0
    seen: set[int] = set()
    plan: list[tuple[dict[str, Any], dict[str, Any], list[Tensor]]] = []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, swapin_groups,
                                                    strict=True)):
        ids = _check_group(idx, group, swapin_group)
        seen.update(ids)
        end = offset + len(ids)
        if end > len(flat):
            raise RuntimeError(_messages.swapin_param_order(_NAME))
        plan.append((group, swapin_group, flat[offset:end]))
        offset = end
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(_messages.swapin_extra_keys(_NAME, extra))

    original_state = optimizer.state
    # (shallow copies: the original ``params`` lists come back as the same objects)
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, Any] = defaultdict(dict)
        for group, swapin_group, params in plan:
            group["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    group[key] = value
            for p, pid in zip(params, swapin_group["params"], strict=True):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state


__all__ = ["swap_in_optimizer_params_and_state"]
