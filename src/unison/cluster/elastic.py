"""Resolvers for processes a launcher started: torchrun's elastic agent, and unison's own launcher.

torchrun (``unison launch``) sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``GROUP_WORLD_SIZE`` (nodes), ``MASTER_ADDR``/``MASTER_PORT`` (its store) and
``TORCHELASTIC_RUN_ID``/``TORCHELASTIC_RESTART_COUNT``; every process is one worker holding one
replica. unison's local launcher and ``unison.testing`` set the ``UNISON_*`` variables.

Example:
    >>> env = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    >>> plan = TorchElasticClusterResolver(env).job_plan(1)
    >>> plan.rank, plan.world_size, plan.store_mode
    (1, 2, 'env')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from unison.cluster.base import ClusterResolver, env_int, gpu_count
from unison.cluster.placement import resolve_placement
from unison.cluster.plan import ENV, JobPlan, single_process_plan
from unison.cluster.spec import ClusterSpec, TaskSpec, format_address


class TorchElasticClusterResolver(ClusterResolver):
    """Reads torchrun's (the elastic agent's) variables: ``unison launch``, ``torchrun``.

    Each process is one worker task holding one replica (``worker:RANK``); the rendezvous store
    is the agent's (``MASTER_ADDR:MASTER_PORT``). torchrun does not publish the other
    processes' addresses, so the cluster spec names only ``worker:0``'s rendezvous address.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        origin = "torchrun"
        self._rank = env_int(env, "RANK", origin)
        self._world = env_int(env, "WORLD_SIZE", origin)
        self._local_rank = env_int(env, "LOCAL_RANK", origin, 0)
        self._local_world = env_int(env, "LOCAL_WORLD_SIZE", origin, self._world)
        self._nodes = env_int(env, "GROUP_WORLD_SIZE", origin, 0)
        self._master = (env.get("MASTER_ADDR") or "127.0.0.1", env_int(env, "MASTER_PORT", origin))
        self._run_key = f"unison/{env.get('TORCHELASTIC_RUN_ID', 'run')}/{env.get('TORCHELASTIC_RESTART_COUNT', '0')}"
        self._error_file = env.get("TORCHELASTIC_ERROR_FILE")
        super().__init__("worker", self._rank, None, "")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec({"worker": {0: format_address(*self._master)}})

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        return {"GPU": 1} if gpu_count() else {}

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        if replicas_per_worker != 1:
            raise ValueError(
                f"Under torchrun / `unison launch` every process is one replica, but "
                f"{replicas_per_worker} replicas per worker were asked for. Start more processes "
                "instead (--nproc-per-node)."
            )
        if self._world == 1:
            return single_process_plan("torchrun")
        single_node = self._nodes == 1 or self._local_world == self._world
        return JobPlan(
            task=TaskSpec("worker", self._rank),
            rank=self._rank,
            world_size=self._world,
            local_rank=self._local_rank,
            local_world_size=1,
            store_host=self._master[0],
            store_port=self._master[1],
            store_mode=ENV,
            origin="torchrun",
            chief_field="MASTER_ADDR:MASTER_PORT",
            replica_tasks=tuple(f"worker:{r}" for r in range(self._world)),
            local_host="127.0.0.1" if single_node else None,
            colocated_workers=self._local_world,
            run_key=self._run_key,
            error_file=self._error_file,
        )


class UnisonLauncherClusterResolver(ClusterResolver):
    """The replicas started by unison's local launcher or ``unison.testing.run_distributed``."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        placement = resolve_placement(os.environ if environ is None else environ)
        if placement is None:
            raise ValueError("UnisonLauncherClusterResolver needs the UNISON_* variables that unison's launcher sets.")
        self._placement = placement
        super().__init__("worker", placement.rank, None, "")

    def cluster_spec(self) -> ClusterSpec:
        p = self._placement
        return ClusterSpec({"worker": {0: format_address(p.master_addr, p.master_port)}})

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        return {"GPU": 1} if gpu_count() else {}

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        p = self._placement
        if p.world_size == 1:
            return single_process_plan("unison")
        return JobPlan(
            task=TaskSpec("worker", p.rank),
            rank=p.rank,
            world_size=p.world_size,
            local_rank=p.local_rank,
            local_world_size=1,
            store_host=p.master_addr,
            store_port=p.master_port,
            store_mode=ENV,
            origin="unison",
            chief_field="UNISON_MASTER_ADDR:UNISON_MASTER_PORT",
            replica_tasks=tuple(f"worker:{r}" for r in range(p.world_size)),
            local_host="127.0.0.1",
            colocated_workers=p.local_world_size,
            run_key="unison/launcher",
            error_file=p.error_file,
        )
