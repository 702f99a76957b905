"""``Model.train_step``/``test_step``/``predict_step`` and what a custom step calls (Keras 3's contract).

``fit`` calls ``model.train_step(data)`` once per batch with ``data`` = ``(x, y)`` or
``(x, y, sample_weight)`` (this replica's rows of the global batch); ``evaluate`` calls
``test_step`` and ``predict`` ``predict_step``. Override them as in Keras, in either style::

    class MyModel(keras.Model):
        def train_step(self, data):                       # Keras 3, torch style
            x, y, sw = keras.utils.unpack_x_y_sample_weight(data)
            self.zero_grad()
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw)
            loss.backward()
            self.optimizer.apply([v.grad for v in self.trainable_weights], self.trainable_weights)
            return self.compute_metrics(x, y, y_pred, sw)

The step runs inside the strategy's replica context, so ``optimizer.apply_gradients`` SUM-reduces
the gradients across replicas through the strategy's one ``DistributedOptimizer``, and
``compute_loss``/``compiled_loss`` scale the loss by the global batch: N replicas take the step one
device takes on the global batch. Metrics are read (and summed across replicas) by the loop.
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.metrics import Metric
from unison.keras.trainers.compile_utils import CompiledLoss, CompileMetrics, leaf_metrics
from unison.keras.utils.data_adapter_utils import unpack_x_y_sample_weight

# The attribute on the model that holds the loop's TrainingState (trainers/state.py creates it).
_STATE_ATTRIBUTE = "_unison_training_state"


class StepMethods:
    """The step methods of ``keras.Model`` (mixed into it)."""

    @property
    def _training_state(self) -> Any:
        """The loop's state for the current compile and strategy; ``None`` before the first
        ``fit``/``evaluate``/``predict``. The model owns it (Keras 3's Model is its trainer), so
        callbacks reach the optimizer, seed and data position through ``self.model``."""
        return getattr(self, _STATE_ATTRIBUTE, None)

    def _step_state(self, what: str) -> Any:
        st = self._training_state
        if st is None or not st.ready:
            raise RuntimeError(
                f"{what}() uses the compiled loss and metrics, which fit()/evaluate() set up. Call "
                f"it from train_step/test_step (run by fit/evaluate), after model.compile()."
            )
        return st

    # --- the steps ---------------------------------------------------------------------------------
    def train_step(self, data: Any) -> dict[str, Any]:
        """One training step on ``data`` (this replica's rows); returns the metrics' values.

        The built-in step: forward under the dtype policy, the loss scaled by the global batch,
        backward, gradients synchronised and applied, loss and compiled metrics updated.
        """
        st = self._step_state("train_step")
        st.train_step(_as_batch(st, data))
        return self.get_metrics_result()

    def test_step(self, data: Any) -> dict[str, Any]:
        """One evaluation step on ``data``: forward, loss and compiled metrics updated."""
        st = self._step_state("test_step")
        with torch.no_grad():
            st.eval_step(_as_batch(st, data))
        return self.get_metrics_result()

    def predict_step(self, data: Any) -> Any:
        """The model's outputs for ``data`` (``x`` or a tuple whose first entry is ``x``)."""
        x, _, _ = unpack_x_y_sample_weight(data)
        st = self._training_state
        return st.predict_forward(x) if st is not None else self(x, training=False)  # type: ignore[operator]

    # --- what a custom step calls ------------------------------------------------------------------
    def compute_loss(
        self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None, training: bool = True
    ) -> torch.Tensor:
        """The compiled loss plus the layers' penalties, scaled by the global batch (Keras 3).

        Differentiate it as it is: gradients summed over N replicas equal one device's on the
        global batch. ``self.metrics[0].update_state(loss)`` records its unscaled value.
        """
        if y_pred is None:
            raise ValueError("compute_loss() needs y_pred (the model's outputs). Received: y_pred=None.")
        return self._step_state("compute_loss").compute_loss(y, y_pred, sample_weight)

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict[str, Any]:
        """Update the compiled metrics with this batch; return every metric's value (Keras 3)."""
        self._step_state("compute_metrics").update_compiled_metrics(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self) -> dict[str, Any]:
        """``{name: value}`` of every metric in ``self.metrics`` (this replica's value inside a step)."""
        return {m.name: m.result() for m in leaf_metrics(self.metrics)}

    @property
    def compiled_loss(self) -> CompiledLoss:
        """Keras 2's ``compiled_loss(y, y_pred, sample_weight, regularization_losses)``."""
        return CompiledLoss(self)

    @property
    def compiled_metrics(self) -> CompileMetrics:
        """Keras 2's ``compiled_metrics`` (``update_state(y, y_pred, sample_weight)``)."""
        return CompileMetrics(self._training_state)

    @property
    def metrics(self) -> list[Any]:
        """The loss tracker, the compiled metrics, then metrics set as attributes (Keras 3's order).

        Override it to list your own trackers: the loop resets them at each epoch and reports
        them, summed over every replica.
        """
        st = self._training_state
        found: list[Any] = []
        if st is not None and st.ready:
            found += [st.loss_tracker, CompileMetrics(st)]
        return found + [v for v in vars(self).values() if isinstance(v, Metric)]

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in leaf_metrics(self.metrics)]

    def reset_metrics(self) -> None:
        """Zero every metric in ``self.metrics``."""
        for m in leaf_metrics(self.metrics):
            m.reset_state()


def _as_batch(st: Any, data: Any) -> Any:
    from unison.keras.trainers.data_adapters import Batch

    x, y, sw = unpack_x_y_sample_weight(data)
    current = st.current
    return Batch(x, y, sw, current.global_size if current is not None else None)


def overrides(model: Any, name: str) -> bool:
    """Whether the model's class replaces the built-in ``train_step``/``test_step``/``predict_step``."""
    return getattr(type(model), name) is not getattr(StepMethods, name)


__all__ = ["StepMethods", "overrides", "unpack_x_y_sample_weight"]
