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


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_fit_with_model_parallel_shards_the_model_and_equals_one_device(tmp_path):
    """keras.distribution.set_distribution(ModelParallel()) + fit on 2 replicas: the parameters
    are split (1/2 each), training equals one device on the global batch (1e-5), and
    get_weights, ModelCheckpoint, BackupAndRestore and save/load_weights see the whole weights;
    gradient_accumulation_steps=2 on half batches equals whole batches."""
    one_dir, two_dir = tmp_path / "one", tmp_path / "two"
    one_dir.mkdir(), two_dir.mkdir()
    one = fns.fit_model_parallel(None, str(one_dir))
    results = run_distributed(fns.fit_model_parallel, 2, args=(["/cpu:0", "/cpu:1"], str(two_dir)), timeout=240)
    assert one["param_types"] == ["Variable"]  # add_weight makes tf.Variables (torch Parameters), as Keras
    for res in results:
        assert res["param_types"] == ["DTensor"] and res["iterations"] == fns.STEPS
        assert res["local_numel"] < 0.6 * res["full_numel"]
        for got, want in zip(res["weights"], one["weights"]):
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5), np.abs(got - want).max()
        for got, want in zip(res["reloaded"], res["weights"]):
            assert np.array_equal(got, want)  # ModelCheckpoint wrote the whole weights after the epoch
        assert res["zeroed"] == [0.0] * len(res["weights"])  # set_weights reached every shard
        assert np.isclose(res["history"]["loss"][0], one["history"]["loss"][0], rtol=1e-5)
        assert np.isclose(res["evaluated"]["accuracy"], one["evaluated"]["accuracy"])
        assert res["restored_from"] == (1, 0)
        for got, want in zip(res["resumed"], res["continued"]):
            assert np.allclose(got, want, rtol=1e-5, atol=1e-6), np.abs(got - want).max()
        for got, want in zip(res["accumulated"], res["weights"]):  # 2 half batches = 1 whole batch
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5), np.abs(got - want).max()
    assert (two_dir / "final.weights.h5").exists() and (two_dir / "backup").exists()
