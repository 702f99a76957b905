"""Keras 2's (``tf_keras``) ``SidecarEvaluator``: evaluate the checkpoints a training job writes.

``start()`` waits for checkpoints in ``checkpoint_dir`` (``tf.train.checkpoints_iterator``),
restores each new one into ``model`` (a ``tf.train.Checkpoint(model=..., optimizer=...)``, or
the model's weights when the checkpoint holds no ``model``), runs ``model.evaluate(data)`` and
stops once it evaluated a checkpoint numbered ``max_evaluations`` or more (``ckpt-3`` is number 3),
or when no new checkpoint comes for 30 seconds.

Example:
    >>> import tempfile
    >>> from unison import keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile(loss="mse")
    >>> SidecarEvaluator(model, data=None, checkpoint_dir=tempfile.mkdtemp(), max_evaluations=1).max_evaluations
    1
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

from unison.errors import OpError, UnavailableError
from unison.train import checkpoint_utils
from unison.train.checkpoint import Checkpoint
from unison.train.reader import list_variables

__all__ = ["SidecarEvaluator", "SidecarEvaluatorExperimental"]

_LOG = logging.getLogger(__name__)
_CHECKPOINT_TIMEOUT_SEC = 30


class SidecarEvaluator:
    """Evaluates ``model`` on ``data`` for each checkpoint a trainer saves (Keras 2's class).

    Args:
        model: the compiled model the checkpoints restore into.
        data: what ``model.evaluate`` reads (a dataset, or arrays ``(x, y)``).
        checkpoint_dir: the folder the training job writes ``tf.train.Checkpoint`` files to.
        steps: ``evaluate``'s ``steps``.
        max_evaluations: stop after the checkpoint numbered this (``None``: run until no new
            checkpoint comes within 30 seconds).
        callbacks: ``evaluate``'s callbacks.
    """

    def __init__(
        self,
        model: Any,
        data: Any,
        checkpoint_dir: str,
        steps: int | None = None,
        max_evaluations: int | None = None,
        callbacks: Sequence[Any] | None = None,
    ) -> None:
        self.model = model
        self.data = data
        self.checkpoint_dir = checkpoint_dir
        self.max_evaluations = max_evaluations
        self.steps = steps
        self.callbacks = list(callbacks or [])

    def _timeout_fn(self) -> bool:
        _LOG.info(
            "No checkpoints appear to be found after %s seconds. Save them during training with "
            "tf.train.Checkpoint/CheckpointManager or keras.callbacks.ModelCheckpoint(save_weights_only=True).",
            _CHECKPOINT_TIMEOUT_SEC,
        )
        return False

    def start(self) -> None:
        """Evaluate each new checkpoint until ``max_evaluations`` or the timeout."""
        objects: dict[str, Any] = {"model": self.model}
        if getattr(self.model, "optimizer", None) is not None:
            objects["optimizer"] = self.model.optimizer
        checkpoint = Checkpoint(**objects)
        for latest in checkpoint_utils.checkpoints_iterator(
            self.checkpoint_dir, timeout=_CHECKPOINT_TIMEOUT_SEC, timeout_fn=self._timeout_fn
        ):
            try:
                checkpoint.restore(latest).expect_partial()
                attributes = {name.split("/")[0] for name, _ in list_variables(latest)}
                if "model" not in attributes:
                    self.model.load_weights(latest)
            except OpError as e:
                if isinstance(e, UnavailableError):
                    raise
                _LOG.info("SidecarEvaluator could not load the checkpoint at %s; retrying. Error: %r", latest, e)
                continue
            _LOG.info("Evaluation starts: Model weights loaded from latest checkpoint file %s", latest)
            self.model.evaluate(self.data, steps=self.steps, callbacks=self.callbacks, verbose=2)
            if self.max_evaluations and self.max_evaluations <= int(str(latest).split("-")[-1]):
                _LOG.info("Last checkpoint evaluated. SidecarEvaluator stops.")
                return


class SidecarEvaluatorExperimental(SidecarEvaluator):
    """``keras.experimental.SidecarEvaluator``: the deprecated path (warns, as Keras 2 does)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "`tf.keras.experimental.SidecarEvaluator` endpoint is deprecated and will be removed in a future "
            "release. Please use `tf.keras.utils.SidecarEvaluator`.",
            stacklevel=2,
        )
        super().__init__(*args, **kwargs)
