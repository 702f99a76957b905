"""tf.data pipelines on 1 replica, 2 replicas (MirroredStrategy) and 2 workers (MultiWorkerMirrored).

Every sample of an epoch is seen exactly once across replicas (experimental_distribute_dataset and
distribute_datasets_from_function), Keras fit on a tf.data pipeline ends within 1e-5 of one replica
after 20 steps, and each AutoShardPolicy does what TF documents.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from data_fns import N_ROWS, pipelines
from multi_worker_fns import HERE

from unison.testing import run_distributed
from unison.testing.multi_worker import Worker, free_ports, start_worker, tf_config, wait_all

pytestmark = pytest.mark.timeout(400)


def _close(a: np.ndarray, b: np.ndarray, tol: float = 1e-5) -> bool:
    return np.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0.0))))


@pytest.fixture(scope="module")
def one_replica() -> dict:
    return pipelines("default")


def _start(fn: str, tmp: str, index: int, config: str, kwargs: dict) -> Worker:
    return start_worker(f"data_fns:{fn}", tmp, index, config, kwargs, sys_path=[HERE])


def _two_workers(tmp: str, fn: str, kwargs: dict) -> list[dict]:
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    workers = [_start(fn, tmp, i, tf_config(addresses, i), kwargs) for i in range(2)]
    wait_all(workers, tmp, timeout=300)
    out = []
    for w in workers:
        with open(w.result_file, "rb") as fh:
            out.append(pickle.load(fh))
    return out


def _check(results: list[dict], ref: dict) -> None:
    all_ids = list(range(N_ROWS))
    for epoch in range(2):
        seen = [i for r in results for i in r["distribute_dataset"][epoch]]
        assert sorted(seen) == all_ids  # each sample exactly once across replicas
    assert sorted(i for r in results for i in r["from_function"]) == all_ids
    assert results[0]["distribute_dataset"][0] != results[0]["distribute_dataset"][1] or len(results) > 1
    for res in results:
        assert res["replicas"] == len(results)
        for got, want in zip(res["weights"], ref["weights"], strict=True):
            assert _close(got, want), float(np.abs(got - want).max())
        for key in ("loss", "val_loss", "val_accuracy"):
            assert np.allclose(res["history"][key], ref["history"][key], atol=1e-5), key
        assert np.allclose(res["evaluate"], ref["evaluate"], atol=1e-5)
        assert np.allclose(res["predict"], ref["predict"], atol=1e-5) and res["predict"].shape == (101, 4)


def test_one_replica_sees_every_sample_once_per_epoch(one_replica) -> None:
    _check([one_replica], one_replica)
    assert one_replica["distribute_dataset"][0] != one_replica["distribute_dataset"][1]  # reshuffled


def test_two_mirrored_replicas_match_one_replica(one_replica) -> None:
    results = run_distributed(pipelines, world_size=2, args=("mirrored", ["/cpu:0", "/cpu:1"]), timeout=300)
    _check(results, one_replica)
    assert results[0]["warned"] == []  # one worker: nothing to auto-shard, no warning


def test_two_workers_match_one_replica(tmp_path, one_replica) -> None:
    results = _two_workers(str(tmp_path), "pipelines", {"kind": "workers"})
    _check(results, one_replica)
    assert all(r["warned"] for r in results)  # AUTO fell back to DATA on an in-memory source, as TF warns


def test_auto_shard_policies_on_two_workers(tmp_path) -> None:
    files = []
    for k in range(4):
        path = tmp_path / f"part{k}.txt"
        path.write_text("".join(f"f{k}-{i}\n" for i in range(8)))
        files.append(str(path))
    w0, w1 = _two_workers(str(tmp_path), "shard_policies", {"files": files})
    numbers = list(range(40))
    for name in ("AUTO", "DATA"):  # DATA: each worker keeps its rows of every global batch
        assert sorted(w0[f"range_{name}"] + w1[f"range_{name}"]) == numbers
        assert w0[f"range_{name}"] == [i for b in range(5) for i in range(8 * b, 8 * b + 4)]
    assert sorted(w0["range_OFF"]) == sorted(w1["range_OFF"]) == numbers  # OFF: everyone sees everything
    lines = sorted(f"f{k}-{i}".encode() for k in range(4) for i in range(8))
    for name in ("AUTO", "FILE"):  # FILE (AUTO on files): worker w reads files w, w + 2
        assert sorted(w0[f"files_{name}"] + w1[f"files_{name}"]) == lines
        assert {v[:2] for v in w0[f"files_{name}"]} == {b"f0", b"f2"}
        assert {v[:2] for v in w1[f"files_{name}"]} == {b"f1", b"f3"}
    assert sorted(w0["files_OFF"]) == sorted(w1["files_OFF"]) == lines
    assert sorted(w0["files_DATA"] + w1["files_DATA"]) == lines
    assert "AutoShardPolicy.FILE needs a file-based source" in w0["file_on_range"]
    assert any("AUTO sharding policy will apply DATA" in w for w in w0["warnings"])
