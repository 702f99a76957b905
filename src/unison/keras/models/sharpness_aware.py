"""Keras 2's (``tf_keras``) ``models.experimental.SharpnessAwareMinimization`` (SAM).

Each training step, per split of the batch (``num_batch_splits``): the gradient ``g`` of the
wrapped model's loss moves every weight by ``rho * g / ||g||`` (the global norm of all
gradients), the gradient is taken again at that point, and the weights move back; the update
applies the sum over the splits of these second gradients. As in Keras 2, each split's loss is
its mean (sum over the split's rows / its rows, divided by the number of replicas), and the
``loss`` metric records both losses of each split (before and after the move).

The move uses each replica's own gradient (no collective); the update goes through the
optimizer, which the strategy synchronises as in any custom ``train_step``.

Example:
    >>> from unison import keras
    >>> inner = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> sam = SharpnessAwareMinimization(inner, rho=0.1)
    >>> sam.rho, sam.get_config()["num_batch_splits"]
    (0.1, None)
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from unison.keras.models.model import Model
from unison.keras.utils.data_adapter_utils import unpack_x_y_sample_weight

__all__ = ["SharpnessAwareMinimization"]


class SharpnessAwareMinimization(Model):
    """Trains ``model`` with sharpness-aware minimization (Keras 2's class).

    Args:
        model: the model to train (any Keras model or torch module).
        rho: the size of the move to the neighbouring weights.
        num_batch_splits: split each batch into this many equal parts (``None``: one part).
        name: the model's name.

    Raises:
        TypeError: ``model`` is not a module.
        ValueError: a batch does not split into ``num_batch_splits`` equal parts.
    """

    def __init__(
        self, model: nn.Module, rho: float = 0.05, num_batch_splits: int | None = None, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        if not isinstance(model, nn.Module):
            raise TypeError(
                f"SharpnessAwareMinimization wraps a Keras model (a torch.nn.Module). Received: model={model!r}"
            )
        self.model = model
        self.rho = rho
        self.num_batch_splits = num_batch_splits

    def call(self, inputs: Any) -> Any:
        return self.model(inputs)

    def _splits(self, value: Any) -> list[Any]:
        n = self.num_batch_splits
        if n is None:
            return [value]
        rows = int(value.shape[0])
        if rows % n:
            raise ValueError(
                f"SharpnessAwareMinimization(num_batch_splits={n}) cannot split a batch of {rows} rows into equal "
                "parts. Use a batch size divisible by num_batch_splits."
            )
        return list(torch.split(torch.as_tensor(value), rows // n))

    def _split_loss(self, x: Any, y: Any, rows: int) -> tuple[torch.Tensor, Any]:
        pred = self(x, training=True)
        loss = self.compute_loss(x=x, y=y, y_pred=pred)
        self.metrics[0].update_state(loss)  # Keras 2's compiled_loss records every loss it computes
        # compute_loss divides by the replica's whole batch; Keras 2's split loss is the split's mean
        return loss * (rows / int(torch.as_tensor(y).shape[0])), pred

    def train_step(self, data: Any) -> dict[str, Any]:
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        x = torch.as_tensor(x)
        y = torch.as_tensor(y)
        rows = int(x.shape[0])
        variables = [v for v in self.model.parameters() if v.requires_grad]
        summed: list[torch.Tensor] | None = None
        predictions = []
        for x_part, y_part in zip(self._splits(x), self._splits(y)):
            loss, pred = self._split_loss(x_part, y_part, rows)
            predictions.append(pred.detach())
            grads = torch.autograd.grad(loss, variables, allow_unused=True)
            norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads if g is not None]))
            scale = self.rho / (norm + 1e-12)
            moves = [torch.zeros_like(v) if g is None else g * scale for g, v in zip(grads, variables)]
            with torch.no_grad():
                for v, move in zip(variables, moves):
                    v.add_(move)
            loss, _ = self._split_loss(x_part, y_part, rows)
            second = torch.autograd.grad(loss, variables, allow_unused=True)
            with torch.no_grad():
                for v, move in zip(variables, moves):
                    v.sub_(move)
            parts = [torch.zeros_like(v) if g is None else g for g, v in zip(second, variables)]
            summed = parts if summed is None else [a + b for a, b in zip(summed, parts)]
        assert summed is not None and self.optimizer is not None
        self.optimizer.apply(summed, variables)
        return self.compute_metrics(x, y, torch.cat(predictions), sample_weight)

    def get_config(self) -> dict[str, Any]:
        """Keras 2's config: the wrapped model serialized, ``rho``, ``num_batch_splits``."""
        from unison.keras.saving.serialization import layer_config

        return {
            "name": self.name,
            "model": layer_config(self.model),
            "rho": self.rho,
            "num_batch_splits": self.num_batch_splits,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: Any = None) -> SharpnessAwareMinimization:
        from unison.keras.saving.serialization import from_config

        config = dict(config)
        model = from_config(config.pop("model"), custom_objects)
        return cls(model=model, **config)
