"""``keras.callbacks.TensorBoard``: epoch and batch metrics, and weight histograms, as event files.

Layout as Keras: ``log_dir/train`` holds ``epoch_<metric>`` (and ``batch_<metric>`` with
``update_freq='batch'`` or an integer) and the weight histograms; ``log_dir/validation`` holds the
``val_`` metrics as ``epoch_<metric>``. Steps are the epoch index for epoch values and the
number of batches trained so far for batch values. Only the chief writes. The files are written
by ``torch.utils.tensorboard.SummaryWriter`` (the ``tensorboard`` package, ``unison[tensorboard]``).

Example:
    >>> import tempfile
    >>> cb = TensorBoard(log_dir=tempfile.mkdtemp(), update_freq="epoch")
    >>> cb.needs_batch_logs()
    False
"""

from __future__ import annotations

import os
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
        write_graph, write_images, write_steps_per_second, profile_batch, embeddings_freq,
            embeddings_metadata: accepted for compatibility; nothing is written for them.
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
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.update_freq = update_freq
        self._writers: dict[str, Any] = {}
        self._train_step = 0

    def needs_batch_logs(self) -> bool:
        return self.update_freq != "epoch"

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
        # after __init__'s check update_freq is "epoch" or a positive int
        if not isinstance(self.update_freq, int) or not is_chief(self.model) or self._train_step % self.update_freq:
            return
        writer = self._writer("train")
        for name, value in (logs or {}).items():
            number = _number(value)
            if number is not None:
                writer.add_scalar("batch_" + name, number, global_step=self._train_step)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if not is_chief(self.model):
            return
        train, val = self._writer("train"), None
        for name, value in (logs or {}).items():
            number = _number(value)
            if number is None:
                continue
            if name.startswith("val_"):
                val = val or self._writer("validation")
                val.add_scalar("epoch_" + name[4:], number, global_step=epoch)
            else:
                train.add_scalar("epoch_" + name, number, global_step=epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0 and self.model is not None:
            for name, tensor in self.model.state_dict().items():
                if tensor.is_floating_point() and tensor.numel():
                    train.add_histogram(
                        name.replace(".", "/"), tensor.detach().float().cpu().numpy(), global_step=epoch
                    )
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs: Logs | None = None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


def _number(value: Any) -> float | None:
    try:
        arr = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return float(arr.reshape(())) if arr.size == 1 else None


__all__ = ["TensorBoard"]
