"""``torch.amp.GradScaler`` through a DistributedOptimizer: one overflow verdict for all replicas.

A plain ``scaler.step(opt)`` unscales and checks the gradients it finds on the optimizer, then
steps or skips. Before the cross-replica reduction those are each replica's local gradients, so
one replica's overflow would make it alone skip and lower its scale. ``GradScaler`` lets an
optimizer take over that step (the optimizer declares ``_step_supports_amp_scaling`` and accepts
``grad_scaler=``): :func:`scaled_step` reduces the gradients first (keeping non-finite values,
which the all-reduce spreads to every replica), lets the scaler unscale and check the *reduced*
gradients (so its verdict, and the scale ``update()`` computes from it, are the same everywhere),
clips after unscaling, and steps the wrapped optimizer or skips on every replica together.

Usage is the ordinary PyTorch one::

    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)          # opt = unison.DistributedOptimizer(...)
    scaler.update()

Example (one replica):
    >>> import torch, unison
    >>> from unison.comm import LocalCommunicator
    >>> model = torch.nn.Linear(2, 1)
    >>> opt = unison.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
    ...                                   communicator=LocalCommunicator())
    >>> scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    >>> scaler.scale(model(torch.ones(4, 2)).sum()).backward()
    >>> _ = scaler.step(opt); scaler.update(); opt.skipped_steps
    0
"""

from __future__ import annotations

import warnings
from typing import Any

# GradScaler announces (FutureWarning, every step) that it may stop passing itself to optimizers
# that handle scaling. That hand-over is what lets the verdict come from reduced gradients; the
# message is for optimizer authors, not for the user of this one.
warnings.filterwarnings("ignore", message="GradScaler is going to stop passing itself", category=FutureWarning)


def scaled_step(opt: Any, scaler: Any, closure: Any = None) -> Any:
    """``opt.step()`` on behalf of ``scaler.step(opt)``: reduce, unscale, check, step or skip."""
    from torch.amp.grad_scaler import OptState

    state = scaler._per_optimizer_states[id(opt)]
    if state["stage"] is OptState.UNSCALED:
        # the user called scaler.unscale_(opt) first (to clip, say): fine only if the gradients
        # it unscaled (and checked) were already the reduced ones
        if not opt._synchronized:
            raise RuntimeError(
                "scaler.unscale_(optimizer) ran before the gradients were reduced across replicas, so "
                "each replica checked only its own gradients for overflow. Either let scaler.step("
                "optimizer) unscale (clip with DistributedOptimizer(clip_grad_norm=...), applied after "
                "unscaling), or call optimizer.synchronize() before scaler.unscale_(optimizer)."
            )
    else:
        if not opt._skip:
            opt._scaler_active = True  # non-finite reduced gradients go to the scaler, not the policy
            try:
                opt.synchronize()
            finally:
                opt._scaler_active = False
        scaler.unscale_(opt)
        opt._clip()
    found = sum(float(v.item()) for v in state["found_inf_per_device"].values())
    if found:
        # every replica unscaled the same reduced gradients: every replica skips here, and
        # scaler.update() lowers the scale on all of them
        opt.skipped_steps += 1
        opt.mark_stepped()
        return None
    with opt.skip_synchronize():
        return opt.step(closure)
