"""The texts of the loss primitives."""

from __future__ import annotations

from typing import Any

_CHECKED_FROM = "(while checking arguments for ctc_loss_allocate_outputs)"


def loss_invalid_reduction(reduction: Any) -> str:
    return (f"{reduction} is not a valid value for reduction: pass reduction='mean', 'sum' "
            f"or 'none'")


def ctc_log_probs_wrong_rank(lp: Any) -> str:
    return (
        f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional "
        f"tensor for argument #1 'log_probs' {_CHECKED_FROM}"
    )


def ctc_targets_wrong_rank(targets: Any) -> str:
    return (
        f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
        f"tensor for argument #2 'targets' {_CHECKED_FROM}"
    )


def ctc_blank_out_of_range(blank: Any, c: Any) -> str:
    return (
        f"blank must be in label range (got blank={blank} for {c} "
        "labels)"
    )


def ctc_input_lengths_size_mismatch(il: Any, n: Any) -> str:
    return (
        f"input_lengths must be of size batch_size (got {il.shape[0]} "
        f"lengths for a batch of {n})"
    )


def ctc_target_lengths_size_mismatch(tl: Any, n: Any) -> str:
    return (
        f"target_lengths must be of size batch_size (got {tl.shape[0]} "
        f"lengths for a batch of {n})"
    )


def ctc_negative_length(name: Any, lengths: Any) -> str:
    return (
        f"Expected {name} to have value at least 0, but got value "
        f"{int(lengths.min())} {_CHECKED_FROM}"
    )


def ctc_targets_size_mismatch(size: Any, targets: Any) -> str:
    return (
        f"Expected tensor to have size {size} at dimension 0, but got size {targets.shape[0]} "
        f"for argument #2 'targets' {_CHECKED_FROM}"
    )


def ctc_targets_too_short(s_max: Any, targets: Any) -> str:
    return (
        f"Expected tensor to have size at least {s_max} at dimension "
        f"1, but got size {targets.shape[1]} for argument #2 "
        f"'targets' {_CHECKED_FROM}"
    )


def ctc_input_length_too_large(t_max: Any, il: Any) -> str:
    return (
        f"Expected input_lengths to have value at most {t_max}, but got "
        f"value {int(il.max())} {_CHECKED_FROM}"
    )


def ctc_target_out_of_range(c: Any, padded: Any) -> str:
    return (
        f"ctc_loss: targets must be class indices in [0, {c}), got values "
        f"in [{int(padded.min())}, {int(padded.max())}]"
    )


def ctc_empty_log_probs() -> str:
    return "log_probs tensor must not be empty"
