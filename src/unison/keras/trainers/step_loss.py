"""The loss a step differentiates and the loss it reports, computed for a :class:`Trainer`.

Each replica computes ``sum(per-example losses) / global batch size`` on its rows (plus ``1/N``
of the regularisation on each of N replicas), so gradients SUM-reduced across replicas equal one
device's on the global batch. The reported ``"loss"`` is additive, like every metric's state:
``[sum of per-example losses, number of examples]``, summed over replicas when read.

Example::

    loss_sum, rows = loss_sum(model, batch, y_pred)
    loss = loss_sum / global_size(model, batch, rows)
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras import metrics as metrics_mod
from unison.keras import mixed_precision
from unison.keras.backend.keras_tensor import flatten_values
from unison.keras.layers.base import has_added_losses
from unison.keras.losses.loss import output_mask
from unison.keras.trainers.data_adapters import Batch


def forward(model: Any, x: Any) -> Any:
    """The model's forward pass under the dtype policy (``torch.autocast`` when mixed)."""
    policy = model._policy
    with mixed_precision.policy_scope(policy, model._step_device.type):
        # training= as Keras's fit and predict pass it: a subclass's call(x, training=...) and
        # its inner layers get the flag (the loop has already set the torch mode to match).
        return model(policy.cast_inputs(x), training=model.training)


def loss_sum(model: Any, batch: Batch, y_pred: Any) -> tuple[torch.Tensor, Any]:
    """``(sum of this replica's per-example losses, the examples it counts)``."""
    loss = model.loss
    if loss is None:
        # compile() without a loss: the model's add_loss losses are the whole loss (Keras 3)
        if not (model._has_regularizers or has_added_losses(model)):
            raise ValueError(
                "fit()/evaluate() needs a loss: compile() was given none and the model added none "
                "with add_loss(). Pass compile(loss=...), e.g. loss='sparse_categorical_crossentropy'."
            )
        rows = flatten_values(y_pred)[0].shape[0]
        return torch.zeros((), device=model._step_device), rows
    if model._output_trackers:
        return _outputs_loss_sum(model, batch, y_pred)
    # A masked output (Keras's _keras_mask, e.g. from Embedding(mask_zero=True)) and a loss that
    # ignores some positions (ignore_class) count each example by the fraction of its positions
    # that count, so the mean is over those positions of the global batch.
    # Sample weights of more than one value per example (Keras's per-step weights, (batch, steps))
    # weight the positions' losses.
    mask, sample_weight = output_mask(y_pred), batch.sample_weight
    per_position = (
        sample_weight is not None
        and sample_weight.dim() > 1
        and sample_weight.numel() != flatten_values(y_pred)[0].shape[0]
    )
    counted: Any = None
    if mask is not None or per_position:
        per_example, counted = loss.masked_per_example(batch.y, y_pred, mask, sample_weight if per_position else None)
    else:
        per_example = loss.per_example(batch.y, y_pred)
    if counted is None:  # ignore_class without a mask (a masked call counts its positions itself)
        weights = getattr(loss, "example_weights", None)
        counted = weights(batch.y, y_pred) if weights is not None else None
    if sample_weight is not None and not per_position:
        per_example = per_example * sample_weight.reshape(per_example.shape)
    return per_example.sum(), per_example.shape[0] if counted is None else counted.sum().detach()


def _outputs_loss_sum(model: Any, batch: Batch, y_pred: Any) -> tuple[torch.Tensor, Any]:
    """Several outputs: ``sum_i weight_i * loss_i`` per example; each output's sum kept for its tracker."""
    loss = model.loss
    total: torch.Tensor | None = None
    sums = []
    for i, part in loss.per_output(batch.y, y_pred):
        part = part.reshape(-1)
        if batch.sample_weight is not None:
            weight = batch.sample_weight
            if isinstance(weight, (dict, list, tuple)):
                weight = weight[loss.names[i]] if isinstance(weight, dict) else weight[i]
            part = part * weight.reshape(part.shape)
        sums.append(part.sum())
        weighted = loss.weights[i] * part
        total = weighted if total is None else total + weighted
    object.__setattr__(model, "_output_sums", [s.detach() for s in sums])
    if total is None:  # from_compile refuses this; a hand-made OutputLosses could still do it
        raise ValueError("compile(loss=...) gave no output a loss: give at least one output a loss.")
    return total.sum(), total.shape[0]


def global_size(model: Any, batch: Batch, local: Any) -> float:
    """The global batch's size: the batch knows it, or the replicas' counts are summed."""
    if batch.global_size is not None and not isinstance(local, torch.Tensor):
        return batch.global_size
    count = torch.as_tensor(local, dtype=torch.float32, device=model._step_device).reshape(1).clone()
    total = float(model._comm.all_reduce(count, name="fit.global_batch_size").item())
    return total if isinstance(local, torch.Tensor) and total > 0 else max(1, int(total))


def regularization(model: Any) -> torch.Tensor | None:
    """Weight penalties and this step's ``add_loss`` losses, summed (``None``: there are none)."""
    # a model with neither costs no walk over its layers
    if not (model._has_regularizers or has_added_losses(model)):
        return None
    losses = model.losses
    if not losses:
        return None
    return torch.stack([loss.reshape(()).to(model._step_device) for loss in losses]).sum()


class LossTracker(metrics_mod.Mean):
    """The model's ``"loss"`` metric (Keras 3's ``model.metrics[0]``).

    ``update_state(loss)`` with the tensor ``model.compute_loss`` just returned records that
    step's exact sum and example count (the returned loss is scaled by the global batch for the
    gradients), so a custom ``train_step`` written as Keras documents it reports the same loss on
    N replicas as on one; any other value is averaged as ``Mean`` does.
    """

    def __init__(self, model: Any) -> None:
        super().__init__("loss")
        self._owner = model

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        last = self._owner._last_loss
        if last is not None and values is last[0] and sample_weight is None:
            self.add(last[1], last[2])
            add_output_losses(self._owner, last[2])
            return
        super().update_state(values, sample_weight)


def add_output_losses(model: Any, local: Any) -> None:
    """Several outputs: each ``"<output>_loss"`` tracker takes its sum of the step."""
    for tracker, total in zip(model._output_trackers, model._output_sums):
        tracker.add(total, local)


__all__ = ["LossTracker", "add_output_losses", "forward", "global_size", "loss_sum", "regularization"]
