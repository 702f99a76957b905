"""PreemptionCheckpointHandler in one process: counting, saving on SIGTERM, restoring, errors."""

from __future__ import annotations

import os
import signal

import pytest
import torch

import unison as tf
from unison.distribute.preemption import RESTARTABLE_EXIT_CODE


class Exited(Exception):
    pass


def _exit() -> None:
    raise Exited


def _handler(directory, model, **config):
    ckpt = tf.train.Checkpoint(model=model)
    return tf.distribute.experimental.PreemptionCheckpointHandler(
        None, ckpt, str(directory), tf.distribute.experimental.TerminationConfig(exit_fn=_exit, **config)
    )


def test_a_sigterm_saves_after_the_running_step_and_a_new_handler_resumes_there(tmp_path):
    model = torch.nn.Linear(2, 1)
    handler = _handler(tmp_path, model)
    try:
        for _ in range(3):
            handler.run(lambda: None)
        assert handler.total_run_calls == 3 and handler.restored_from is None

        def step_that_is_preempted() -> None:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives during the step: the step completes
            with torch.no_grad():
                model.weight.fill_(7.0)

        with pytest.raises(Exited):
            handler.run(step_that_is_preempted)
        assert handler.saved_at == 4
    finally:
        handler.close()
    assert signal.getsignal(signal.SIGTERM) is not handler._watcher._on_sigterm

    fresh = torch.nn.Linear(2, 1)
    again = _handler(tmp_path, fresh)
    again.close()
    assert again.total_run_calls == 4 and again.restored_from == 4
    assert torch.equal(fresh.weight, torch.full((1, 2), 7.0))


def test_a_watcher_function_and_a_checkpoint_manager(tmp_path):
    notices = []
    model = torch.nn.Linear(2, 1)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(tmp_path), max_to_keep=1)
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        None,
        manager,
        termination_config=tf.distribute.experimental.TerminationConfig(
            termination_watcher_fn=lambda: bool(notices), exit_fn=_exit
        ),
    )
    with handler.watch_preemption_scope():
        handler.run(lambda: None)
        notices.append(1)
        handler._watcher._poll_once()  # what the watcher thread does each second
        with pytest.raises(Exited):
            handler.save_checkpoint_if_preempted()
    assert manager.latest_checkpoint is not None and handler.saved_at == 1


def test_grace_period_keeps_training_until_it_is_nearly_over(tmp_path):
    handler = _handler(tmp_path, torch.nn.Linear(2, 1), grace_period=3600)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        handler.run(lambda: None)  # an hour of grace: no save yet
        assert handler.saved_at is None and handler._watcher.vote() == 0
        handler._watcher.notice_at -= 3600
        with pytest.raises(Exited):
            handler.run(lambda: None)
        assert handler.saved_at == 2
    finally:
        handler.close()


def test_default_exit_code_and_argument_errors(tmp_path):
    assert RESTARTABLE_EXIT_CODE == 42
    from unison.distribute.preemption import exit_for_restart

    with pytest.raises(SystemExit) as info:
        exit_for_restart()
    assert info.value.code == 42
    ckpt = tf.train.Checkpoint(model=torch.nn.Linear(2, 1))
    with pytest.raises(ValueError, match="checkpoint_dir is required"):
        tf.distribute.experimental.PreemptionCheckpointHandler(None, ckpt)
    with pytest.raises(TypeError, match="expects a tf.train.Checkpoint or a tf.train.CheckpointManager"):
        tf.distribute.experimental.PreemptionCheckpointHandler(None, object(), str(tmp_path))
    with pytest.raises(TypeError, match="termination_config must be"):
        tf.distribute.experimental.PreemptionCheckpointHandler(None, ckpt, str(tmp_path), termination_config=3)
    with pytest.raises(TypeError, match="exit_fn must be a function"):
        tf.distribute.experimental.TerminationConfig(exit_fn=3)
    with pytest.raises(ValueError, match="grace_period must be >= 0"):
        tf.distribute.experimental.TerminationConfig(grace_period=-1)
