"""tf.train.Checkpoint / CheckpointManager / latest_checkpoint: TF's naming, verified files, clear errors."""

from __future__ import annotations

import os

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def _model(seed: int = 0, hidden: int = 4) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(3, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 2))


def _train_one_step(model: torch.nn.Module, opt: torch.optim.Optimizer) -> None:
    opt.zero_grad()
    model(torch.ones(5, 3)).sum().backward()
    opt.step()


def test_save_restore_round_trip_with_tf_naming(tmp_path):
    model = _model(0)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    _train_one_step(model, opt)
    step = tf.Variable(7)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, step=step)
    prefix = str(tmp_path / "training_checkpoints" / "ckpt")
    first = ckpt.save(prefix)
    second = ckpt.save(prefix)
    assert first == prefix + "-1" and second == prefix + "-2"
    assert int(ckpt.save_counter) == 2
    assert tf.train.latest_checkpoint(str(tmp_path / "training_checkpoints")) == second
    state_file = (tmp_path / "training_checkpoints" / "checkpoint").read_text()
    assert 'model_checkpoint_path: "ckpt-2"' in state_file

    fresh = _model(1)
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.1)
    fresh_step = tf.Variable(0)
    restored = tf.train.Checkpoint(model=fresh, optimizer=fresh_opt, step=fresh_step)
    status = restored.restore(tf.train.latest_checkpoint(str(tmp_path / "training_checkpoints")))
    status.assert_consumed()
    for a, b in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(a, b)
    assert fresh_step.numpy() == 7 and int(restored.save_counter) == 2
    assert fresh_opt.state_dict()["state"][0]["exp_avg"].equal(opt.state_dict()["state"][0]["exp_avg"])
    # both continue identically
    _train_one_step(model, opt)
    _train_one_step(fresh, fresh_opt)
    for a, b in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(a, b)


def test_write_read_and_partial_restore(tmp_path):
    model = _model(0)
    ckpt = tf.train.Checkpoint(model=model, extra=tf.Variable([1.0, 2.0]))
    path = ckpt.write(str(tmp_path / "weights"))
    assert path == str(tmp_path / "weights") and int(ckpt.save_counter) == 0
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # write() records nothing
    only_model = tf.train.Checkpoint(model=_model(3))
    status = only_model.read(path)
    with pytest.raises(AssertionError, match="extra"):
        status.assert_consumed()
    status.expect_partial().assert_existing_objects_matched()
    assert torch.equal(only_model.model[0].weight, model[0].weight)
    more = tf.train.Checkpoint(model=_model(3), other=tf.Variable(1.0))
    with pytest.raises(AssertionError, match="other"):
        more.read(path).assert_existing_objects_matched()


def test_restore_none_is_a_no_op_like_tf(tmp_path):
    ckpt = tf.train.Checkpoint(model=_model())
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3)
    status = ckpt.restore(manager.latest_checkpoint)
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        status.assert_consumed()
    status.expect_partial()


