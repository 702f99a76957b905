"""What ``compile()`` attaches that a custom ``train_step`` uses: the compiled loss and metrics.

Keras 2 programs call ``self.compiled_loss(y, y_pred)`` and ``self.compiled_metrics.update_state(
y, y_pred)``; Keras 3 programs call ``self.compute_loss(...)`` and iterate ``self.metrics``,
whose second entry is the container of the compiled metrics (named ``compile_metrics``). Both
reach the model's training state, so the loop reads (and reduces across replicas) the same
metric states whichever style the step was written in.

Example:
    >>> from unison.keras.metrics import Mean
    >>> [m.name for m in leaf_metrics([Mean("loss"), Mean("mae")])]
    ['loss', 'mae']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch

from unison.keras.metrics import Metric


class CompileMetrics:
    """The metrics given to ``compile(metrics=...)``, as one entry of ``model.metrics``.

    ``update_state(y, y_pred, sample_weight)`` updates each; ``result()`` is a dict of their
    values (Keras flattens it into the logs). Empty until the first step resolves the metrics
    against the data's shapes (as in Keras, where they are built on the first batch).
    """

    name = "compile_metrics"

    def __init__(self, state: Any) -> None:
        self._state = state

    @property
    def metrics(self) -> list[Metric]:
        return list(self._state.metrics) if self._state is not None else []

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self._state is not None:
            self._state.update_compiled_metrics(y_true, y_pred, sample_weight)

    def result(self) -> dict[str, torch.Tensor]:
        return {m.name: m.result() for m in self.metrics}

    def reset_state(self) -> None:
        for m in self.metrics:
            m.reset_state()

    reset_states = reset_state

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)


class CompiledLoss:
    """Keras 2's ``model.compiled_loss(y_true, y_pred, sample_weight, regularization_losses)``.

    Returns the loss scaled as the built-in step scales it (by the global batch) and records it
    in the ``"loss"`` metric, as Keras 2's loss container does.
    """

    def __init__(self, model: Any) -> None:
        self._model = model

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None,
                 regularization_losses: Any = None) -> torch.Tensor:
        st = self._model._step_state("compiled_loss")
        loss = st.compute_loss(y_true, y_pred, sample_weight, regularization=regularization_losses is not None)
        st.loss_tracker.update_state(loss)
        return loss


def leaf_metrics(metrics: Iterable[Any]) -> list[Metric]:
    """``model.metrics`` with the compiled-metrics container replaced by its metrics."""
    leaves: list[Metric] = []
    for m in metrics:
        if isinstance(m, CompileMetrics):
            leaves.extend(m.metrics)
        elif isinstance(m, Metric):
            leaves.append(m)
        else:
            raise TypeError(f"model.metrics must hold keras.metrics.Metric objects. Received: {m!r} of type "
                            f"{type(m).__name__}. Return only metrics from your `metrics` property.")
    return leaves


def flat_logs(values: Any, prefix: str = "") -> dict[str, Any]:
    """A step's returned dict with nested dicts (``compile_metrics``) flattened, as Keras logs it."""
    out: dict[str, Any] = {}
    for k, v in (values or {}).items():
        if isinstance(v, dict):
            out.update(flat_logs(v))
        else:
            out[f"{prefix}{k}"] = v
    return out


__all__ = ["CompileMetrics", "CompiledLoss", "flat_logs", "leaf_metrics"]
