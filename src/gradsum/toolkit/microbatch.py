"""Exact micro-batching: accumulated gradients equal to the full batch's, to float tolerance.

The usual recipe, ``(loss_fn(model(mb_x), mb_y) / n_micro).backward()`` per micro-batch, with a
mean-reduced loss, computes the mean of per-micro-batch means. That equals the full-batch mean
only when every micro-batch has the same number of counted elements. With a short last batch,
or padding tokens excluded by ``ignore_index``, it silently weights some tokens more than
others. The exact rule: sum the loss over each micro-batch and divide by the number of counted
elements in the **whole window**, a number known before the first forward. :func:`micro_batches`
computes it up front and hands each micro-batch its scale.

Example:
    >>> import gradsum
    >>> from gradsum.toolkit import micro_batches
    >>> x = gradsum.arange(10.0).reshape(5, 2)
    >>> y = gradsum.tensor([1, -100, 0, 1, -100])
    >>> [(mb.x.shape[0], mb.count, scale) for mb, scale in micro_batches(x, y, n=2,
    ...                                                                  ignore_index=-100)]
    [(3, 2, 0.3333333333333333), (2, 1, 0.3333333333333333)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gradsum._backend import xp
from gradsum.autograd.graph import _set_grad
from gradsum.toolkit._hub import named_params

if TYPE_CHECKING:
    from gradsum._tensor import Tensor

__all__ = [
    "AccumulationMismatchError",
    "MicroBatch",
    "accumulate_backward",
    "check_accumulation",
    "count_targets",
    "micro_batches",
]


class AccumulationMismatchError(AssertionError):
    """Micro-batched gradients differ from the full-batch gradients."""


@dataclass
class MicroBatch:
    """One micro-batch of a window.

    Attributes:
        x: the inputs (a tensor, or a tuple of tensors split alike).
        y: the targets.
        index: position in the window.
        count: counted target elements in this micro-batch (not equal to ``ignore_index``).
        total: counted target elements in the whole window.
    """

    x: Any
    y: Any
    index: int
    count: int
    total: int

    @property
    def weight(self) -> float:
        """``count / total``: the factor for a loss that is already a mean over this
        micro-batch (``0.0`` for a micro-batch with nothing to count; skip its loss, a mean over
        nothing is ``nan``)."""
        return self.count / self.total


def count_targets(y: Any, ignore_index: int | None = None) -> int:
    """Number of elements of ``y`` that count in a mean (those not equal to ``ignore_index``).

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit.microbatch import count_targets
        >>> count_targets(gradsum.tensor([[3, -100], [1, 2]]), ignore_index=-100)
        3
    """
    arr = y._array if hasattr(y, "_array") else xp.asarray(y)
    if ignore_index is None:
        return int(arr.size)
    return int(xp.count_nonzero(arr != ignore_index))


def _split_sizes(n_rows: int, n: int | None, sizes: Sequence[int] | None) -> list[int]:
    if sizes is not None:
        sizes = [int(s) for s in sizes]
        if sum(sizes) != n_rows or any(s <= 0 for s in sizes):
            raise ValueError(
                f"sizes={sizes} must be positive and add up to the batch size {n_rows}"
            )
        return sizes
    if n is None:
        raise TypeError("micro_batches() needs n (number of micro-batches) or sizes=[...]")
    if not 1 <= n <= n_rows:
        raise ValueError(f"n={n} micro-batches cannot split a batch of {n_rows} rows; "
                         f"use 1 <= n <= {n_rows}")
    base, extra = divmod(n_rows, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def _rows(x: Any, a: int, b: int) -> Any:
    if isinstance(x, (tuple, list)):
        return type(x)(_rows(v, a, b) for v in x)
    return x[a:b]


def _n_rows(x: Any) -> int:
    if isinstance(x, (tuple, list)):
        return _n_rows(x[0])
    return int(x.shape[0])


def micro_batches(
    inputs: Any,
    targets: Any = None,
    n: int | None = None,
    *,
    sizes: Sequence[int] | None = None,
    ignore_index: int | None = None,
    count: Callable[[Any], int] | None = None,
) -> list[tuple[MicroBatch, float]]:
    """Split a batch into micro-batches, each with the scale that makes accumulation exact.

    With a loss summed over each micro-batch (``reduction='sum'``), multiply it by ``scale`` =
    ``1 / total`` where ``total`` counts the target elements of the whole window that are not
    ``ignore_index``; the accumulated gradient then equals the gradient of the full batch's
    mean loss. With a loss that is a mean over the micro-batch, multiply by ``mb.weight``
    (``count / total``) instead.

    Args:
        inputs: a tensor (or tuple of tensors) split along dim 0; or, with ``targets=None`` and
            ``n=None``, an iterable of ``(x, y)`` micro-batches you already have (it is read
            entirely first: the count must be known before the first backward).
        targets: the targets, split like ``inputs``.
        n: number of micro-batches (sizes differ by at most one).
        sizes: explicit micro-batch sizes instead of ``n``.
        ignore_index: target value that does not count (padding), e.g. ``-100``.
        count: ``count(y) -> int`` to count elements another way (default: elements of ``y``
            not equal to ``ignore_index``).

    Returns:
        A list of ``(MicroBatch, scale)``.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import micro_batches
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> x = gradsum.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> y = gradsum.tensor([1.0, 2.0, 3.0])
        >>> for mb, scale in micro_batches(x, y, n=2):
        ...     (((mb.x @ w - mb.y) ** 2).sum() * scale).backward()
        >>> full = gradsum.autograd.grad(((x @ w - y) ** 2).mean(), w)[0]
        >>> bool(gradsum.allclose(w.grad, full))
        True
    """
    if targets is None and n is None and sizes is None:
        pairs = list(inputs)
        if not pairs:
            raise ValueError("micro_batches() got an empty iterable of micro-batches")
        for i, p in enumerate(pairs):
            if not (isinstance(p, (tuple, list)) and len(p) == 2):
                raise TypeError(
                    f"micro-batch {i} is a {type(p).__name__}; with targets=None, inputs must "
                    "be an iterable of (x, y) pairs. To split one batch, pass targets and n."
                )
    else:
        if targets is None:
            raise TypeError("micro_batches(inputs, targets, n): targets is missing")
        rows = _n_rows(inputs)
        if int(targets.shape[0]) != rows:
            raise ValueError(
                f"inputs have {rows} rows but targets have {int(targets.shape[0])}; they are "
                "split along dim 0 together"
            )
        pairs = []
        start = 0
        for s in _split_sizes(rows, n, sizes):
            pairs.append((_rows(inputs, start, start + s), targets[start:start + s]))
            start += s
    counter = count if count is not None else (lambda y: count_targets(y, ignore_index))
    counts = [int(counter(y)) for _, y in pairs]
    total = sum(counts)
    if total == 0:
        raise ValueError(
            "every target in this window equals ignore_index "
            f"({ignore_index!r}): the mean loss is undefined (torch gives nan). Skip the "
            "window, or check how the targets were padded."
        )
    scale = 1.0 / total
    return [(MicroBatch(x, y, i, c, total), scale) for i, ((x, y), c) in
            enumerate(zip(pairs, counts))]


def accumulate_backward(
    model_fn: Callable[[Any], Any],
    loss_fn: Callable[[Any, Any], Tensor],
    batch: Any,
    n: int | None = None,
    *,
    sizes: Sequence[int] | None = None,
    ignore_index: int | None = None,
    reduction: str = "sum",
    count: Callable[[Any], int] | None = None,
) -> float:
    """Run forward + backward over the micro-batches of ``batch``, exactly normalised.

    Args:
        model_fn: ``model_fn(x) -> output`` (a module or any callable).
        loss_fn: ``loss_fn(output, y) -> loss`` for one micro-batch: the **sum** over its
            elements with ``reduction='sum'`` (e.g. ``F.cross_entropy(o, y, reduction='sum',
            ignore_index=-100)``), or the mean over its counted elements with
            ``reduction='mean'`` (your usual loss).
        batch: ``(x, y)``, or with ``n=None`` an iterable of ``(x, y)`` micro-batches.
        n, sizes, ignore_index, count: as in :func:`micro_batches`.
        reduction: what ``loss_fn`` returns, ``'sum'`` or ``'mean'``.

    Returns:
        The window's loss as a float (equal to the full batch's mean loss).

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import accumulate_backward
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> x, y = gradsum.ones(5, 2), gradsum.zeros(5)
        >>> loss = accumulate_backward(lambda a: a @ w, lambda o, t: ((o - t) ** 2).sum(),
        ...                            (x, y), n=3)
        >>> round(loss, 5), w.grad.tolist()
        (4.0, [4.0, 4.0])
    """
    if reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
    if n is None and sizes is None:
        mbs = micro_batches(batch, ignore_index=ignore_index, count=count)
    else:
        x, y = batch
        mbs = micro_batches(x, y, n, sizes=sizes, ignore_index=ignore_index, count=count)
    total = 0.0
    for mb, scale in mbs:
        if reduction == "mean":
            if mb.count == 0:
                continue  # a mean over nothing is nan; it contributes nothing to the window
            factor = mb.weight
        else:
            factor = scale
        loss = loss_fn(model_fn(mb.x), mb.y) * factor
        loss.backward()
        total += float(loss.item())
    return total


def check_accumulation(
    model: Any,
    loss_fn: Callable[[Any, Any], Tensor],
    batch: Any,
    n_micro: int | None = None,
    *,
    params: Any = None,
    sizes: Sequence[int] | None = None,
    ignore_index: int | None = None,
    accumulate: Callable[[Any, Any, int | None], Any] | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> float:
    """Check that micro-batched gradients equal the full batch's; for your tests.

    Runs ``loss_fn(model(x), y).backward()`` on the whole batch, then the micro-batched
    version (yours, ``accumulate(model, batch, n_micro)``, or by default
    :func:`accumulate_backward` with ``reduction='mean'``), compares every parameter's
    gradient, and puts every ``.grad`` back as it was before the call.

    Args:
        model: a module (its ``parameters()`` are compared) or a callable (pass ``params``).
        loss_fn: your loss, a mean over the batch (e.g. ``F.cross_entropy(o, y,
            ignore_index=-100)``).
        batch: ``(x, y)``.
        n_micro: number of micro-batches (or ``sizes``).
        params: the parameters to compare (default ``model.named_parameters()``).
        ignore_index: padding value of the targets, for the default micro-batched run.
        accumulate: your own micro-batch loop, ``accumulate(model, batch, n_micro)``; it must
            call backward itself.
        atol, rtol: tolerance, ``|micro - full| <= atol + rtol * max|full|``.

    Returns:
        The largest absolute difference over all parameters.

    Raises:
        AccumulationMismatchError: (an ``AssertionError``) naming the parameters that differ.

    Example:
        >>> import gradsum
        >>> from gradsum.toolkit import check_accumulation
        >>> _ = gradsum.manual_seed(0)
        >>> w = gradsum.ones(2, requires_grad=True)
        >>> x, y = gradsum.randn(5, 2), gradsum.randn(5)
        >>> mse = lambda o, t: ((o - t) ** 2).mean()
        >>> check_accumulation(lambda a: a @ w, mse, (x, y), 2, params=[w]) < 1e-5
        True
        >>> def naive(model, batch, n):        # mean of per-micro-batch means: wrong here
        ...     for xs, ys in zip(batch[0].split(3), batch[1].split(3)):
        ...         (mse(model(xs), ys) / n).backward()
        >>> check_accumulation(lambda a: a @ w, mse, (x, y), 2, params=[w],
        ...                    accumulate=naive)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gradsum.toolkit.microbatch.AccumulationMismatchError: micro-batched gradients differ ...
    """
    pairs = named_params(params if params is not None else model)
    if not pairs:
        raise ValueError("check_accumulation() found no parameters: pass params=[...]")
    saved = [(p, p._grad) for _, p in pairs]
    try:
        for _, p in pairs:
            _set_grad(p, None)
        x, y = batch
        loss_fn(model(x), y).backward()
        full = [None if p._grad is None else p._grad._array.copy() for _, p in pairs]
        for _, p in pairs:
            _set_grad(p, None)
        if accumulate is not None:
            accumulate(model, batch, n_micro)
        else:
            accumulate_backward(model, loss_fn, batch, n_micro, sizes=sizes,
                                ignore_index=ignore_index, reduction="mean")
        micro = [None if p._grad is None else p._grad._array.copy() for _, p in pairs]
    finally:
        for p, g in saved:
            _set_grad(p, g)
    worst = 0.0
    bad: list[str] = []
    for (name, _), f, m in zip(pairs, full, micro):
        if f is None and m is None:
            continue
        if f is None or m is None:
            bad.append(f"{name}: full batch .grad is {'None' if f is None else 'a tensor'}, "
                       f"micro-batched .grad is {'None' if m is None else 'a tensor'}")
            worst = float("inf")
            continue
        diff = float(xp.max(xp.abs(f.astype(xp.float64) - m))) if f.size else 0.0
        worst = max(worst, diff)
        scale = float(xp.max(xp.abs(f))) if f.size else 0.0
        if not diff <= atol + rtol * scale:
            bad.append(f"{name}: max abs difference {diff:.3g} (largest |full grad| "
                       f"{scale:.3g})")
    if bad:
        raise AccumulationMismatchError(
            "micro-batched gradients differ from the full-batch gradients:\n  "
            + "\n  ".join(bad)
            + "\nA common cause: dividing each micro-batch's mean loss by the number of "
            "micro-batches, which is wrong when micro-batches count different numbers of "
            "elements (a short last batch, padding excluded by ignore_index). Scale each "
            "micro-batch's summed loss by 1/total over the window instead: "
            "gradsum.toolkit.micro_batches(x, y, n, ignore_index=...). Other causes: "
            "dropout or other randomness in the model, a forgotten zero_grad."
        )
    return worst
