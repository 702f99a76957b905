"""LambdaCallback and RemoteMonitor (against a real local http.server), with Keras 3's semantics."""

from __future__ import annotations

import json
import threading
import urllib.parse
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import numpy as np
import pytest

from unison import keras

pytestmark = pytest.mark.timeout(120)


def _model() -> keras.Model:
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def test_lambda_callback_runs_each_function_at_its_point_of_fit() -> None:
    events: list[Any] = []
    callback = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: events.append("train_begin"),
        on_epoch_begin=lambda epoch, logs: events.append(("epoch_begin", epoch)),
        on_batch_end=lambda batch, logs: events.append(("batch_end", batch, sorted(logs))),
        on_epoch_end=lambda epoch, logs: events.append(("epoch_end", epoch, sorted(logs))),
        on_train_end=lambda logs: events.append("train_end"),
    )
    _model().fit(np.ones((4, 2)), np.ones((4, 1)), batch_size=2, epochs=2, verbose=0, callbacks=[callback])
    epoch = [("batch_end", 0, ["loss"]), ("batch_end", 1, ["loss"])]
    assert events == [
        "train_begin",
        ("epoch_begin", 0),
        *epoch,
        ("epoch_end", 0, ["loss"]),
        ("epoch_begin", 1),
        *epoch,
        ("epoch_end", 1, ["loss"]),
        "train_end",
    ]


def test_lambda_callback_train_batch_functions_and_stop_training() -> None:
    begins: list[int] = []
    model = _model()

    def stop_after_first_epoch(epoch: int, logs: dict[str, Any]) -> None:
        model.stop_training = True

    callback = keras.callbacks.LambdaCallback(
        on_train_batch_begin=lambda batch, logs: begins.append(batch), on_epoch_end=stop_after_first_epoch
    )
    assert isinstance(callback, keras.callbacks.LambdaCallback) and callback.needs_batch_logs() is False
    history = model.fit(np.ones((6, 2)), np.ones((6, 1)), batch_size=2, epochs=5, verbose=0, callbacks=[callback])
    assert begins == [0, 1, 2] and len(history.history["loss"]) == 1


def test_lambda_callback_rejects_unknown_hooks_and_non_functions() -> None:
    with pytest.raises(TypeError, match=r"unknown hooks \['on_epoch_finish'\]"):
        keras.callbacks.LambdaCallback(on_epoch_finish=print)
    with pytest.raises(TypeError, match="on_epoch_end=3"):
        keras.callbacks.LambdaCallback(on_epoch_end=3)  # type: ignore[arg-type]


class _Recorder(BaseHTTPRequestHandler):
    received: list[tuple[str, str, str]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        type(self).received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    _Recorder.received = []
    httpd = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}", _Recorder.received
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_remote_monitor_posts_each_epochs_logs_as_a_form_field(server: Any) -> None:
    root, received = server
    history = _model().fit(
        np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[keras.callbacks.RemoteMonitor(root=root)]
    )
    assert [(path, kind) for path, kind, _ in received] == [
        ("/publish/epoch/end/", "application/x-www-form-urlencoded")
    ] * 2
    sent = [json.loads(urllib.parse.parse_qs(body)["data"][0]) for _, _, body in received]
    assert [s["epoch"] for s in sent] == [0, 1]
    np.testing.assert_allclose([s["loss"] for s in sent], history.history["loss"], rtol=1e-6)


def test_remote_monitor_sends_json_with_headers(server: Any) -> None:
    root, received = server
    monitor = keras.callbacks.RemoteMonitor(root=root, path="/logs", send_as_json=True, headers={"X-Run": "7"})
    monitor.on_epoch_end(3, {"loss": np.float32(0.25), "accuracy": 0.5})
    assert received == [("/logs", "application/json", json.dumps({"epoch": 3, "loss": 0.25, "accuracy": 0.5}))]


def test_remote_monitor_warns_when_the_server_is_unreachable_and_checks_the_root() -> None:
    monitor = keras.callbacks.RemoteMonitor(root="http://127.0.0.1:1", timeout=2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monitor.on_epoch_end(0, {"loss": 1.0})
    assert any("Could not reach RemoteMonitor root server at http://127.0.0.1:1" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="Received: root='localhost:9000'"):
        keras.callbacks.RemoteMonitor(root="localhost:9000")


def test_remote_monitor_posts_only_from_the_chief(server: Any) -> None:
    root, received = server

    class Worker:
        class distribute_strategy:  # noqa: N801 - a stand-in for a strategy of a non-chief replica
            class extended:  # noqa: N801
                should_checkpoint = False

    monitor = keras.callbacks.RemoteMonitor(root=root)
    monitor.set_model(Worker())
    monitor.on_epoch_end(0, {"loss": 1.0})
    assert received == []


def test_reduce_lr_on_plateau_is_available() -> None:
    assert keras.callbacks.ReduceLROnPlateau(patience=1).patience == 1
