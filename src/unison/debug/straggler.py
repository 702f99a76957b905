"""Stragglers named: how long each replica computed and how long it waited in collectives.

The :class:`~unison.optim.DistributedOptimizer` times every step: the wall time from one
synchronisation to the next, and the part of it spent blocked in the gradient collectives.
The rest is *compute* (data, forward, backward, optimizer). In a synchronous job every replica
takes the same wall time per step, so a slow replica shows up as one that computes longer and
waits less, while the others wait for it. :func:`straggler_report` gathers each replica's
figures through the job's store (JSON, not a collective: it never disturbs the collectives'
order) and names every replica whose compute time per step is above the median by more than
``threshold``, in a warning with its figures.

Every replica must call :func:`straggler_report` (``fit`` does, at the end of each epoch, with
``verbose``).

Example:
    >>> t = StepTimings()
    >>> for _ in range(3):
    ...     t.step_done(wait_s=0.0)
    >>> t.steps
    2
    >>> straggler_report(warn=False).stragglers
    []
"""

from __future__ import annotations

import json
import socket
import statistics
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

# One per process, shared by every DistributedOptimizer in it (fit may replace its optimizer's
# wrapper between steps; a program with two optimizers counts each one's steps, and the split of
# compute and wait stays right).
_ACTIVE: list[StepTimings] = []
_CALLS = [0]  # how many reports this process asked for (the store keys of each are separate)
DEFAULT_THRESHOLD = 0.2


class StepTimings:
    """Compute and wait time of this replica's steps since the last report.

    ``step_done`` is called once per synchronised step: two clock reads and three additions.
    """

    def __init__(self) -> None:
        self.steps = 0
        self.wall_s = 0.0
        self.wait_s = 0.0
        self.total_wait_s = 0.0  # since the start, never reset (what the optimizer reports)
        self._last: float | None = None

    def step_done(self, wait_s: float) -> None:
        """A step ended now, after ``wait_s`` seconds blocked in its collectives."""
        now = time.perf_counter()
        self.total_wait_s += wait_s
        if self._last is not None:  # the first step has no start: it is not counted
            self.steps += 1
            self.wall_s += now - self._last
            self.wait_s += wait_s
        self._last = now

    def take(self) -> dict[str, float]:
        """This window's figures; the next window starts at the next step."""
        out = {"steps": self.steps, "wall_s": self.wall_s, "wait_s": self.wait_s}
        self.steps, self.wall_s, self.wait_s, self._last = 0, 0.0, 0.0, None
        return out


@dataclass
class RankTiming:
    """One replica's figures over a report's window."""

    rank: int
    host: str
    steps: int
    step_s: float  # wall time per step
    compute_s: float  # per step, outside collectives
    wait_s: float  # per step, blocked in collectives
    wait_share: float  # wait_s / step_s


@dataclass
class StragglerReport:
    """Every replica's figures, the median compute time, and the replicas named as stragglers."""

    ranks: list[RankTiming]
    median_compute_s: float
    threshold: float
    stragglers: list[int] = field(default_factory=list)

    def message(self) -> str:
        """One sentence per straggler, with its figures and the others' (empty if none)."""
        others = [t for t in self.ranks if t.rank not in self.stragglers]
        others_wait = statistics.median([t.wait_share for t in others]) if others else 0.0
        parts = []
        for r in self.stragglers:
            t = self.ranks[[x.rank for x in self.ranks].index(r)]
            parts.append(
                f"Straggler: rank {r} ({t.host}) computes {t.compute_s * 1e3:.1f} ms per step, "
                f"{t.compute_s / max(self.median_compute_s, 1e-9):.1f}x the median {self.median_compute_s * 1e3:.1f} ms "
                f"(threshold +{self.threshold:.0%}); it waits {t.wait_share:.0%} of its {t.step_s * 1e3:.1f} ms step "
                f"in collectives while the other ranks wait {others_wait:.0%} (for it). Look at what rank {r} does "
                "differently: its data, its device, its host's load."
            )
        return "\n".join(parts)

    def table(self) -> str:
        """The figures as a small table, one row per rank."""
        rows = ["rank  host              steps  step ms  compute ms  wait ms  wait %"]
        for t in self.ranks:
            mark = "  <- straggler" if t.rank in self.stragglers else ""
            rows.append(
                f"{t.rank:>4}  {t.host[:16]:<16}  {t.steps:>5}  {t.step_s * 1e3:>7.1f}  {t.compute_s * 1e3:>10.1f}"
                f"  {t.wait_s * 1e3:>7.1f}  {t.wait_share:>5.0%}{mark}"
            )
        return "\n".join(rows)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def analyse(figures: dict[int, dict[str, Any]], threshold: float = DEFAULT_THRESHOLD) -> StragglerReport:
    """The report of the per-rank ``figures`` (``steps``, ``wall_s``, ``wait_s``, ``host``)."""
    timings = []
    for r in sorted(figures):
        f = figures[r]
        n = max(1, int(f["steps"]))
        step, wait = f["wall_s"] / n, f["wait_s"] / n
        timings.append(
            RankTiming(
                r, str(f.get("host", "")), int(f["steps"]), step, step - wait, wait, wait / step if step else 0.0
            )
        )
    counted = [t for t in timings if t.steps > 0]
    median = statistics.median([t.compute_s for t in counted]) if counted else 0.0
    # a straggler computes longer than the median by more than the threshold (and by 1 ms: at
    # microsecond steps the ratio alone names noise)
    stragglers = [t.rank for t in counted if t.compute_s > median * (1 + threshold) and t.compute_s - median > 1e-3]
    return StragglerReport(timings, median, threshold, stragglers)


