"""``tf.train.CheckpointView``: the object graph of a saved checkpoint, by node id.

``children(node_id)`` gives a node's children as ``{name: node_id}``, ``descendants()`` every node
id reachable from the root (0) breadth first, and ``match(obj)`` pairs the checkpoint's nodes with
the objects of a live object graph that sit at the same names (TF's way to compare a module with
a checkpoint). The ids are TF's (see :mod:`unison.train.object_graph`): a checkpoint written by
unison and the same program's checkpoint written by TF number their objects alike.

Example:
    >>> import tempfile, unison as tf
    >>> path = tf.train.Checkpoint(a=tf.Variable(1.0), b=[tf.Variable(2.0)]).write(tempfile.mkdtemp() + "/c")
    >>> view = tf.train.CheckpointView(path)
    >>> view.children(0), view.descendants()
    ({'a': 1, 'b': 2}, [0, 1, 2, 3])
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any

from unison.train.object_graph import object_graph

__all__ = ["CheckpointView"]


class CheckpointView:
    """``tf.train.CheckpointView(save_path)``: read a checkpoint's object graph.

    Raises:
        NotFoundError: no checkpoint at ``save_path`` (as TF's reader raises).
    """

    def __init__(self, save_path: str | os.PathLike[str]) -> None:
        from unison.errors import NotFoundError
        from unison.train.checkpoint import SUFFIX, _read_payload

        path = os.fspath(save_path)
        if not os.path.exists(path + SUFFIX) and not os.path.isfile(path):
            raise NotFoundError(
                None,
                None,
                f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {path}. "
                "Pass the path save()/write() returned, or tf.train.latest_checkpoint(directory).",
            )
        self._nodes = object_graph(_read_payload(path))

    def children(self, node_id: int) -> dict[str, int]:
        """The children of node ``node_id`` by name (an ``IndexError`` for an id the graph lacks, as TF)."""
        return dict(self._nodes[node_id].children)

    def descendants(self) -> list[int]:
        """Every node id reachable from the root, the root first, breadth first."""
        return list(self._descendants_with_paths())

    def _descendants_with_paths(self) -> dict[int, str]:
        paths = {0: "root"}
        queue = deque([0])
        while queue:
            node_id = queue.popleft()
            for name, child in self._nodes[node_id].children.items():
                if child not in paths:
                    paths[child] = f"{paths[node_id]}.{name}"
                    queue.append(child)
        return paths

    def match(self, obj: Any) -> dict[int, Any]:
        """Node id -> the object of ``obj``'s graph at the same path (node 0 is ``obj``)."""
        from unison.train.checkpoint import _kind
        from unison.train.trackable_view import TrackableView

        try:
            _kind(obj)
        except ValueError:
            raise ValueError(f"Expected a Trackable, got {obj!r:.80} of type {type(obj)}.") from None
        matched: dict[int, Any] = {0: obj}
        queue = deque([(0, obj)])
        visited: set[int] = set()
        while queue:
            node_id, current = queue.popleft()
            live = TrackableView.children(current)
            for name, child in self.children(node_id).items():
                if child in visited or child == 0 or name not in live:
                    continue
                if child not in matched:
                    matched[child] = live[name]
                    queue.append((child, live[name]))
            visited.add(node_id)
        return matched
