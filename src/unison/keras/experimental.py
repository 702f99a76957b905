"""``keras.experimental`` (Keras 2, ``tf_keras``): the schedules TF 2.x programs reached through it.

``tf.keras.experimental.CosineDecay`` and ``CosineDecayRestarts`` are the schedules of
``keras.optimizers.schedules``. The estimator-era models (``LinearModel``, ``WideDeepModel``,
``SequenceFeatures``) and ``SidecarEvaluator`` are not built: asking for them says so.

Example:
    >>> from unison.keras import experimental
    >>> experimental.CosineDecay(1.0, decay_steps=4)(2)
    0.5
"""

from typing import Any

from unison.keras.optimizers.schedules import CosineDecay, CosineDecayRestarts

__all__ = ["CosineDecay", "CosineDecayRestarts"]

_NOT_BUILT = ("LinearModel", "SequenceFeatures", "SidecarEvaluator", "WideDeepModel")


def __getattr__(name: str) -> Any:
    if name in _NOT_BUILT:
        raise AttributeError(
            f"unison does not implement keras.experimental.{name} (a Keras 2 estimator-era class); "
            "build the model with keras.Sequential or the functional API instead."
        )
    raise AttributeError(f"module 'unison.keras.experimental' has no attribute {name!r}")
