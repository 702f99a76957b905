"""glibc heap tuning at import (core/heap.py): the switches, and the page faults it saves."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from unison.core import heap

FAULTS = textwrap.dedent(
    """
    import resource, torch, unison
    from unison.core import heap

    def cycle():  # a step's pattern: several multi-MB buffers made, written, freed
        bufs = [torch.empty(5 * 2**20 // 4).fill_(1.0) for _ in range(4)]
        del bufs

    cycle()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        cycle()
    print(heap.tuning_state(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, sep="|")
    """
)


def _run(**env: str) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "UNISON_MALLOC_TUNING"}
    proc = subprocess.run(
        [sys.executable, "-c", FAULTS], capture_output=True, text=True, timeout=120, env={**clean, **env}
    )
    assert proc.returncode == 0, proc.stderr
    state, faults = proc.stdout.strip().splitlines()[-1].split("|")
    return state, int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_import_keeps_large_buffers_on_the_heap() -> None:
    tuned_state, tuned = _run()
    # glibc's default adapts its mmap threshold run to run (6,000-50,000 faults here); a fixed
    # 128 KiB threshold is its deterministic worst case: every 5 MB buffer a fresh mmap
    mmap_state, every_time = _run(MALLOC_MMAP_THRESHOLD_="131072")
    off_state, _ = _run(UNISON_MALLOC_TUNING="0")
    assert tuned_state == "tuned"
    assert mmap_state == "left as is: MALLOC_MMAP_THRESHOLD_ set by the user"
    assert off_state == "left as is: UNISON_MALLOC_TUNING=0"
    # 10 cycles of 20 MB are 51,200 pages
    assert every_time > 40_000, every_time
    assert tuned < every_time / 10, (tuned, every_time)


@pytest.mark.parametrize(
    ("environ", "reason"),
    [
        ({}, None),
        ({"UNISON_MALLOC_TUNING": "1"}, None),
        ({"UNISON_MALLOC_TUNING": "0"}, "UNISON_MALLOC_TUNING=0"),
        ({"UNISON_MALLOC_TUNING": "off"}, "UNISON_MALLOC_TUNING=0"),
        ({"MALLOC_TRIM_THRESHOLD_": "0"}, "MALLOC_TRIM_THRESHOLD_ set by the user"),
        ({"MALLOC_MMAP_THRESHOLD_": "65536"}, "MALLOC_MMAP_THRESHOLD_ set by the user"),
        ({"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}, "jemalloc preloaded"),
        ({"LD_PRELOAD": "libtcmalloc_minimal.so.4"}, "tcmalloc preloaded"),
    ],
)
def test_the_users_own_allocator_choice_wins(environ: dict[str, str], reason: str | None) -> None:
    assert heap._skip_reason(environ) == reason


def test_state_is_reported_after_import() -> None:
    assert heap.tuning_state() == "tuned" or heap.tuning_state().startswith("left as is: ")
    assert heap.tune_heap() is (heap.tuning_state() == "tuned")  # idempotent: the first verdict stays
