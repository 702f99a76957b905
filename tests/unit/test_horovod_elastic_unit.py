"""hvd.elastic in one process: commit/restore of states, the run wrapper, resuming a committed file."""

from __future__ import annotations

import pathlib
import tempfile

import pytest
import torch

import unison as hvd
from unison import keras


@pytest.fixture(autouse=True)
def _init(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RESTART_COUNT", "UNISON_ELASTIC_DIR"):
        monkeypatch.delenv(key, raising=False)
    hvd.init()


def _model_and_optimizer() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def _step(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    optimizer.zero_grad()
    model(torch.ones(3, 2)).sum().backward()
    optimizer.step()


def test_torch_state_restores_the_last_commit() -> None:
    model, optimizer = _model_and_optimizer()
    state = hvd.elastic.TorchState(model, optimizer, epoch=0, batch=0)
    _step(model, optimizer)
    state.epoch = 3
    state.commit()
    committed = model.weight.detach().clone()
    momentum = optimizer.state[model.weight]["momentum_buffer"].clone()
    _step(model, optimizer)
    state.epoch, state.batch = 5, 7
    assert not torch.equal(model.weight, committed)
    state.restore()
    assert torch.equal(model.weight.detach(), committed)
    assert torch.equal(optimizer.state[model.weight]["momentum_buffer"], momentum)
    assert (state.epoch, state.batch) == (3, 0)


def test_object_state_commit_keeps_a_copy() -> None:
    state = hvd.elastic.ObjectState(history=[1])
    state.history.append(2)
    state.commit()
    state.history.append(3)  # mutating the live value does not change the committed copy
    state.restore()
    assert state.history == [1, 2]


def test_run_calls_the_function_after_sync_and_rolls_back_on_a_failed_collective() -> None:
    model, optimizer = _model_and_optimizer()
    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    start = model.weight.detach().clone()

    @hvd.elastic.run
    def train(state: hvd.elastic.TorchState, epochs: int) -> int:
        for state.epoch in range(state.epoch, epochs):  # noqa: B020 (Horovod's idiom)
            _step(model, optimizer)
            state.commit()
        return state.epoch

    assert train(state, 2) == 1

    @hvd.elastic.run
    def fails(state: hvd.elastic.TorchState) -> None:
        _step(model, optimizer)
        raise hvd.errors.CollectiveTimeoutError("Collective 'x' (#1) failed")

    committed = model.weight.detach().clone()
    assert not torch.equal(committed, start)
    with pytest.raises(hvd.elastic.HorovodInternalError, match="Collective 'x'"):
        fails(state)
    assert torch.equal(model.weight.detach(), committed)


def test_a_restarted_job_resumes_from_the_committed_file(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNISON_ELASTIC_DIR", str(tmp_path))
    model, optimizer = _model_and_optimizer()
    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    _step(model, optimizer)
    state.epoch = 4
    state.commit()
    saved = model.weight.detach().clone()
    assert (tmp_path / "state.pt").is_file()

    # the restarted process: fresh objects, torchrun says this is restart 1
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "1")
    model2, optimizer2 = _model_and_optimizer()
    state2 = hvd.elastic.TorchState(model2, optimizer2, epoch=0)
    resets: list[int] = []
    state2.register_reset_callbacks([lambda: resets.append(hvd.size())])
    seen = hvd.elastic.run(lambda s: (s.epoch, s.model.weight.detach().clone()))(state2)
    assert seen[0] == 4 and torch.equal(seen[1], saved)
    assert resets == [1]
    assert optimizer2.state[model2.weight]["momentum_buffer"] is not None


def test_commits_go_to_disk_only_when_the_job_can_restart(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    state = hvd.elastic.ObjectState(epoch=1)
    state.commit()
    assert list(tmp_path.iterdir()) == []  # no --max-restarts: memory only
    monkeypatch.setenv("TORCHELASTIC_MAX_RESTARTS", "2")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "abc")
    state.commit()
    (folder,) = tmp_path.iterdir()
    assert folder.name.endswith("-abc") and (folder / "state.pt").is_file()
    assert folder.stat().st_mode & 0o077 == 0  # this user's only


def test_keras_state_saves_model_and_optimizer() -> None:
    model = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(1)])
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.1)), loss="mse")
    state = hvd.elastic.KerasState(model, epoch=0, batch=0)
    callbacks = [
        hvd.elastic.UpdateEpochStateCallback(state),
        hvd.elastic.UpdateBatchStateCallback(state),
        hvd.elastic.CommitStateCallback(state, batches_per_commit=2),
    ]
    model.fit(torch.ones(8, 2), torch.zeros(8, 1), batch_size=2, epochs=2, verbose=0, callbacks=callbacks)
    assert (state.epoch, state.batch) == (2, 0)
    trained = [w.copy() for w in model.get_weights()]
    model.set_weights([w * 0 for w in trained])
    state.restore()
    for got, want in zip(model.get_weights(), trained):
        assert (got == want).all()


