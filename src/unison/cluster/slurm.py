"""``SlurmClusterResolver``: the cluster of an ``srun`` job step (TF's ``SlurmClusterResolver``).

Every SLURM task is one TF task. The nodes come from ``SLURM_STEP_NODELIST`` (compressed
host lists such as ``node[01-03,07]``), the tasks per node from ``SLURM_STEP_TASKS_PER_NODE``
(``2(x3),1``), this process from ``SLURM_PROCID``; task ``k`` of a node listens on
``port_base + k``. As in TF, tasks are numbered node by node (SLURM's block distribution) and
handed to the jobs in order (``jobs={"chief": 1, "worker": 3}``).

Example:
    >>> expand_hostlist("node[01-03,07],gpu-a")
    ['node01', 'node02', 'node03', 'node07', 'gpu-a']
    >>> expand_tasks_per_node("2(x2),1")
    [2, 2, 1]
    >>> env = {"SLURM_PROCID": "2", "SLURM_STEP_NODELIST": "n[1-2]", "SLURM_STEP_TASKS_PER_NODE": "2(x2)"}
    >>> r = SlurmClusterResolver(environ=env)
    >>> r.cluster_spec().as_dict(), r.task_type, r.task_id
    ({'worker': ['n1:8888', 'n1:8889', 'n2:8888', 'n2:8889']}, 'worker', 2)
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from unison.cluster.base import ClusterResolver, env_int, plan_from_spec
from unison.cluster.plan import JobPlan
from unison.cluster.spec import ClusterSpec

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p]


def expand_hostlist(hostlist: str) -> list[str]:
    """Expand SLURM's compressed host list (``node[01-03,07]``) into host names, in order."""
    hosts: list[str] = []
    for item in _split_top_level(hostlist.strip()):
        start = item.find("[")
        if start < 0:
            hosts.append(item)
            continue
        end = item.find("]", start)
        if end < 0:
            raise ValueError(f"Malformed SLURM host list {hostlist!r}: unclosed '[' in {item!r}.")
        prefix, body, suffix = item[:start], item[start + 1 : end], item[end + 1 :]
        for spec in body.split(","):
            m = _RANGE.match(spec)
            if m is None:
                raise ValueError(f"Malformed SLURM host list {hostlist!r}: bad range {spec!r}.")
            lo, hi = m.group(1), m.group(2) or m.group(1)
            width = len(lo)
            for n in range(int(lo), int(hi) + 1):
                hosts.extend(expand_hostlist(f"{prefix}{n:0{width}d}{suffix}"))
    return hosts


def expand_tasks_per_node(text: str) -> list[int]:
    """Expand ``SLURM_STEP_TASKS_PER_NODE`` (``2(x3),1``) into one count per node."""
    counts: list[int] = []
    for part in text.strip().split(","):
        m = re.match(r"^(\d+)(?:\(x(\d+)\))?$", part)
        if m is None:
            raise ValueError(f"Malformed SLURM tasks-per-node value {text!r} (part {part!r}).")
        counts.extend([int(m.group(1))] * int(m.group(2) or 1))
    return counts


class SlurmClusterResolver(ClusterResolver):
    """Builds the cluster from SLURM's variables inside ``srun``.

    Args:
        jobs: ``{job_name: number_of_tasks}`` in rank order (default: every task a ``worker``).
        port_base: the first port of each node; its k-th task uses ``port_base + k``.
        gpus_per_node: GPUs of each node (default: the visible GPUs).
        gpus_per_task: GPUs of each task (default: ``gpus_per_node / tasks_per_node``).
        tasks_per_node: overrides ``SLURM_STEP_TASKS_PER_NODE`` (same count on every node).
        auto_set_gpu: accepted for TF compatibility (unison picks the device by local rank).
        rpc_layer: TF's RPC layer name.
        environ: the environment to read (default ``os.environ``).
    """

    def __init__(
        self,
        jobs: Mapping[str, int] | None = None,
        port_base: int = 8888,
        gpus_per_node: int | None = None,
        gpus_per_task: int | None = None,
        tasks_per_node: int | None = None,
        auto_set_gpu: bool = True,
        rpc_layer: str = "grpc",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        origin = "SLURM"
        if not 0 < port_base < 65536:
            raise ValueError(f"port_base must be in 1..65535. Received: port_base={port_base!r}")
        if "SLURM_PROCID" not in env:  # TF's first check, and its error class
            raise RuntimeError(
                "SLURM_PROCID not found in environment. Not running inside a SLURM step? Start the program "
                "with srun (or sbatch + srun) to use SlurmClusterResolver."
            )
        nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST")
        if not nodelist:
            raise ValueError(
                "SLURM: neither SLURM_STEP_NODELIST nor SLURM_JOB_NODELIST is set; run the program with srun."
            )
        nodes = expand_hostlist(nodelist)
        if tasks_per_node is not None:
            per_node = [tasks_per_node] * len(nodes)
        else:
            raw = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE") or "1"
            per_node = expand_tasks_per_node(raw)
        if len(per_node) != len(nodes):
            raise ValueError(
                f"SLURM: {len(nodes)} nodes ({nodelist!r}) but tasks-per-node lists "
                f"{len(per_node)} counts ({per_node})."
            )
        addresses = [f"{node}:{port_base + k}" for node, n in zip(nodes, per_node) for k in range(n)]
        proc_id = env_int(env, "SLURM_PROCID", origin)
        jobs = dict(jobs) if jobs is not None else {"worker": len(addresses)}
        if sum(jobs.values()) != len(addresses):
            raise ValueError(
                f"SLURM: jobs={jobs!r} ask for {sum(jobs.values())} tasks, but the job "
                f"step has {len(addresses)}. Make the counts add up to {len(addresses)}."
            )
        if not 0 <= proc_id < len(addresses):
            raise ValueError(f"SLURM: SLURM_PROCID={proc_id} is out of range for {len(addresses)} tasks.")
        cluster: dict[str, list[str]] = {}
        offset, task_type, task_id = 0, None, None
        for job, count in jobs.items():
            cluster[job] = addresses[offset : offset + count]
            if offset <= proc_id < offset + count:
                task_type, task_id = job, proc_id - offset
            offset += count
        super().__init__(task_type, task_id, rpc_layer, "")
        self._spec = ClusterSpec(cluster, where="SLURM cluster")
        self._env = env
        self._gpus_per_node, self._gpus_per_task = gpus_per_node, gpus_per_task
        self._tasks_on_node = max(per_node) if per_node else 1
        self.auto_set_gpu = auto_set_gpu
        self._run_key = f"unison/slurm/{env.get('SLURM_JOB_ID', '0')}.{env.get('SLURM_STEP_ID', '0')}"

    def cluster_spec(self) -> ClusterSpec:
        return self._spec

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        if self._gpus_per_task is not None:
            return {"GPU": self._gpus_per_task} if self._gpus_per_task else {}
        per_node = self._gpus_per_node if self._gpus_per_node is not None else super().num_accelerators().get("GPU", 0)
        n = per_node // self._tasks_on_node
        return {"GPU": n} if n else {}

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        return plan_from_spec(self, self._spec, "SLURM", "SLURM cluster", replicas_per_worker, self._env, self._run_key)
