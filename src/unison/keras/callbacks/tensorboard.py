"""``keras.callbacks.TensorBoard``: metrics, weight histograms and images, steps/s, a profile, as event files.

Layout as Keras: ``log_dir/train`` holds ``epoch_<metric>`` (and ``batch_<metric>`` with
``update_freq='batch'`` or an integer), the weight histograms under Keras 3's tags
(``<model>/<layer>/<weight>/histogram``, e.g. ``sequential/hidden/kernel/histogram``) and, with
``write_images``, the weights as images (``.../image``); ``log_dir/validation`` holds the ``val_``
metrics as ``epoch_<metric>``. ``write_steps_per_second`` adds ``epoch_steps_per_second`` (and
``batch_steps_per_second`` with a batch ``update_freq``). ``profile_batch`` profiles those training
batches with ``torch.profiler`` into ``log_dir/train`` (torch's trace, which the ``torch-tb-profiler``
TensorBoard plugin and ``chrome://tracing`` read; TF's own profile plugin reads only TF's
``.xplane.pb``). ``embeddings_freq`` saves the weights as Keras does
(``train/keras_embedding.ckpt-<epoch>.weights.h5``). ``write_graph`` writes nothing: there is no TF
graph. Steps are the epoch index for epoch values and the number of batches trained so far for
batch values. Only the chief writes. The files are written by
``torch.utils.tensorboard.SummaryWriter`` (the ``tensorboard`` package, ``unison[tensorboard]``).

Example:
    >>> import tempfile
    >>> cb = TensorBoard(log_dir=tempfile.mkdtemp(), update_freq="epoch")
    >>> cb.needs_batch_logs()
    False
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from unison.keras.callbacks._common import is_chief
from unison.keras.callbacks.callback import Callback, Logs


class TensorBoard(Callback):
    """Write training logs for TensorBoard (Keras's arguments).

    Args:
        log_dir: the run's folder; ``train/`` and ``validation/`` are created under it.
        histogram_freq: every how many epochs to write weight histograms (0: never).
        update_freq: ``"epoch"``, ``"batch"`` (every batch) or an integer N (every N batches).
        write_images: write each weight as an image at every histogram epoch (Keras's rules:
            biases as a row, kernels as a 2-D image, conv kernels one image per filter).
        write_steps_per_second: log training steps per second (epoch and batch frequency).
        profile_batch: a batch number, ``(start, stop)`` or ``"start,stop"`` (batches counted
            from 1 across epochs) to profile with torch's profiler; 0 disables.
        embeddings_freq: every how many epochs to save the weights for the projector (0: never).
        write_graph, embeddings_metadata: accepted for compatibility; nothing is written for them.

    Raises:
        ValueError: a negative frequency, or a ``profile_batch`` that is not a batch or a range
            of batches (Keras's message).
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str] = "logs",
        histogram_freq: int = 0,
        write_graph: bool = True,
        write_images: bool = False,
        write_steps_per_second: bool = False,
        update_freq: str | int = "epoch",
        profile_batch: Any = 0,
        embeddings_freq: int = 0,
        embeddings_metadata: Any = None,
    ) -> None:
        super().__init__()
        from unison.core.summary import summary_writer_class

        summary_writer_class()  # fail now, not after the first epoch, when tensorboard is missing
        if isinstance(histogram_freq, bool) or not isinstance(histogram_freq, int) or histogram_freq < 0:
            raise ValueError(
                f"histogram_freq must be a non-negative integer. Received: histogram_freq={histogram_freq!r}"
            )
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and (
            isinstance(update_freq, bool) or not isinstance(update_freq, int) or update_freq < 1
        ):
            raise ValueError(
                f"update_freq must be 'epoch', 'batch' or a positive integer. Received: update_freq={update_freq!r}"
            )
        if isinstance(embeddings_freq, bool) or not isinstance(embeddings_freq, int) or embeddings_freq < 0:
            raise ValueError(
                f"embeddings_freq must be a non-negative integer. Received: embeddings_freq={embeddings_freq!r}"
            )
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.update_freq = update_freq
        self.write_images = bool(write_images)
        self.write_steps_per_second = bool(write_steps_per_second)
        self.embeddings_freq = embeddings_freq
        self._start_batch, self._stop_batch = _profile_range(profile_batch)
        self._writers: dict[str, Any] = {}
        self._train_step = 0
        self._profiling = False
        self._epoch_start = self._batch_start = 0.0
        self._epoch_steps = 0

    def needs_batch_logs(self) -> bool:
        return self.update_freq != "epoch"

    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._epoch_start = time.perf_counter()
        self._epoch_steps = 0

    def on_train_batch_begin(self, batch: int, logs: Logs | None = None) -> None:
        self._batch_start = time.perf_counter()
        if self._start_batch and self._train_step + 1 == self._start_batch and is_chief(self.model):
            from unison.core import profiler

            if not profiler.is_running():  # a session the program opened itself keeps going
                profiler.start(os.path.join(self.log_dir, "train"))
                self._profiling = True

    def _writer(self, which: str) -> Any:
        if which not in self._writers:
            from unison.core.summary import summary_writer_class

            self._writers[which] = summary_writer_class()(os.path.join(self.log_dir, which))
        return self._writers[which]

    def on_train_begin(self, logs: Logs | None = None) -> None:
        self._train_step = 0
        if is_chief(self.model):
            self._writer("train")

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        self._train_step += 1
        self._epoch_steps += 1
        if self._profiling and self._train_step >= self._stop_batch:
            self._stop_profile()
        # after __init__'s check update_freq is "epoch" or a positive int
        if not isinstance(self.update_freq, int) or not is_chief(self.model) or self._train_step % self.update_freq:
            return
        writer = self._writer("train")
        if self.write_steps_per_second:
            elapsed = time.perf_counter() - self._batch_start
            if elapsed > 0:
                writer.add_scalar("batch_steps_per_second", 1.0 / elapsed, global_step=self._train_step)
        for name, value in (logs or {}).items():
            number = _number(value)
            if number is not None:
                writer.add_scalar("batch_" + name, number, global_step=self._train_step)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if not is_chief(self.model):
            return
        train, val = self._writer("train"), None
        logs = dict(logs or {})
        logs.update(_learning_rates(self.model))  # Keras 3 logs the optimizer's rate as epoch_learning_rate
        if self.write_steps_per_second:
            elapsed = time.perf_counter() - self._epoch_start
            if elapsed > 0 and self._epoch_steps:
                logs["steps_per_second"] = self._epoch_steps / elapsed
        for name, value in logs.items():
            number = _number(value)
            if number is None:
                continue
            if name.startswith("val_"):
                val = val or self._writer("validation")
                val.add_scalar("epoch_" + name[4:], number, global_step=epoch)
            else:
                train.add_scalar("epoch_" + name, number, global_step=epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0 and self.model is not None:
            for tag, array in _named_weights(self.model):
                train.add_histogram(f"{tag}/histogram", array, global_step=epoch)
                image = _weight_image(array) if self.write_images else None
                if image is not None:
                    train.add_images(f"{tag}/image", image, global_step=epoch, dataformats="NHWC")
        if self.embeddings_freq and epoch % self.embeddings_freq == 0 and self.model is not None:
            path = os.path.join(self.log_dir, "train", f"keras_embedding.ckpt-{epoch}.weights.h5")
            self.model.save_weights(path)
        for writer in self._writers.values():
            writer.flush()

    def _stop_profile(self) -> None:
        from unison.core import profiler

        self._profiling = False
        if profiler.is_running():
            profiler.stop()

    def on_test_end(self, logs: Logs | None = None) -> None:
        # Keras 3: each evaluation's results against the optimizer's step count, in validation/
        optimizer = getattr(self.model, "optimizer", None)
        if not is_chief(self.model) or optimizer is None or not hasattr(optimizer, "iterations"):
            return
        step = int(_number(optimizer.iterations) or 0)
        val = self._writer("validation")
        for name, value in (logs or {}).items():
            number = _number(value)
            if number is not None:
                val.add_scalar(f"evaluation_{name}_vs_iterations", number, global_step=step)
        val.flush()

    def on_train_end(self, logs: Logs | None = None) -> None:
        if self._profiling:  # fit ended inside the range: keep what was recorded
            self._stop_profile()
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


def _profile_range(profile_batch: Any) -> tuple[int, int]:
    """Keras's ``profile_batch``: ``N``, ``(start, stop)`` or ``"start,stop"``; ``(0, 0)`` disables."""
    value = profile_batch
    if isinstance(value, str):
        parts = value.split(",")
        try:
            value = tuple(int(p) for p in parts) if len(parts) == 2 else int(value)
        except ValueError:
            value = None
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and ((value[0] == value[1] == 0) or (0 < value[0] <= value[1]))
    )
    if not ok:
        raise ValueError(
            "profile_batch must be a non-negative integer or 2-tuple of positive integers. A pair of positive "
            "integers signifies a range of batches to profile. Found: " + repr(profile_batch)
        )
    return int(value[0]), int(value[1])


