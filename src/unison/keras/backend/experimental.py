"""``keras.backend.experimental`` (Keras 2, ``tf_keras``): the ``tf.random.Generator`` switch.

Keras 2 could draw its random numbers (initializers, dropout) from a ``tf.random.Generator``
instead of TF's stateful ops. unison always draws from torch's generators (seeded by
``keras.utils.set_random_seed``), so the switch only records the choice and reports it back, off
by default as in Keras 2.21.

Example:
    >>> from unison.keras.backend import experimental
    >>> experimental.is_tf_random_generator_enabled()
    False
"""

from __future__ import annotations

__all__ = ["disable_tf_random_generator", "enable_tf_random_generator", "is_tf_random_generator_enabled"]

_ENABLED = [False]  # one flag for the process, as Keras 2's module global


def is_tf_random_generator_enabled() -> bool:
    """Whether ``enable_tf_random_generator()`` was called last (``False`` by default).

    Example:
        >>> is_tf_random_generator_enabled()
        False
    """
    return _ENABLED[0]


def enable_tf_random_generator() -> None:
    """Record that Keras 2 programs asked for ``tf.random.Generator`` RNG (torch's generators draw).

    Example:
        >>> enable_tf_random_generator(); is_tf_random_generator_enabled()
        True
        >>> disable_tf_random_generator()
    """
    _ENABLED[0] = True


def disable_tf_random_generator() -> None:
    """Undo :func:`enable_tf_random_generator`.

    Example:
        >>> disable_tf_random_generator(); is_tf_random_generator_enabled()
        False
    """
    _ENABLED[0] = False