def test_manager_keeps_the_newest_and_recovers_its_list(tmp_path):
    ckpt = tf.train.Checkpoint(model=_model())
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "tf_ckpts"), max_to_keep=2, checkpoint_name="model")
    paths = [manager.save() for _ in range(4)]
    assert [os.path.basename(p) for p in paths] == ["model-1", "model-2", "model-3", "model-4"]
    assert manager.checkpoints == paths[2:] and manager.latest_checkpoint == paths[3]
    files = sorted(f for f in os.listdir(tmp_path / "tf_ckpts") if not f.startswith("."))
    assert files == ["checkpoint", "model-3.unison", "model-4.unison"]
    assert manager.save(checkpoint_number=100).endswith("model-100")
    again = tf.train.CheckpointManager(tf.train.Checkpoint(model=_model()), str(tmp_path / "tf_ckpts"), max_to_keep=2)
    assert again.checkpoints == [paths[3], str(tmp_path / "tf_ckpts" / "model-100")]
    with pytest.raises(ValueError, match="max_to_keep must be an integer"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_manager_interval_and_restore_or_initialize(tmp_path):
    step = tf.Variable(0)
    inits = []
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(
        ckpt, str(tmp_path), max_to_keep=None, step_counter=step, checkpoint_interval=5, init_fn=lambda: inits.append(1)
    )
    assert manager.restore_or_initialize() is None and inits == [1]
    saved = []
    for _ in range(11):
        saved.append(manager.save())
        step.assign_add(1)
    assert [s is not None for s in saved].count(True) == 3  # steps 0, 5, 10
    step.assign(99)
    assert manager.restore_or_initialize() == manager.latest_checkpoint and step.numpy() == 10


def test_missing_checkpoint_path_is_a_clear_error(tmp_path):
    ckpt = tf.train.Checkpoint(model=_model())
    ckpt.save(str(tmp_path / "ckpt"))
    with pytest.raises(FileNotFoundError, match=r"No checkpoint at .*ckpt-9.*recorded in"):
        ckpt.restore(str(tmp_path / "ckpt-9"))
    with pytest.raises(ValueError, match="is a directory"):
        ckpt.restore(str(tmp_path))


def test_checkpoint_of_another_model_names_both_structures(tmp_path):
    path = tf.train.Checkpoint(model=_model(hidden=4)).save(str(tmp_path / "ckpt"))
    other = tf.train.Checkpoint(model=_model(hidden=8))
    with pytest.raises(ValueError, match=r"another model") as info:
        other.restore(path)
    message = str(info.value)
    assert "0.weight: (4, 3)" in message and "0.weight: (8, 3)" in message
    different = tf.train.Checkpoint(model=torch.nn.Linear(3, 2))
    with pytest.raises(ValueError, match=r"missing \['weight', 'bias'\]"):
        different.restore(path)


def test_damaged_file_is_detected(tmp_path):
    path = tf.train.Checkpoint(model=_model()).save(str(tmp_path / "ckpt"))
    raw = bytearray((tmp_path / "ckpt-1.unison").read_bytes())
    raw[-10] ^= 0xFF
    (tmp_path / "ckpt-1.unison").write_bytes(bytes(raw))
    with pytest.raises(tf.train.CorruptCheckpointError, match="damaged"):
        tf.train.Checkpoint(model=_model()).restore(path)


def test_untrackable_object_and_reserved_name():
    with pytest.raises(ValueError, match="expecting a trackable object.*got int"):
        tf.train.Checkpoint(epochs=5)
    with pytest.raises(ValueError, match="reserved"):
        tf.train.Checkpoint(save_counter=tf.Variable(1))
    ckpt = tf.train.Checkpoint(net=_model())
    assert isinstance(ckpt.net, torch.nn.Module)
    with pytest.raises(AttributeError, match="no object 'model'"):
        ckpt.model  # noqa: B018


def test_nested_checkpoint_and_lazy_module_restore(tmp_path):
    model = torch.nn.Sequential(torch.nn.LazyLinear(2))
    model(torch.ones(1, 3))
    path = tf.train.Checkpoint(inner=tf.train.Checkpoint(model=model)).save(str(tmp_path / "c"))
    unbuilt = torch.nn.Sequential(torch.nn.LazyLinear(2))  # restored before it is built, as TF allows
    tf.train.Checkpoint(inner=tf.train.Checkpoint(model=unbuilt)).restore(path).assert_consumed()
    assert torch.equal(unbuilt[0].weight, model[0].weight)


def test_keras_optimizer_is_trackable(tmp_path):
    model = _model()
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
    torch_opt = optimizer.build(list(model.parameters()))
    _train_one_step(model, torch_opt)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))
    fresh_model = _model(2)
    fresh = tf.keras.optimizers.Adam(learning_rate=0.5)
    unbuilt = tf.train.Checkpoint(model=fresh_model, optimizer=fresh).restore(path)
    assert fresh.learning_rate == pytest.approx(0.01)
    with pytest.raises(AssertionError, match="not built yet"):
        unbuilt.assert_consumed()
    built = fresh.build(list(fresh_model.parameters()))
    tf.train.Checkpoint(model=fresh_model, optimizer=fresh).restore(path).assert_consumed()
    assert built.state_dict()["state"][0]["exp_avg"].equal(torch_opt.state_dict()["state"][0]["exp_avg"])
