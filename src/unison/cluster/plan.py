"""``JobPlan``: what one process needs to join a multi-worker job, computed by a resolver.

A resolver reads the environment (TF_CONFIG, torchrun's variables, SLURM's) and turns it into a
plan; the strategy only follows the plan, so it never reads environment variables itself
(one strategy then runs under every launcher, each setting checked in one place). Ranks follow TF: the chief first (``chief:0`` if present, else
``worker:0``), then the workers in order; each worker holds ``local_world_size`` consecutive
ranks, one per local replica.

Example:
    >>> from unison.cluster.spec import ClusterSpec, TaskSpec
    >>> spec = ClusterSpec({"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]})
    >>> plan = plan_for_task(spec, TaskSpec("worker", 1), replicas_per_worker=2, local_replica=1,
    ...                      origin="TF_CONFIG")
    >>> plan.rank, plan.world_size, plan.store_mode, plan.store_address
    (3, 4, 'join', '127.0.0.1:2222')
    >>> plan.task_of_rank(1)
    'worker:0 (127.0.0.1:2222) replica 1'
"""

from __future__ import annotations

from dataclasses import dataclass

from unison.cluster.placement import TORCHRUN_SOURCE, UNISON_SOURCE, ProcessPlacement
from unison.cluster.spec import ClusterSpec, TaskSpec, format_address, parse_address

# How a process reaches the rendezvous store.
SERVE = "serve"  # this process is the chief's first replica: it creates the store on the chief's port
JOIN = "join"  # connect to the store at store_host:store_port as a client
ENV = "env"  # torchrun / unison's launcher already serves a store (init via their variables)


@dataclass(frozen=True)
class JobPlan:
    """This process's place in a multi-worker job and how to rendezvous.

    Attributes:
        task: this process's task (``worker:1``).
        rank: global rank of this process (one process per replica).
        world_size: replicas in the job (workers x replicas per worker).
        local_rank: this replica's index among its worker's replicas.
        local_world_size: replicas per worker.
        store_host: host of the rendezvous store (the chief's address).
        store_port: port of the rendezvous store.
        store_mode: ``"serve"``, ``"join"`` or ``"env"`` (see the module constants).
        origin: where the addresses came from, for error messages (``"TF_CONFIG"``).
        chief_field: the setting that holds the chief's address (``"cluster.chief[0]"``).
        replica_tasks: for every rank, the task that holds it, as ``"worker:1 (host:port)"``.
        local_host: the host this task's own address names (picks the network interface), or
            ``None`` when unknown.
        colocated_workers: how many training tasks share this task's host (they share its cores).
        run_key: a prefix for this run's keys in the store (distinct per restart).
        error_file: where a launched replica writes its traceback, or ``None``.
        launched: True in a replica that unison started for its worker (local rank > 0).
    """

    task: TaskSpec
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    store_host: str
    store_port: int
    store_mode: str
    origin: str
    chief_field: str = ""
    replica_tasks: tuple[str, ...] = ()
    local_host: str | None = None
    colocated_workers: int = 1
    run_key: str = "unison"
    error_file: str | None = None
    launched: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.rank < self.world_size:
            raise ValueError(
                f"rank must be in [0, world_size). Received: rank={self.rank}, world_size={self.world_size}"
            )
        if self.store_mode not in (SERVE, JOIN, ENV):
            raise ValueError(f"store_mode must be 'serve', 'join' or 'env'. Received: {self.store_mode!r}")

    @property
    def is_chief(self) -> bool:
        """True for rank 0: the chief's first replica, which prints and writes files."""
        return self.rank == 0

    @property
    def store_address(self) -> str:
        return format_address(self.store_host, self.store_port)

    @property
    def num_workers(self) -> int:
        return self.world_size // max(1, self.local_world_size)

    def task_of_rank(self, rank: int) -> str:
        """The task holding ``rank``, as ``"worker:1 (host:port)"`` (or ``"rank 3"`` if unknown)."""
        if 0 <= rank < len(self.replica_tasks):
            label = self.replica_tasks[rank]
            if self.local_world_size > 1:
                label += f" replica {rank % self.local_world_size}"
            return label
        return f"rank {rank}"

    def placement(self) -> ProcessPlacement:
        """The :class:`ProcessPlacement` that :func:`unison.comm.connect` understands."""
        return ProcessPlacement(
            rank=self.rank,
            world_size=self.world_size,
            local_rank=self.local_rank,
            local_world_size=self.local_world_size * self.colocated_workers,
            master_addr=self.store_host,
            master_port=self.store_port,
            source=TORCHRUN_SOURCE if self.store_mode == ENV and self.origin == "torchrun" else UNISON_SOURCE,
            error_file=self.error_file,
        )


def single_process_plan(origin: str = "local") -> JobPlan:
    """The plan of a job of one replica (no rendezvous happens)."""
    return JobPlan(
        task=TaskSpec("worker", 0),
        rank=0,
        world_size=1,
        local_rank=0,
        local_world_size=1,
        store_host="127.0.0.1",
        store_port=1,
        store_mode=ENV,
        origin=origin,
        replica_tasks=("worker:0",),
    )


def plan_for_task(
    spec: ClusterSpec,
    task: TaskSpec,
    replicas_per_worker: int,
    local_replica: int,
    origin: str,
    field_prefix: str = "cluster",
    run_key: str = "unison",
    error_file: str | None = None,
) -> JobPlan:
    """The plan of ``task``'s replica ``local_replica`` in the cluster ``spec`` (TF's rank order).

    Args:
        spec: the validated cluster.
        task: this process's task; must be one of ``spec.training_tasks()``.
        replicas_per_worker: replicas each training task runs (its local devices).
        local_replica: this process's index among its task's replicas.
        origin: where the spec came from (``"TF_CONFIG"``), for errors.
        field_prefix: how errors name the cluster field (``"cluster"`` -> ``"cluster.chief[0]"``).
        run_key: the prefix of this run's keys in the store.
        error_file: where this replica writes its traceback if it was launched by its worker.
    """
    tasks = spec.training_tasks()
    if task not in tasks:
        raise ValueError(
            f"{origin}: task {task} does not train under MultiWorkerMirroredStrategy; the training "
            f"tasks are {', '.join(map(str, tasks)) or 'none'}."
        )
    if not 0 <= local_replica < replicas_per_worker:
        raise ValueError(
            f"local replica {local_replica} is out of range for {replicas_per_worker} replicas per worker."
        )
    chief = tasks[0]
    chief_host, chief_port = parse_address(spec.task_address(chief.type, chief.index))
    own_host, _ = parse_address(spec.task_address(task.type, task.index))
    hosts = [parse_address(spec.task_address(t.type, t.index))[0].lower() for t in tasks]
    labels = tuple(f"{t} ({spec.task_address(t.type, t.index)})" for t in tasks for _ in range(replicas_per_worker))
    rank = tasks.index(task) * replicas_per_worker + local_replica
    return JobPlan(
        task=task,
        rank=rank,
        world_size=len(tasks) * replicas_per_worker,
        local_rank=local_replica,
        local_world_size=replicas_per_worker,
        store_host=chief_host,
        store_port=chief_port,
        store_mode=SERVE if rank == 0 else JOIN,
        origin=origin,
        chief_field=f"{field_prefix}.{chief.type}[{chief.index}]",
        replica_tasks=labels,
        local_host=own_host,
        colocated_workers=hosts.count(own_host.lower()),
        run_key=run_key,
        error_file=error_file,
        launched=local_replica > 0,
    )
