"""The intra-op thread count of a repeated step, chosen by measurement while other processes want the cores.

torch runs each parallel region on an OpenMP team that meets at a barrier. On cores shared with
other busy processes (another job, a data pipeline's workers, a second replica) the team waits at
every barrier for whichever thread the scheduler left off a core, so a step of many small regions
(the tutorial CNN, a Conv1D text model) runs faster on *one* thread, while a step of large matrix
products (a Transformer, a DCGAN) still gains from all of them. No rule decides which (measured on
the project's 2-core VM with two busy processes: the CNN's step 24 ms on 2 threads, 20 ms on 1; the
Transformer's 62 ms on 2, 104 ms on 1; BENCHMARKS.md). TensorFlow's work-stealing pool has no
barrier, which is why it degrades more gracefully there.

So a :class:`ThreadTuner` watches a repeated step (a ``tf.function``'s calls, ``fit``'s train
steps). While the machine is quiet it does nothing but read ``/proc/loadavg`` after a step at most
every 20 ms (~10 us a reading). When other runnable threads are seen in most recent readings, it times the
step a few times at each candidate count (all the process's threads, half, one; interleaved),
keeps the fastest, and measures again after a while; when the others leave, it gives torch back
its count at once.

It stays off (and never calls ``torch.set_num_threads``) when the user chose a count
(``OMP_NUM_THREADS``, or a ``torch.set_num_threads``/``tf.config.threading`` call it notices),
when op determinism is on (a thread count can change a reduction's rounding), under
``torch.distributed`` (a replica's step time includes waiting for its peers), where
``/proc/loadavg`` cannot be read, or when ``UNISON_THREAD_TUNING=0``.

Example:
    >>> tuner = ThreadTuner()
    >>> for _ in range(3):
    ...     began = tuner.begin()
    ...     _ = sum(range(1000))  # the step
    ...     tuner.end(began)
    >>> tuner.threads() >= 1
    True
"""

from __future__ import annotations

import os
import statistics
import threading
import time

import torch

__all__ = ["ThreadTuner", "others_runnable"]

WARMUP = 2  # first calls: allocation, lazy init; never timed
LOOK_SECONDS = 0.02  # at most one /proc/loadavg reading (~10 us) per this much stepping
SEEN = 6  # readings remembered; contention when most of them saw other runnable threads
TRIALS = 3  # timed calls per candidate count when exploring
HOLD_SECONDS = 5.0  # how long a chosen count stands before it is measured again
_depth = threading.local()  # tuned steps nest (a tf.function inside fit's step): only the outermost is timed


def others_runnable(path: str = "/proc/loadavg") -> int | None:
    """Threads on the whole machine that are runnable now, besides the caller; None where unknown.

    ``/proc/loadavg``'s fourth field is ``running/total`` scheduling entities at this instant
    (the caller, which is running while it reads, is one of them).
    """
    try:
        with open(path, "rb") as f:
            fields = f.read().split()
        return max(0, int(fields[3].split(b"/")[0]) - 1)
    except (OSError, IndexError, ValueError):
        return None


def _user_chose() -> bool:
    if os.environ.get("UNISON_THREAD_TUNING", "1") == "0" or "OMP_NUM_THREADS" in os.environ:
        return True
    if torch.are_deterministic_algorithms_enabled():
        return True
    return bool(torch.distributed.is_available() and torch.distributed.is_initialized())


class ThreadTuner:
    """One repeated step's thread count under contention (see the module docstring).

    Call :meth:`begin` before each step and :meth:`end` with its result after it; both cost about
    a microsecond on a quiet machine, plus a ``/proc/loadavg`` read at most every 20 ms.
    """

    def __init__(self) -> None:
        self._calls = 0
        self._off = False
        self._base = 0  # torch's count when tuning began (what the user or unison set)
        self._set = 0  # the count this tuner last set (another value means someone else set one)
        self._seen: list[bool] = []
        self._exploring = False
        self._plan: list[int] = []  # counts still to time in this exploration, in order
        self._times: dict[int, list[float]] = {}
        self._hold_until = 0.0
        self._looked = 0.0
        self.choices: list[tuple[int, dict[int, float]]] = []  # per exploration: the count kept, median times

    def threads(self) -> int:
        """The count the tuned step runs with now."""
        return self._set or torch.get_num_threads()

    def begin(self) -> float:
        """Before a step: returns its start time, or 0.0 when this call is not timed (nested or off)."""
        depth = getattr(_depth, "n", 0)
        _depth.n = depth + 1
        if depth or self._off:
            return 0.0
        return time.perf_counter()

    def end(self, began: float) -> None:
        """After the step :meth:`begin` opened (also after one that raised)."""
        _depth.n -= 1
        if not began:
            return
        took = time.perf_counter() - began
        self._calls += 1
        if self._calls <= WARMUP:
            return
        if self._calls == WARMUP + 1 and not self._start():
            return
        if self._set and torch.get_num_threads() != self._set:
            self._stop(restore=False)  # the user set a count meanwhile: theirs stands
            return
        if self._exploring:
            self._times.setdefault(self._set, []).append(took)
            self._next_trial()
            return
        now = began + took
        if now - self._looked < LOOK_SECONDS:
            return
        self._looked = now
        others = others_runnable()
        if others is None:
            self._stop(restore=True)
            return
        self._seen.append(others > 0)
        del self._seen[:-SEEN]
        contended = len(self._seen) >= SEEN // 2 and sum(self._seen) * 2 > len(self._seen)
        if not contended:
            if self._set != self._base:
                self._apply(self._base)  # the others left: torch's own count again
            return
        if time.perf_counter() >= self._hold_until:
            self._explore()

    # --- the states -----------------------------------------------------------------------------
    def _start(self) -> bool:
        if _user_chose():
            self._off = True
            return False
        self._base = self._set = torch.get_num_threads()
        if self._base < 2:
            self._off = True  # nothing to choose from
            return False
        return True

    def _stop(self, restore: bool) -> None:
        if restore and self._set and self._set != self._base:
            torch.set_num_threads(self._base)
        self._off = True
        self._exploring = False
        self._plan = []

    def _apply(self, n: int) -> None:
        if n != torch.get_num_threads():
            torch.set_num_threads(n)
        self._set = n

    def _explore(self) -> None:
        counts = sorted({self._base, max(1, self._base // 2), 1}, reverse=True)
        self._times = {}
        self._plan = [n for _ in range(TRIALS) for n in counts]  # interleaved: drifting load hits all alike
        self._exploring = True
        self._next_trial()

    def _next_trial(self) -> None:
        if self._plan:
            self._apply(self._plan.pop(0))
            return
        medians = {n: statistics.median(t) for n, t in self._times.items()}
        best = min(medians, key=lambda n: (medians[n], -n))
        del self.choices[:-16]
        self.choices.append((best, medians))
        self._exploring = False
        self._apply(best)
        self._hold_until = time.perf_counter() + HOLD_SECONDS
