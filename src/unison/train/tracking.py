"""The object graph of ``tf.train.Checkpoint``: containers, paths and deferred values.

TF matches a checkpoint to objects by their *path* from the root (``net/l1/kernel``), whatever
the objects are: a value saved from a Keras layer restores into a hand-made
``Checkpoint(l1=Checkpoint(kernel=v))``, and a value whose object does not exist yet waits until
the attribute that holds it is set (deferred restoration). Here:

* every saved entry can be seen as a tree (:func:`as_tree`): a module's ``state_dict`` key
  ``l1.kernel`` is the path ``l1`` -> ``kernel``;
* a tree restores into a module by turning it back into ``state_dict`` keys (:func:`as_state_dict`);
* lists and dicts assigned to a ``Checkpoint`` attribute are tracked (:class:`ListWrapper`,
  :class:`DictWrapper`): items appended later get the values waiting for them.

Example:
    >>> from unison.train.tracking import ListWrapper
    >>> ListWrapper([])
    ListWrapper([])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, SupportsIndex

import torch

Entry = dict[str, Any]  # {"kind": ..., "state": ...} as written in a checkpoint file


def as_tree(entry: Entry) -> Entry:
    """``entry`` as a ``checkpoint`` entry of nested paths (a module's state_dict split on dots)."""
    kind, state = entry["kind"], entry["state"]
    if kind in ("checkpoint", "tensor"):
        return entry
    if kind == "list":
        return {"kind": "checkpoint", "state": {str(i): e for i, e in enumerate(state)}}
    if kind == "dict":
        return {"kind": "checkpoint", "state": dict(state)}
    if kind == "state_dict" and isinstance(state, dict):
        root: dict[str, Any] = {}
        for key, value in state.items():
            if not isinstance(value, torch.Tensor):
                continue
            node = root
            *parents, leaf = str(key).split(".")
            for part in parents:
                child = node.setdefault(part, {"kind": "checkpoint", "state": {}})
                node = child["state"]
            node[leaf] = {"kind": "tensor", "state": value}
        return {"kind": "checkpoint", "state": root}
    return {"kind": "checkpoint", "state": {}}


def as_state_dict(entry: Entry, prefix: str = "") -> dict[str, torch.Tensor]:
    """A path tree (or a saved ``state_dict``) as flat ``state_dict`` keys."""
    if entry["kind"] == "state_dict":
        return {prefix + k: v for k, v in entry["state"].items()}
    if entry["kind"] == "tensor":
        return {prefix.rstrip("."): entry["state"]}
    out: dict[str, torch.Tensor] = {}
    for name, child in as_tree(entry)["state"].items():
        out.update(as_state_dict(child, f"{prefix}{name}."))
    return out


class ListWrapper(list):  # type: ignore[type-arg]
    """A list attribute of a ``Checkpoint`` (TF's ``ListWrapper``): items added later are restored.

    It is an ordinary list otherwise; ``on_add(self, index, value)`` gives an appended or assigned
    item its waiting checkpoint value.
    """

    def __init__(self, items: Iterable[Any] = (), on_add: Callable[[Any, str, Any], None] | None = None) -> None:
        super().__init__(items)
        self._on_add = on_add
        self._pending: dict[str, Any] = {}  # values of a restore waiting for their item

    def _added(self, index: int, value: Any) -> None:
        if self._on_add is not None:
            self._on_add(self, str(index), value)

    def append(self, value: Any) -> None:
        super().append(value)
        self._added(len(self) - 1, value)

    def extend(self, values: Iterable[Any]) -> None:
        for value in values:
            self.append(value)

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        if isinstance(index, SupportsIndex):
            i = index.__index__()
            self._added(i if i >= 0 else len(self) + i, value)

    def __repr__(self) -> str:
        return f"ListWrapper({list.__repr__(self)})"


class DictWrapper(dict):  # type: ignore[type-arg]
    """A dict attribute of a ``Checkpoint`` (TF's ``_DictWrapper``): items set later are restored."""

    def __init__(self, items: Any = (), on_add: Callable[[Any, str, Any], None] | None = None) -> None:
        super().__init__(items)
        self._on_add = on_add
        self._pending: dict[str, Any] = {}  # values of a restore waiting for their item

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if self._on_add is not None:
            self._on_add(self, str(key), value)

    def __repr__(self) -> str:
        return f"DictWrapper({dict.__repr__(self)})"
