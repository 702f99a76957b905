"""``ClusterSpec`` and ``TaskSpec``: the tasks of a multi-worker job and their addresses (TF's model).

A cluster is a set of named jobs (``chief``, ``worker``, ``ps``, ``evaluator``), each a list of
``host:port`` addresses. TF's rules hold: the chief is ``chief:0`` if the cluster has a chief job,
else ``worker:0``; the tasks that train are the chief (if present) then the workers, in order.
Both classes are frozen and validated when built, so a typo fails before any process connects.

Example:
    >>> spec = ClusterSpec({"chief": ["a:2222"], "worker": ["b:2222", "c:2222"]})
    >>> spec.num_tasks("worker"), spec.task_address("worker", 1)
    (2, 'c:2222')
    >>> [str(t) for t in spec.training_tasks()], str(spec.chief_task())
    (['chief:0', 'worker:0', 'worker:1'], 'chief:0')
    >>> parse_address("[::1]:8888")
    ('::1', 8888)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from unison.errors import format_choices

CHIEF, WORKER, PS, EVALUATOR = "chief", "worker", "ps", "evaluator"
# Jobs whose tasks train in lockstep under MultiWorkerMirroredStrategy, in rank order.
TRAINING_JOBS = (CHIEF, WORKER)
_SINGLETON_JOBS = (CHIEF, EVALUATOR)

_JOB_NAME = re.compile(r"^[A-Za-z][\w-]*$")
_HOST = re.compile(r"^[A-Za-z0-9_.\-]+$")


def parse_address(address: Any, where: str = "address") -> tuple[str, int]:
    """Split ``"host:port"`` (or ``"[ipv6]:port"``) into ``(host, port)``, or raise ``ValueError``.

    Args:
        address: the text to parse.
        where: how to name the value in the error (``"TF_CONFIG cluster.worker[1]"``).
    """
    hint = (
        'Expected "host:port" with a port in 1..65535, e.g. "10.0.0.2:2222", '
        '"worker-1.example.com:2222" or "[::1]:2222".'
    )
    if not isinstance(address, str):
        raise ValueError(f'{where} must be a string "host:port". {hint} Received: {where}={address!r}')
    text = address.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        ok_host = bool(host) and sep == "]" and rest.startswith(":") and ":" in host
        port_text = rest[1:]
    else:
        host, sep, port_text = text.rpartition(":")
        ok_host = bool(sep) and bool(_HOST.match(host or ""))
    if not ok_host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"Malformed address at {where}. {hint} Received: {where}={address!r}")
    return host, int(port_text)


def format_address(host: str, port: int) -> str:
    """The inverse of :func:`parse_address` (brackets around IPv6 hosts)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True, order=True)
class TaskSpec:
    """One task of a cluster: its job name and index, e.g. ``TaskSpec("worker", 1)``.

    Attributes:
        type: the job name (``"chief"``, ``"worker"``, ``"ps"``, ``"evaluator"`` or a custom one).
        index: the task's index within its job, ``>= 0``.
    """

    type: str
    index: int

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or not _JOB_NAME.match(self.type):
            raise ValueError(
                f"A task type is a job name such as 'chief', 'worker', 'ps' or 'evaluator'. "
                f"Received: type={self.type!r}"
            )
        if isinstance(self.index, bool) or not isinstance(self.index, int) or self.index < 0:
            raise ValueError(f"A task index is an integer >= 0. Received: index={self.index!r}")

    def __str__(self) -> str:
        return f"{self.type}:{self.index}"


