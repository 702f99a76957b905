"""How ``tf.saved_model`` saves a Keras model without importing Keras: Keras's functions, registered.

Keras sits above ``saved_model`` (``model.save("dir")`` writes a SavedModel export through
:func:`unison.saved_model.save.write_keras_export`), so ``saved_model`` must not import Keras back.
The public face (``unison/__init__.py``, through :mod:`unison._faces.keras_saving`) hands it Keras's
model class and saving functions once, when ``import unison`` runs; ``save``/``load`` read them here.

Example:
    >>> import unison
    >>> registered_keras().model_class is unison.keras.Model
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class KerasSaving:
    """What ``tf.saved_model`` needs of Keras.

    Args:
        model_class: ``keras.Model``: the objects exported as Keras models.
        model_config: the architecture of a model as a dict (raises ``SavingError`` when it has none).
        save_model: writes a ``.keras`` file (``keras.saving.save_model``).
        load_model: reads it back (``keras.saving.load_model``).
    """

    model_class: type
    model_config: Callable[[Any], Any]
    save_model: Callable[..., Any]
    load_model: Callable[..., Any]


_REGISTERED: dict[str, KerasSaving] = {}


def register_keras(saving: KerasSaving) -> None:
    """Keras's saving functions for ``tf.saved_model`` (the last registration wins)."""
    _REGISTERED["keras"] = saving


def registered_keras() -> KerasSaving | None:
    """The registered :class:`KerasSaving`, or ``None`` before ``import unison`` has finished."""
    return _REGISTERED.get("keras")
