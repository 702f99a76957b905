"""``keras.experimental`` (Keras 2, ``tf_keras``): the schedules TF 2.x programs reached through it.

``tf.keras.experimental.CosineDecay`` and ``CosineDecayRestarts`` are the schedules of
``keras.optimizers.schedules``; ``LinearModel`` and ``WideDeepModel`` are Keras 2's premade
models (``keras/models/premade.py``). This module is a face: it gathers names from the
components and the models. ``SidecarEvaluator`` is ``keras.utils.SidecarEvaluator``'s deprecated
path. ``SequenceFeatures`` (feature columns) is not built: asking for it says so.

Example:
    >>> from unison.keras import experimental
    >>> experimental.CosineDecay(1.0, decay_steps=4)(2)
    0.5
"""

from typing import Any

from unison.keras.models.premade import LinearModel, WideDeepModel
from unison.keras.optimizers.schedules import CosineDecay, CosineDecayRestarts
from unison.keras.utils.sidecar_evaluator import SidecarEvaluatorExperimental as SidecarEvaluator

__all__ = ["CosineDecay", "CosineDecayRestarts", "LinearModel", "SidecarEvaluator", "WideDeepModel"]

_NOT_BUILT = ("SequenceFeatures",)


def __getattr__(name: str) -> Any:
    if name in _NOT_BUILT:
        raise AttributeError(
            f"unison does not implement keras.experimental.{name} (a Keras 2 estimator-era class); "
            "build the model with keras.Sequential or the functional API instead."
        )
    raise AttributeError(f"module 'unison.keras.experimental' has no attribute {name!r}")
