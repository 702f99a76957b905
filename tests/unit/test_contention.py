"""Idle OpenMP threads stop spinning while other processes keep the cores busy (core/contention.py).

The decision is tested on synthetic ``/proc/stat`` readings; the throttle itself on the real
libgomp torch loaded (the helper's idle team shows as threads of this process), and the whole
path with real busy processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from unison.core import contention

pytestmark = pytest.mark.timeout(120)

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")


def test_busy_threshold_is_half_a_core() -> None:
    assert contention.busy(2.0) and contention.busy(0.5)
    assert not contention.busy(0.49) and not contention.busy(0.0)


def test_busy_seconds_counts_only_the_affinity_cpus_and_not_idle_or_iowait(tmp_path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(
        "cpu  999 0 999 999 999 0 0 0 0 0\n"
        "cpu0 100 10 50 7000 300 5 5 20 0 0\n"  # busy: user+nice+system+irq+softirq+steal = 190
        "cpu1 400 0 100 9000 0 0 0 0 0 0\n"  # 500
        "intr 12345\n"
    )
    tick = os.sysconf("SC_CLK_TCK")
    assert contention.busy_seconds({0}, str(stat)) == pytest.approx(190 / tick)
    assert contention.busy_seconds({0, 1}, str(stat)) == pytest.approx(690 / tick)
    assert contention.busy_seconds({0}, str(tmp_path / "absent")) is None


@pytest.fixture
def watch(monkeypatch):
    """A fresh watch fed synthetic busy seconds; the real throttle is replaced by a recorder."""
    fresh = contention._Watch()
    fresh.state, fresh.cpus = "watching", {0, 1}
    monkeypatch.setattr(contention, "_watch", fresh)
    calls: list[bool] = []

    def record(on: bool) -> None:
        calls.append(on)
        fresh.park = object() if on else None  # type: ignore[assignment]

    monkeypatch.setattr(contention, "_throttle", record)
    clock = {"now": 100.0, "busy": 0.0}
    monkeypatch.setattr(contention, "_now", lambda: clock["now"])
    monkeypatch.setattr(contention, "_own_cpu", lambda: 0.0)
    monkeypatch.setattr(contention, "busy_seconds", lambda cpus: clock["busy"])

    def tick(other_cores: float, seconds: float = 0.6) -> bool | None:
        clock["now"] += seconds
        clock["busy"] += other_cores * seconds
        return contention.follow_load()

    return fresh, calls, tick


def test_throttles_at_once_and_frees_after_two_quiet_checks(watch) -> None:
    fresh, calls, tick = watch
    assert tick(0.0) is None  # the first sample
    assert tick(0.1) is None and calls == []  # quiet: spinning stays on
    assert tick(2.0) is True and contention.throttled()  # two busy processes: off at once
    assert tick(1.5) is None
    assert tick(0.0) is None and contention.throttled()  # one quiet check is not enough
    assert tick(0.0) is False and not contention.throttled()
    assert calls == [True, False]


def test_checks_at_most_every_interval_and_drop_stale_samples(watch) -> None:
    fresh, calls, tick = watch
    tick(0.0)
    assert tick(2.0, seconds=0.1) is None and calls == []  # too soon after the last check
    assert tick(2.0, seconds=600.0) is None and calls == []  # a stale sample only restarts the count
    assert tick(2.0) is True


def test_off_watch_does_nothing(watch) -> None:
    fresh, calls, tick = watch
    fresh.state = "off"
    tick(0.0)
    assert tick(5.0) is None and calls == []


def test_a_tf_function_call_and_apply_gradients_check_the_load(watch) -> None:
    import unison as tf

    fresh, calls, tick = watch
    tick(0.0)
    # Each step boundary below is the check after 0.6 s in which others kept 2 cores busy.
    fresh.last_wall -= 0.6
    fresh.last_busy = (fresh.last_busy or 0.0) - 1.2
    tf.function(lambda x: x + 1)(tf.constant(1.0))
    assert calls == [True]
    fresh.park, calls[:] = None, []
    fresh.last_wall -= 0.6
    fresh.last_busy -= 1.2
    v = tf.Variable([1.0])
    tf.keras.optimizers.SGD(0.1).apply_gradients([(tf.constant([1.0]), v)])
    assert calls == [True]


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and libgomp: Linux")
def test_the_throttle_parks_an_idle_team_and_ends_it(monkeypatch) -> None:
    if contention._libgomp() is None:
        pytest.skip("torch's OpenMP runtime here is not libgomp")
    monkeypatch.setattr(contention._watch, "park", None)
    monkeypatch.setattr(contention._watch, "cpus", set(os.sched_getaffinity(0)))
    torch.ones(1 << 20).sum()  # the main thread's own team exists first
    before = _threads()
    contention._throttle(True)
    try:
        assert contention.throttled()
        # the parked thread and its team: enough threads that libgomp's count exceeds the CPUs
        assert _threads() >= before + 2
        assert torch.ones(1 << 20).sum().item() == float(1 << 20)  # torch's ops run as before
    finally:
        contention._throttle(False)
    deadline = time.monotonic() + 10
    while _threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _threads() == before and not contention.throttled()


PROGRAM = textwrap.dedent(
    """
    import subprocess, sys, time
    import unison as tf
    import torch
    from unison.core import contention
    assert contention.state() == "watching", contention.state()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        step = tf.function(lambda x: torch.tanh(x).sum())
        x = torch.ones(1 << 20)
        deadline = time.monotonic() + 20
        while not contention.throttled() and time.monotonic() < deadline:
            step(x)
            time.sleep(0.05)
        print("throttled" if contention.throttled() else "never throttled")
    finally:
        for h in hogs:
            h.kill()
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and libgomp: Linux")
def test_two_busy_processes_turn_the_spinning_off() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    env.pop("UNISON_OMP_TUNING", None)
    env["PYTHONPATH"] = SRC
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    if "libgomp" not in torch.__config__.parallel_info() and "OpenMP" not in torch.__config__.parallel_info():
        pytest.skip("torch here does not use OpenMP")
    assert done.stdout.strip().splitlines()[-1] == "throttled"
