"""tf.train.Checkpoint keeps every variable TF's keeps of a Keras optimizer: iterations, the
learning rate (not a schedule, which follows iterations), slots (restored at the build of an
optimizer restored before its first step), use_ema's averages and the loss-scale state."""

from __future__ import annotations

import pytest
import torch

import unison as tf
from unison import keras


def _step(model: torch.nn.Module, optimizer, seed: int = 0) -> None:
    torch.manual_seed(seed)
    x = torch.randn(4, 3)
    loss = model(x).pow(2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()))
    optimizer.apply_gradients(zip(grads, model.parameters()))


@pytest.mark.timeout(60)
def test_loss_scale_state_and_iterations_are_restored(tmp_path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0)
    _step(model, optimizer)
    optimizer.update_scale(False)
    optimizer.update_scale(True)
    optimizer.iterations.fill_(5)
    path = tf.train.Checkpoint(optimizer=optimizer).save(str(tmp_path / "c"))
    fresh = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0)
    tf.train.Checkpoint(optimizer=fresh).restore(path)
    assert (fresh.dynamic_scale, fresh.step_counter, fresh.skipped_steps) == (4.0, 1, 1)
    assert int(fresh.iterations) == 5
    assert int(fresh.inner_optimizer.iterations) == int(optimizer.inner_optimizer.iterations)


@pytest.mark.timeout(60)
def test_a_schedule_is_kept_and_slots_wait_for_the_build(tmp_path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)
    optimizer = keras.optimizers.Adam(schedule)
    for i in range(3):
        _step(model, optimizer, i)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "c"))
    fresh_model = torch.nn.Linear(3, 2)
    fresh = keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5))
    status = tf.train.Checkpoint(model=fresh_model, optimizer=fresh).restore(path)
    status.assert_existing_objects_matched()  # iterations and the model matched now
    with pytest.raises(AssertionError, match="restored when it is built"):
        status.assert_consumed()  # the slots wait for the build, as in TF
    assert int(fresh.iterations) == 3 and fresh._schedule is not None
    _step(fresh_model, fresh, 3)
    _step(model, optimizer, 3)
    assert int(fresh.iterations) == 4
    for a, b in zip(fresh.variables, optimizer.variables):
        assert torch.equal(a, b)
    for a, b in zip(fresh_model.parameters(), model.parameters()):
        assert torch.equal(a, b)


@pytest.mark.timeout(60)
def test_slots_of_another_model_are_refused_at_the_build(tmp_path) -> None:
    model = torch.nn.Linear(3, 2)
    optimizer = keras.optimizers.Adam(0.1)
    _step(model, optimizer)
    path = tf.train.Checkpoint(optimizer=optimizer).save(str(tmp_path / "c"))
    other = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    fresh = keras.optimizers.Adam(0.1)
    tf.train.Checkpoint(optimizer=fresh).restore(path)
    with pytest.raises(ValueError, match="another model"):
        _step(other, fresh)
