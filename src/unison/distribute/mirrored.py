"""MirroredStrategy: synchronous data parallelism across the devices of one host.

One process per replica (docs/semantics.md#process-model). Run as a plain ``python script.py``, the strategy
makes this process replica 0 and starts the others by re-running the same command; under
``unison launch``/``torchrun`` (or ``unison.testing``) the processes already exist and each one
joins. Gradients are SUM-reduced with torch.distributed (gloo on CPU, NCCL on CUDA) through
:class:`unison.optim.DistributedOptimizer`.

Example::

    strategy = unison.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        model = unison.keras.Sequential([...])
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import Any

import torch

from unison.cluster.placement import ENV_PARENT_PID, UNISON_SOURCE, resolve_placement
from unison.cluster.secret import job_secret
from unison.comm.communicator import LocalCommunicator, collective_timeout
from unison.distribute.devices import parse_devices, substitute_missing_gpus
from unison.distribute.join import join_replica, keep_gloo_on_loopback, launch_local_job
from unison.distribute.strategy import Strategy
from unison.launch.local import install_replica_hooks

DEFAULT_TIMEOUT_S = 300.0


class MirroredStrategy(Strategy):
    """Synchronous training on several devices of one host, one process per device.

    Args:
        devices: TF device strings, e.g. ``["/cpu:0", "/cpu:1"]`` or ``["/gpu:0", "/gpu:1"]``;
            default: all visible GPUs, else one CPU.
        cross_device_ops: accepted for TF compatibility; gradients always go through
            torch.distributed (gloo on CPU, NCCL on CUDA).
        timeout_seconds: how long one collective may wait before failing with an error that
            names it (a dead or stuck replica never hangs the job).

    Contract: only replica 0 prints progress and writes files; if any replica fails, all stop
    and the user sees which replica failed and its traceback.
    """

    def __init__(
        self,
        devices: Sequence[str] | None = None,
        cross_device_ops: Any = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be > 0. Received: timeout_seconds={timeout_seconds}")
        timeout_seconds = collective_timeout(timeout_seconds)  # UNISON_COLLECTIVE_TIMEOUT wins
        parsed, missing = substitute_missing_gpus(parse_devices(devices, missing_gpus="keep"))
        placement = resolve_placement()
        if missing and (placement is None or placement.rank == 0):
            # TF runs such a program with soft placement; say once what runs where instead.
            warnings.warn(
                f"MirroredStrategy: devices {missing} are not available on this machine "
                f"({torch.cuda.device_count() if torch.cuda.is_available() else 0} visible GPU(s)); "
                f"running {len(parsed)} replica(s) on {[d.text for d in parsed]} instead.",
                stacklevel=2,
            )
        store = None
        if placement is None and len(parsed) > 1:
            placement, store = launch_local_job(len(parsed), timeout_seconds)
        elif placement is not None and ENV_PARENT_PID in os.environ and len(parsed) == 1 < placement.world_size:
            # A replica that replica 0 re-ran: a one-device strategy here is the one-device strategy
            # replica 0 made on its own at this line (TF's guide makes several strategies in a row).
            placement = None
        elif placement is not None:
            if devices is not None and placement.world_size != len(parsed):
                raise ValueError(
                    f"This process is one of {placement.world_size} launched replicas, but "
                    f"MirroredStrategy was given {len(parsed)} devices ({list(devices)!r}). Pass "
                    f"{placement.world_size} devices, or devices=None to use one per launched process."
                )
            if placement.source == UNISON_SOURCE:
                keep_gloo_on_loopback()
                install_replica_hooks(placement)
        if placement is None or placement.world_size == 1:
            device = parsed[0].to_torch()
            super().__init__(LocalCommunicator(device), device)
        else:
            comm, device = join_replica(placement, parsed, timeout_seconds, store, job_secret())
            super().__init__(comm, device)
        self._devices = [d.text for d in parsed]
        from unison.optim.agreement import mark_multi_replica

        mark_multi_replica(self.extended.communicator)  # an optimizer nothing synchronises is refused

    @property
    def worker_devices(self) -> tuple[str, ...]:
        """The devices of this host's replicas, as given."""
        return tuple(self._devices)

    def __repr__(self) -> str:
        return (
            f"MirroredStrategy(devices={self._devices!r}, replica={self.extended.replica_id}/"
            f"{self.num_replicas_in_sync})"
        )