@dataclass(frozen=True, init=False)
class ClusterSpec:
    """The jobs of a cluster and the address of every task (TF's ``tf.train.ClusterSpec``).

    Args:
        cluster: ``{job_name: [address, ...]}`` (or ``{job_name: {index: address}}`` for a job
            whose tasks are only partly known), or another ``ClusterSpec``.

    Raises:
        ValueError: naming the field, for a malformed job name or address, a duplicate address,
            or more than one ``chief`` or ``evaluator`` task.

    Example:
        >>> ClusterSpec({"worker": ["localhost:2222", "localhost:2223"]}).as_dict()
        {'worker': ['localhost:2222', 'localhost:2223']}
    """

    jobs_items: tuple[tuple[str, tuple[tuple[int, str], ...]], ...]

    def __init__(
        self,
        cluster: Mapping[str, Sequence[str] | Mapping[int, str]] | ClusterSpec | None = None,
        where: str = "cluster",
    ) -> None:
        if isinstance(cluster, ClusterSpec):
            object.__setattr__(self, "jobs_items", cluster.jobs_items)
            return
        if cluster is None:
            cluster = {}
        if hasattr(cluster, "job") and hasattr(cluster, "SerializeToString"):  # a tf.train.ClusterDef
            # TF's order for a ClusterDef: jobs sorted by name.
            cluster = {job.name: dict(job.tasks) for job in sorted(cluster.job, key=lambda j: j.name)}
        if not isinstance(cluster, Mapping):
            raise TypeError(
                f"{where} must map job names to address lists, e.g. "
                f'{{"worker": ["host1:2222", "host2:2222"]}}, or be a tf.train.ClusterDef. Received: {where}={cluster!r}'
            )
        items: list[tuple[str, tuple[tuple[int, str], ...]]] = []
        seen: dict[tuple[str, int], str] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError(f"{where} has a job name {job!r} of type {type(job).__name__}; job names are strings.")
            if not _JOB_NAME.match(job):
                raise ValueError(
                    f"{where} has an invalid job name {job!r}; job names are words such as "
                    f"'chief', 'worker', 'ps' or 'evaluator'."
                )
            if isinstance(tasks, Mapping):
                indexed = list(tasks.items())
            elif isinstance(tasks, (list, tuple)):
                indexed = list(enumerate(tasks))
            else:
                raise TypeError(
                    f'{where}.{job} must be a list of "host:port" addresses (or a dict from task index to '
                    f"address). Received: {where}.{job}={tasks!r}"
                )
            entries = []
            for index, address in indexed:
                if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                    raise ValueError(f"{where}.{job} has an invalid task index {index!r}.")
                field = f"{where}.{job}[{index}]"
                host, port = parse_address(address, field)
                key = (host.lower(), port)
                if key in seen:
                    raise ValueError(
                        f"Duplicate address {address!r}: {seen[key]} and {field} both use it, but "
                        f"each task needs its own host:port. Fix: give {field} another port (or "
                        f"host)."
                    )
                seen[key] = field
                entries.append((index, address.strip()))
            if job in _SINGLETON_JOBS and len(entries) > 1:
                raise ValueError(
                    f"{where}.{job} has {len(entries)} tasks, but a cluster has at most one "
                    f"{job}. Fix: keep one address in {where}.{job} (make the others workers)."
                )
            items.append((job, tuple(sorted(entries))))
        object.__setattr__(self, "jobs_items", tuple(items))

    # --- TF's accessors ---------------------------------------------------------------------
    @property
    def jobs(self) -> list[str]:
        """The job names, in the order they were given."""
        return [job for job, _ in self.jobs_items]

    def _job(self, job_name: str) -> tuple[tuple[int, str], ...]:
        for job, tasks in self.jobs_items:
            if job == job_name:
                return tasks
        raise ValueError(f"No such job in the cluster: {job_name!r}. Jobs: {format_choices(self.jobs) or 'none'}.")

    def num_tasks(self, job_name: str) -> int:
        """How many tasks ``job_name`` has."""
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        """The indices of ``job_name``'s tasks, ascending."""
        return [i for i, _ in self._job(job_name)]

    def task_address(self, job_name: str, task_index: int) -> str:
        """The ``host:port`` of one task."""
        for i, address in self._job(job_name):
            if i == task_index:
                return address
        raise ValueError(
            f"Task index {task_index} is not in job {job_name!r} (indices: {self.task_indices(job_name)})."
        )

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Addresses of ``job_name`` by index (``None`` where a sparse job has no task)."""
        tasks = dict(self._job(job_name))
        return [tasks.get(i) for i in range(max(tasks, default=-1) + 1)]

    def as_dict(self) -> dict[str, Any]:
        """``{job: [addresses]}`` (``{job: {index: address}}`` for a sparse job), as TF returns it."""
        out: dict[str, Any] = {}
        for job, tasks in self.jobs_items:
            dense = [i for i, _ in tasks] == list(range(len(tasks)))
            out[job] = [a for _, a in tasks] if dense else dict(tasks)
        return out

    def as_cluster_def(self) -> Any:
        """This cluster as a ``tf.train.ClusterDef`` protobuf message (jobs sorted by name, as TF does)."""
        from unison.ops.train_protos import ClusterDef, JobDef

        return ClusterDef(job=[JobDef(name=job, tasks=dict(tasks)) for job, tasks in sorted(self.jobs_items)])

    def __eq__(self, other: object) -> bool:
        # TF compares the job -> tasks mapping: the order jobs were given in does not matter.
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return dict(self.jobs_items) == dict(other.jobs_items)

    def __hash__(self) -> int:
        return hash(frozenset(self.jobs_items))

    def __bool__(self) -> bool:
        return bool(self.jobs_items)

    def __contains__(self, job_name: object) -> bool:
        return any(job == job_name for job, _ in self.jobs_items)

    def __iter__(self) -> Iterator[str]:
        return iter(self.jobs)

    # --- TF's rules -----------------------------------------------------------------------------
    def chief_task(self) -> TaskSpec | None:
        """``chief:0`` if the cluster has a chief job, else ``worker:0``, else ``None`` (TF's rule)."""
        for job in TRAINING_JOBS:
            if job in self and self.num_tasks(job):
                return TaskSpec(job, self.task_indices(job)[0])
        return None

    def training_tasks(self) -> list[TaskSpec]:
        """The tasks that train in lockstep, in rank order: the chief, then the workers."""
        return [TaskSpec(job, i) for job in TRAINING_JOBS if job in self for i in self.task_indices(job)]

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"
