"""Keras 3 callbacks against a small fake model (the interface the trainer provides)."""

from __future__ import annotations

import io
import math
import os
import re
from typing import Any

import numpy as np
import pytest
import torch

from unison.keras.callbacks import (
    Callback,
    CallbackList,
    CSVLogger,
    EarlyStopping,
    History,
    LearningRateScheduler,
    ModelCheckpoint,
    ProgbarLogger,
    ReduceLROnPlateau,
    TerminateOnNaN,
)


class FakeExtended:
    def __init__(self, chief: bool) -> None:
        self.should_checkpoint = chief


class FakeStrategy:
    def __init__(self, chief: bool) -> None:
        self.extended = FakeExtended(chief)


class FakeOptimizer:
    def __init__(self, learning_rate: float) -> None:
        self._lr = learning_rate

    @property
    def learning_rate(self) -> float:
        return self._lr

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._lr = float(value)


class FakeModel:
    """The model interface callbacks rely on."""

    def __init__(self, chief: bool = True, learning_rate: float = 0.1, strategy: bool = True) -> None:
        self.stop_training = False
        self.optimizer = FakeOptimizer(learning_rate)
        self.weights = [np.zeros(2)]
        self.saved: list[tuple[str, str]] = []
        if strategy:
            self.distribute_strategy = FakeStrategy(chief)

    def get_weights(self) -> list[np.ndarray]:
        return [w.copy() for w in self.weights]

    def set_weights(self, weights: list[np.ndarray]) -> None:
        self.weights = [np.array(w) for w in weights]

    def save_weights(self, filepath: str) -> None:
        self._write(filepath, "weights")

    def save(self, filepath: str) -> None:
        self._write(filepath, "model")

    def _write(self, filepath: str, kind: str) -> None:
        with open(filepath, "w") as f:
            f.write(f"{kind} {self.weights[0][0]}")
        self.saved.append((kind, filepath))


def fit(
    callbacks: list[Callback],
    model: FakeModel,
    epoch_logs: list[dict[str, float]],
    steps: int = 2,
    batch_logs: dict[str, float] | None = None,
    verbose: int = 0,
) -> History:
    """Drive the callbacks the way the trainer's fit() does; weights[0] == epoch index."""
    cbs = CallbackList(
        callbacks,
        add_history=True,
        add_progbar=verbose != 0,
        model=model,
        verbose=verbose,
        epochs=len(epoch_logs),
        steps=steps,
    )
    cbs.on_train_begin()
    logs: dict[str, float] = {}
    for epoch, logs in enumerate(epoch_logs):
        cbs.on_epoch_begin(epoch)
        for batch in range(steps):
            cbs.on_train_batch_begin(batch)
            model.weights = [np.full(2, float(epoch))]
            cbs.on_train_batch_end(batch, batch_logs)
        cbs.on_epoch_end(epoch, dict(logs))
        if model.stop_training:
            break
    cbs.on_train_end(logs)
    assert cbs.history is not None
    return cbs.history


# --- History, CallbackList -------------------------------------------------------------


def test_history_records_every_epoch_and_params() -> None:
    model = FakeModel()
    history = fit([], model, [{"loss": 1.0, "val_loss": 2.0}, {"loss": 0.5, "val_loss": 1.5}])
    assert history.history == {"loss": [1.0, 0.5], "val_loss": [2.0, 1.5]}
    assert history.epoch == [0, 1]
    assert history.params == {"verbose": 0, "epochs": 2, "steps": 2}
    assert model.history is history


def test_callback_list_reuses_a_given_history_and_dispatches_in_order() -> None:
    calls: list[str] = []

    class Recorder(Callback):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            calls.append(f"{self.name}{epoch}")

    history = History()
    cbs = CallbackList([Recorder("a"), history, Recorder("b")], add_history=True)
    assert cbs.history is history and len(cbs) == 3
    cbs.on_epoch_begin(0)
    assert calls == ["a0", "b0"]


def test_callback_list_rejects_non_callbacks_naming_them() -> None:
    with pytest.raises(TypeError, match=r"callbacks\[1\]='oops'"):
        CallbackList([History(), "oops"])  # type: ignore[list-item]


