"""Reshard on resume: checkpoints written by N replicas load on M with the same state, exactly.

ZeRO-1/2 optimizer state goes through torch.distributed.checkpoint (each replica writes the
state it owns; each reader reads what it owns now): 2 -> 1 (an unsharded optimizer), 2 -> 3
(ZeRO-2), 1 -> 2 (a plain checkpoint into ZeRO-1). tf.train.Checkpoint written under
MirroredStrategy on 2 replicas restores on the default strategy and on 3 replicas. A damaged
shard is named and nothing is loaded.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import reshard_fns as fns
import torch

from unison.distribute.sharded_checkpoint import ShardedCheckpoint
from unison.errors import CorruptCheckpointError
from unison.testing import run_distributed


def _same(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for k in want:
        if isinstance(want[k], dict):
            _same(got[k], want[k])
        else:
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def _union(parts: list[dict]) -> dict:
    out: dict = {}
    for part in parts:
        assert not set(out) & set(part), "two replicas hold the state of the same parameter"
        out.update(part)
    return out


@pytest.fixture(scope="module")
def zero_two(tmp_path_factory) -> tuple[str, dict]:
    path = str(tmp_path_factory.mktemp("zero") / "ckpt")
    saved = run_distributed(fns.train_zero_and_save, 2, args=(path, 1), timeout=240)
    assert all(saved[0]["params"][k].tobytes() == saved[1]["params"][k].tobytes() for k in saved[0]["params"])
    assert set(saved[0]["owned"]).isdisjoint(saved[1]["owned"])  # really sharded
    return path, saved[0]


@pytest.mark.slow
def test_zero_state_of_two_replicas_restores_on_one_and_on_three(zero_two) -> None:
    path, saved = zero_two
    model = fns.make_model(seed=42)
    opt = torch.optim.Adam(model.parameters(), lr=0.5)
    ShardedCheckpoint(model, opt).restore(path)  # 2 -> 1: an unsharded optimizer gets every shard
    _same(fns.params(model), saved["params"])
    _same(fns.by_name(model, opt), saved["state"])
    assert opt.param_groups[0]["lr"] == 1e-2  # the hyperparameters come back too

    three = run_distributed(fns.restore_zero, 3, args=(path, 2), timeout=240)  # 2 -> 3, ZeRO-2
    for res in three:
        _same(res["params"], saved["params"])
        assert res["lr"] == 1e-2
    _same(_union([r["state"] for r in three]), saved["state"])


@pytest.mark.slow
def test_a_plain_checkpoint_of_one_process_restores_into_zero_on_two(tmp_path) -> None:
    model = fns.make_model(seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for x, y in fns._batches(2):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    path = str(tmp_path / "one")
    ShardedCheckpoint(model, opt).save(path)
    two = run_distributed(fns.restore_zero, 2, args=(path, 1), timeout=240)  # 1 -> 2, ZeRO-1
    for res in two:
        _same(res["params"], fns.params(model))
    _same(_union([r["state"] for r in two]), fns.by_name(model, opt))


@pytest.mark.slow
def test_tf_train_checkpoint_of_two_mirrored_replicas_restores_on_one_and_three(tmp_path) -> None:
    path = str(tmp_path / "ckpt")
    saved = run_distributed(fns.mirrored_save, 2, args=(path, 2), timeout=240)[0]
    one = fns.mirrored_restore(path, 1)
    _same(one["params"], saved["params"])
    _same(one["state"], saved["state"])
    for res in run_distributed(fns.mirrored_restore, 3, args=(path, 3), timeout=240):
        _same(res["params"], saved["params"])
        _same(res["state"], saved["state"])


def test_a_damaged_shard_is_named_and_nothing_is_loaded(tmp_path) -> None:
    model = fns.make_model(seed=1)
    path = str(tmp_path / "ckpt")
    ShardedCheckpoint(model).save(path)
    shard = next(n for n in os.listdir(path) if n.endswith(".distcp"))
    with open(os.path.join(path, shard), "r+b") as fh:
        fh.seek(os.path.getsize(os.path.join(path, shard)) // 2)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    fresh = fns.make_model(seed=2)
    before = fns.params(fresh)
    with pytest.raises(CorruptCheckpointError, match=rf"{shard} is damaged"):
        ShardedCheckpoint(fresh).restore(path)
    _same(fns.params(fresh), before)
    os.remove(os.path.join(path, shard))
    with pytest.raises(CorruptCheckpointError, match=rf"{shard} is missing"):
        ShardedCheckpoint(fresh).restore(path)


@pytest.mark.slow
def test_zero_state_refuses_a_model_of_another_shape(zero_two) -> None:
    from unison.errors import IncompatibleCheckpointError

    path, _ = zero_two
    other = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 9))
    with pytest.raises(IncompatibleCheckpointError, match=r"2.weight: \[8, 16\] vs \[9, 16\]"):
        ShardedCheckpoint(other, torch.optim.Adam(other.parameters())).restore(path)