def _named_weights(model: Any) -> list[tuple[str, np.ndarray]]:
    """Every floating weight with Keras 3's tag (``<model>/<layer>/<weight>``), layer by layer."""
    out: list[tuple[str, np.ndarray]] = []
    layers = getattr(model, "layers", None)
    if not layers:  # a wrapped torch module: its parameter names, as paths
        return [
            (name.replace(".", "/"), t.detach().float().cpu().numpy())
            for name, t in model.state_dict().items()
            if t.is_floating_point() and t.numel()
        ]
    prefix = getattr(model, "name", None)
    seen: set[str] = set()
    for layer in layers:
        for weight in getattr(layer, "weights", []):
            value = getattr(weight, "value", weight)
            tensor = value() if callable(value) and not hasattr(value, "detach") else value
            if not hasattr(tensor, "detach") or not tensor.is_floating_point() or not tensor.numel():
                continue
            short = str(getattr(weight, "name", "weight")).split(":")[0].split("/")[-1]
            tag = "/".join(p for p in (prefix, layer.name, short) if p)
            base, k = tag, 1
            while tag in seen:  # two weights of one layer with one name: Keras suffixes them too
                tag, k = f"{base}_{k}", k + 1
            seen.add(tag)
            out.append((tag, tensor.detach().float().cpu().numpy()))
    return out


