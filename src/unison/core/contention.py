"""torch's idle OpenMP threads spin while the host is quiet and sleep at once while it is busy.

torch splits each large CPU op over OpenMP threads that meet at a barrier. unison lets an idle
thread spin for about a millisecond before it sleeps (:mod:`unison.core.threads`): on a quiet host
that keeps a small model's step at TensorFlow's speed, where a sleeping thread takes tens of
microseconds to wake for each of a step's ~100 parallel regions. On a host whose cores other
processes keep busy (other jobs, a second replica, data-pipeline workers) spinning is the slow case:
the spinning thread holds a core that the thread everyone waits for needs (the tutorial CNN's step:
87 ms spinning, 28-36 ms sleeping at once, two busy processes on 2 cores).

libgomp reads its spin count once, but documents a second one: "if there are more OpenMP threads
than available CPUs", idle threads spin ~100 times (microseconds) instead. So at step boundaries
(``tf.function`` calls, ``apply_gradients``, ``fit``/``evaluate``/``predict`` batches,
``DistributedOptimizer.step``), at most every half second, unison reads how busy the process's CPUs
were (``/proc/stat``, the CPUs of its affinity mask) less its own CPU time. While other processes
use half a core or more (:func:`busy`), a parked helper thread holds an idle OpenMP team of enough
threads to exceed the CPUs (sleeping, no work); once the host is quiet again on two checks in a
row, the helper ends and its threads with it. The thread count and the results do not change.

Nothing happens when the user chose a wait policy (``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``,
``KMP_BLOCKTIME``), with ``UNISON_OMP_TUNING=0``, off Linux, or where torch's OpenMP runtime is
not libgomp.

Example:
    >>> busy(other_busy=2.0)  # two busy processes
    True
    >>> busy(other_busy=0.1)  # a quiet host
    False
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from typing import Any

__all__ = ["INTERVAL_S", "busy", "busy_seconds", "follow_load", "openmp_runtime_paths", "start", "state", "throttled"]

INTERVAL_S = 0.5  # between two reads of /proc/stat: 50 scheduler ticks per CPU, ~20 us to read
BUSY_CORES = 0.5  # other processes' use of this process's CPUs, in cores, above which nobody spins


def _now() -> float:
    return time.monotonic()


def _own_cpu() -> float:
    """This process's CPU time, all threads (its own share of the busy CPUs)."""
    return time.process_time()


def busy(other_busy: float) -> bool:
    """Whether other processes' use of our CPUs (in cores) makes spinning the slow case."""
    return other_busy >= BUSY_CORES


def busy_seconds(cpus: set[int], path: str = "/proc/stat") -> float | None:
    """Seconds the CPUs in ``cpus`` have spent busy since boot (all processes), or None if unknown.

    Busy is every field of a ``cpuN`` line but idle and iowait: user, nice, system, irq, softirq
    and steal (time a hypervisor gave to other machines is not ours to use either).
    """
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if not line.startswith("cpu") or line.startswith("cpu "):
                    continue
                fields = line.split()
                if int(fields[0][3:]) in cpus:
                    values = [int(v) for v in fields[1:9]]
                    total += sum(values) - values[3] - values[4]
    except (OSError, ValueError, IndexError):
        return None
    return total / tick


def openmp_runtime_paths(names: tuple[str, ...] = ("libgomp",)) -> list[str]:
    """Paths of the OpenMP runtimes this process loaded (torch's), from ``/proc/self/maps``; [] off Linux."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            return sorted({line.split()[-1] for line in maps if any(n in line for n in names)})
    except OSError:
        return []


def _libgomp() -> Any:
    """The libgomp torch loaded (its ``GOMP_parallel`` entry point), or None."""
    for path in openmp_runtime_paths():
        try:
            lib = ctypes.CDLL(path)
            lib.GOMP_parallel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
            lib.GOMP_parallel.restype = None
            return lib
        except (OSError, AttributeError):
            continue
    return None


class _Park:
    """A helper thread holding an idle OpenMP team, so libgomp counts more threads than CPUs."""

    def __init__(self, lib: Any, threads: int) -> None:
        self._release = threading.Event()
        self._ready = threading.Event()
        # The team's work is libc's free(NULL): nothing, on every thread, without the GIL.
        nothing = ctypes.cast(ctypes.CDLL(None).free, ctypes.c_void_p)

        def hold() -> None:
            try:
                lib.GOMP_parallel(nothing, None, threads, 0)
            finally:
                self._ready.set()
            self._release.wait()  # when this thread ends, libgomp ends its team's threads

        self._thread = threading.Thread(target=hold, name="unison-omp-park", daemon=True)
        self._thread.start()
        self._ready.wait(5.0)

    def end(self) -> None:
        self._release.set()
        self._thread.join(5.0)


class _Watch:
    """The state of the checks (one per process)."""

    def __init__(self) -> None:
        self.state = "off"  # "watching" or "off"
        self.cpus: set[int] = set()
        self.last_wall = 0.0
        self.last_busy: float | None = None
        self.last_own = 0.0
        self.quiet_checks = 0  # quiet checks in a row while throttled
        self.park: _Park | None = None
        self.lock = threading.Lock()


_watch = _Watch()


def start(wait_state: str) -> str:
    """Begin watching when unison chose the spin count (``wait_state == "spin"``); return the state."""
    try:
        cpus = set(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = set()
    on = wait_state == "spin" and bool(cpus) and os.path.exists("/proc/stat")
    _watch.state = "watching" if on else "off"
    _watch.cpus = cpus
    if on:
        # The first sample now: the first step then acts on the load seen since import (model
        # building, data loading), not half a second into training.
        _watch.last_wall, _watch.last_own = _now(), _own_cpu()
        _watch.last_busy = busy_seconds(cpus)
    return _watch.state


def state() -> str:
    """``"watching"``, or ``"off"`` (see the module notes for when)."""
    return _watch.state


def throttled() -> bool:
    """Whether idle OpenMP threads sleep at once now (other processes were busy at the last check)."""
    return _watch.park is not None


def _throttle(on: bool) -> None:
    w = _watch
    if on and w.park is None:
        lib = _libgomp()
        if lib is None:
            w.state = "off"
            return
        import torch  # loaded by now: its threads, plus this team, must exceed the CPUs

        w.park = _Park(lib, max(2, len(w.cpus) - torch.get_num_threads() + 2))
    elif not on and w.park is not None:
        w.park.end()
        w.park = None


def follow_load() -> bool | None:
    """At a step boundary: throttle or free OpenMP's spinning for the load now; the new state if it changed."""
    w = _watch
    now = _now()
    if w.state != "watching" or now - w.last_wall < INTERVAL_S or not w.lock.acquire(blocking=False):
        return None
    try:
        busy_now, own = busy_seconds(w.cpus), _own_cpu()
        if busy_now is None:
            w.state = "off"
            return None
        previous_busy, previous_own, elapsed = w.last_busy, w.last_own, now - w.last_wall
        w.last_wall, w.last_busy, w.last_own = now, busy_now, own
        if previous_busy is None or elapsed > 60 * INTERVAL_S:  # a first sample, or a stale one
            return None
        other = max(0.0, (busy_now - previous_busy) - (own - previous_own)) / elapsed
        if busy(other):
            w.quiet_checks = 0
            if w.park is None:
                _throttle(True)
                return True
            return None
        if w.park is None:
            return None
        w.quiet_checks += 1
        if w.quiet_checks < 2:  # spin again only when the next check agrees
            return None
        w.quiet_checks = 0
        _throttle(False)
        return False
    finally:
        w.lock.release()
