"""Keras 3's distillation losses: ``DistillationLoss`` (the base), ``LogitsDistillation`` and
``FeatureDistillation``.

``compute_loss(teacher_outputs, student_outputs)`` returns one scalar: for each leaf of the
(possibly nested) outputs, the mean of ``loss(teacher, student)``, summed over the leaves (a
``None`` loss leaf counts 0). ``LogitsDistillation`` divides both sides by ``temperature`` first;
only a ``keras.losses.KLDivergence`` *instance* compares the softmax-ed logits and is multiplied
by ``temperature**2`` (as in Keras 3.15, the default ``loss="kl_divergence"`` resolves to the
function, which compares the scaled logits as they are).

Example:
    >>> import torch
    >>> loss = FeatureDistillation(loss="mse")
    >>> float(loss.compute_loss(torch.zeros(2, 3), torch.ones(2, 3)))
    1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.keras import losses as losses_mod
from unison.keras import tree
from unison.keras.ops._convert import tensor

__all__ = ["DistillationLoss", "FeatureDistillation", "LogitsDistillation"]


def _loss_function(item: Any) -> Any:
    """Keras's ``_convert_loss_to_function``: a name through ``keras.losses.get``, anything else as is."""
    if item is None:
        return None
    if isinstance(item, str):
        return losses_mod.get(item)
    return item


def _resolve(loss: Any, owner: str) -> Any:
    resolved = tree.map_structure(_loss_function, loss)
    if all(leaf is None for leaf in tree.flatten(resolved)):
        raise ValueError(f"The `loss` argument in `{owner}` must contain at least one non-`None` value.")
    return resolved


def _mean(value: Any) -> torch.Tensor:
    return tensor(value).float().mean() if not torch.is_floating_point(tensor(value)) else tensor(value).mean()


def _summed(values: Any) -> torch.Tensor:
    flat = [v if isinstance(v, torch.Tensor) else torch.tensor(float(v)) for v in tree.flatten(values)]
    return torch.stack([v.to(flat[0].dtype) for v in flat]).sum()


class DistillationLoss:
    """Base class of a distillation loss: subclasses implement ``compute_loss``.

    Example:
        >>> class L1(DistillationLoss):
        ...     def compute_loss(self, teacher_outputs, student_outputs, **kwargs):
        ...         return (teacher_outputs - student_outputs).abs().mean()
        >>> import torch
        >>> float(L1().compute_loss(torch.ones(2), torch.zeros(2)))
        1.0
    """

    def compute_loss(self, teacher_outputs: Any, student_outputs: Any, **kwargs: Any) -> torch.Tensor:
        """The scalar loss between the teacher's and the student's outputs."""
        raise NotImplementedError("Subclasses must implement compute_loss")

    def validate_outputs(self, teacher_outputs: Any, student_outputs: Any) -> None:
        """Raise ``ValueError`` when the two outputs are not the same structure."""
        tree.assert_same_structure(teacher_outputs, student_outputs)

    def validate_model_compatibility(self, teacher: Any, student: Any) -> None:
        """Raise when this loss cannot compare ``teacher`` and ``student`` (nothing to check here)."""


class FeatureDistillation(DistillationLoss):
    """Matches intermediate features (or the final outputs without layer names).

    Args:
        loss: a loss (name, function or ``Loss``) or a structure of them, one per output leaf.
        teacher_layer_name: the teacher layer whose output is compared (``None``: the output).
        student_layer_name: the student layer whose output is compared.

    Raises:
        ValueError: every loss leaf ``None``; an unknown loss name.
    """

    def __init__(
        self, loss: Any = "mse", teacher_layer_name: str | None = None, student_layer_name: str | None = None
    ) -> None:
        self.teacher_layer_name = teacher_layer_name
        self.student_layer_name = student_layer_name
        self.loss = _resolve(loss, "FeatureDistillation")

    def validate_model_compatibility(self, teacher: Any, student: Any) -> None:
        """With layer names, both models must be Functional/Sequential and hold those layers."""
        for role, model, name in (
            ("teacher", teacher, self.teacher_layer_name),
            ("student", student, self.student_layer_name),
        ):
            if name is None:
                continue
            if getattr(model, "inputs", None) is None:
                raise ValueError(
                    "FeatureDistillation with specific layer names requires Functional or Sequential models. "
                    f"The {role} model appears to be subclassed (no symbolic inputs/outputs). Use "
                    "FeatureDistillation without layer names, or LogitsDistillation."
                )
            try:
                model.get_layer(name=name)
            except ValueError as e:
                raise ValueError(f"In {role} model: {e}") from e

    def validate_outputs(self, teacher_outputs: Any, student_outputs: Any) -> None:
        super().validate_outputs(teacher_outputs, student_outputs)
        try:
            tree.assert_same_structure(self.loss, teacher_outputs)
        except (ValueError, TypeError) as e:
            raise ValueError(f"Loss structure mismatch: the loss and the outputs differ. Error: {e}") from e

    def compute_loss(self, teacher_outputs: Any, student_outputs: Any, **kwargs: Any) -> torch.Tensor:
        def apply(fn: Callable[..., Any] | None, t: Any, s: Any) -> Any:
            return 0.0 if fn is None else _mean(fn(t, s))

        return _summed(tree.map_structure(apply, self.loss, teacher_outputs, student_outputs))

    def get_config(self) -> dict[str, Any]:
        return {
            "loss": losses_mod.serialize(self.loss),
            "teacher_layer_name": self.teacher_layer_name,
            "student_layer_name": self.student_layer_name,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> FeatureDistillation:
        config = dict(config)
        config["loss"] = losses_mod.deserialize(config["loss"])
        return cls(**config)


class LogitsDistillation(DistillationLoss):
    """Matches the temperature-softened logits of teacher and student (Hinton et al.).

    Args:
        temperature: positive number both logits are divided by.
        loss: a loss (name, function or ``Loss``) or a structure of them (``"kl_divergence"``).

    Raises:
        ValueError: a temperature that is not a positive number; every loss leaf ``None``.
    """

    def __init__(self, temperature: float = 3.0, loss: Any = "kl_divergence") -> None:
        self.temperature = temperature
        self.loss = _resolve(loss, "LogitsDistillation")
        if not isinstance(temperature, (int, float)) or isinstance(temperature, bool):
            raise ValueError(f"temperature must be a number, got {type(temperature)}")
        if temperature <= 0.0:
            raise ValueError(f"temperature must be positive. Received: temperature={temperature!r}")

    def compute_loss(self, teacher_outputs: Any, student_outputs: Any, **kwargs: Any) -> torch.Tensor:
        t = self.temperature
        teacher = tree.map_structure(lambda x: tensor(x) / t, teacher_outputs)
        student = tree.map_structure(lambda x: tensor(x) / t, student_outputs)

        def apply(fn: Callable[..., Any] | None, tl: torch.Tensor, sl: torch.Tensor) -> Any:
            if fn is None:
                return 0.0
            if isinstance(fn, losses_mod.KLDivergence):
                return _mean(fn(tl.softmax(dim=-1), sl.softmax(dim=-1))) * t**2
            return _mean(fn(tl, sl))

        return _summed(tree.map_structure(apply, self.loss, teacher, student))

    def get_config(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "loss": losses_mod.serialize(self.loss)}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LogitsDistillation:
        config = dict(config)
        config["loss"] = losses_mod.deserialize(config["loss"])
        return cls(**config)
