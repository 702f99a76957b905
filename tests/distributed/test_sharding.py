"""Full parameter sharding (FSDP2) on real replicas: equivalence with plain data parallelism and
one process, 1/N of the state per replica, and sharded checkpoints across replica counts
(issue 16, item 4)."""

from __future__ import annotations

import numpy as np
import pytest
import sharding_fns as fns
import torch

from unison.distribute.sharded_checkpoint import IncompatibleCheckpointError, ShardedCheckpoint
from unison.testing import run_distributed


def _assert_close(got: dict, want: dict, tol: float = 1e-5) -> None:
    assert sorted(got) == sorted(want)
    for k in want:
        assert np.allclose(got[k], want[k], rtol=tol, atol=tol), (k, np.abs(got[k] - want[k]).max())


@pytest.mark.slow
def test_full_sharding_equals_plain_data_parallelism_and_one_process_after_20_adam_steps():
    want = fns.reference()
    results = run_distributed(fns.train_three_ways, 2, timeout=240)
    for res in results:
        _assert_close(res["plain"], want)
        _assert_close(res["sharded_avg"], res["plain"])
        _assert_close(res["sharded_sum"], res["plain"])
        assert res["param_types"] == ["DTensor"]
    # each replica holds its shard of every parameter: together exactly one copy, each ~1/2
    local = [r["numel_local"] for r in results]
    full = results[0]["numel_full"]
    assert sum(local) == full
    for r in results:
        assert abs(r["numel_local"] - full / 2) <= 0.05 * full
        sizes = r["sizes"]
        assert sizes["parameters"] == r["numel_local"] * 4  # float32 shards only
        assert sizes["gradients"] == sizes["parameters"]  # gradients were reduce-scattered
        assert r["moments"] == 2 * sizes["parameters"]  # Adam's two moments of the shard only


@pytest.mark.slow
def test_checkpoint_saved_by_two_replicas_restores_on_one_and_on_three(tmp_path):
    path = str(tmp_path / "ckpt")
    saved = run_distributed(fns.train_and_save, 2, args=(path,), timeout=240)[0]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]  # published, no leftovers

    one = fns.make_model(seed=7)
    opt = torch.optim.Adam(one.parameters(), lr=1e-2)
    ShardedCheckpoint(one, opt).restore(path)
    _assert_close({k: v.detach().numpy() for k, v in one.state_dict().items()}, saved["params"], 0)
    _assert_close(fns.full_optimizer_moments(one, opt), saved["moments"], 0)

    three = run_distributed(fns.restore, 3, args=(path,), timeout=240)
    full = sum(v.size for v in saved["params"].values() if v is not None)
    for res in three:
        _assert_close(res["params"], saved["params"], 0)
        _assert_close(res["moments"], saved["moments"], 0)
        assert res["local_numel"] < full / 2  # really sharded three ways


def test_restoring_into_an_incompatible_model_names_both_structures(tmp_path):
    path = str(tmp_path / "ckpt")
    ShardedCheckpoint(fns.make_model()).save(path)
    with pytest.raises(IncompatibleCheckpointError) as info:
        ShardedCheckpoint(fns.make_model(width=8)).restore(path)
    text = str(info.value)
    assert "tok.weight: [23, 16] vs [23, 8]" in text
    assert "Checkpoint parameters:" in text and "Model parameters:" in text
    with pytest.raises(IncompatibleCheckpointError, match="holds no optimizer state"):
        model = fns.make_model()
        ShardedCheckpoint(model, torch.optim.Adam(model.parameters())).restore(path)
    with pytest.raises(FileNotFoundError, match="No sharded checkpoint"):
        ShardedCheckpoint(fns.make_model()).restore(str(tmp_path / "nowhere"))


@pytest.mark.slow
def test_keras_model_parallel_with_a_layout_map_and_remat_blocks_equals_one_process():
    want = fns.reference()
    for res in run_distributed(fns.train_model_parallel, 2, timeout=240):
        _assert_close(res["params"], want)
        assert res["placements"]["blocks.0.mlp.0.weight"] == 1
        assert res["placements"]["blocks.0.ln1.weight"] == 0
