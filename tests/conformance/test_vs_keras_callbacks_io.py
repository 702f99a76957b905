"""Callbacks that write, post, print or restore: ``ProgbarLogger``, ``BackupAndRestore``,
``RemoteMonitor``, ``SwapEMAWeights`` (Keras 3) and ``TensorBoard`` on unison against Keras 3.15 and
Keras 2 (tf_keras) on TF 2.21: the lines printed (timings masked), the epochs a resumed run trains,
the payloads a local HTTP server receives, the weights a validation sees, and the event files and
tags TensorBoard writes (read back with tensorboard's protobufs on both sides)."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
X = np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(8, 2)
Y = (X @ np.array([[0.5], [-1.0]], np.float32) + 0.25).astype(np.float32)


def _model(tf, optimizer=None):
    model = tf.keras.Sequential(
        [tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")]
    )
    model.compile(optimizer=optimizer or tf.keras.optimizers.SGD(0.1), loss="mse")
    return model


def _weights(model):
    return [np.asarray(w) for w in model.get_weights()]


# --------------------------------------------------------------------------------------------
# ProgbarLogger


def _masked(text: str) -> list[str]:
    import re

    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x08+|\r", "\n", text)
    text = re.sub(r"\d+(\.\d+)?(ms|s|us)(/step)?", "<t>", text)  # timings differ from run to run
    text = re.sub(r"(loss|val_loss): [0-9.e+-]+", r"\1: <v>", text)
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _progbar_run(tf, count_mode=None, verbose=0):
    import contextlib
    import io

    model = _model(tf)
    logger = tf.keras.callbacks.ProgbarLogger() if count_mode is None else tf.keras.callbacks.ProgbarLogger(count_mode)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.fit(X, Y, batch_size=4, epochs=2, verbose=verbose, callbacks=[logger], shuffle=False)
    return _masked(out.getvalue())


@same_as_tf("keras:callbacks.ProgbarLogger", dialects=BOTH)
def test_progbar_logger_prints_each_epoch(tf):
    return _progbar_run(tf)


@same_as_tf("keras:callbacks.ProgbarLogger", edge=True, dialects=BOTH)
def test_progbar_logger_one_line_per_epoch_and_a_bad_count_mode(tf, dialect):
    if dialect == "keras":  # Keras 3's ProgbarLogger takes no arguments; its verbose=2 lines
        return _progbar_run(tf, verbose=2)
    # (tf_keras's verbose=2 line has Keras 2's timings, "- 5ms/epoch - 2ms/sample"; unison prints Keras 3's)
    try:
        tf.keras.callbacks.ProgbarLogger(count_mode="lines")
    except ValueError as exc:
        return type(exc).__name__
    return "accepted"


# --------------------------------------------------------------------------------------------
# BackupAndRestore


def _backup_run(tf, save_freq="epoch", interrupt_at=2):
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        backup = os.path.join(folder, "backup")
        kwargs = {} if save_freq == "epoch" else {"save_freq": save_freq}
        seen = []

        class Stop(tf.keras.callbacks.Callback):
            def on_epoch_begin(self, epoch, logs=None):
                seen.append(epoch)
                if interrupt_at is not None and epoch == interrupt_at and len(seen) <= interrupt_at + 1:
                    raise RuntimeError("interrupted")

        model = _model(tf)
        try:
            model.fit(X, Y, batch_size=4, epochs=4, verbose=0, shuffle=False,
                      callbacks=[tf.keras.callbacks.BackupAndRestore(backup, **kwargs), Stop()])  # fmt: skip
        except RuntimeError:
            pass
        first = list(seen)
        seen.clear()
        model = _model(tf)
        history = model.fit(X, Y, batch_size=4, epochs=4, verbose=0, shuffle=False,
                            callbacks=[tf.keras.callbacks.BackupAndRestore(backup, **kwargs), Stop()])  # fmt: skip
        return first, list(seen), history.epoch, _weights(model), os.path.isdir(backup) and bool(os.listdir(backup))


@same_as_tf("keras:callbacks.BackupAndRestore", dialects=BOTH, rtol=1e-5, atol=1e-6)
def test_backup_and_restore_resumes_after_an_interruption(tf):
    return _backup_run(tf)


@same_as_tf("keras:callbacks.BackupAndRestore", edge=True, dialects=BOTH)
def test_backup_and_restore_bad_arguments(tf, dialect):
    # Keras 3 checks the folder name and save_freq's spelling; tf_keras only refuses to save never
    if dialect == "keras":
        cases = [{"backup_dir": "x", "save_freq": "sometimes"}, {"backup_dir": ""}]
    else:
        cases = [{"backup_dir": "x", "save_freq": False}, {"backup_dir": "x", "save_freq": 2}]
    out = []
    for kwargs in cases:
        try:
            tf.keras.callbacks.BackupAndRestore(**kwargs)
            out.append("accepted")
        except ValueError as exc:
            out.append(type(exc).__name__)
    return out


# --------------------------------------------------------------------------------------------
# RemoteMonitor


class _Receiver:
    """An HTTP server thread on 127.0.0.1 keeping every POST's path, content type and body."""

    def __enter__(self):
        import http.server
        import threading

        posts = self.posts = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                posts.append((self.path, self.headers.get("Content-Type", ""), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


def _decoded(posts):
    import json
    import urllib.parse

    out = []
    for path, ctype, body in posts:
        if ctype.startswith("application/json"):
            payload = json.loads(body)
        else:
            form = urllib.parse.parse_qs(body.decode())
            payload = {k: json.loads(v[0]) for k, v in form.items()}
            payload = payload.get("data", payload)
        out.append((path, ctype.split(";")[0], {k: round(float(v), 4) for k, v in payload.items()}))
    return out


@same_as_tf("keras:callbacks.RemoteMonitor", dialects=BOTH)
def test_remote_monitor_posts_each_epoch(tf):
    import os

    proxies = {k: os.environ.pop(k, None) for k in ("http_proxy", "HTTP_PROXY")}
    try:
        with _Receiver() as server:
            monitor = tf.keras.callbacks.RemoteMonitor(root=server.root, path="/logs/")
            _model(tf).fit(X, Y, batch_size=4, epochs=2, verbose=0, shuffle=False, validation_data=(X, Y),
                           callbacks=[monitor])  # fmt: skip
            return _decoded(server.posts)
    finally:
        os.environ.update({k: v for k, v in proxies.items() if v is not None})


@same_as_tf("keras:callbacks.RemoteMonitor", edge=True, dialects=BOTH)
def test_remote_monitor_as_json_and_an_unreachable_server(tf):
    import os
    import warnings

    proxies = {k: os.environ.pop(k, None) for k in ("http_proxy", "HTTP_PROXY")}
    try:
        with _Receiver() as server:
            monitor = tf.keras.callbacks.RemoteMonitor(root=server.root, path="/j", send_as_json=True)
            _model(tf).fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[monitor])
            posted = _decoded(server.posts)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the server is gone: a warning (Keras 3) or a log line (tf_keras), and training goes on
            history = _model(tf).fit(X, Y, batch_size=8, epochs=1, verbose=0, callbacks=[monitor])
        return posted, len(history.epoch)
    finally:
        os.environ.update({k: v for k, v in proxies.items() if v is not None})


# --------------------------------------------------------------------------------------------
# SwapEMAWeights (Keras 3)


def _ema_run(tf, swap_on_epoch):
    seen = []

    class Peek(tf.keras.callbacks.Callback):
        def on_test_begin(self, logs=None):
            seen.append(_weights(self.model))

    model = _model(tf, tf.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5))
    history = model.fit(
        X, Y, batch_size=4, epochs=2, verbose=0, shuffle=False, validation_data=(X, Y),
        callbacks=[tf.keras.callbacks.SwapEMAWeights(swap_on_epoch=swap_on_epoch), Peek()],
    )  # fmt: skip
    evaluated = model.evaluate(X, Y, verbose=0, callbacks=[tf.keras.callbacks.SwapEMAWeights()])
    return seen, history.history["val_loss"], evaluated, _weights(model)