def test_batch_logs_are_converted_to_python_floats() -> None:
    seen: dict[str, Any] = {}

    class Grab(Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.update(logs)

    cbs = CallbackList([Grab()])
    cbs.on_train_batch_end(0, {"loss": torch.tensor(0.5), "acc": np.float32(0.25)})
    assert seen == {"acc": 0.25, "loss": 0.5}
    assert all(type(v) is float for v in seen.values())


def test_train_batch_end_falls_back_to_on_batch_end() -> None:
    seen: list[int] = []

    class Old(Callback):
        def on_batch_end(self, batch: int, logs: Any = None) -> None:
            seen.append(batch)

    CallbackList([Old()]).on_train_batch_end(4, None)
    assert seen == [4]


def test_needs_batch_logs() -> None:
    class BatchWatcher(Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            pass

    class TestWatcher(Callback):
        def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
            pass

    class EpochOnly(Callback):
        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            pass

    assert not CallbackList([], add_history=True, add_progbar=True).needs_batch_logs()
    assert not CallbackList([EpochOnly(), EarlyStopping(), CSVLogger("x.csv")]).needs_batch_logs()
    assert not CallbackList([ModelCheckpoint("c.w")]).needs_batch_logs()
    assert CallbackList([ModelCheckpoint("c.w", save_freq=10)]).needs_batch_logs()
    assert CallbackList([BatchWatcher()]).needs_batch_logs()
    assert CallbackList([TestWatcher()]).needs_batch_logs()
    assert CallbackList([TerminateOnNaN()]).needs_batch_logs()


# --- EarlyStopping ----------------------------------------------------------------------


def test_early_stopping_stops_after_patience_and_restores_best_weights() -> None:
    model = FakeModel()
    stop = EarlyStopping(patience=2, restore_best_weights=True)
    losses = [1.0, 0.5, 0.6, 0.7, 0.4, 0.3]
    history = fit([stop], model, [{"val_loss": v} for v in losses])
    assert history.epoch == [0, 1, 2, 3]  # epochs 2 and 3 did not improve on 0.5
    assert stop.stopped_epoch == 3 and stop.best == 0.5 and stop.best_epoch == 1
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0])


