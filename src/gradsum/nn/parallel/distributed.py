"""``DistributedDataParallel``: one model replica per MPI rank, gradients averaged.

Example:
    >>> from gradsum.nn.parallel import DistributedDataParallel
    >>> DistributedDataParallel.no_sync.__doc__.splitlines()[0]
    'Accumulate gradients locally; the next synchronising backward averages the sum.'
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

from gradsum._backend import xp
from gradsum.autograd.grad_mode import is_grad_enabled, no_grad
from gradsum.distributed import _core
from gradsum.nn import _messages
from gradsum.nn.modules.module import Module
from gradsum.nn.parallel._reducer import Reducer


def _describe(entry: tuple[str, tuple[int, ...], str] | None) -> str:
    if entry is None:
        return "nothing"
    return f"{entry[0]!r} shape={entry[1]} dtype={entry[2]}"


def _first_difference(a: list[Any], b: list[Any]) -> str:
    names_a = {e[0]: e for e in a}
    names_b = {e[0]: e for e in b}
    for e in a:
        other = names_b.get(e[0])
        if other is None:
            return f"rank 0 has {_describe(e)}, which that rank lacks"
        if other != e:
            return f"rank 0 has {_describe(e)}, that rank has {_describe(other)}"
    for e in b:
        if e[0] not in names_a:
            return f"that rank has {_describe(e)}, which rank 0 lacks"
    return "the parameters are registered in a different order"


def _buffer_flags(broadcast_buffers: bool | None, forward_sync_buffers: bool | None) -> bool:
    """Whether the initial sync includes the buffers; warns like torch 2.13 about the
    deprecated ``broadcast_buffers`` (only ``broadcast_buffers=False`` excludes them)."""
    if broadcast_buffers is not None:
        if forward_sync_buffers is not None:
            warnings.warn(
                _messages.ddp_both_buffer_flags(), FutureWarning, stacklevel=3)
        else:
            warnings.warn(
                _messages.ddp_broadcast_buffers_deprecated(),
                FutureWarning, stacklevel=3)
    if forward_sync_buffers is not None:
        return True
    return broadcast_buffers is not False


class DistributedDataParallel(Module):
    """Data parallelism over MPI ranks (torch's ``nn.parallel.DistributedDataParallel``).

    Each rank holds a replica of ``module``. At construction the ranks check that they have
    the same parameters and buffers (names, shapes, dtypes; a ``RuntimeError`` names the first
    difference) and copy rank 0's values into every replica. In every synchronising backward
    the gradients are averaged over the ranks: parameters are grouped in buckets of about
    ``bucket_cap_mb`` (reverse parameter order, the first bucket 1 MiB, like torch); a
    parameter whose gradient alone has at least ``min(1 MiB, bucket_cap_mb)`` is a bucket of
    its own, reduced in its ``.grad`` buffer (see below). Buckets are reduced in order, in
    pieces of at most 8 MiB, one non-blocking ``Iallreduce`` in flight at a time; the first
    starts as soon as its gradients have been accumulated (post-accumulate-grad hooks) and
    the rest follow during the backward, and ``backward()`` returns only when every ``.grad``
    holds the average. So ``N`` ranks with a mean loss over ``B/N`` examples each give the
    gradients of one process on all ``B``.

    Which backward synchronises: as in torch, the forward decides. The first backward after
    a forward of this wrapper run with grad enabled outside :meth:`no_sync` synchronises
    (even if that backward runs inside ``no_sync``); the backwards of a forward run inside
    ``no_sync`` accumulate locally (even if they run outside it). The synchronising backward
    averages the *accumulated* ``.grad`` (``N`` ranks x ``k`` micro-batches equal one process
    on the whole batch). A second backward through a synchronised forward's graph raises a
    ``RuntimeError`` (torch raises too) instead of silently leaving gradients unsynchronised.

    Buffers (torch's rule): rank 0's buffers are broadcast at construction (unless the
    deprecated ``broadcast_buffers=False`` is passed) and at the start of a forward when
    ``forward_sync_buffers`` is on and the previous forward (or the construction) ran with
    grad enabled outside ``no_sync`` - whatever the ``training`` flag; so the first ``eval()``
    forward after training uses rank 0's buffers everywhere, later ``no_grad`` forwards do
    not broadcast.

    Unused parameters (``find_unused_parameters`` is accepted and not needed): after each
    synchronising backward the ranks exchange a one-byte-per-parameter usage bitmap (a
    parameter is *used* on a rank if its ``.grad`` is not ``None`` there). A parameter used on
    some rank but not on this one takes part in the reduction with zeros here, so every rank
    ends with the same average (sum over the ranks that had a gradient, divided by the world
    size, as if the others had computed a zero gradient - which is what one process on the
    whole batch computes). A parameter used on no rank keeps ``.grad = None`` everywhere, so
    the optimizers skip it exactly as they would in one process (None is not zero). We chose
    this over torch's default (an error, or a hang, when ``find_unused_parameters=False``)
    because it is always correct and costs one tiny allreduce per step; the data-dependent
    case (a branch some micro-batches never take) just works.

    The ``.grad`` objects and buffers stay the user's, as without DDP: an existing ``.grad``
    keeps its identity and receives the average in place, and nothing DDP does writes into a
    ``.grad`` the user kept across ``p.grad = None``. A large gradient (a bucket of its own)
    is scaled by ``1 / world_size`` where it is, in its ``.grad`` buffer, as it arrives (torch
    scales before the sum too), and all-reduced there: no copy at all (while the backward
    runs, that ``.grad`` holds the scaled local gradient, then partial sums). If that buffer
    is not a plain array of its own (non-contiguous, read-only, a view of another array,
    another dtype, or a ``.grad`` with a graph) it goes through a private buffer instead.
    The small gradients are copied into their bucket (multiplied by ``1 / world_size``) and
    the averages copied back.
    ``gradient_as_bucket_view=True`` makes a freshly created small ``.grad`` a view of its
    bucket slot instead (torch's option): no copy back, and with
    ``zero_grad(set_to_none=False)`` no copy at all, at the price that such a ``.grad`` kept
    across ``p.grad = None`` is overwritten by the next step.

    Strict mode (``check_consistency=True``, or the environment variable ``GRADSUM_STRICT=1``):
    after every optimizer step (through ``gradsum.optim``'s global step post hook when it
    exists, otherwise at the start of the next forward) the parameters are checksummed across
    ranks and a divergence raises a ``RuntimeError`` naming the parameter. Call
    :meth:`check_parameters` yourself at any point, in any mode.

    Args:
        module: the model; its parameters must be identical in structure on every rank.
        bucket_cap_mb: bucket size in MiB (default 25, like torch).
        broadcast_buffers: deprecated in torch 2.13 (a ``FutureWarning`` when given): the
            ``forward_sync_buffers`` flag, except that ``False`` also keeps the buffers out of
            the initial broadcast.
        init_sync: broadcast rank 0's parameters (and buffers, see above) at construction.
        forward_sync_buffers: broadcast the buffers before forwards (default ``True``; see
            above); does not affect the initial broadcast.
        gradient_as_bucket_view: see above.
        check_consistency: strict mode (default: ``GRADSUM_STRICT``).
        device_ids, output_device, dim, process_group, find_unused_parameters,
            check_reduction, static_graph, skip_all_reduce_unused_params, batched_grad_copy:
            torch's; accepted without effect (``device_ids`` and ``output_device`` must be
            falsy, as torch requires for CPU modules; ``check_reduction=True`` warns).
        bucket_cap_mb_list: per-bucket caps; their maximum is used as ``bucket_cap_mb``.
        delay_all_reduce_named_params, param_to_hook_all_reduce, mixed_precision,
            device_mesh: torch's; only ``None`` is supported (``NotImplementedError``).

    Raises:
        ValueError: the default process group is not initialised, or ``device_ids`` /
            ``output_device`` were given.
        AttributeError: ``module`` is not a Module (torch's type).
        RuntimeError: the ranks' models differ, or no parameter requires grad.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool | None = None,
        init_sync: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params: Any = None,
        param_to_hook_all_reduce: Any = None,
        mixed_precision: Any = None,
        device_mesh: Any = None,
        skip_all_reduce_unused_params: bool = False,
        bucket_cap_mb_list: list[int] | None = None,
        batched_grad_copy: bool = False,
        forward_sync_buffers: bool | None = None,
        *,
        check_consistency: bool | None = None,
    ) -> None:
        super().__init__()
        if (delay_all_reduce_named_params is not None) != (param_to_hook_all_reduce is not None):
            raise ValueError(_messages.delay_all_reduce_named_params())
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh)):
            if value is not None:
                raise NotImplementedError(_messages.ddp_option_not_supported(name))
        group = _core._group(process_group)
        if not isinstance(module, Module):  # torch fails on module.named_parameters
            raise AttributeError(_messages.ddp_module_without_named_parameters(module))
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError(_messages.ddp_no_parameter_requires_grad(module))
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError(_messages.ddp_device_ids_one_element(device_ids))
        if device_ids or output_device:
            raise ValueError(_messages.ddp_device_ids_single_device(device_ids, output_device))
        sync_bufs_at_init = _buffer_flags(broadcast_buffers, forward_sync_buffers)
        if check_reduction:
            warnings.warn(
                _messages.ddp_check_reduction_deprecated(), FutureWarning, stacklevel=2)
        self.module = module
        self.device_ids = None  # torch's attributes for a CPU module
        self.output_device = None
        self.dim = dim
        self.forward_sync_buffers = (
            forward_sync_buffers if forward_sync_buffers is not None
            else broadcast_buffers if broadcast_buffers is not None else True
        )
        self.broadcast_buffers = self.forward_sync_buffers  # the pre-2.13 attribute name
        #: torch's flag: broadcast the buffers before the next forward (set by each forward:
        #: True after one with grad enabled outside no_sync)
        self.require_forward_param_sync = True
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        # torch accepts any cap (0 or less: every parameter a bucket of its own); a
        # bucket_cap_mb_list only sizes buckets, which does not change the averages
        cap = 25.0 if bucket_cap_mb is None else float(bucket_cap_mb)
        if bucket_cap_mb_list:
            cap = float(max(bucket_cap_mb_list))
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self.skip_all_reduce_unused_params = skip_all_reduce_unused_params
        self.batched_grad_copy = batched_grad_copy
        self.mixed_precision = None
        self.check_consistency = (
            _core._strict_env() if check_consistency is None else bool(check_consistency)
        )
        object.__setattr__(self, "_group", group)
        self._verify_model_across_ranks(group)
        if init_sync:
            self._sync_states(group, [p for _, p in module.named_parameters()]
                              + ([b for _, b in module.named_buffers()]
                                 if sync_bufs_at_init else []))
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._param_names = [n for n, _ in named]
        object.__setattr__(self, "reducer", Reducer(
            [p for _, p in named], self._param_names, group, max(self.bucket_bytes_cap, 0),
            gradient_as_bucket_view,
        ))
        object.__setattr__(self, "_ctrl", group.dup())
        object.__setattr__(self, "_step_hook", self._install_step_hook())

    # -- construction -------------------------------------------------------------------------
    def _verify_model_across_ranks(self, group: _core._Comm) -> None:
        def sig(items: Iterator[tuple[str, Any]]) -> list[tuple[str, tuple[int, ...], str]]:
            return [(n, tuple(t._array.shape), t._array.dtype.name) for n, t in items]

        mine = (sig(self.module.named_parameters()), sig(self.module.named_buffers()))
        group.check(_core._signature("object", 3), "DistributedDataParallel")
        everyone = group.allgather_object(mine)
        for kind, idx in (("params", 0), ("buffers", 1)):
            ref = everyone[0][idx]
            for r, other in enumerate(everyone):
                if other[idx] == ref:
                    continue
                if len(other[idx]) != len(ref):
                    head = _messages.ddp_model_count_mismatch(r, len(other[idx]), kind, len(ref))
                else:
                    head = _messages.ddp_model_differs(r)
                raise RuntimeError(_messages.ddp_model_mismatch(
                    head, _first_difference(ref, other[idx]), group.rank))

    @staticmethod
    def _sync_states(group: _core._Comm, tensors: list[Any]) -> None:
        """Copy rank 0's values into ``tensors`` on every rank (one Bcast per dtype)."""
        if group.size == 1 or not tensors:
            return
        by_dtype: dict[Any, list[Any]] = {}
        for t in tensors:
            by_dtype.setdefault(t._array.dtype.name, []).append(t)
        with no_grad():
            for name in sorted(by_dtype):
                ts = by_dtype[name]
                flat = xp.concatenate([t._array.reshape(-1) for t in ts])
                group.bcast_array(flat, 0)
                if group.rank == 0:
                    continue
                off = 0
                for t in ts:
                    n = t._array.size
                    t._array[...] = flat[off : off + n].reshape(t._array.shape)
                    t._vc[0] += 1
                    off += n

    def _install_step_hook(self) -> Any:
        if not self.check_consistency:
            return None
        try:
            from gradsum.optim.optimizer import register_optimizer_step_post_hook
        except ImportError:
            return None
        ref = weakref.ref(self)
        ids = {id(p) for p in self.reducer.params}

        def hook(optimizer: Any, args: Any, kwargs: Any) -> None:
            ddp = ref()
            if ddp is None:
                return
            groups = getattr(optimizer, "param_groups", [])
            if any(id(p) in ids for g in groups for p in g.get("params", [])):
                ddp.check_parameters()

        return register_optimizer_step_post_hook(hook)

    # -- API ----------------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run the wrapped module (after the strict-mode check and the buffer broadcast)."""
        group = self._group
        if self.check_consistency and self._step_hook is None:
            self.check_parameters()
        # torch's rule (not the training flag): buffers are broadcast before a forward when
        # the previous forward (or the construction) ran with grad enabled outside no_sync
        if self.forward_sync_buffers and self.require_forward_param_sync and group.size > 1:
            bufs = [b for _, b in self.module.named_buffers()]
            if bufs:
                self._sync_states(self._ctrl, bufs)
        reducer = self.reducer
        grad = is_grad_enabled()
        if grad:  # the forward decides whether its backward synchronises (torch's no_sync)
            reducer.armed = reducer.require_sync
            reducer.local = not reducer.require_sync
        out = self.module(*inputs, **kwargs)
        self.require_forward_param_sync = grad and reducer.require_sync
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Accumulate gradients locally; the next synchronising backward averages the sum.

        As in torch, the *forward* decides: the backward of a forward run inside this context
        accumulates locally (even if the backward runs outside it), and the backward of a
        forward run outside it synchronises (even if the backward runs inside it). So put the
        forward inside the context, as below.

        Example (in an MPI job)::

            with ddp.no_sync():
                for x, y in micro_batches[:-1]:
                    loss_fn(ddp(x), y).backward()     # local accumulation only
            loss_fn(ddp(x_last), y_last).backward()   # averages the accumulated .grad
        """
        old = self.reducer.require_sync
        self.reducer.require_sync = False
        try:
            yield
        finally:
            self.reducer.require_sync = old

    @property
    def require_backward_grad_sync(self) -> bool:
        """False inside :meth:`no_sync` (torch's attribute)."""
        return self.reducer.require_sync

    def check_parameters(self) -> None:
        """Raise ``RuntimeError`` naming the first parameter whose bits differ across ranks.

        Collective: every rank must call it. Costs a hash of every parameter and one
        allgather of 8 bytes per parameter.
        """
        named = list(self.module.named_parameters())
        _core._compare_checksums(self._ctrl, [n for n, _ in named],
                                 [p._array for _, p in named], "DistributedDataParallel")

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The wrapper's state: the module's entries under ``module.`` (torch's keys)."""
        return super().state_dict(*args, **kwargs)

    def __getstate__(self) -> Any:
        raise TypeError(_messages.ddp_cannot_be_pickled())