@same_as_tf("keras:callbacks.SwapEMAWeights", rtol=1e-5, atol=1e-6)
def test_swap_ema_weights_for_validation(tf):
    return _ema_run(tf, swap_on_epoch=False)


@same_as_tf("keras:callbacks.SwapEMAWeights", edge=True, rtol=1e-5, atol=1e-6)
def test_swap_ema_weights_on_epoch_and_without_ema(tf):
    swapped = _ema_run(tf, swap_on_epoch=True)
    try:
        _model(tf).fit(X, Y, epochs=1, verbose=0, callbacks=[tf.keras.callbacks.SwapEMAWeights()])
        plain = "accepted"
    except ValueError as exc:
        plain = type(exc).__name__
    return swapped, plain


# --------------------------------------------------------------------------------------------
# TensorBoard: which event files and tags are written


def _events(folder: str):
    """{run folder: sorted scalar/histogram/graph tags} of the event files under ``folder``."""
    import os
    import struct

    from tensorboard.compat.proto import event_pb2  # protobufs only: no TensorFlow import

    out = {}
    for top, _, names in os.walk(folder):
        for name in names:
            if not name.startswith("events.out.tfevents"):
                continue
            tags = set()
            with open(os.path.join(top, name), "rb") as f:
                data = f.read()
            pos = 0
            while pos + 12 <= len(data):
                (length,) = struct.unpack("<Q", data[pos : pos + 8])
                event = event_pb2.Event.FromString(data[pos + 12 : pos + 12 + length])
                pos += 12 + length + 4
                for value in event.summary.value:
                    tags.add(value.tag)
            run = os.path.relpath(top, folder)
            out[run] = sorted(set(out.get(run, [])) | tags)
    return out