def test_early_stopping_without_restore_keeps_last_weights() -> None:
    model = FakeModel()
    fit([EarlyStopping(patience=1)], model, [{"val_loss": v} for v in [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(model.weights[0], [1.0, 1.0])


def test_early_stopping_auto_mode_maximizes_accuracy_and_honours_min_delta() -> None:
    model = FakeModel()
    stop = EarlyStopping(monitor="val_accuracy", patience=1, min_delta=0.05)
    history = fit([stop], model, [{"val_accuracy": v} for v in [0.5, 0.52, 0.9]])
    assert history.epoch == [0, 1]  # +0.02 is below min_delta: no improvement


def test_early_stopping_baseline_and_start_from_epoch() -> None:
    losses = [{"loss": v} for v in [1.0, 0.9, 0.95, 0.8]]
    history = fit([EarlyStopping(monitor="loss", patience=2)], FakeModel(), losses)
    assert history.epoch == [0, 1, 2, 3]
    # With a baseline never beaten, the patience counter is not reset by improvements.
    history = fit([EarlyStopping(monitor="loss", patience=2, baseline=0.1)], FakeModel(), losses)
    assert history.epoch == [0, 1, 2]

    model = FakeModel()
    history = fit(
        [EarlyStopping(monitor="loss", patience=0, start_from_epoch=2)],
        model,
        [{"loss": v} for v in [1.0, 2.0, 3.0, 4.0, 5.0]],
    )
    assert history.epoch == [0, 1, 2, 3]


def test_early_stopping_prints_only_on_chief(capsys: pytest.CaptureFixture[str]) -> None:
    for chief in (False, True):
        model = FakeModel(chief=chief)
        fit([EarlyStopping(monitor="loss", verbose=1)], model, [{"loss": v} for v in [1.0, 2.0]])
        assert model.stop_training  # the decision is taken on every replica
        out = capsys.readouterr().out
        assert ("Epoch 2: early stopping" in out) == chief


def test_early_stopping_invalid_mode_is_a_value_error() -> None:
    with pytest.raises(ValueError) as info:
        EarlyStopping(mode="avg")
    assert "mode='avg'" in str(info.value)
    assert "'auto', 'max', 'min'" in str(info.value)


def test_early_stopping_unknown_direction_needs_mode_or_metric_direction() -> None:
    stop = EarlyStopping(monitor="zebra")
    stop.set_model(FakeModel())
    with pytest.raises(ValueError, match=r"monitor='zebra'.*mode='max'"):
        stop.on_train_begin()

    class Metric:
        name = "zebra"
        direction = "up"

    model = FakeModel()
    model.metrics = [Metric()]  # type: ignore[attr-defined]
    history = fit([EarlyStopping(monitor="val_zebra", patience=0)], model, [{"val_zebra": v} for v in [1.0, 2.0, 1.5]])
    assert history.epoch == [0, 1, 2]


# --- ModelCheckpoint --------------------------------------------------------------------


def test_model_checkpoint_formats_file_names(tmp_path: Any) -> None:
    model = FakeModel()
    path = str(tmp_path / "ckpt" / "w-{epoch:02d}-{val_loss:.2f}.pt")
    fit([ModelCheckpoint(path, save_weights_only=True)], model, [{"val_loss": 0.5}, {"val_loss": 0.4321}])
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["w-01-0.50.pt", "w-02-0.43.pt"]
    assert (tmp_path / "ckpt" / "w-02-0.43.pt").read_text() == "weights 1.0"


def test_model_checkpoint_save_best_only(tmp_path: Any) -> None:
    model = FakeModel()
    path = str(tmp_path / "{epoch}.keras")
    ckpt = ModelCheckpoint(path, save_best_only=True)
    fit([ckpt], model, [{"val_loss": v} for v in [0.5, 0.6, 0.4, 0.45]])
    assert sorted(os.listdir(tmp_path)) == ["1.keras", "3.keras"]
    assert [kind for kind, _ in model.saved] == ["model", "model"]
    assert ckpt.best == 0.4


def test_model_checkpoint_best_only_overwrites_one_file_and_threshold(tmp_path: Any) -> None:
    model = FakeModel()
    path = tmp_path / "best.pt"
    fit(
        [
            ModelCheckpoint(
                str(path),
                monitor="val_accuracy",
                save_best_only=True,
                save_weights_only=True,
                initial_value_threshold=0.6,
            )
        ],
        model,
        [{"val_accuracy": v} for v in [0.5, 0.7, 0.65, 0.8, 0.1]],
    )
    assert path.read_text() == "weights 3.0"
    assert len(model.saved) == 2  # epochs 2 and 4 beat 0.6 and the best so far
    assert os.listdir(tmp_path) == ["best.pt"]  # no temporary files left behind


def test_model_checkpoint_writes_only_on_chief(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    worker = FakeModel(chief=False)
    ckpt = ModelCheckpoint(str(tmp_path / "sub" / "{epoch}.pt"), save_best_only=True, verbose=1)
    fit([ckpt], worker, [{"val_loss": v} for v in [0.5, 0.4]])
    assert not (tmp_path / "sub").exists() and worker.saved == []
    assert ckpt.best == 0.4  # the same decision state as on the chief
    assert capsys.readouterr().out == ""

    chief = FakeModel(chief=True)
    fit([ModelCheckpoint(str(tmp_path / "sub" / "{epoch}.pt"), verbose=1)], chief, [{"val_loss": 0.5}])
    assert os.listdir(tmp_path / "sub") == ["1.pt"]
    assert "Epoch 1: saving model to" in capsys.readouterr().out


def test_model_checkpoint_without_strategy_is_chief(tmp_path: Any) -> None:
    model = FakeModel(strategy=False)
    fit([ModelCheckpoint(str(tmp_path / "m.pt"))], model, [{"val_loss": 1.0}])
    assert (tmp_path / "m.pt").read_text() == "model 0.0"


def test_model_checkpoint_every_n_batches(tmp_path: Any) -> None:
    model = FakeModel()
    ckpt = ModelCheckpoint(str(tmp_path / "e{epoch}-b{batch}.pt"), save_freq=3)
    fit([ckpt], model, [{"val_loss": 1.0}, {"val_loss": 0.9}], steps=4, batch_logs={"loss": 1.0})
    # 8 batches in all: saves after the 3rd (epoch 1, batch 3) and 6th (epoch 2, batch 2).
    assert sorted(os.listdir(tmp_path)) == ["e1-b3.pt", "e2-b2.pt"]


def test_model_checkpoint_failed_write_keeps_previous_file(tmp_path: Any) -> None:
    model = FakeModel()
    path = tmp_path / "last.pt"
    ckpt = ModelCheckpoint(str(path), save_weights_only=True)
    fit([ckpt], model, [{"val_loss": 1.0}])

    def crash(filepath: str) -> None:
        with open(filepath, "w") as f:
            f.write("half")
        raise OSError("disk full")

    model.save_weights = crash  # type: ignore[method-assign]
    with pytest.raises(OSError, match="disk full"):
        ckpt.on_epoch_end(1, {"val_loss": 0.5})
    assert path.read_text() == "weights 0.0"
    assert os.listdir(tmp_path) == ["last.pt"]


def test_model_checkpoint_unknown_field_names_the_available_ones(tmp_path: Any) -> None:
    ckpt = ModelCheckpoint(str(tmp_path / "{val_acc:.2f}.pt"))
    ckpt.set_model(FakeModel())
    with pytest.raises(ValueError, match=r"'val_acc'.*epoch, val_loss"):
        ckpt.on_epoch_end(0, {"val_loss": 0.3})


@pytest.mark.parametrize("save_freq", ["batch", 0, -5, 1.5, True])
def test_model_checkpoint_invalid_save_freq(save_freq: Any) -> None:
    with pytest.raises(ValueError) as info:
        ModelCheckpoint("x.pt", save_freq=save_freq)
    assert f"save_freq={save_freq!r}" in str(info.value)
    assert "'epoch'" in str(info.value) and "positive integer" in str(info.value)


def test_model_checkpoint_invalid_mode() -> None:
    with pytest.raises(ValueError, match=r"'auto', 'max', 'min'.*mode='best'"):
        ModelCheckpoint("x.pt", mode="best")


# --- CSVLogger --------------------------------------------------------------------------


def test_csv_logger_writes_header_and_rows(tmp_path: Any) -> None:
    path = tmp_path / "log.csv"
    fit([CSVLogger(str(path))], FakeModel(), [{"loss": 0.5, "accuracy": 0.75}, {"loss": 0.25, "accuracy": 0.875}])
    # Keras adds a val_ column per metric when the first epoch has no validation (written NA)
    assert path.read_text().splitlines() == [
        "epoch,accuracy,loss,val_accuracy,val_loss",
        "0,0.75,0.5,NA,NA",
        "1,0.875,0.25,NA,NA",
    ]


def test_csv_logger_append_separator_and_missing_values(tmp_path: Any) -> None:
    path = tmp_path / "log.tsv"
    fit([CSVLogger(str(path), separator="\t")], FakeModel(), [{"loss": 1.0, "val_loss": 2.0}])
    fit([CSVLogger(str(path), separator="\t", append=True)], FakeModel(), [{"loss": 0.5}])
    assert path.read_text().splitlines() == [
        "epoch\tloss\tval_loss",
        "0\t1.0\t2.0",
        "0\t0.5\tNA",
    ]
    fit([CSVLogger(str(path), separator="\t")], FakeModel(), [{"loss": 0.5}, {"acc": 1.0}])
    assert path.read_text().splitlines() == ["epoch\tloss\tval_loss", "0\t0.5\tNA", "1\tNA\tNA"]


def test_csv_logger_writes_nothing_on_non_chief(tmp_path: Any) -> None:
    path = tmp_path / "log.csv"
    fit([CSVLogger(str(path))], FakeModel(chief=False), [{"loss": 0.5}, {"loss": 0.4}])
    assert not path.exists()
    assert os.listdir(tmp_path) == []


def test_csv_logger_invalid_separator() -> None:
    with pytest.raises(ValueError, match=r"separator=', '"):
        CSVLogger("x.csv", separator=", ")


# --- learning rate ----------------------------------------------------------------------


def test_learning_rate_scheduler_sets_rate_each_epoch_and_logs_it() -> None:
    model = FakeModel(learning_rate=0.1)
    seen: list[tuple[int, float]] = []

    def schedule(epoch: int, lr: float) -> float:
        seen.append((epoch, lr))
        return lr if epoch == 0 else lr / 2

    history = fit([LearningRateScheduler(schedule)], model, [{"loss": 1.0}] * 3)
    assert model.optimizer.learning_rate == pytest.approx(0.025)
    assert seen == [(0, 0.1), (1, 0.1), (2, 0.05)]
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.025])


def test_learning_rate_scheduler_one_argument_schedule_and_bad_output() -> None:
    model = FakeModel()
    fit([LearningRateScheduler(lambda epoch: 0.01 * (epoch + 1))], model, [{"loss": 1.0}] * 2)
    assert model.optimizer.learning_rate == pytest.approx(0.02)

    with pytest.raises(TypeError, match=r"should be a float.*'fast'"):
        fit([LearningRateScheduler(lambda epoch, lr: "fast")], FakeModel(), [{"loss": 1.0}])
    with pytest.raises(TypeError, match=r"schedule=0\.1"):
        LearningRateScheduler(0.1)  # type: ignore[arg-type]


def test_learning_rate_scheduler_does_not_hide_errors_inside_the_schedule() -> None:
    def schedule(epoch: int, lr: float) -> float:
        raise TypeError("bug in user code")

    with pytest.raises(TypeError, match="bug in user code"):
        fit([LearningRateScheduler(schedule)], FakeModel(), [{"loss": 1.0}])


def test_reduce_lr_on_plateau_reduces_after_patience_with_cooldown_and_floor() -> None:
    model = FakeModel(learning_rate=1.0)
    cb = ReduceLROnPlateau(monitor="loss", factor=0.5, patience=2, cooldown=2, min_lr=0.2)
    history = fit([cb], model, [{"loss": 1.0}] * 9)
    # Epoch 0 sets the best; reductions at the end of epochs 2, 5 and 8 (the last one
    # clipped to min_lr). Logged is the rate each epoch trained with.
    assert history.history["learning_rate"] == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25])
    assert model.optimizer.learning_rate == pytest.approx(0.2)


