"""MultiWorkerMirroredStrategy: synchronous data parallelism across the workers of a cluster.

TF's model: every worker runs the same program; a cluster resolver (``TF_CONFIG`` by default,
else torchrun's or SLURM's variables, else one worker) says which task this process is. The
replicas are workers x local devices, ranked chief first then workers in order; they meet at the
rendezvous store the chief serves on its own ``host:port`` and then train exactly like
:class:`~unison.distribute.MirroredStrategy` (same process model, same semantics: global batch
split across replicas, loss divided by the global batch size, gradients SUM-reduced, only the
chief prints and writes). Local devices beyond the first are started the way MirroredStrategy
starts its replicas (re-running the command).

Example::

    # on every worker, with its own TF_CONFIG:
    #   TF_CONFIG='{"cluster": {"worker": ["host1:2222", "host2:2222"]},
    #               "task": {"type": "worker", "index": 0}}'
    strategy = unison.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = unison.keras.Sequential([...])
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass

from unison.cluster.resolvers import ClusterResolver, default_cluster_resolver
from unison.comm.communicator import LocalCommunicator, collective_timeout
from unison.distribute.devices import DeviceSpec, parse_devices
from unison.distribute.input import InputPlacement
from unison.distribute.join import join_job
from unison.distribute.mirrored import DEFAULT_TIMEOUT_S
from unison.distribute.strategy import Strategy
from unison.errors import format_choices


class CommunicationImplementation(enum.Enum):
    """Which collective implementation to use (TF's ``CommunicationImplementation``).

    ``AUTO``: NCCL on GPUs, gloo's ring algorithms on CPUs. ``RING``: gloo (CPU replicas).
    ``NCCL``: NCCL (GPU replicas only).
    """

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


CollectiveCommunication = CommunicationImplementation  # TF's deprecated name


@dataclass(frozen=True)
class CommunicationOptions:
    """Options of the cross-worker collectives (TF's ``tf.distribute.experimental.CommunicationOptions``).

    Args:
        bytes_per_pack: accepted for TF compatibility (0 = automatic); gradient buckets are
            sized by :class:`~unison.optim.DistributedOptimizer`.
        timeout_seconds: how long the rendezvous and each collective may wait before failing
            with an error naming the operation and the unreachable task (``None``: 300 s).
        implementation: a :class:`CommunicationImplementation` (or its name).

    Example:
        >>> CommunicationOptions(timeout_seconds=30, implementation="ring").implementation
        <CommunicationImplementation.RING: 'RING'>
    """

    bytes_per_pack: int = 0
    timeout_seconds: float | None = None
    implementation: CommunicationImplementation | str = CommunicationImplementation.AUTO

    def __post_init__(self) -> None:
        if isinstance(self.bytes_per_pack, bool) or not isinstance(self.bytes_per_pack, int) or self.bytes_per_pack < 0:
            raise ValueError(
                f"bytes_per_pack must be an integer >= 0. Received: bytes_per_pack={self.bytes_per_pack!r}"
            )
        if self.timeout_seconds is not None and (
            isinstance(self.timeout_seconds, bool)
            or not isinstance(self.timeout_seconds, (int, float))
            or self.timeout_seconds <= 0
        ):
            raise ValueError(
                f"timeout_seconds must be a number > 0 or None. Received: timeout_seconds={self.timeout_seconds!r}"
            )
        impl = self.implementation
        if isinstance(impl, str) and impl.upper() in CommunicationImplementation.__members__:
            impl = CommunicationImplementation[impl.upper()]
        if not isinstance(impl, CommunicationImplementation):
            raise ValueError(
                f"implementation must be a CommunicationImplementation "
                f"({format_choices(list(CommunicationImplementation.__members__))}). Received: implementation={impl!r}"
            )
        object.__setattr__(self, "implementation", impl)


def _local_devices(resolver: ClusterResolver, options: CommunicationOptions) -> list[DeviceSpec]:
    """This worker's replica devices: its GPUs, else ``{"CPU": n}`` CPU replicas (default 1)."""
    accelerators = resolver.num_accelerators()
    gpus, cpus = accelerators.get("GPU", 0), max(1, accelerators.get("CPU", 1))
    impl = options.implementation
    if impl is CommunicationImplementation.NCCL and not gpus:
        # TF warns and runs (its distributed-training guide asks for NCCL on any host)
        warnings.warn(
            "implementation=NCCL needs GPU replicas, but this worker has none; its CPU replicas "
            "use gloo (RING) instead. Pass CommunicationImplementation.RING or AUTO on CPUs to "
            "silence this.",
            stacklevel=3,
        )
    if impl is CommunicationImplementation.RING and gpus:
        raise ValueError(
            "implementation=RING runs gloo on CPU replicas, but this worker's replicas "
            "are GPUs. Use CommunicationImplementation.AUTO or NCCL on GPUs."
        )
    names = [f"/gpu:{i}" for i in range(gpus)] if gpus else [f"/cpu:{i}" for i in range(cpus)]
    return parse_devices(names)


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous training on the replicas of several workers (TF's ``MultiWorkerMirroredStrategy``).

    Args:
        cluster_resolver: who is who; default: ``TFConfigClusterResolver`` if ``TF_CONFIG`` is
            set, else torchrun's variables (``unison launch``/``torchrun``), else SLURM's
            (``srun``), else a single worker.
        communication_options: a :class:`CommunicationOptions` (timeout, implementation).

    Contract: ``num_replicas_in_sync`` = workers x local devices; the chief (``chief:0`` if the
    cluster has one, else ``worker:0``) holds replica 0, prints and writes files; a worker that
    dies or stops answering makes the others fail within ``timeout_seconds`` with an error naming
    the missing task and the operation.
    """

    def __init__(
        self, cluster_resolver: ClusterResolver | None = None, communication_options: CommunicationOptions | None = None
    ) -> None:
        if communication_options is None:
            communication_options = CommunicationOptions()
        if not isinstance(communication_options, CommunicationOptions):
            raise ValueError(  # TF's class
                "communication_options must be a tf.distribute.experimental.CommunicationOptions. "
                f"Received: {type(communication_options).__name__}"
            )
        resolver = default_cluster_resolver() if cluster_resolver is None else cluster_resolver
        if not isinstance(resolver, ClusterResolver):
            raise TypeError(
                "cluster_resolver must be a tf.distribute.cluster_resolver.ClusterResolver (e.g. "
                f"TFConfigClusterResolver()). Received: {type(resolver).__name__}"
            )
        devices = _local_devices(resolver, communication_options)
        plan = resolver.job_plan(len(devices))
        timeout_s = collective_timeout(float(communication_options.timeout_seconds or DEFAULT_TIMEOUT_S))
        if plan.world_size == 1:
            device = devices[0].to_torch()
            super().__init__(LocalCommunicator(device), device)
        else:
            super().__init__(*join_job(plan, devices, timeout_s))
        self.cluster_resolver = resolver
        self.communication_options = communication_options
        self._plan = plan
        self.extended.task_type = plan.task.type  # type: ignore[attr-defined]
        self.extended.task_id = plan.task.index  # type: ignore[attr-defined]

    @property
    def num_workers(self) -> int:
        """How many workers (tasks) train together."""
        return self._plan.num_workers

    def _input_placement(self) -> InputPlacement:
        plan = self._plan
        return InputPlacement(
            self.num_replicas_in_sync,
            self.extended.replica_id,
            plan.num_workers,
            self.extended.replica_id // max(1, plan.local_world_size),
        )

    def __repr__(self) -> str:
        return (
            f"MultiWorkerMirroredStrategy(task={self._plan.task}, replica={self.extended.replica_id}/"
            f"{self.num_replicas_in_sync}, workers={self.num_workers})"
        )