def test_elastic_mistakes_are_named() -> None:
    with pytest.raises(TypeError, match="first argument must be a hvd.elastic State"):
        hvd.elastic.run(lambda s: None)(object())
    with pytest.raises(TypeError, match="expects a torch.nn.Module. Received: str"):
        hvd.elastic.TorchState("model")
    with pytest.raises(TypeError, match="expects a torch optimizer. Received: int"):
        hvd.elastic.TorchState(torch.nn.Linear(1, 1), 3)
    with pytest.raises(ValueError, match="batches_per_commit must be an integer >= 1"):
        hvd.elastic.CommitStateCallback(hvd.elastic.ObjectState(), batches_per_commit=0)
    with pytest.raises(TypeError, match="expects callables"):
        hvd.elastic.ObjectState().register_reset_callbacks([1])


def test_commit_callback_keeps_counting_after_a_commit_raised() -> None:
    # commit() raises HostsUpdatedInterrupt when workers join; the survivors' callback must
    # commit at the same batches as a joined worker's fresh one (or their collectives differ)
    class Interrupting(hvd.elastic.ObjectState):
        def __init__(self) -> None:
            super().__init__(epoch=0)
            self.commits = 0
            self.raise_next = False

        def commit(self) -> None:
            self.commits += 1
            if self.raise_next:
                self.raise_next = False
                raise hvd.elastic.HostsUpdatedInterrupt("workers joined")

    state = Interrupting()
    cb = hvd.elastic.CommitStateCallback(state, batches_per_commit=2)
    cb.on_train_begin()
    cb.on_batch_end(0)
    state.raise_next = True
    with pytest.raises(hvd.elastic.HostsUpdatedInterrupt):
        cb.on_batch_end(1)
    fresh = hvd.elastic.CommitStateCallback(Interrupting(), batches_per_commit=2)
    for callback in (cb, fresh):  # the re-entered fit and a joined worker's first fit
        callback.on_train_begin()
        callback.on_batch_end(0)
        callback.on_batch_end(1)
    assert state.commits == 2 and fresh.state.commits == 1


def test_a_commit_folder_others_can_write_is_refused_before_unpickling(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "commits"
    folder.mkdir()
    monkeypatch.setenv("UNISON_ELASTIC_DIR", str(folder))
    hvd.elastic.ObjectState(epoch=1).commit()
    folder.chmod(0o777)  # e.g. planted in the shared /tmp by another user
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "1")
    with pytest.raises(hvd.elastic.HorovodInternalError, match="writable by nobody else.*UNISON_ELASTIC_DIR"):
        hvd.elastic.ObjectState(epoch=0).resume()
    with pytest.raises(hvd.elastic.HorovodInternalError, match="mode 0o777"):
        hvd.elastic.ObjectState(epoch=0).commit()
