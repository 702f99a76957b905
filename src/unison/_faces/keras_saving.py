"""Hands Keras's model class and saving functions to ``tf.saved_model`` (which never imports Keras).

``unison/__init__.py`` calls :func:`connect` once, after both are imported: then
``tf.saved_model.save(keras_model, path)`` writes a Keras export and ``tf.saved_model.load`` reads
it back (:mod:`unison.saved_model.keras_hook` says why the arrow is registered, not imported).

Example:
    >>> from unison.saved_model.keras_hook import registered_keras
    >>> connect()
    >>> registered_keras().load_model is saving.load_model
    True
"""

from __future__ import annotations

from unison.keras import Model, saving
from unison.saved_model.keras_hook import KerasSaving, register_keras


def connect() -> None:
    """Register Keras's saving functions with ``tf.saved_model`` (idempotent)."""
    register_keras(
        KerasSaving(
            model_class=Model,
            model_config=saving.model_config,
            save_model=saving.save_model,
            load_model=saving.load_model,
        )
    )
