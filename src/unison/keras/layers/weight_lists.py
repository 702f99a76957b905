"""Keras's variable lists of a layer: re-exported from ``keras/utils/weight_lists.py``.

They moved below the layers so that ``utils/summary_utils.py`` (``Model.summary``'s table) can
count weights without importing a layer; this path stays for the modules that import it here.
"""

from unison.keras.utils.weight_lists import (
    assign_weights,
    keras_non_trainable_weights,
    keras_submodules,
    keras_trainable_weights,
    keras_weights,
)

__all__ = [
    "assign_weights",
    "keras_non_trainable_weights",
    "keras_submodules",
    "keras_trainable_weights",
    "keras_weights",
]
