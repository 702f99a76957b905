"""``keras.distillation``: knowledge distillation (Keras 3.15).

The losses (``DistillationLoss``, ``LogitsDistillation``, ``FeatureDistillation``) live in
``losses.py``; ``Distiller``, the ``Model`` that trains a student against a frozen teacher, in
``distiller.py``.

Example:
    >>> from unison.keras import distillation
    >>> distillation.LogitsDistillation(temperature=2.0).temperature
    2.0
"""

from unison.keras.distillation.distiller import Distiller
from unison.keras.distillation.losses import DistillationLoss, FeatureDistillation, LogitsDistillation

__all__ = ["DistillationLoss", "Distiller", "FeatureDistillation", "LogitsDistillation"]
