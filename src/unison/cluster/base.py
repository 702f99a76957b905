"""What every cluster resolver shares: the base class, the plan of a fully described cluster.

:mod:`~unison.cluster.resolvers` (TF_CONFIG, explicit specs), :mod:`~unison.cluster.elastic`
(torchrun, ``unison launch``) and :mod:`~unison.cluster.slurm` (``srun``) each build on this
module and on nothing of each other's, so the three never import in a circle.

Example:
    >>> env_int({"RANK": "3"}, "RANK", "torchrun")
    3
    >>> worker_replica({})
    (0, None, None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unison.cluster.plan import JobPlan, plan_for_task, single_process_plan
from unison.cluster.spec import EVALUATOR, PS, ClusterSpec, TaskSpec

# Set by MultiWorkerMirroredStrategy in the replicas it starts for a worker with several devices.
ENV_WORKER_REPLICA = "UNISON_WORKER_REPLICA"
ENV_WORKER_REPLICAS = "UNISON_WORKER_REPLICAS"
ENV_WORKER_ERROR_FILE = "UNISON_WORKER_ERROR_FILE"


def gpu_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_accelerators(value: Mapping[str, int] | None) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or any(
        k not in ("CPU", "GPU") or isinstance(v, bool) or not isinstance(v, int) or v < 0 for k, v in value.items()
    ):
        raise ValueError(
            "num_accelerators maps 'GPU' or 'CPU' to a count of replicas per worker, e.g. "
            f"{{'GPU': 2}} or {{'CPU': 2}}. Received: num_accelerators={value!r}"
        )
    return dict(value)


def worker_replica(env: Mapping[str, str]) -> tuple[int, int | None, str | None]:
    """(local replica index, replicas per worker or None, error file) of a launched replica."""
    raw = env.get(ENV_WORKER_REPLICA)
    if raw is None:
        return 0, None, None
    return int(raw), int(env.get(ENV_WORKER_REPLICAS, "1")), env.get(ENV_WORKER_ERROR_FILE)


class ClusterResolver:
    """Base class: the cluster, this process's task and its accelerators (TF's ``ClusterResolver``).

    Subclasses implement ``cluster_spec`` and ``job_plan``; the TF attributes are plain fields.
    """

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str = "",
        num_accelerators: Mapping[str, int] | None = None,
    ) -> None:
        self.task_type = task_type
        self.task_id = task_id
        self.rpc_layer = rpc_layer
        self.environment = environment
        self._num_accelerators = check_accelerators(num_accelerators)

    def cluster_spec(self) -> ClusterSpec:
        """The whole cluster."""
        raise NotImplementedError

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Devices of this task that hold replicas: ``{"GPU": n}`` (visible GPUs), ``{}`` on CPU."""
        if self._num_accelerators is not None:
            return dict(self._num_accelerators)
        n = gpu_count()
        return {"GPU": n} if n else {}

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """The address of ``task_type:task_id`` (default: this task), prefixed with the RPC layer."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        """How this process joins the job, with ``replicas_per_worker`` replicas per task."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(task_type={self.task_type!r}, task_id={self.task_id!r}, "
            f"cluster_spec={self.cluster_spec()!r})"
        )


def plan_from_spec(
    resolver: ClusterResolver,
    spec: ClusterSpec,
    origin: str,
    field_prefix: str,
    replicas_per_worker: int,
    env: Mapping[str, str],
    run_key: str,
) -> JobPlan:
    """The plan for resolvers that know every task's address (TF_CONFIG, SLURM, explicit)."""
    task_type, task_id = resolver.task_type, resolver.task_id
    if not spec.training_tasks() or task_type == EVALUATOR:
        if replicas_per_worker > 1:
            raise ValueError(
                f"{origin}: a single worker with {replicas_per_worker} local replicas needs no "
                "cluster; use tf.distribute.MirroredStrategy for one host, or describe the "
                "workers in the cluster spec."
            )
        return single_process_plan(origin)
    if task_type is None or task_id is None:
        raise ValueError(
            f"{origin}: this process's task is not set, so it cannot tell which worker it is. "
            f'Fix: add "task": {{"type": "worker", "index": i}} (i = this process\'s index).'
        )
    if task_type == PS:
        raise ValueError(
            f"{origin}: task {task_type}:{task_id} is a parameter server, but "
            "MultiWorkerMirroredStrategy trains on the chief and workers only. Run parameter "
            "servers under tf.distribute.experimental.ParameterServerStrategy."
        )
    replica, launched_with, error_file = worker_replica(env)
    if launched_with is not None and launched_with != replicas_per_worker:
        raise ValueError(
            f"This replica was started as one of {launched_with} replicas of {task_type}:{task_id}, "
            f"but the strategy here asks for {replicas_per_worker}. Every replica of a worker "
            "must create the same MultiWorkerMirroredStrategy."
        )
    return plan_for_task(
        spec,
        TaskSpec(task_type, task_id),
        replicas_per_worker,
        replica,
        origin,
        field_prefix,
        run_key=run_key,
        error_file=error_file,
    )


def env_int(env: Mapping[str, str], name: str, origin: str, default: int | None = None) -> int:
    raw = env.get(name)
    if raw is None:
        if default is not None:
            return default
        raise ValueError(
            f"{origin}: environment variable {name} is not set; the launcher sets it for every process it starts."
        )
    try:
        return int(raw)
    except ValueError:
        raise ValueError(
            f"{origin}: environment variable {name} must be an integer. Received: {name}={raw!r}"
        ) from None


__all__ = [
    "ENV_WORKER_ERROR_FILE",
    "ENV_WORKER_REPLICA",
    "ENV_WORKER_REPLICAS",
    "ClusterResolver",
    "check_accelerators",
    "env_int",
    "gpu_count",
    "plan_from_spec",
    "worker_replica",
]
