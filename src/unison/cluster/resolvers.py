"""Cluster resolvers: read who-is-who from the environment (TF's ``tf.distribute.cluster_resolver``).

Every resolver answers TF's questions (``cluster_spec()``, ``task_type``, ``task_id``,
``num_accelerators()``, ``master()``) and one of unison's: ``job_plan(replicas_per_worker)``,
the :class:`~unison.cluster.plan.JobPlan` a strategy follows to join the job. Resolvers are the
only code that reads ``TF_CONFIG``, torchrun's or SLURM's variables; they validate everything
when they are built, naming the field and the fix.

* :class:`TFConfigClusterResolver`: TF's ``TF_CONFIG`` JSON (set by hand, by Kubeflow's TFJob,
  or by ``unison launch --tf-config``).
* :class:`~unison.cluster.elastic.TorchElasticClusterResolver`: ``torchrun`` / ``unison launch``
  (``RANK``, ``WORLD_SIZE``...).
* :class:`~unison.cluster.slurm.SlurmClusterResolver`: ``srun`` (``SLURM_PROCID``...).
* :class:`SimpleClusterResolver`: an explicit :class:`ClusterSpec`.

Example:
    >>> env = {"TF_CONFIG": '{"cluster": {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]}, '
    ...                     '"task": {"type": "worker", "index": 1}}'}
    >>> r = TFConfigClusterResolver(environ=env)
    >>> (r.task_type, r.task_id, r.cluster_spec().num_tasks("worker"))
    ('worker', 1, 2)
    >>> r.job_plan(1).rank, r.job_plan(1).store_address
    (1, '127.0.0.1:2222')
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from unison.cluster.base import (
    ClusterResolver,
    plan_from_spec,
)
from unison.cluster.elastic import TorchElasticClusterResolver, UnisonLauncherClusterResolver
from unison.cluster.placement import ENV_PARENT_PID, ENV_RANK
from unison.cluster.plan import JobPlan
from unison.cluster.slurm import SlurmClusterResolver
from unison.cluster.spec import ClusterSpec
from unison.errors import ElasticMembershipError, format_choices

_TF_CONFIG_EXAMPLE = '{"cluster": {"worker": ["host1:2222", "host2:2222"]}, "task": {"type": "worker", "index": 0}}'


class SimpleClusterResolver(ClusterResolver):
    """A resolver over an explicit :class:`ClusterSpec` (TF's ``SimpleClusterResolver``).

    Example:
        >>> r = SimpleClusterResolver(ClusterSpec({"worker": ["127.0.0.1:2222"]}),
        ...                           task_type="worker", task_id=0)
        >>> r.master("worker", 0)
        '127.0.0.1:2222'
    """

    def __init__(
        self,
        cluster_spec: ClusterSpec | Mapping[str, Any],
        master: str = "",
        task_type: str | None = None,
        task_id: int | None = None,
        environment: str = "",
        num_accelerators: Mapping[str, int] | None = None,
        rpc_layer: str | None = None,
    ) -> None:
        super().__init__(task_type, task_id, rpc_layer, environment, num_accelerators)
        self._spec = ClusterSpec(cluster_spec)
        self._master = master
        if task_type is not None:
            if task_type not in self._spec:
                raise ValueError(
                    f"task_type={task_type!r} is not a job of the cluster (jobs: "
                    f"{format_choices(self._spec.jobs) or 'none'})."
                )
            if task_id not in self._spec.task_indices(task_type):
                raise ValueError(
                    f"task_id={task_id!r} is not a task of job {task_type!r} (indices: "
                    f"{self._spec.task_indices(task_type)})."
                )

    def cluster_spec(self) -> ClusterSpec:
        return self._spec

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """The ``master`` given to the constructor, or the address of ``task_type:task_id`` (TF's rule),
        prefixed with ``rpc_layer://`` when there is an RPC layer."""
        if task_type is not None and task_id is not None:
            address = self._spec.task_address(task_type, task_id)
        else:
            address = self._master
        layer = rpc_layer or self.rpc_layer
        return f"{layer}://{address}" if layer else address

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        return plan_from_spec(self, self._spec, "cluster spec", "cluster", replicas_per_worker, os.environ, "unison")


def _tf_config_error(problem: str, fix: str, raw: str) -> ValueError:
    shown = raw if len(raw) <= 300 else raw[:300] + "..."
    return ValueError(f"TF_CONFIG: {problem} Fix: {fix} Received: TF_CONFIG={shown!r}")


class TFConfigClusterResolver(ClusterResolver):
    """Reads TF's ``TF_CONFIG`` environment variable (TF's ``TFConfigClusterResolver``).

    ``TF_CONFIG`` is JSON: ``{"cluster": {"chief": [...], "worker": [...], "ps": [...],
    "evaluator": [...]}, "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc"}``; every
    process gets the same ``cluster`` and its own ``task``. It is parsed and validated here, so a
    mistake names the field and the fix before any process connects. Without ``TF_CONFIG`` the
    cluster is empty (one worker on its own).

    Args:
        task_type: overrides ``task.type``.
        task_id: overrides ``task.index``.
        rpc_layer: overrides ``rpc_layer``.
        environment: TF's environment string (unused by unison, kept for compatibility).
        num_accelerators: replicas per worker, ``{"GPU": n}`` or ``{"CPU": n}`` (a unison
            extension; default: the visible GPUs, else one CPU replica).
        environ: the environment to read (default ``os.environ``).
    """

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str | None = None,
        num_accelerators: Mapping[str, int] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._env = os.environ if environ is None else environ
        raw = self._env.get("TF_CONFIG", "")
        config = self._parse(raw)
        task = config.get("task")
        if task is not None and not isinstance(task, dict):
            raise _tf_config_error(
                "'task' must be an object with 'type' and 'index'.",
                'write "task": {"type": "worker", "index": 0}.',
                raw,
            )
        task = task or {}
        cfg_type, cfg_index = task.get("type"), task.get("index")
        if "type" in task and cfg_index is None:
            raise _tf_config_error(
                "task has a 'type' but no 'index'.",
                'add "index": i, this process\'s index within its job (0 for the first).',
                raw,
            )
        if "type" in task and not isinstance(cfg_type, str):
            raise _tf_config_error(
                f"task.type must be a job name string. Received task.type={cfg_type!r}.",
                'write "type": "worker" (or "chief", "ps", "evaluator").',
                raw,
            )
        if cfg_index is not None and (isinstance(cfg_index, bool) or not isinstance(cfg_index, int)):
            raise _tf_config_error(
                f"task.index must be an integer. Received task.index={cfg_index!r}.",
                'write "index": 0 for the first task of the job, 1 for the second...',
                raw,
            )
        super().__init__(
            task_type if task_type is not None else cfg_type,
            task_id if task_id is not None else cfg_index,
            rpc_layer if rpc_layer is not None else config.get("rpc_layer"),
            environment if environment is not None else config.get("environment", ""),
            num_accelerators,
        )
        self._raw = raw
        self._spec = self._cluster(config, raw)
        self._check_task(raw)

    @staticmethod
    def _parse(raw: str) -> dict[str, Any]:
        if not raw.strip():
            return {}
        try:
            config = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _tf_config_error(
                f"it is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}).",
                f"set it to a JSON object such as '{_TF_CONFIG_EXAMPLE}' (in a shell, wrap it in single quotes).",
                raw,
            ) from None
        if not isinstance(config, dict):
            raise _tf_config_error(
                f"it must be a JSON object, not {type(config).__name__}.",
                f"set it to an object such as '{_TF_CONFIG_EXAMPLE}'.",
                raw,
            )
        return config

    @staticmethod
    def _cluster(config: dict[str, Any], raw: str) -> ClusterSpec:
        if not config:
            return ClusterSpec({})
        cluster = config.get("cluster")
        if cluster is None:
            raise _tf_config_error(
                "it has no 'cluster' field, so the workers cannot find each other.",
                'add "cluster": {"worker": ["host1:2222", "host2:2222"]} (the same in every process).',
                raw,
            )
        if not isinstance(cluster, dict) or any(not isinstance(v, list) for v in cluster.values()):
            raise _tf_config_error(
                "'cluster' must map job names to lists of \"host:port\" addresses.",
                'write "cluster": {"worker": ["host1:2222", "host2:2222"]}.',
                raw,
            )
        try:
            return ClusterSpec(cluster)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"TF_CONFIG: {exc} (every process must get the same cluster).") from None

    def _check_task(self, raw: str) -> None:
        spec, task_type, task_id = self._spec, self.task_type, self.task_id
        if not spec or task_type is None:
            return
        if task_type not in spec:
            raise _tf_config_error(
                f"task.type={task_type!r} is not a job of 'cluster' (jobs: {format_choices(spec.jobs)}).",
                f"use one of those job names in task.type, or add a {task_type!r} job to cluster.",
                raw,
            )
        indices = spec.task_indices(task_type)
        if not indices:
            raise _tf_config_error(
                f"cluster.{task_type} is an empty list, but this process is task {task_type}:{task_id}.",
                f'list every {task_type} task\'s "host:port" in cluster.{task_type} (the same list in every '
                f'process), e.g. "{task_type}": ["host1:2222", "host2:2222"].',
                raw,
            )
        if task_id not in indices:
            raise _tf_config_error(
                f"task.index={task_id} is out of range: cluster.{task_type} has {len(indices)} "
                f"task(s) (indices {indices[0]}..{indices[-1]}).",
                f"give each {task_type} process its own index from {indices[0]} to {indices[-1]}, or "
                f"add its address to cluster.{task_type}.",
                raw,
            )

    def cluster_spec(self) -> ClusterSpec:
        return self._spec

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        if self._spec and self.task_type is None:
            raise _tf_config_error(
                "it has no 'task' field, so this process cannot tell which task of the cluster it is.",
                'add "task": {"type": "worker", "index": i} with this process\'s own index i '
                '(0 for the first worker); every process gets the same "cluster" and its own "task".',
                self._raw,
            )
        return plan_from_spec(self, self._spec, "TF_CONFIG", "cluster", replicas_per_worker, self._env, "unison")


def default_cluster_resolver(environ: Mapping[str, str] | None = None) -> ClusterResolver:
    """The resolver for this process's environment, in TF's order of preference.

    ``TF_CONFIG`` if set; else unison's own launcher; else torchrun's variables; else SLURM's
    (inside ``srun``); else a single worker.
    """
    env = os.environ if environ is None else environ
    if env.get("TF_CONFIG", "").strip():
        return TFConfigClusterResolver(environ=env)
    if env.get("UNISON_ELASTIC_STORE"):  # unison.comm.elastic.ENV_ELASTIC_STORE: an elastic agent's worker
        # each worker would otherwise see no cluster and train alone, silently
        raise ElasticMembershipError(
            "A multi-worker strategy was created in a worker of `unison launch --min-workers/--max-workers` "
            "(an elastic job), which re-forms through Horovod's API only. Fix: use `import unison as hvd`, "
            "hvd.init() and hvd.elastic.run (a training loop, or model.fit with hvd.elastic.KerasState and "
            "hvd.DistributedOptimizer), or launch with --max-restarts K and BackupAndRestore instead."
        )
    # A replica that a one-host MirroredStrategy re-ran carries that job's placement, which is not a
    # cluster: there, as in replica 0, a MultiWorkerMirroredStrategy() without TF_CONFIG is one worker.
    mirrored_replica = ENV_PARENT_PID in env and "RANK" not in env and "SLURM_PROCID" not in env
    if ENV_RANK in env and not mirrored_replica:
        return UnisonLauncherClusterResolver(env)
    if "RANK" in env and "WORLD_SIZE" in env:
        return TorchElasticClusterResolver(env)
    if "SLURM_PROCID" in env and ("SLURM_STEP_NODELIST" in env or "SLURM_JOB_NODELIST" in env):
        return SlurmClusterResolver(environ=env)
    return TFConfigClusterResolver(environ={})
