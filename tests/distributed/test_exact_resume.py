"""Exact resume after kill -9: two real workers die at a random step mid-epoch and restart.

Every replica logs the example ids of each step it trains on. After the restart, the steps the
first attempt ran before the restored backup plus the steps of the second attempt cover each
epoch exactly once (no example repeated or skipped), and the final parameters equal an
uninterrupted run's: for arrays, a shuffled tf.data pipeline (an unseeded shuffle that reshuffles
every epoch, so the interrupted epoch's order must be replayed) and per-replica pipelines built by
``distribute_datasets_from_function``.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
import resume_fns as fns

from unison.testing.multi_worker import free_ports, tf_config, wait_all

STEPS = fns.ROWS // fns.BATCH


@pytest.fixture(scope="module")
def zygote() -> fns.Zygote:
    return fns.Zygote()


def _job(zygote: fns.Zygote, folder: str, kwargs: dict, expect_killed: bool = False) -> list[dict]:
    os.makedirs(folder, exist_ok=True)
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    workers = [zygote.start("train_ids", folder, i, tf_config(addresses, i), kwargs) for i in range(2)]
    if expect_killed:
        for w in workers:
            assert w.proc.wait(timeout=120) in (-9, 137), f"worker {w.index} was not killed"
        return []
    wait_all(workers, folder, timeout=180)
    return [w.result() for w in workers]


def _trained_ids(log_dir: str, restored: tuple[int, int]) -> dict[int, list[int]]:
    """epoch -> ids trained on: attempt 0 up to the restored backup, then attempt 1."""
    logs = fns.read_ids(log_dir)
    assert sorted(logs) == [0, 1], "one killed attempt and one resumed attempt"
    out: dict[int, list[int]] = {}
    for epoch, step, ids in logs[0]:
        if (epoch, step) < restored:
            out.setdefault(epoch, []).extend(ids)
    for epoch, step, ids in logs[1]:
        assert (epoch, step) >= restored, "the resumed job trained a step the backup had already done"
        out.setdefault(epoch, []).extend(ids)
    return out


@pytest.mark.parametrize(("kind", "seed"), [("arrays", 0), ("tfdata", 1), ("tfdata", 2), ("from_function", 3)])
def test_kill_9_mid_epoch_resumes_at_the_exact_next_batch(tmp_path, zygote, kind: str, seed: int) -> None:
    rng = random.Random(seed)
    kill_at = [rng.randint(1, fns.EPOCHS - 1), rng.randint(1, STEPS - 1)]  # mid-epoch, after the first epoch
    backup, logs = str(tmp_path / "backup"), str(tmp_path / "logs")
    os.makedirs(logs)
    _job(
        zygote,
        str(tmp_path / "killed"),
        {"backup_dir": backup, "log_dir": logs, "kind": kind, "kill_at": kill_at},
        True,
    )
    assert os.listdir(backup), "the killed job left backups"
    resumed = _job(zygote, str(tmp_path / "resumed"), {"backup_dir": backup, "log_dir": logs, "kind": kind})
    restored = tuple(resumed[0]["restored_from"])
    assert restored <= tuple(kill_at) and restored == tuple(resumed[1]["restored_from"])

    for epoch, ids in sorted(_trained_ids(logs, restored).items()):
        assert sorted(ids) == list(range(fns.ROWS)), (epoch, kill_at, restored)  # one epoch, each id once

    ref_logs = str(tmp_path / "ref-logs")
    os.makedirs(ref_logs)
    reference = _job(
        zygote, str(tmp_path / "ref"), {"backup_dir": str(tmp_path / "b2"), "log_dir": ref_logs, "kind": kind}
    )
    for got, want in zip(resumed[0]["weights"], reference[0]["weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # the same batches in the same order on every replica as the uninterrupted run, from the backup on
    ref_steps = sorted((e, s, tuple(ids)) for e, s, ids in fns.read_ids(ref_logs)[0] if (e, s) >= restored)
    assert sorted((e, s, tuple(ids)) for e, s, ids in fns.read_ids(logs)[1]) == ref_steps
