"""Sharded tf.train.Checkpoint files: what TF cannot be asked about (unison's files, their checks).

The policies' cuts and the values read back are compared with TF in
tests/conformance/test_vs_tf_train_sharding.py; here: a lost shard, stale shards, the manager's
rotation, a callback that drops a value, and live optimizer state left alone while saving.
"""

from __future__ import annotations

import os

import pytest
import torch

import unison as tf
from unison.errors import CorruptCheckpointError

pytestmark = pytest.mark.timeout(60)


def _options(max_size: int = 64) -> tf.train.CheckpointOptions:
    policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=max_size)
    return tf.train.CheckpointOptions(experimental_sharding_callback=policy)


def _shards(directory: str) -> list[str]:
    return sorted(f for f in os.listdir(directory) if ".data-" in f)


def test_a_missing_shard_is_named(tmp_path):
    ckpt = tf.train.Checkpoint(w=tf.Variable(tf.ones([10, 4])))
    path = ckpt.write(str(tmp_path / "c"), options=_options())
    os.remove(tmp_path / "c.data-00001-of-00003.unison")
    with pytest.raises(CorruptCheckpointError, match=r"c\.data-00001-of-00003\.unison.*is missing"):
        ckpt.read(path)


def test_rewriting_a_prefix_removes_its_stale_shards(tmp_path):
    ckpt = tf.train.Checkpoint(w=tf.Variable(tf.ones([10, 4])))
    ckpt.write(str(tmp_path / "c"), options=_options(64))
    assert len(_shards(str(tmp_path))) == 3
    ckpt.write(str(tmp_path / "c"), options=_options(1000))
    assert _shards(str(tmp_path)) == ["c.data-00000-of-00001.unison"]
    path = ckpt.write(str(tmp_path / "c"))
    assert _shards(str(tmp_path)) == []
    assert float(tf.reduce_sum(tf.train.load_variable(path, "w"))) == 40.0


def test_the_manager_removes_old_shards(tmp_path):
    ckpt = tf.train.Checkpoint(w=tf.Variable(tf.ones([10, 4])))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    manager.save(options=_options())
    latest = manager.save(options=_options())
    assert _shards(str(tmp_path)) == [f"ckpt-2.data-0000{i}-of-00003.unison" for i in range(3)]
    assert latest.endswith("ckpt-2")


class _DropsAValue(tf.train.experimental.ShardingCallback):
    @property
    def description(self) -> str:
        return "drops w"

    def __call__(self, shardable_tensors):
        return [
            {
                t.checkpoint_key: {t.slice_spec: t.tensor}
                for t in shardable_tensors
                if not t.checkpoint_key.startswith("w")
            }
        ]


def test_a_callback_that_drops_a_value_writes_nothing(tmp_path):
    ckpt = tf.train.Checkpoint(w=tf.Variable(1.0), v=tf.Variable(2.0))
    options = tf.train.CheckpointOptions(experimental_sharding_callback=_DropsAValue())
    with pytest.raises(
        RuntimeError,
        match="(?s)were not found in the checkpoint shards.*drops w.*w/.ATTRIBUTES.*every value it was given",
    ):
        ckpt.write(str(tmp_path / "c"), options=options)
    assert os.listdir(tmp_path) == []


def test_saving_in_shards_leaves_live_optimizer_state_alone(tmp_path):
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    before = {k: v.clone() for k, v in opt.state[model.weight].items()}
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    path = ckpt.write(str(tmp_path / "c"), options=_options(16))
    assert all(torch.equal(opt.state[model.weight][k], v) for k, v in before.items())
    with torch.no_grad():
        model.weight.zero_()
    opt.state[model.weight]["exp_avg"].zero_()
    ckpt.read(path).assert_consumed()
    assert torch.equal(opt.state[model.weight]["exp_avg"], before["exp_avg"])
    assert len(_shards(str(tmp_path))) > 1
