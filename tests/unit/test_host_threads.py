"""fit runs torch with one thread on an oversubscribed host, and restores the count after."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.keras.trainers import host_threads

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def two_threads(monkeypatch):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.setattr(host_threads, "_DEFAULT_THREADS", 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("UNISON_BUSY_HOST_THREADS", raising=False)
    monkeypatch.setattr(host_threads, "_cores", lambda: 2)
    yield
    torch.set_num_threads(before)


def _threads_during_fit() -> list[int]:
    seen: list[int] = []

    class Probe(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(torch.get_num_threads())

    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((8, 3), "float32"), np.zeros(8, "float32"), batch_size=4, verbose=0, callbacks=[Probe()])
    return seen


def test_busy_host_runs_fit_on_one_thread_and_restores(two_threads, monkeypatch):
    monkeypatch.setattr(host_threads.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert _threads_during_fit() == [1, 1]
    assert torch.get_num_threads() == 2


def test_quiet_host_or_a_users_choice_keeps_the_count(two_threads, monkeypatch):
    monkeypatch.setattr(host_threads.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert _threads_during_fit() == [2, 2]
    monkeypatch.setattr(host_threads.os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert _threads_during_fit() == [2, 2]
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setenv("UNISON_BUSY_HOST_THREADS", "0")
    assert _threads_during_fit() == [2, 2]
