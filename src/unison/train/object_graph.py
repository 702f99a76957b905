"""The object graph of a ``tf.train.Checkpoint`` file, numbered as TF numbers it.

TF stores with every checkpoint a ``TrackableObjectGraph``: node 0 is the root, each node lists its
children by local name, and the nodes are numbered breadth first. A ``Checkpoint``'s own objects
come in name order, then ``save_counter`` (once a ``save`` has made it); a module's variables and
sub-modules in the order they were set; a list's items by index. With a positional ``root``
(``Checkpoint(model)``), the root object *is* node 0: its children are node 0's, it links to
itself as ``root``, and its values' keys have no ``root/`` in front.

A leaf node holds one saved value; its checkpoint key is its path plus
``/.ATTRIBUTES/VARIABLE_VALUE`` (``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``). The graph
is read from unison's file (the saved ``state_dict``s and entries), so ``tf.train.list_variables``,
``tf.train.CheckpointView`` and the sharding callbacks all see the same keys in the same order.

Example:
    >>> import torch
    >>> from unison.train.object_graph import object_graph
    >>> payload = {"save_counter": 0, "objects": {"w": {"kind": "tensor", "state": torch.ones(2)}}}
    >>> [(n.path, n.children, n.key) for n in object_graph(payload)]
    [('', {'w': 1}, None), ('w', {}, 'w/.ATTRIBUTES/VARIABLE_VALUE')]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["GRAPH_KEY", "VALUE_SUFFIX", "Node", "object_graph"]

VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"

# What a node's children come from: ("objects", {name: entry}, sort), ("entry", entry),
# ("value", holder, slot) or ("dotted", a dict, the key prefix split on dots).
_Source = tuple[Any, ...]


@dataclass
class Node:
    """One object of the graph: its path from the root, its children's ids and, for a leaf, its value."""

    path: str
    children: dict[str, int] = field(default_factory=dict)
    holder: Any = None  # the container holding this node's saved value (a leaf), and where in it
    slot: Any = None
    dtype: torch.dtype | None = None  # for a saved Python number: the dtype TF gives it

    @property
    def key(self) -> str | None:
        """The checkpoint key of the node's value (None for an object that holds no value itself)."""
        if self.holder is None:
            return None
        return (self.path + VALUE_SUFFIX) if self.path else VALUE_SUFFIX.lstrip("/")

    def tensor(self) -> torch.Tensor:
        """The saved value as a tensor (a saved Python number becomes a scalar)."""
        value = self.holder[self.slot]
        return value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=self.dtype)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _dotted_children(state: dict[Any, Any], prefix: tuple[str, ...]) -> Iterator[tuple[str, _Source]]:
    """Children of a ``state_dict``-like dict below ``prefix``: its keys split on dots, in key order."""
    seen: set[str] = set()
    n = len(prefix)
    for key in state:
        parts = tuple(str(key).split("."))
        if len(parts) <= n or parts[:n] != prefix or parts[n] in seen:
            continue
        seen.add(parts[n])
        if len(parts) == n + 1:
            yield parts[n], ("value", state, key)
        else:
            yield parts[n], ("dotted", state, parts[: n + 1])


def _value_children(value: Any) -> Iterator[tuple[str, _Source]]:
    if isinstance(value, dict):
        yield from _dotted_children(value, ())
    elif isinstance(value, (list, tuple)):
        for i in range(len(value)):
            yield str(i), ("value", value, i)


def _entry_children(entry: dict[str, Any]) -> Iterator[tuple[str, _Source]]:
    kind, state = entry["kind"], entry["state"]
    if kind == "checkpoint":
        yield from _children(("objects", state, True))
    elif kind in ("list", "dict"):
        items = enumerate(state) if kind == "list" else state.items()
        for name, item in items:
            yield str(name), ("entry", item)
    elif kind == "keras_optimizer":
        yield from _value_children(state.get("torch") or {})
        if state.get("learning_rate") is not None:
            yield "learning_rate", ("value", state, "learning_rate", torch.float32)
    elif kind == "state_dict":
        yield from _value_children(state)


def _children(source: _Source) -> Iterator[tuple[str, _Source]]:
    tag = source[0]
    if tag == "objects":
        objects: dict[str, Any] = source[1]
        for name in sorted(objects) if source[2] else objects:
            yield name, ("entry", objects[name])
    elif tag == "entry":
        yield from _entry_children(source[1])
    elif tag == "dotted":
        yield from _dotted_children(source[1], source[2])
    else:
        yield from _value_children(source[1][source[2]])


def _leaf(source: _Source) -> tuple[Any, Any, torch.dtype | None] | None:
    """Where a leaf's value is: ``(holder, slot, dtype)``; None for a node that holds no value."""
    if source[0] == "entry" and source[1]["kind"] == "tensor":
        return source[1], "state", None
    if source[0] == "value":
        value = source[1][source[2]]
        if isinstance(value, torch.Tensor) or _is_number(value):
            return source[1], source[2], source[3] if len(source) > 3 else None
    return None


def object_graph(payload: dict[str, Any]) -> list[Node]:
    """The nodes of a checkpoint file's payload (``{"objects", "save_counter"}``), breadth first."""
    objects: dict[str, Any] = payload["objects"]
    counter = ("value", payload, "save_counter", torch.int64) if int(payload.get("save_counter", 0)) else None
    # node 0's children, by name
    top: list[tuple[str, _Source | None]] = []
    if "root" in objects:
        top += [*_children(("entry", objects["root"])), ("root", None)]  # None: the root's link to itself
    top += [(n, s) for n, s in _children(("objects", objects, True)) if n != "root"]
    if counter is not None:
        top.append(("save_counter", counter))
    nodes = [Node(path="")]
    queue: deque[tuple[int, list[tuple[str, _Source | None]]]] = deque([(0, top)])
    while queue:
        node_id, children = queue.popleft()
        parent = nodes[node_id]
        for name, source in children:
            if source is None:
                parent.children[name] = 0
                continue
            child_id = len(nodes)
            leaf = _leaf(source)
            child = Node(path=f"{parent.path}/{name}" if parent.path else name)
            if leaf is not None:
                child.holder, child.slot, child.dtype = leaf
            nodes.append(child)
            parent.children[name] = child_id
            if leaf is None:
                queue.append((child_id, list(_children(source))))
    return nodes