def test_reduce_lr_on_plateau_improvement_resets_wait() -> None:
    model = FakeModel(learning_rate=1.0)
    fit(
        [ReduceLROnPlateau(monitor="val_accuracy", patience=2)],
        model,
        [{"val_accuracy": v} for v in [0.5, 0.5, 0.6, 0.6]],
    )
    assert model.optimizer.learning_rate == 1.0


def test_reduce_lr_on_plateau_validation() -> None:
    with pytest.raises(ValueError, match=r"factor=1\.0"):
        ReduceLROnPlateau(factor=1.0)
    with pytest.raises(ValueError, match=r"'auto', 'max', 'min'.*mode='lowest'"):
        ReduceLROnPlateau(mode="lowest")


# --- TerminateOnNaN ---------------------------------------------------------------------


@pytest.mark.parametrize("loss", [math.nan, math.inf, -math.inf])
def test_terminate_on_nan_stops_training(loss: float, capsys: pytest.CaptureFixture[str]) -> None:
    model = FakeModel()
    history = fit([TerminateOnNaN()], model, [{"loss": 1.0}] * 3, batch_logs={"loss": loss})
    assert model.stop_training and history.epoch == [0]
    assert "Batch 0: Invalid loss, terminating training" in capsys.readouterr().out


def test_terminate_on_nan_ignores_finite_and_missing_loss() -> None:
    model = FakeModel()
    fit([TerminateOnNaN()], model, [{"loss": 1.0}] * 2, batch_logs={"loss": 0.3})
    fit([TerminateOnNaN()], model, [{"loss": 1.0}] * 2, batch_logs=None)
    assert not model.stop_training


