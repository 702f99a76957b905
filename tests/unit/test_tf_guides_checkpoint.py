"""TF's "Training checkpoints" guide: restoring by object path into other objects, deferred
restoration, tracked lists and dicts, checkpointed tf.data iterators, the checkpoint reader."""

from __future__ import annotations

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


def _saved_net(tmp_path):
    net = Net()
    net(tf.ones([1, 1]))
    path = tf.train.Checkpoint(step=tf.Variable(3), net=net).save(str(tmp_path / "tf_ckpts" / "ckpt"))
    return net, path


def test_a_layer_restores_into_hand_made_checkpoint_objects_by_path(tmp_path):
    net, _ = _saved_net(tmp_path)
    to_restore = tf.Variable(tf.zeros([5]))
    fake_layer = tf.train.Checkpoint(bias=to_restore)
    new_root = tf.train.Checkpoint(net=tf.train.Checkpoint(l1=fake_layer))
    status = new_root.restore(tf.train.latest_checkpoint(str(tmp_path / "tf_ckpts")))
    torch.testing.assert_close(to_restore.detach(), net.l1.bias.detach())
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="not consumed"):
        status.assert_consumed()  # the kernel and step have no object yet
    deferred = tf.Variable(tf.zeros([1, 5]))
    fake_layer.kernel = deferred  # TF's deferred restoration: the waiting value goes in now
    torch.testing.assert_close(deferred.detach(), net.l1.kernel.detach())


def test_a_deferred_value_checks_the_shape(tmp_path):
    _saved_net(tmp_path)
    fake_layer = tf.train.Checkpoint()
    tf.train.Checkpoint(net=tf.train.Checkpoint(l1=fake_layer)).restore(str(tmp_path / "tf_ckpts" / "ckpt-1"))
    with pytest.raises(ValueError, match=r"'net.l1.kernel' was saved with shape \(1, 5\)"):
        fake_layer.kernel = tf.Variable(tf.zeros([5, 1]))


def test_hand_made_objects_restore_back_into_a_model(tmp_path):
    kernel, bias = tf.Variable(torch.rand(1, 5)), tf.Variable(torch.rand(5))
    layer = tf.train.Checkpoint(kernel=kernel, bias=bias)
    path = tf.train.Checkpoint(net=tf.train.Checkpoint(l1=layer)).write(str(tmp_path / "hand"))
    net = Net()
    net(tf.ones([1, 1]))
    tf.train.Checkpoint(net=net).read(path).assert_consumed()
    torch.testing.assert_close(net.l1.kernel.detach(), kernel.detach())
    torch.testing.assert_close(net.l1.bias.detach(), bias.detach())


def test_lists_and_dicts_are_tracked_and_restore_items_added_later(tmp_path):
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    save.mapped = {"one": save.listed[0]}
    save.mapped["two"] = save.listed[1]
    save_path = save.save(str(tmp_path / "tf_list_example"))
    assert ("listed/1/.ATTRIBUTES/VARIABLE_VALUE", []) in tf.train.list_variables(save_path)

    restore = tf.train.Checkpoint()
    v2 = tf.Variable(0.0)
    restore.mapped = {"two": v2}
    restore.restore(save_path)
    assert v2.numpy() == 2.0
    restore.listed = []
    assert repr(restore.listed) == "ListWrapper([])"
    v1 = tf.Variable(0.0)
    restore.listed.append(v1)  # restored on append, from the earlier restore()
    assert v1.numpy() == 1.0
    late = tf.Variable(0.0)
    restore.mapped["one"] = late
    assert late.numpy() == 1.0
    with pytest.raises(ValueError, match="string keys"):
        tf.train.Checkpoint(m={1: tf.Variable(1.0)}).write(str(tmp_path / "bad"))
    with pytest.raises(ValueError, match="'save_counter' is reserved"):
        restore.save_counter = tf.Variable(1)


def test_a_tf_data_iterator_resumes_where_it_was_saved(tmp_path):
    dataset = tf.data.Dataset.range(100).shuffle(100).batch(3)  # an unseeded shuffle: the seed is saved
    iterator = iter(dataset)
    next(iterator), next(iterator)
    path = tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "it"))
    expected = [next(iterator).tolist() for _ in range(3)]
    fresh = iter(dataset)
    tf.train.Checkpoint(iterator=fresh).read(path).assert_consumed()
    assert [next(fresh).tolist() for _ in range(3)] == expected
    short = iter(tf.data.Dataset.range(3).shuffle(3).batch(3))
    with pytest.raises(ValueError, match="consumed 2 elements, but this dataset ends after 1"):
        tf.train.Checkpoint(iterator=short).read(path)
    with pytest.raises(ValueError, match="pipeline with 1 shuffle/sample steps; this one has 0"):
        tf.train.Checkpoint(iterator=iter(tf.data.Dataset.range(9))).read(path)


def test_reader_lists_the_guides_keys(tmp_path):
    net, path = _saved_net(tmp_path)
    reader = tf.train.load_checkpoint(str(tmp_path / "tf_ckpts"))
    keys = sorted(reader.get_variable_to_shape_map())
    assert "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE" in keys and "step/.ATTRIBUTES/VARIABLE_VALUE" in keys
    key = "net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    assert reader.get_variable_to_shape_map()[key] == [1, 5]
    assert reader.get_variable_to_dtype_map()[key].name == "float32"
    assert (reader.get_tensor(key) == net.l1.kernel.detach().numpy()).all()
