"""``keras.models.experimental`` (Keras 2, ``tf_keras``): ``SharpnessAwareMinimization``.

Example:
    >>> from unison.keras.models import experimental
    >>> experimental.SharpnessAwareMinimization.__name__
    'SharpnessAwareMinimization'
"""

from unison.keras.models.sharpness_aware import SharpnessAwareMinimization

__all__ = ["SharpnessAwareMinimization"]
