"""``tf.train.experimental.PythonState``: Python state a ``tf.train.Checkpoint`` saves as a string.

A subclass implements ``serialize()`` (returns ``str`` or ``bytes``) and ``deserialize(string)``;
``tf.train.Checkpoint(state=obj)`` stores ``serialize()``'s result and hands it back to
``deserialize`` on restore (through ``state_dict``/``load_state_dict``, the protocol unison's
checkpoints use for every object).

Example:
    >>> import tempfile, unison as tf
    >>> class Counter(tf.train.experimental.PythonState):
    ...     def __init__(self):
    ...         self.n = 0
    ...     def serialize(self):
    ...         return str(self.n)
    ...     def deserialize(self, string_value):
    ...         self.n = int(string_value)
    >>> c = Counter(); c.n = 7
    >>> path = tf.train.Checkpoint(c=c).save(tempfile.mkdtemp() + "/ckpt")
    >>> d = Counter(); _ = tf.train.Checkpoint(c=d).restore(path); d.n
    7
"""

from __future__ import annotations

import abc
from typing import Any


class PythonState(abc.ABC):
    """A mixin for Python state that a checkpoint saves through ``serialize``/``deserialize``."""

    @abc.abstractmethod
    def serialize(self) -> str | bytes:
        """The state, as a string (or bytes)."""

    @abc.abstractmethod
    def deserialize(self, string_value: Any) -> None:
        """Set the state from what ``serialize`` returned."""

    def state_dict(self) -> dict[str, Any]:
        """What ``tf.train.Checkpoint`` saves: ``{"py_state": serialize()}``."""
        value = self.serialize()
        if not isinstance(value, (str, bytes)):
            raise TypeError(
                f"{type(self).__name__}.serialize() must return a str or bytes. Received: {type(value).__name__}"
            )
        return {"py_state": value}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict`'s dict (calls ``deserialize``)."""
        self.deserialize(state["py_state"])


__all__ = ["PythonState"]
