"""``tf.train.TrackableView``: the object graph a ``tf.train.Checkpoint`` saves, walked from a root.

``children(obj)`` gives an object's direct dependencies by name, as TF names them: a
``Checkpoint``'s keyword arguments, a ``tf.Module``'s variables, sub-modules and list/tuple/dict
attributes (plain Python values are not tracked), a list's or tuple's tracked items by index and a
dict's by key. ``descendants()`` lists every object reachable from the root once, breadth first.
Keras layers and models are not walked (they have no children here).

Example:
    >>> import unison as tf
    >>> v = tf.Variable(1.0)
    >>> ckpt = tf.train.Checkpoint(step=v)
    >>> view = tf.train.TrackableView(ckpt)
    >>> list(view.children(view.root)) == ["step"], len(view.descendants())
    (True, 2)
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from unison.core.module import Module, _attributes

__all__ = ["TrackableView"]


def _tracked(value: Any) -> bool:
    from unison.train.checkpoint import Checkpoint

    return isinstance(value, (torch.nn.Parameter, Module, Checkpoint, list, tuple, dict))


class TrackableView:
    """``tf.train.TrackableView(root)``: ``children`` and ``descendants`` of a checkpointable object."""

    def __init__(self, root: Any) -> None:
        # TF keeps a weak reference: the view does not keep its root alive
        try:
            self._ref: Any = weakref.ref(root)
        except TypeError:
            self._ref = lambda: root

    @property
    def root(self) -> Any:
        """The object the view starts from (an ``AssertionError`` once it is gone, as in TF)."""
        root = self._ref()
        assert root is not None, "TrackableView's root was garbage-collected: keep a reference to it."
        return root

    @classmethod
    def children(cls, obj: Any, save_type: Any = None, **kwargs: Any) -> dict[str, Any]:
        """``obj``'s direct dependencies, by name."""
        from unison.train.checkpoint import Checkpoint

        if isinstance(obj, Checkpoint):
            return dict(obj._objects)
        if isinstance(obj, Module):
            return {name: value for name, value in _attributes(obj) if _tracked(value)}
        if isinstance(obj, dict):
            return {str(k): v for k, v in obj.items() if _tracked(v)}
        if isinstance(obj, (list, tuple)):
            return {str(i): v for i, v in enumerate(obj) if _tracked(v)}
        return {}

    def descendants(self) -> list[Any]:
        """Every object reachable from the root (the root first), each once, breadth first."""
        root = self.root
        order, seen = [root], {id(root)}
        i = 0
        while i < len(order):
            for child in self.children(order[i]).values():
                if id(child) not in seen:
                    seen.add(id(child))
                    order.append(child)
            i += 1
        return order