def test_terminate_on_nan_non_chief_stops_silently(capsys: pytest.CaptureFixture[str]) -> None:
    model = FakeModel(chief=False)
    fit([TerminateOnNaN()], model, [{"loss": 1.0}], batch_logs={"loss": math.nan})
    assert model.stop_training
    assert capsys.readouterr().out == ""


def test_terminate_on_nan_raise_error() -> None:
    with pytest.raises(RuntimeError, match="NaN or Inf loss encountered at batch 0"):
        fit([TerminateOnNaN(raise_error=True)], FakeModel(), [{"loss": 1.0}], batch_logs={"loss": math.nan})


# --- ProgbarLogger ----------------------------------------------------------------------

LINE = re.compile(
    r"^3/3 - \d+s - \d+(us|ms|s)/step - accuracy: 0\.9242 - loss: 0\.2653 "
    r"- val_accuracy: 0\.9579 - val_loss: 0\.1445$"
)
EPOCH = {"loss": 0.2653, "accuracy": 0.9242, "val_loss": 0.1445, "val_accuracy": 0.9579}


def test_progbar_logger_verbose2_prints_epoch_headers_and_lines(capsys: pytest.CaptureFixture[str]) -> None:
    fit([], FakeModel(), [EPOCH, EPOCH], steps=3, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    assert LINE.match(lines[1]) and LINE.match(lines[3])


def test_progbar_logger_verbose1_not_a_tty_without_batch_logs(capsys: pytest.CaptureFixture[str]) -> None:
    fit([], FakeModel(), [EPOCH], steps=3, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch" not in out  # one epoch: no header, as in Keras 3
    assert re.match(
        r"^3/3 ━{20} \d+s \d+(us|ms|s)/step - accuracy: 0\.9242 - loss: 0\.2653 "
        r"- val_accuracy: 0\.9579 - val_loss: 0\.1445\n$",
        out,
    )


def test_progbar_logger_silent_on_non_chief(capsys: pytest.CaptureFixture[str]) -> None:
    fit([], FakeModel(chief=False), [EPOCH, EPOCH], steps=3, verbose=2)
    assert capsys.readouterr().out == ""


def test_progbar_logger_validation_in_fit_is_silent_but_evaluate_prints() -> None:
    out = io.StringIO()
    logger = ProgbarLogger(stream=out)
    cbs = CallbackList([logger], model=FakeModel(), verbose=2, epochs=1, steps=2)
    cbs.on_train_begin()
    cbs.on_epoch_begin(0)
    cbs.on_train_batch_end(0)
    cbs.on_train_batch_end(1)
    cbs.on_test_begin()
    cbs.on_test_batch_end(0, {"loss": 9.0})
    cbs.on_test_end({"loss": 9.0})
    assert out.getvalue() == ""
    cbs.on_epoch_end(0, {"loss": 1.0, "val_loss": 9.0})
    cbs.on_train_end()
    assert out.getvalue().count("\n") == 1 and "val_loss: 9.0000" in out.getvalue()

    out.truncate(0)
    out.seek(0)
    cbs.on_test_begin()
    cbs.on_test_batch_end(0)
    cbs.on_test_batch_end(1)
    cbs.on_test_end({"accuracy": 0.5, "loss": 0.25})
    assert re.match(r"^2/2 - \d+s - \d+(us|ms|s)/step - accuracy: 0\.5000 - loss: 0\.2500\n$", out.getvalue())


def test_progbar_logger_unknown_steps_learns_the_target() -> None:
    out = io.StringIO()
    cbs = CallbackList([ProgbarLogger(stream=out)], model=FakeModel(), verbose=2, epochs=1, steps=None)
    cbs.on_train_begin()
    cbs.on_epoch_begin(0)
    for batch in range(5):
        cbs.on_train_batch_end(batch)
    cbs.on_epoch_end(0, {"loss": 0.5})
    assert out.getvalue().startswith("5/5 - ")
