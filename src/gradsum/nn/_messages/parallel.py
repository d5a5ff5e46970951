"""The texts of DistributedDataParallel."""

from __future__ import annotations

from typing import Any

# -- parallel ----------------------------------------------------------------------------------


def ddp_both_buffer_flags() -> str:
    return (
        "Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
        "`broadcast_buffers` is deprecated and its value is ignored when "
        "`forward_sync_buffers` is provided."
    )


def ddp_broadcast_buffers_deprecated() -> str:
    return (
        "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. "
        "IMPORTANT: unlike `broadcast_buffers=False`, `forward_sync_buffers=False` "
        "still syncs buffers at init. If you rely on buffers NOT being synced at init "
        "(e.g. rank-local buffers), keep using `broadcast_buffers=False`."
    )


def delay_all_reduce_named_params() -> str:
    return (
        "delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at "
        "the same time."
    )


def ddp_option_not_supported(name: Any) -> str:
    return (
        f"DistributedDataParallel({name}=...) is not supported by gradsum: it "
        f"would change what the replicas compute. Leave {name}=None."
    )


def ddp_module_without_named_parameters(module: Any) -> str:
    return (
        f"'{type(module).__name__}' object has no attribute 'named_parameters': "
        f"DistributedDataParallel wraps a gradsum.nn.Module, got "
        f"{type(module).__name__}"
    )


def ddp_no_parameter_requires_grad(module: Any) -> str:
    return (
        "DistributedDataParallel is not needed when a module doesn't have any parameter "
        f"that requires a gradient ({type(module).__name__} has "
        f"{len(list(module.parameters()))} parameter(s), none requiring grad). Wrap a "
        "module with trainable parameters, or call the module directly."
    )


def ddp_device_ids_one_element(device_ids: Any) -> str:
    return (
        f"device_ids can only be None or contain a single element (got {device_ids}); "
        "gradsum modules are on the CPU: leave device_ids None."
    )


def ddp_device_ids_single_device(device_ids: Any, output_device: Any) -> str:
    return (
        "DistributedDataParallel device_ids and output_device arguments only work with "
        "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
        f"{device_ids}, output_device {output_device}, and module parameters on cpu. "
        "gradsum runs on the CPU: leave both None."
    )


def ddp_check_reduction_deprecated() -> str:
    return (
        "The `check_reduction` argument in `DistributedDataParallel` module is "
        "deprecated. Please avoid using it."
    )


def ddp_cannot_be_pickled() -> str:
    return "DistributedDataParallel cannot be pickled; save ddp.module instead"


def ddp_model_count_mismatch(r: Any, n_other: Any, kind: Any, n_ref: Any) -> str:
    return (
        f"DDP expects same model across all ranks, but Rank {r} has "
        f"{n_other} {kind}, while rank 0 has inconsistent "
        f"{n_ref} {kind}"
    )


def ddp_model_differs(r: Any) -> str:
    return f"DDP expects same model across all ranks, but rank {r} differs"


def ddp_model_mismatch(head: Any, difference: Any, rank: Any) -> str:
    return (
        f"{head}: {difference} (this is rank "
        f"{rank}). Build the same model on every rank before wrapping it."
    )


def ddp_backward_without_forward() -> str:
    # torch's opening phrase for the same misuse
    return (
        "Expected to mark a variable ready only once. DistributedDataParallel: "
        "this backward computed gradients of the wrapped parameters, but no "
        "forward of the DDP wrapper ran since the last gradient synchronisation, "
        "so they would not be averaged across ranks. Call ddp(x) (not "
        "ddp.module(x)) before each backward, run the forward inside "
        "ddp.no_sync() to accumulate locally, or put extra backwards of the same "
        "forward inside ddp.no_sync()."
    )
