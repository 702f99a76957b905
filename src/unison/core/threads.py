"""torch's OpenMP pool set up for shared cores: brief spinning, one thread per usable core.

torch's CPU kernels run each parallel region on an OpenMP team (GNU libgomp in torch's wheels)
that meets at a barrier. What an idle thread does between regions decides two cases:

- Sleeping at once (``OMP_WAIT_POLICY=PASSIVE``) costs a wake-up of tens of microseconds per
  region. A small model's step has ~100 regions: the tutorial CNN's step took 14.4-14.9 ms that way
  against 10.6-11.5 ms for TensorFlow, and 9.8-11.4 ms when threads spin ~1-3 ms first
  (``GOMP_SPINCOUNT`` 30,000-100,000 on this project's 2-core VM; benchmarks/results/after_session12.md).
- Spinning is the slow case on a host whose cores are shared (other jobs, data-pipeline
  workers, several replicas): a spinning thread takes the core that the thread everyone waits
  for needs. ResNet-50's step at a load average of ~10 took 12.8 s with libgomp's default (~9 ms
  of spinning) and 1.2 s passive; the CNN with two busy processes 84-87 ms with 1 ms of spinning,
  28-36 ms passive.

So ``import unison`` sets ``GOMP_SPINCOUNT=30000`` (about 1 ms here) before torch is imported
(libgomp reads it once, when torch loads it), and :mod:`unison.core.contention` turns the spinning
down to microseconds while other processes keep the cores busy, and back up when they stop. It
changes nothing when the user chose a policy (``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``, or Intel
OpenMP's ``KMP_BLOCKTIME``), set ``UNISON_OMP_TUNING=0``, or imported torch first (then it is too
late; :func:`tuning_state` says so). Processes started from this one (replicas, workers) inherit
the setting.

The intra-op thread count: torch takes the CPUs of the affinity mask; a container's CPU quota
(cgroup v2 ``cpu.max``) can allow fewer, and threads beyond the quota only queue behind each
other. Where the quota is smaller, and the user set no ``OMP_NUM_THREADS``, torch gets that
many threads.

Example:
    >>> from unison.core import threads
    >>> threads.tuning_state() in ("spin", "user", "off", "late")
    True
"""

from __future__ import annotations

import math
import os
import sys

from unison.core import contention

__all__ = ["apply_core_count", "cgroup_cpu_quota", "set_wait_policy", "tuning_state", "usable_cores"]

_USER_KNOBS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")
SPIN_COUNT = "30000"  # libgomp's iterations before an idle thread sleeps: ~1 ms on this project's VM
_state = "off"


def set_wait_policy() -> str:
    """Ask OpenMP for briefly spinning idle threads when nobody chose otherwise; return the state.

    ``"spin"``: ``GOMP_SPINCOUNT`` set by unison; ``"user"``: the user chose a policy; ``"off"``:
    ``UNISON_OMP_TUNING=0``; ``"late"``: torch was imported before unison, so libgomp had read
    its settings already.
    """
    global _state
    if os.environ.get("UNISON_OMP_TUNING", "1") == "0":
        _state = "off"
    elif any(knob in os.environ for knob in _USER_KNOBS):
        _state = "user"
    elif "torch" in sys.modules:
        _state = "late"
    else:
        os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
        _state = "spin"
    return _state


def tuning_state() -> str:
    """What :func:`set_wait_policy` did when unison was imported (see there)."""
    return _state


def cgroup_cpu_quota(path: str = "/sys/fs/cgroup/cpu.max") -> int | None:
    """CPUs a cgroup v2 quota allows (``"200000 100000"`` -> 2), rounded up; ``None`` when unlimited or unknown."""
    try:
        with open(path, encoding="ascii") as f:
            fields = f.read().split()
    except OSError:
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return max(1, math.ceil(quota / period)) if quota > 0 and period > 0 else None


def usable_cores() -> int:
    """The cores this process may run on: its affinity mask, capped by a CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return min(cores, quota) if quota is not None else cores


def apply_core_count() -> int:
    """Give torch :func:`usable_cores` threads when it took more and the user chose no count; return the count."""
    import torch  # here, not at the top: this module must load before torch does

    threads = torch.get_num_threads()
    cores = usable_cores()
    if "OMP_NUM_THREADS" not in os.environ and cores < threads:
        torch.set_num_threads(cores)
        threads = cores
    return threads


# Applied when this module is imported: unison/__init__.py imports it before anything imports torch.
contention.start(set_wait_policy())
apply_core_count()
