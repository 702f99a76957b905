"""Where this process sits in a job: its rank, the world size, and the rendezvous address.

A strategy never reads environment variables itself (so it runs unchanged under TF_CONFIG,
torchrun or SLURM, docs/semantics.md#layers): the resolvers here do,
and hand the strategy a frozen :class:`ProcessPlacement`.

Two sources are understood:

* unison's own local launcher (``MirroredStrategy`` re-running the user's script, or
  ``unison.testing``) sets the ``UNISON_*`` variables below; the rendezvous store already
  exists (the launcher owns it), so every replica joins it as a client.
* ``torchrun`` / ``unison launch`` (torch's elastic agent) sets ``RANK``, ``WORLD_SIZE``,
  ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT``.

Example:
    >>> p = resolve_placement({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1",
    ...                        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"})
    >>> (p.rank, p.world_size, p.source)
    (1, 2, 'torchrun')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

# Variables set by unison's local launcher for each replica it starts.
ENV_RANK = "UNISON_RANK"
ENV_WORLD_SIZE = "UNISON_WORLD_SIZE"
ENV_LOCAL_RANK = "UNISON_LOCAL_RANK"
ENV_LOCAL_WORLD_SIZE = "UNISON_LOCAL_WORLD_SIZE"
ENV_MASTER_ADDR = "UNISON_MASTER_ADDR"
ENV_MASTER_PORT = "UNISON_MASTER_PORT"
ENV_ERROR_FILE = "UNISON_ERROR_FILE"
ENV_PARENT_PID = "UNISON_PARENT_PID"
# The private (0700) folder of a one-host job's FileStore; set instead of a master port.
ENV_STORE_DIR = "UNISON_STORE_DIR"

# Set to 1 to run more CPU replicas than this machine has cores (they then share cores).
ENV_CPU_OVERSUBSCRIBE = "UNISON_CPU_OVERSUBSCRIBE"

UNISON_SOURCE = "unison"
TORCHRUN_SOURCE = "torchrun"


@dataclass(frozen=True)
class ProcessPlacement:
    """This process's place in a multi-process job.

    Attributes:
        rank: global rank of this process (replica), 0 is the chief.
        world_size: number of processes (replicas) in the job.
        local_rank: rank among the processes of this host.
        local_world_size: number of processes on this host.
        master_addr: host of the rendezvous store.
        master_port: port of the rendezvous store.
        source: ``"unison"`` (store owned by the launcher) or ``"torchrun"`` (``env://``).
        error_file: where this process writes its traceback if it fails (may be ``None``).
        store_dir: the private folder of the job's ``FileStore`` (one-host jobs started by
            unison), or ``None`` when the store is a ``TCPStore`` at ``master_addr:master_port``.
    """

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int
    source: str
    error_file: str | None = None
    store_dir: str | None = None

    def __post_init__(self) -> None:
        if self.world_size < 1:
            raise ValueError(f"world_size must be >= 1. Received: world_size={self.world_size}")
        if not 0 <= self.rank < self.world_size:
            raise ValueError(
                f"rank must be in [0, world_size). Received: rank={self.rank}, world_size={self.world_size}"
            )
        if self.store_dir is None and not 0 < self.master_port < 65536:
            raise ValueError(f"master_port must be in 1..65535. Received: {self.master_port}")

    @property
    def is_chief(self) -> bool:
        """True for rank 0, the replica that prints and writes files."""
        return self.rank == 0


def _int_var(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    raw = env.get(name)
    if raw is None:
        if default is None:
            raise ValueError(
                f"Environment variable {name} is required when the job is launched this way, "
                f"but it is not set. Launch the script with `unison launch` or `torchrun`, which "
                f"set it for every process."
            )
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"Environment variable {name} must be an integer. Received: {name}={raw!r}") from None


def resolve_placement(environ: Mapping[str, str] | None = None) -> ProcessPlacement | None:
    """Read this process's placement from the environment, or ``None`` when it runs alone.

    Args:
        environ: the environment to read (default: ``os.environ``).

    Returns:
        The placement set by unison's launcher (``UNISON_*``) or by torchrun, else ``None``.
    """
    env = os.environ if environ is None else environ
    if ENV_RANK in env:
        world = _int_var(env, ENV_WORLD_SIZE)
        return ProcessPlacement(
            rank=_int_var(env, ENV_RANK),
            world_size=world,
            local_rank=_int_var(env, ENV_LOCAL_RANK, _int_var(env, ENV_RANK)),
            local_world_size=_int_var(env, ENV_LOCAL_WORLD_SIZE, world),
            master_addr=env.get(ENV_MASTER_ADDR, "127.0.0.1"),
            master_port=_int_var(env, ENV_MASTER_PORT, 0 if env.get(ENV_STORE_DIR) else None),
            source=UNISON_SOURCE,
            error_file=env.get(ENV_ERROR_FILE),
            store_dir=env.get(ENV_STORE_DIR) or None,
        )
    if "RANK" in env and "WORLD_SIZE" in env:
        world = _int_var(env, "WORLD_SIZE")
        return ProcessPlacement(
            rank=_int_var(env, "RANK"),
            world_size=world,
            local_rank=_int_var(env, "LOCAL_RANK", 0),
            local_world_size=_int_var(env, "LOCAL_WORLD_SIZE", world),
            master_addr=env.get("MASTER_ADDR", "127.0.0.1"),
            master_port=_int_var(env, "MASTER_PORT"),
            source=TORCHRUN_SOURCE,
            error_file=env.get("TORCHELASTIC_ERROR_FILE"),
        )
    return None


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask; ``os.cpu_count()`` elsewhere)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def cpu_oversubscription_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user asked for more CPU replicas than cores (``UNISON_CPU_OVERSUBSCRIBE=1``)."""
    env = os.environ if environ is None else environ
    return env.get(ENV_CPU_OVERSUBSCRIBE, "").strip() in ("1", "true", "True", "yes")


def local_replica_env(rank: int, world_size: int, store_dir: str) -> dict[str, str]:
    """The variables that make a process replica ``rank`` of a one-host job rendezvousing in ``store_dir``
    (what ``unison.testing.run_distributed`` and the notebook launcher set in each replica they start).

    Example:
        >>> local_replica_env(1, 2, "/tmp/job")[ENV_RANK]
        '1'
    """
    return {
        ENV_RANK: str(rank),
        ENV_WORLD_SIZE: str(world_size),
        ENV_LOCAL_RANK: str(rank),
        ENV_LOCAL_WORLD_SIZE: str(world_size),
        ENV_MASTER_ADDR: "127.0.0.1",
        ENV_STORE_DIR: store_dir,
    }