TB_DIFFERS = (
    "unison's TensorBoard writes Keras 3's tags (epoch_learning_rate, Keras 3's weight paths for "
    "histograms); tf_keras writes no epoch_learning_rate and names histograms by Keras 2's variable "
    "names: in tf_keras's dialect the tags both write (epoch_loss, evaluation_loss_vs_iterations) are "
    "compared, and the histograms by their count"
)


def _tensorboard_run(tf, dialect, **kwargs):
    import re
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        board = tf.keras.callbacks.TensorBoard(log_dir=folder, write_graph=False, **kwargs)
        _model(tf).fit(X, Y, batch_size=4, epochs=2, verbose=0, shuffle=False, validation_data=(X, Y),
                       callbacks=[board])  # fmt: skip
        runs = _events(folder)
    # layer and model names carry per-process counters (sequential_3): compared without them
    runs = {run: sorted({re.sub(r"_\d+(?=/)", "", t) for t in tags}) for run, tags in runs.items()}
    if dialect == "tf_keras":
        shared = ("epoch_loss", "evaluation_loss_vs_iterations")
        return {
            run: ([t for t in tags if t in shared], sum(t.endswith("/histogram") for t in tags))
            for run, tags in runs.items()
        }
    return runs


@same_as_tf("keras:callbacks.TensorBoard", dialects=BOTH, differs=TB_DIFFERS)
def test_tensorboard_writes_epoch_scalars(tf, dialect):
    return _tensorboard_run(tf, dialect)


@same_as_tf("keras:callbacks.TensorBoard", edge=True, dialects=BOTH, differs=TB_DIFFERS)
def test_tensorboard_batch_updates_and_histograms(tf, dialect):
    return _tensorboard_run(tf, dialect, update_freq=1, histogram_freq=1)