def log_stragglers(chief: bool) -> StragglerReport:
    """``fit``'s epoch-end hook: every replica takes part; the chief prints each straggler's line."""
    report = straggler_report(warn=False)
    if chief and report.stragglers:
        print(report.message(), flush=True)
    return report


def active_timings() -> StepTimings:
    """This process's step timings (every DistributedOptimizer records into them)."""
    if not _ACTIVE:
        _ACTIVE.append(StepTimings())
    return _ACTIVE[0]


def straggler_report(threshold: float = DEFAULT_THRESHOLD, warn: bool = True, reset: bool = True) -> StragglerReport:
    """Gather every replica's compute and wait times since the last report, and name the stragglers.

    Every replica must call it (it waits for the others' figures through the job's store, up to
    the job's collective timeout). Alone, the report holds this process only.

    Args:
        threshold: a replica whose compute time per step exceeds the median by more than this
            fraction is a straggler.
        warn: emit a ``RuntimeWarning`` naming each straggler with its figures.
        reset: start a new window (the next report covers the steps after this one).

    Returns:
        A :class:`StragglerReport` (``.stragglers``: the ranks named; ``.ranks``: every rank's figures).
    """
    if not isinstance(threshold, (int, float)) or isinstance(threshold, bool) or threshold < 0:
        raise ValueError(
            f"threshold must be a number >= 0 (a fraction of the median). Received: threshold={threshold!r}"
        )
    from unison.debug.state import job

    timings = active_timings()
    window = timings.take() if reset else {"steps": timings.steps, "wall_s": timings.wall_s, "wait_s": timings.wait_s}
    mine: dict[str, Any] = {**window, "host": socket.gethostname()}
    info = job()
    store, rank, world = info.get("store"), int(info.get("rank", 0)), int(info.get("world_size", 1))
    if store is None or world < 2:
        report = analyse({rank: mine}, threshold)
    else:
        _CALLS[0] += 1
        prefix = f"unison/debug/straggler/{_CALLS[0]}/"
        store.set(f"{prefix}{rank}", json.dumps(mine))
        keys = [f"{prefix}{r}" for r in range(world)]
        deadline = time.monotonic() + float(info.get("timeout_s", 300.0))
        while not store.check(keys):
            if time.monotonic() > deadline:
                missing = [r for r in range(world) if not store.check([keys[r]])]
                raise TimeoutError(
                    f"straggler_report on rank {rank}: ranks {missing} did not publish their figures within "
                    f"{info.get('timeout_s')}s. Every replica must call straggler_report() (fit does at each epoch end)."
                )
            time.sleep(0.01)
        figures = {}
        for r in range(world):
            raw = store.get(keys[r])
            figures[r] = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        report = analyse(figures, threshold)
    if warn and report.stragglers:
        warnings.warn(report.message(), RuntimeWarning, stacklevel=2)
    return report
