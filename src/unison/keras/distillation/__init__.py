"""``keras.distillation``: knowledge distillation (Keras 3.15).

The losses (``DistillationLoss``, ``LogitsDistillation``, ``FeatureDistillation``) live in
``losses.py``. ``Distiller`` (the ``Model`` that trains a student against a teacher) is not built
yet: asking for it says so.

Example:
    >>> from unison.keras import distillation
    >>> distillation.LogitsDistillation(temperature=2.0).temperature
    2.0
"""

from typing import Any

from unison.keras.distillation.losses import DistillationLoss, FeatureDistillation, LogitsDistillation

__all__ = ["DistillationLoss", "FeatureDistillation", "LogitsDistillation"]


def __getattr__(name: str) -> Any:
    if name == "Distiller":
        raise AttributeError(
            "unison does not implement keras.distillation.Distiller yet; compute the loss in a custom "
            "train_step: student_loss_weight * loss(y, student(x)) + (1 - student_loss_weight) * "
            "LogitsDistillation().compute_loss(teacher(x, training=False), student(x))."
        )
    raise AttributeError(f"module 'unison.keras.distillation' has no attribute {name!r}")
