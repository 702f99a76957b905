"""tf.io.gfile on local paths, tf.function results outside a tape, and checkpoint directories.

What the TF guides and the multi-worker custom-loop tutorial rely on: a non-chief worker makes a
temporary checkpoint directory with ``tf.io.gfile.makedirs``, saves into it and removes it with
``tf.io.gfile.rmtree``; a training step decorated with ``tf.function`` returns a loss whose
``.numpy()`` works, as TF's returns a value.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def test_gfile_makedirs_listdir_glob_exists_rmtree(tmp_path):
    root = str(tmp_path)
    tf.io.gfile.makedirs(os.path.join(root, "a", "b"))
    tf.io.gfile.makedirs(os.path.join(root, "a", "b"))  # exists already: no error, as in TF
    with tf.io.gfile.GFile(os.path.join(root, "a", "x.txt"), "w") as f:
        f.write("one\ntwo\n")
    assert tf.io.gfile.listdir(os.path.join(root, "a")) == ["b", "x.txt"]
    assert tf.io.gfile.glob(os.path.join(root, "a", "*.txt")) == [os.path.join(root, "a", "x.txt")]
    assert tf.io.gfile.isdir(os.path.join(root, "a", "b"))
    assert not tf.io.gfile.isdir(os.path.join(root, "a", "x.txt"))
    assert list(tf.io.gfile.GFile(os.path.join(root, "a", "x.txt"))) == ["one\n", "two\n"]
    assert tf.io.gfile.stat(os.path.join(root, "a", "x.txt")).st_size == 8
    walked = [(os.path.relpath(d, root), sorted(s), sorted(f)) for d, s, f in tf.io.gfile.walk(root)]
    assert walked == [(".", ["a"], []), ("a", ["b"], ["x.txt"]), (os.path.join("a", "b"), [], [])]
    tf.io.gfile.rmtree(os.path.join(root, "a"))
    assert not tf.io.gfile.exists(os.path.join(root, "a"))


def test_gfile_copy_rename_remove_respect_overwrite(tmp_path):
    src, dst = str(tmp_path / "s"), str(tmp_path / "d")
    with tf.io.gfile.GFile(src, "w") as f:
        f.write("data")
    tf.io.gfile.copy(src, dst)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        tf.io.gfile.copy(src, dst)
    tf.io.gfile.rename(dst, str(tmp_path / "e"))
    assert tf.io.gfile.GFile(str(tmp_path / "e")).read() == "data"
    with pytest.raises(FileExistsError, match="overwrite=True"):
        tf.io.gfile.rename(src, str(tmp_path / "e"))
    tf.io.gfile.rename(src, str(tmp_path / "e"), overwrite=True)
    tf.io.gfile.remove(str(tmp_path / "e"))
    assert tf.io.gfile.listdir(str(tmp_path)) == []


def test_gfile_errors_name_the_path_and_the_fix(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="rmtree needs a directory: .*nope"):
        tf.io.gfile.rmtree(missing)
    with pytest.raises(FileNotFoundError, match="listdir"):
        tf.io.gfile.listdir(missing)
    with pytest.raises(FileNotFoundError, match="parent directory"):
        tf.io.gfile.mkdir(os.path.join(missing, "child"))
    with pytest.raises(tf.errors.NotFoundError, match="opened for reading"):
        tf.io.gfile.GFile(missing).read()  # opened on first use, as TF's GFile is
    with pytest.raises(ValueError, match="local paths only. Received: path='gs://bucket/x'"):
        tf.io.gfile.exists("gs://bucket/x")
    with pytest.raises(AttributeError, match="unison does not implement tf.io.gfile.no_such"):
        tf.io.gfile.no_such  # noqa: B018
    with pytest.raises(AttributeError, match="unison does not implement tf.io.decode_jxl"):
        tf.io.decode_jxl  # noqa: B018


def test_tf_function_results_outside_a_tape_are_values():
    w = tf.Variable([[1.0], [2.0]])

    @tf.function
    def step(x):
        loss = tf.reduce_sum(tf.matmul(x, w))
        return loss, {"w": w, "twice": [2.0 * loss]}

    loss, extra = step(tf.constant([[1.0, 1.0]]))
    assert loss.numpy() == 3.0  # TF's loss is a value: .numpy() works
    assert not loss.requires_grad and not extra["twice"][0].requires_grad
    assert extra["w"] is w  # a returned variable stays the variable
    with tf.GradientTape() as tape:
        inside, _ = step(tf.constant([[1.0, 1.0]]))
    torch.testing.assert_close(tape.gradient(inside, w), torch.tensor([[1.0], [1.0]]))


def test_manager_save_makes_its_directory_even_where_no_file_is_written(tmp_path, monkeypatch):
    from unison.train import checkpoint as ckpt_module

    ckpt = tf.train.Checkpoint(step=tf.Variable(1))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "workertemp_1" / "ckpt"), max_to_keep=1)
    monkeypatch.setattr(ckpt_module, "_is_chief", lambda: False)  # a non-chief worker writes nothing...
    monkeypatch.setattr("unison.train.manager._is_chief", lambda: False)
    manager.save()
    assert os.path.isdir(tmp_path / "workertemp_1" / "ckpt")  # ...but its directory exists, as in TF
    assert os.listdir(tmp_path / "workertemp_1" / "ckpt") == []
    tf.io.gfile.rmtree(str(tmp_path / "workertemp_1" / "ckpt"))  # the tutorial's clean-up works


def test_float_and_int_of_a_trainable_variable_read_its_value_without_a_warning():
    import warnings

    v = tf.Variable(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(v) == 2.5 and int(v) == 2


def test_numpy_of_a_tensor_that_requires_grad_reads_its_value_and_keeps_the_graph():
    w = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = w * w
        assert y.numpy() == 9.0  # TF: an eager tensor's value, wherever it came from
    assert tape.gradient(y, w).numpy() == 6.0  # reading it did not cut the graph
    x = torch.ones(2, requires_grad=True)
    view = (x * 2).numpy()
    assert view.tolist() == [2.0, 2.0] and x.requires_grad
    assert torch.ones(2).numpy().tolist() == [1.0, 1.0]  # plain tensors: torch's own numpy()


def test_variable_numpy_is_a_snapshot_as_in_tf():
    # TF's optimizers guide: x_old = x.numpy(); step; `x == x_old` must compare old and new values.
    x = tf.Variable(2.0)
    old = x.numpy()
    x.assign_sub(0.5)
    assert old == 2.0 and x.numpy() == 1.5
    opt = torch.optim.SGD([x], lr=1.0)
    x.grad = torch.tensor(1.0)
    before = x.numpy()
    opt.step()
    assert before == 1.5 and x.numpy() == 0.5


def test_numpy_of_a_scalar_is_a_hashable_numpy_scalar_and_arrays_still_convert():
    import numpy as np

    acc = tf.reduce_mean(tf.constant([1.0, 0.0]))
    value = acc.numpy()
    assert isinstance(value, np.float32) and {value: "label"}[np.float32(0.5)] == "label"  # the MLP guide
    assert tf.Variable(2.0).numpy() == np.float32(2.0) and isinstance(tf.Variable(2.0).numpy(), np.float32)
    assert np.asarray(tf.constant(1.5)).shape == ()  # numpy's own conversion still gives an array
    assert np.asarray(tf.Variable([1.0, 2.0]) * 2).tolist() == [2.0, 4.0]  # also with requires_grad
    assert tf.constant([1, 2]).numpy().tolist() == [1, 2]


def test_numpy_2_conversions_copy_or_share_as_asked():
    # NumPy 2 calls __array__(dtype, copy=...): TF's tensor guide starts with np.array(tensor)
    import warnings

    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DeprecationWarning for a missing copy= either
        copied = np.array(t)
        shared = np.asarray(t.detach())
        widened = np.array(t, dtype=np.float64)
    copied[0, 0] = 9.0
    assert float(t.detach()[0, 0]) == 1.0  # np.array copies
    shared[0, 1] = 7.0
    assert float(t.detach()[0, 1]) == 7.0  # np.asarray shares the tensor's memory, as with torch alone
    assert widened.dtype == np.float64 and widened[1, 1] == 4.0
    assert np.array(torch.tensor(3.0)).shape == ()  # an array, not numpy's scalar, for np.array
    with pytest.raises(ValueError, match="Unable to avoid a copy"):
        np.asarray(torch.ones(2), dtype=np.float64, copy=False)
