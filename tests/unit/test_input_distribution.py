"""Global batch -> per-replica batches, as evenly as possible, zero rows allowed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.distribute.input import DistributedDataset, shard_bounds
from unison.keras.trainers.data_adapters import ArrayAdapter


@pytest.mark.parametrize("n,replicas", [(32, 2), (5, 2), (2, 3), (0, 2), (7, 4)])
def test_shards_cover_the_batch_once_and_evenly(n: int, replicas: int) -> None:
    bounds = [shard_bounds(n, replicas, r) for r in range(replicas)]
    sizes = [b - a for a, b in bounds]
    assert sum(sizes) == n
    assert max(sizes) - min(sizes) <= 1
    assert [a for a, _ in bounds] == [sum(sizes[:r]) for r in range(replicas)]


def test_input_context_per_replica_batch() -> None:
    ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    assert ctx.get_per_replica_batch_size(64) == 16
    with pytest.raises(ValueError, match="divisible"):
        ctx.get_per_replica_batch_size(30)


def test_distributed_dataset_gives_each_replica_its_rows() -> None:
    batches = [(np.arange(5).reshape(5, 1), np.arange(5))]
    parts = [list(DistributedDataset(batches, 2, r, torch.device("cpu")))[0][1].tolist() for r in range(2)]
    assert parts == [[0, 1, 2], [3, 4]]


def test_array_adapter_same_order_for_every_replica_count() -> None:
    x = np.arange(23, dtype="float32").reshape(23, 1)
    y = np.arange(23)
    seen = {}
    for replicas in (1, 2, 3):
        rows = []
        for step_parts in zip(
            *[ArrayAdapter(x, y, None, 8, True, 7, replicas, r, None).epoch(1) for r in range(replicas)]
        ):
            rows.append([int(v) for part in step_parts for v in part.y.tolist()])
            assert {p.global_size for p in step_parts} == {len(rows[-1])}
        seen[replicas] = rows
    assert seen[1] == seen[2] == seen[3]
    assert sorted(v for r in seen[1] for v in r) == list(range(23))
    # another epoch is another order
    other = [int(v) for b in ArrayAdapter(x, y, None, 8, True, 7, 1, 0, None).epoch(2) for v in b.y]
    assert other != [v for r in seen[1] for v in r]


def test_evaluation_blocks_count_every_sample_once() -> None:
    x = np.zeros((10, 1), "float32")
    y = np.arange(10)
    got = [int(v) for r in range(3) for b in ArrayAdapter(x, y, None, 4, False, 0, 3, r, None).blocks(4) for v in b.y]
    assert got == list(range(10))
