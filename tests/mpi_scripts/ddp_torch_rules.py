"""DDP behaviours established against torch 2.13's DistributedDataParallel (gloo, 2 ranks):
no_sync is decided by the forward, the buffer-broadcast rule, broadcast_buffers=False and
forward_sync_buffers, the constructor's argument errors, destroy_process_group. Run on 2
ranks. Each section runs even if another failed and prints "<section> OK" when it passed."""

import sys
import warnings

from _worker import expect, failed, section

import gradsum
import gradsum.distributed as dist
from gradsum import nn
from gradsum.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="mpi")
r, W = dist.get_rank(), dist.get_world_size()
assert W == 2, "run on 2 ranks"




@section
def no_sync_forward_decides() -> None:
    # no_sync: the forward decides (torch: 1.5 = average of 1 and 2; local: r + 1)
    m = nn.Linear(2, 1)
    d = DDP(m)
    x = gradsum.full((1, 2), float(r + 1))
    out = d(x).sum()
    with d.no_sync():
        out.backward()
    expect(m.weight.grad.tolist() == [[1.5, 1.5]], f"fwd out/bwd in: {m.weight.grad.tolist()}")
    d.zero_grad()
    with d.no_sync():
        out = d(x).sum()
    out.backward()
    got = m.weight.grad.tolist()
    expect(got == [[r + 1.0] * 2], f"fwd in/bwd out: {got}")
    d(x).sum().backward()  # synchronises the accumulated sum: (2 + 4) / 2
    expect(m.weight.grad.tolist() == [[3.0, 3.0]], f"synced step: {m.weight.grad.tolist()}")
    # a forward outside no_sync, then a backward inside (synchronises) and one outside: error
    out = d(x).sum()
    with d.no_sync():
        out.backward(retain_graph=True)
    try:
        out.backward()
    except RuntimeError as e:
        expect(str(e).startswith("Expected to mark a variable ready only once"), str(e))
    else:
        expect(False, "second backward of a synchronised forward did not raise")


@section
def buffer_broadcast_rule() -> None:
    # buffers: broadcast before a forward iff the previous one had grad and was outside no_sync,
    # whatever the training flag (values torch 2.13 gives on ranks 0 and 1)
    m2 = nn.Linear(2, 1)
    m2.register_buffer("b", gradsum.zeros(1))
    d2 = DDP(m2)
    x = gradsum.ones(1, 2)
    seen = []
    steps = [(True, False), (True, False), (False, True), (False, True), (True, True),
             (True, True)]
    for grad, train in steps:  # (grad enabled, training)
        m2.b.fill_(10.0 * len(seen) + r)
        d2.train(train)
        with gradsum.set_grad_enabled(grad):
            o = d2(x)
        seen.append(m2.b.item())
        if grad:
            o.sum().backward()
    expect(seen == [0.0, 10.0, 20.0, 30.0 + r, 40.0 + r, 50.0], f"buffer broadcasts {seen}")
    with d2.no_sync():
        d2(x).sum().backward()
        m2.b.fill_(60.0 + r)
        d2(x).sum().backward()  # the previous forward was inside no_sync: no broadcast
        expect(m2.b.item() == 60.0 + r, f"no_sync forward broadcast buffers: {m2.b.item()}")


@section
def broadcast_buffers_false() -> None:
    # broadcast_buffers=False (deprecated): warns, keeps buffers out of the initial sync
    gradsum.manual_seed(r)
    m3 = nn.Linear(2, 2)
    m3.register_buffer("b", gradsum.full((1,), float(r + 1)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DDP(m3, broadcast_buffers=False)
    expect([w.category for w in caught] == [FutureWarning], f"warnings {caught}")
    expect(m3.b.item() == r + 1.0, "broadcast_buffers=False synced the buffers at init")
    probe = m3.weight.detach().clone()
    dist.broadcast(probe, 0)
    expect(gradsum.equal(probe, m3.weight.detach()), "parameters not synced at init")


@section
def forward_sync_buffers() -> None:
    # forward_sync_buffers=False: buffers synced at init, not before forwards; no warning
    m4 = nn.Linear(2, 2)
    m4.register_buffer("b", gradsum.full((1,), float(r + 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d4 = DDP(m4, forward_sync_buffers=False)
    expect(m4.b.item() == 1.0, "forward_sync_buffers=False: buffers not synced at init")
    m4.b.fill_(5.0 + r)
    d4(gradsum.ones(1, 2))
    expect(m4.b.item() == 5.0 + r, "forward_sync_buffers=False broadcast before a forward")


@section
def constructor_errors() -> None:
    # constructor errors (torch's types), raised before any collective
    for build, kind, phrase in [
        (lambda: DDP(nn.Linear(2, 2).requires_grad_(False)), RuntimeError, "is not needed"),
        (lambda: DDP(nn.Identity()), RuntimeError, "is not needed"),
        (lambda: DDP(nn.Linear(2, 2), device_ids=[0]), ValueError, "device_ids and output"),
    ]:
        try:
            build()
        except kind as e:
            expect(phrase in str(e), str(e))
        else:
            expect(False, f"no {kind.__name__} ({phrase})")


def destroy_twice() -> None:
    dist.destroy_process_group()
    try:
        dist.destroy_process_group()
    except AssertionError as e:
        expect(str(e).startswith("Process group cannot be None"), str(e))
    else:
        expect(False, "destroying twice did not raise")


try:
    destroy_twice()
except Exception as e:
    failed.append("destroy_twice")
    print(f"rank {r}: destroy_twice FAILED: {type(e).__name__}: {e}", flush=True)
else:
    print(f"rank {r}: destroy_twice OK", flush=True)
if failed:
    sys.exit(3)
print(f"rank {r}: ddp torch rules OK", flush=True)
