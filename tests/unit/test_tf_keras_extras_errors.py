"""The mistakes unison's Keras 2 (tf_keras) additions refuse with their own messages (no TF oracle needed)."""

from __future__ import annotations

import wave

import numpy as np
import pytest
import torch

from unison import keras


def test_py_metric_refuses_unknown_arguments():
    class Count(keras.metrics.experimental.PyMetric):
        def update_state(self, y_true, y_pred, sample_weight=None):
            self.n += 1

        def result(self):
            return self.n

        def reset_state(self):
            self.n = 0

    with pytest.raises(TypeError, match="unexpected keyword arguments: \\['colour'\\]"):
        Count(colour="red")


def test_enqueuer_needs_a_positive_worker_count():
    enqueuer = keras.utils.OrderedEnqueuer([1, 2])
    with pytest.raises(ValueError, match="`workers` must be an integer >= 1. Received: workers=0"):
        enqueuer.start(workers=0)
    assert not enqueuer.is_running()


def test_audio_dataset_does_not_resample(tmp_path):
    (tmp_path / "a").mkdir()
    with wave.open(str(tmp_path / "a" / "x.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(np.zeros(4, "<i2").tobytes())
    with pytest.raises(NotImplementedError, match="sampling_rate=16000.*Resample the files beforehand"):
        keras.utils.audio_dataset_from_directory(str(tmp_path), sampling_rate=16000)
    with pytest.raises(ValueError, match="`sampling_rate` should be higher than 0"):
        keras.utils.audio_dataset_from_directory(str(tmp_path), sampling_rate=0)


def test_premade_models_check_their_arguments():
    with pytest.raises(ValueError, match="`units` must be a positive integer. Received: units=0"):
        keras.experimental.LinearModel(units=0)
    with pytest.raises(TypeError, match="`dnn_model` must be a Keras model or layer.*Received: dnn_model='deep'"):
        keras.experimental.WideDeepModel(keras.experimental.LinearModel(), "deep")


def test_sharpness_aware_minimization_checks_the_model_and_the_splits():
    with pytest.raises(TypeError, match="wraps a Keras model"):
        keras.models.experimental.SharpnessAwareMinimization("model")
    inner = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    sam = keras.models.experimental.SharpnessAwareMinimization(inner, num_batch_splits=3)
    # what train_step splits each batch with (a fit would raise this at its first step)
    with pytest.raises(ValueError, match="cannot split a batch of 4 rows into equal parts"):
        sam._splits(torch.ones(4, 2))


def test_loss_scale_optimizer_fixed_scale_stays_fixed():
    opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), dynamic=False, initial_scale=4.0)
    opt.update_scale(False)
    opt.update_scale(True)
    assert float(opt.loss_scale) == 4.0 and opt.skipped_steps == 1
    assert opt.get_config()["dynamic"] is False
    assert float(opt.get_scaled_loss(lambda: torch.tensor(2.0))()) == 8.0


def test_radial_constraint_name_resolves():
    w = torch.arange(16.0).reshape(4, 4, 1, 1)
    assert keras.constraints.get("radial_constraint")(w)[0, 0, 0, 0] == 15.0
