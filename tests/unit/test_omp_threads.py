"""``import unison`` asks OpenMP for briefly spinning idle threads before torch loads, unless the user chose.

Each case is a fresh interpreter (libgomp reads its settings once per process), so the test
sees what a user's program sees.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from unison.core import threads

pytestmark = pytest.mark.timeout(120)

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
PROBE = (
    "import os; {pre}import unison; from unison.core import contention, threads; "
    "print(threads.tuning_state(), os.environ.get('OMP_WAIT_POLICY'), os.environ.get('GOMP_SPINCOUNT'), contention.state())"
)


def _probe(env_extra: dict[str, str], pre: str = "") -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    env.pop("UNISON_OMP_TUNING", None)
    env.update(PYTHONPATH=SRC, **env_extra)
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(pre=pre)], env=env, capture_output=True, text=True, timeout=100
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_sets_a_short_spin_and_watches_the_load() -> None:
    assert _probe({}) == f"spin None {threads.SPIN_COUNT} watching"


@pytest.mark.parametrize(("knob", "value"), [("OMP_WAIT_POLICY", "ACTIVE"), ("GOMP_SPINCOUNT", "1000")])
def test_a_users_choice_is_kept(knob: str, value: str) -> None:
    state, policy, spin, watch = _probe({knob: value}).split()
    assert (state, watch) == ("user", "off")  # a user's policy is not turned down under load either
    assert policy == (value if knob == "OMP_WAIT_POLICY" else "None")
    assert spin == (value if knob == "GOMP_SPINCOUNT" else "None")


def test_switched_off_and_too_late_leave_the_policy_alone() -> None:
    assert _probe({"UNISON_OMP_TUNING": "0"}) == "off None None off"
    assert _probe({}, pre="import torch; ") == "late None None off"


def test_cgroup_quota_is_read_and_rounded_up(tmp_path) -> None:
    f = tmp_path / "cpu.max"
    f.write_text("150000 100000\n")
    assert threads.cgroup_cpu_quota(str(f)) == 2
    f.write_text("max 100000\n")
    assert threads.cgroup_cpu_quota(str(f)) is None
    assert threads.cgroup_cpu_quota(str(tmp_path / "absent")) is None
    assert 1 <= threads.usable_cores() <= (os.cpu_count() or 1)
