"""``tf.train.experimental``'s checkpoint sharding and ``tf.train.CheckpointView`` against TensorFlow 2.21.

The policies are called directly on ``ShardableTensor``s (their answer, slice specs and values, is
compared) and through ``tf.train.Checkpoint.write``: the shard files a program finds next to the
checkpoint (TF's ``<prefix>.data-<i>-of-<n>``; unison's carry ``.unison`` after that, cut off here)
and the values read back.
"""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def _shardable(tf, key, value, spec=""):
    value = tf.constant(value)
    return tf.train.experimental.ShardableTensor(
        _tensor_save_spec=None,
        tensor=value,
        dtype=value.dtype,
        device=tf.DeviceSpec.from_string(_CPU),
        name=key,
        shape=value.shape,
        slice_spec=spec,
        checkpoint_key=key,
        trackable=None,
    )


def _listing(shards):
    return [[(key, spec, value) for key, slices in shard.items() for spec, value in slices.items()] for shard in shards]


def _data_files(directory, prefix):
    import os

    return sorted(f.split(".unison")[0] for f in os.listdir(directory) if f.startswith(prefix + ".data-"))


class _Module:
    """A tf.Module with variables, a list and a sub-module (TF's CheckpointView example)."""

    @staticmethod
    def make(tf, leaf=True):
        m = tf.Module()
        m.b_var = tf.Variable(5.0)
        m.a_var = tf.Variable([4.0, 1.0])
        m.vars = [tf.Variable(1.0), tf.Variable(2.0)]
        if leaf:
            m.leaf = _Module.make(tf, leaf=False)
        return m


# --- the policies, called directly ------------------------------------------------------------------
@same_as_tf("train.experimental.MaxShardSizePolicy", "train.experimental.ShardableTensor")
def test_max_shard_size_cuts_a_matrix(tf):
    import numpy as np

    w = _shardable(tf, "w", np.arange(24, dtype=np.float32).reshape(4, 6))
    policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=40)
    return _listing(policy([w])), policy.description


@same_as_tf("train.experimental.MaxShardSizePolicy", "train.experimental.ShardableTensor", edge=True)
def test_max_shard_size_oversized_scalars_and_slices(tf):
    import numpy as np

    items = [
        _shardable(tf, "big", np.float64(1.5)),  # 8 bytes > 6: a shard of its own, after the others
        _shardable(tf, "i", np.int32(7)),
        _shardable(tf, "row", np.arange(5, dtype=np.int32)),  # one element fits: cut into single values
        _shardable(tf, "part", np.ones([2, 3], np.int16), spec="4 3 2,2:0,3"),  # already a slice of [4, 3]
        _shardable(tf, "empty", np.zeros([0, 2], np.float32)),
    ]
    return _listing(tf.train.experimental.MaxShardSizePolicy(6)(items))


@same_as_tf("train.experimental.ShardByTaskPolicy", "train.experimental.ShardableTensor")
def test_shard_by_task_keeps_one_shard(tf):
    items = [_shardable(tf, "a", [1.0, 2.0]), _shardable(tf, "b", 3)]
    policy = tf.train.experimental.ShardByTaskPolicy()
    return _listing(policy(items)), policy.description, items[0].checkpoint_key, items[0].slice_spec


@same_as_tf("train.experimental.ShardByTaskPolicy", "train.experimental.ShardableTensor", edge=True)
def test_shard_by_task_of_nothing_and_frozen_fields(tf):
    item = _shardable(tf, "a", [1.0])
    try:
        item.name = "b"
        frozen = False
    except AttributeError:  # dataclasses.FrozenInstanceError
        frozen = True
    same = hash(item) == hash(_shardable(tf, "a", [2.0]))
    return _listing(tf.train.experimental.ShardByTaskPolicy()([])), frozen, same


