"""``SidecarEvaluatorModelExport`` (Keras 2, ``tf_keras``): keep the best model a ``SidecarEvaluator`` saw.

A ``ModelCheckpoint`` with ``save_best_only=True`` run by ``evaluate``: at each evaluation's
start it reads the training epoch from the newest checkpoint file matching
``checkpoint_filepath`` (``.../ckpt-<n>`` is epoch ``n``), and at its end saves the model to
``export_filepath`` (its ``{epoch}`` filled with that epoch) when ``monitor`` improved.

Example:
    >>> cb = SidecarEvaluatorModelExport("/tmp/best-{epoch:02d}.keras", "/tmp/ckpt-{epoch:02d}", monitor="loss")
    >>> cb.save_best_only, cb.monitor
    (True, 'loss')
"""

from __future__ import annotations

import os
import re
from typing import Any

from unison.keras.callbacks.callback import Logs
from unison.keras.callbacks.model_checkpoint import ModelCheckpoint


class SidecarEvaluatorModelExport(ModelCheckpoint):
    """Exports the best model evaluated by a ``SidecarEvaluator`` (Keras 2's callback).

    Args:
        export_filepath: where the best model (or weights) goes; ``{epoch}`` is the training epoch.
        checkpoint_filepath: the training side's checkpoint path pattern (``.../ckpt-{epoch:04d}``).
        **kwargs: ``ModelCheckpoint``'s (``monitor``, ``mode``, ``save_weights_only``, ``verbose``;
            ``save_freq="eval"`` is Keras 2's spelling of saving at each evaluation).
    """

    def __init__(self, export_filepath: str, checkpoint_filepath: str, **kwargs: Any) -> None:
        if kwargs.get("save_freq") == "eval":
            kwargs["save_freq"] = "epoch"
        kwargs.pop("save_best_only", None)
        super().__init__(filepath=export_filepath, save_best_only=True, **kwargs)
        self._checkpoint_filepath = os.fspath(checkpoint_filepath)
        self.export_index = 0

    def _most_recent_checkpoint(self) -> str | None:
        folder, base = os.path.split(self._checkpoint_filepath)
        pattern = re.compile("^" + re.sub(r"{.*}", r".*", base) + "$")
        if not os.path.isdir(folder or "."):
            return None
        best: tuple[float, str] | None = None
        for name in os.listdir(folder or "."):
            if pattern.match(name):
                path = os.path.join(folder, name)
                key = (os.path.getmtime(path), path)
                best = key if best is None or key > best else best
        return None if best is None else best[1]

    def on_test_begin(self, logs: Logs | None = None) -> None:
        recent = self._most_recent_checkpoint()
        match = re.match(r".*ckpt-(?P<ckpt>\d+)", recent or "")
        self.export_index = int(match["ckpt"]) - 1 if match else 0

    def on_test_end(self, logs: Logs | None = None) -> None:
        self._save_model(epoch=self.export_index, batch=None, logs=logs)
