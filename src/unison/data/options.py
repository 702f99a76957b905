"""``tf.data.Options`` and the constants of ``tf.data`` (AUTOTUNE, cardinalities, shard policies).

Example:
    >>> options = Options()
    >>> options.experimental_distribute.auto_shard_policy = AutoShardPolicy.DATA
    >>> options.experimental_distribute.auto_shard_policy
    <AutoShardPolicy.DATA: 2>
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class AutoShardPolicy(enum.IntEnum):
    """How a multi-worker strategy splits a dataset between workers (TF's values and meaning).

    ``AUTO``: ``FILE`` if the pipeline reads files (and has at least one file per worker), else
    ``DATA``. ``FILE``: each worker reads its share of the files. ``DATA``: every worker reads
    everything and keeps its share. ``OFF``: no sharding, every worker sees every element.
    """

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


@dataclass
class DistributeOptions:
    """``options.experimental_distribute``: the ``auto_shard_policy`` multi-worker input uses."""

    auto_shard_policy: AutoShardPolicy = AutoShardPolicy.AUTO
    num_devices: int | None = None


@dataclass
class ThreadingOptions:
    """``options.threading``: ``private_threadpool_size`` bounds the threads (and AUTOTUNE's
    processes) of a parallel ``map``; ``worker_processes`` (a unison extension) runs a parallel
    ``map`` over arrays in that many forked processes: ``None`` lets ``AUTOTUNE`` decide, ``0``
    keeps threads (see :mod:`unison.data.processes`)."""

    private_threadpool_size: int = 0  # 0: as many threads as cores
    max_intra_op_parallelism: int = 0
    worker_processes: int | None = None


@dataclass
class OptimizationOptions:
    """``options.experimental_optimization``: accepted for compatibility; unison has no graph rewrites."""

    map_parallelization: bool = True
    apply_default_optimizations: bool = True


class AutotuneAlgorithm(enum.IntEnum):
    """``tf.data.experimental.AutotuneAlgorithm``: how AUTOTUNE searches (TF's names and values).

    unison's AUTOTUNE sizes parallel maps from the cores; the choice is kept on the options.
    """

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class ExternalStatePolicy(enum.IntEnum):
    """``tf.data.experimental.ExternalStatePolicy``: what checkpointing does with external state."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


@dataclass
class AutotuneOptions:
    """``options.autotune``: AUTOTUNE's switch and budgets (``cpu_budget`` cores, ``ram_budget`` bytes)."""

    enabled: bool | None = None
    cpu_budget: int | None = None
    ram_budget: int | None = None
    autotune_algorithm: AutotuneAlgorithm | None = None


@dataclass
class Options:
    """Options of a dataset (``ds.with_options(options)``), as ``tf.data.Options``."""

    deterministic: bool | None = None
    experimental_deterministic: bool | None = None
    experimental_distribute: DistributeOptions = field(default_factory=DistributeOptions)
    threading: ThreadingOptions = field(default_factory=ThreadingOptions)
    experimental_optimization: OptimizationOptions = field(default_factory=OptimizationOptions)
    autotune: AutotuneOptions = field(default_factory=AutotuneOptions)
    experimental_external_state_policy: ExternalStatePolicy | None = None

    def merge(self, other: Options) -> Options:
        """``other``'s settings over these (the later ``with_options`` wins, as in TF)."""
        merged = Options()
        for opts in (self, other):
            for name in ("deterministic", "experimental_deterministic"):
                if getattr(opts, name) is not None:
                    setattr(merged, name, getattr(opts, name))
            if opts.experimental_distribute.auto_shard_policy != AutoShardPolicy.AUTO:
                merged.experimental_distribute.auto_shard_policy = opts.experimental_distribute.auto_shard_policy
            if opts.threading.private_threadpool_size:
                merged.threading.private_threadpool_size = opts.threading.private_threadpool_size
            if opts.threading.max_intra_op_parallelism:
                merged.threading.max_intra_op_parallelism = opts.threading.max_intra_op_parallelism
            if opts.threading.worker_processes is not None:
                merged.threading.worker_processes = opts.threading.worker_processes
            for name in ("enabled", "cpu_budget", "ram_budget", "autotune_algorithm"):
                if getattr(opts.autotune, name) is not None:
                    setattr(merged.autotune, name, getattr(opts.autotune, name))
            if opts.experimental_external_state_policy is not None:
                merged.experimental_external_state_policy = opts.experimental_external_state_policy
            for name in ("map_parallelization", "apply_default_optimizations"):
                if not getattr(opts.experimental_optimization, name):  # turned off: stays off
                    setattr(merged.experimental_optimization, name, False)
        return merged

    @property
    def is_deterministic(self) -> bool:
        for value in (self.deterministic, self.experimental_deterministic):
            if value is not None:
                return value
        return True

    @property
    def threads(self) -> int:
        return self.threading.private_threadpool_size or os.cpu_count() or 1
