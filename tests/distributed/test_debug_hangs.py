"""A hang explained on real processes: every other replica raises the same report naming the rank,
the op, the divergence point and each live replica's stack (issue 26)."""

from __future__ import annotations

import debug_fns as fns
import pytest

from unison.testing import run_distributed

# gloo alone, or the shared-memory all-reduce of one host's replicas
PATHS = {"gloo": {"UNISON_SHM_ALLREDUCE": "0"}, "shm": {"UNISON_SHM_ALLREDUCE": "1"}}
CULPRIT_FN = {"sleep": "culprit_sleeps", "op": "culprit_broadcasts", "shape": "culprit_other_shape"}
OP = {"sleep": "never issued it", "op": "broadcast", "shape": "float32[8]", "exit": "the process exited"}


def _check(results: list[dict], scenario: str, culprit: int) -> None:
    world = len(results)
    reports = []
    for rank, res in enumerate(results):
        if rank == culprit and scenario == "exit":
            continue
        if rank == culprit and scenario != "sleep":
            continue  # it may fail first or later (gloo); the others are what the test is about
        error = res["error"]
        assert "unison hang report" in error, (rank, error)
        assert res["elapsed"] < fns.TIMEOUT_S + 5, (rank, res["elapsed"])
        report = error[error.index("--- unison hang report") :]
        assert "First divergence: collective #3:" in report, report
        assert OP[scenario] in report.split("First divergence:")[1].splitlines()[0], report
        assert f"rank {culprit}" in report.split("First divergence:")[1].splitlines()[0], report
        for r in range(world):  # each live replica's state and stack, by function
            if r == culprit and scenario == "exit":
                assert f"rank {culprit} never issued it (its last was #2; the process exited)" in report, report
            else:
                section = report.split(f"\nrank {r} (pid")[1]
                want = CULPRIT_FN[scenario] if r == culprit else "innocent_all_reduce"
                assert f"in {want}" in section.split("\nrank ")[0], (r, want, report)
        if rank != culprit:
            reports.append(report)
    assert len(set(reports)) == 1, "every replica raises the same report"


CASES = [
    ("gloo", 2, "sleep", 1),
    ("gloo", 3, "op", 2),
    ("gloo", 2, "exit", 1),
    ("gloo", 2, "shape", 1),
    ("gloo", 3, "shape", 0),
    ("shm", 2, "shape", 1),
    ("shm", 3, "sleep", 0),
    ("shm", 2, "op", 0),
    ("shm", 3, "exit", 2),
]


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize(("path", "world", "scenario", "culprit"), CASES)
def test_every_replica_explains_the_hang(path: str, world: int, scenario: str, culprit: int, tmp_path) -> None:
    results = run_distributed(fns.hang, world, args=(scenario, culprit, str(tmp_path)), timeout=150, env=PATHS[path])
    _check(results, scenario, culprit)
    if path == "gloo" and scenario in ("shape", "op"):
        # gloo alone would abort the receiving process on a size mismatch: the signature check
        # stops every replica, the culprit included, with the same named error before data moves
        for rank, res in enumerate(results):
            assert res["error"].startswith("CollectiveMismatchError: Collective 'all_reduce' (#3)") or (
                rank == culprit and res["error"].startswith("CollectiveMismatchError: Collective 'broadcast' (#3)")
            ), (rank, res["error"])
            assert res["elapsed"] < fns.TIMEOUT_S, (rank, res["elapsed"])