def _weight_image(w: np.ndarray) -> np.ndarray | None:
    """Keras's ``_log_weight_as_image``: a weight as NHWC images, or ``None`` when it has no picture."""
    img = np.squeeze(w)
    if img.ndim == 1:  # a bias
        img = img.reshape(1, img.shape[0], 1, 1)
    elif img.ndim == 2:  # a dense kernel, the long side across
        if img.shape[0] > img.shape[1]:
            img = img.T
        img = img.reshape(1, img.shape[0], img.shape[1], 1)
    elif img.ndim == 3:  # a conv kernel (channels last): one image per filter
        img = np.transpose(img, (2, 0, 1))
        img = img.reshape(img.shape[0], img.shape[1], img.shape[2], 1)
    if img.ndim != 4 or img.shape[-1] not in (1, 3, 4):
        return None
    low, high = float(img.min()), float(img.max())
    return (img - low) / (high - low) if high > low else np.zeros_like(img)


def _learning_rates(model: Any) -> dict[str, float]:
    """``{"learning_rate": lr}`` of the model's optimizer (one entry per optimizer of a multi-optimizer)."""
    optimizer = getattr(model, "optimizer", None)
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer's
    if optimizer is None:
        return {}
    if hasattr(optimizer, "optimizers"):
        rates = {f"learning_rate_{o.name}": _number(getattr(o, "learning_rate", None)) for o in optimizer.optimizers}
    else:
        rates = {"learning_rate": _number(getattr(optimizer, "learning_rate", None))}
    return {k: v for k, v in rates.items() if v is not None}


def _number(value: Any) -> float | None:
    try:
        arr = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return float(arr.reshape(())) if arr.size == 1 else None


__all__ = ["TensorBoard"]
