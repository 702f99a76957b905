"""``keras.legacy`` (Keras 3): ``keras.legacy.saving``, Keras 2's object (de)serializers.

Example:
    >>> from unison.keras.legacy import saving
    >>> saving.serialize_keras_object(None) is None
    True
"""

from unison.keras.saving import legacy_serialization as saving

__all__ = ["saving"]