# --- through tf.train.Checkpoint --------------------------------------------------------------------
@same_as_tf("train.experimental.MaxShardSizePolicy", "train.experimental.ShardByTaskPolicy", "train.CheckpointOptions")
def test_checkpoint_written_in_shards(tf):
    import tempfile

    d = tempfile.mkdtemp()
    w = tf.Variable(tf.reshape(tf.range(40.0), [10, 4]))
    ckpt = tf.train.Checkpoint(w=w, s=tf.Variable(3), net=_Module.make(tf))
    policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=64)
    path = ckpt.write(d + "/c", options=tf.train.CheckpointOptions(experimental_sharding_callback=policy))
    files = _data_files(d, "c")
    by_task = ckpt.write(
        d + "/t",
        options=tf.train.CheckpointOptions(experimental_sharding_callback=tf.train.experimental.ShardByTaskPolicy()),
    )
    w.assign(tf.zeros([10, 4]))
    ckpt.read(path).assert_consumed()
    restored = w.numpy()
    return files, _data_files(d, "t"), restored, tf.train.load_variable(by_task, "w/.ATTRIBUTES/VARIABLE_VALUE")


class _AllInOne:
    @staticmethod
    def make(tf, empty_shard=False):
        class AllInOne(tf.train.experimental.ShardingCallback):
            @property
            def description(self):
                return "Place all tensors in a single shard."

            def __call__(self, shardable_tensors):
                tensors = {}
                for t in shardable_tensors:
                    tensors.setdefault(t.checkpoint_key, {})[t.slice_spec] = t.tensor
                return [tensors, {}] if empty_shard else [tensors]

        return AllInOne()


@same_as_tf("train.experimental.ShardingCallback", "train.experimental.ShardableTensor")
def test_custom_sharding_callback(tf):
    import tempfile

    d = tempfile.mkdtemp()
    v = tf.Variable([1.0, 2.0, 3.0])
    ckpt = tf.train.Checkpoint(v=v, n=tf.Variable(4))
    options = tf.train.CheckpointOptions(experimental_sharding_callback=_AllInOne.make(tf))
    path = ckpt.save(d + "/ckpt", options=options)
    v.assign([0.0, 0.0, 0.0])
    ckpt.restore(path)
    return _data_files(d, "ckpt-1"), v.numpy(), sorted(k for k, _ in tf.train.list_variables(path) if "VALUE" in k)


@same_as_tf("train.experimental.ShardingCallback", "train.CheckpointOptions", edge=True)
@pytest.mark.parametrize("case", ["abstract", "not_a_callback", "empty_shard"])
def test_sharding_callback_misuse(tf, case):
    import tempfile

    if case == "abstract":
        return tf.train.experimental.ShardingCallback()
    if case == "not_a_callback":
        return tf.train.CheckpointOptions(experimental_sharding_callback=lambda ts: [ts])
    options = tf.train.CheckpointOptions(experimental_sharding_callback=_AllInOne.make(tf, empty_shard=True))
    return tf.train.Checkpoint(v=tf.Variable(1.0)).write(tempfile.mkdtemp() + "/c", options=options)


# --- tf.train.CheckpointView -------------------------------------------------------------------------
@same_as_tf("train.CheckpointView")
def test_checkpoint_view_of_a_module(tf):
    import tempfile

    d = tempfile.mkdtemp()
    root = _Module.make(tf)
    view = tf.train.CheckpointView(tf.train.Checkpoint(root).write(d + "/a"))
    named = tf.train.Checkpoint(z=tf.Variable(1.0), a=root, c=tf.train.Checkpoint(q=tf.Variable(2.0)))
    view2 = tf.train.CheckpointView(named.save(d + "/b"))
    other = tf.train.Checkpoint(z=tf.Variable(1.0), a=_Module.make(tf, leaf=False))
    matched = view2.match(other)
    return (
        view.children(0),
        view.descendants(),
        view2.children(0),
        view2.children(1),
        view2.descendants(),
        sorted(matched),
        [float(matched[i].numpy()) for i in sorted(matched) if i in (4, 6)],
    )


@same_as_tf("train.CheckpointView", edge=True)
@pytest.mark.parametrize("case", ["bad_node", "no_file", "not_trackable"])
def test_checkpoint_view_misuse(tf, case):
    import tempfile

    d = tempfile.mkdtemp()
    if case == "no_file":
        return tf.train.CheckpointView(d + "/nothing")
    view = tf.train.CheckpointView(tf.train.Checkpoint(v=tf.Variable(1.0)).write(d + "/c"))
    if case == "bad_node":
        return view.children(5)
    return view.match(3)
