"""The state that places a ``tf.data`` pipeline at an exact position: seed, pass counters, offset.

A pipeline's next element is fixed by three things: the ``seed_base`` its unseeded shuffles
derive their seeds from, how many iterations each shuffle/sample node has already started
(``reshuffle_each_iteration`` draws a new order per iteration), and how many elements of the
current iteration were consumed. :class:`PipelinePosition` holds them as plain integers (what a
checkpoint stores, loaded with ``weights_only=True``); replaying an iteration with the same
seed and counters reproduces its shuffle buffer and random stream exactly, so skipping
``offset`` elements leaves the pipeline where it was (TF's iterator-checkpoint semantics).

Example:
    >>> import unison as tf
    >>> ds = tf.data.Dataset.range(6).shuffle(6)
    >>> counters(ds)
    [0]
    >>> set_counters(ds, [3], where="example")
    >>> counters(ds)
    [3]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def counting_nodes(dataset: Any) -> list[Any]:
    """The pipeline's nodes that count their iterations (shuffle, sample), in a fixed order."""
    from unison.data.dataset import _counting_nodes

    return _counting_nodes(dataset)


def counters(dataset: Any) -> list[int]:
    """How many iterations each shuffle/sample node of ``dataset`` has started."""
    return [int(n._iterations) for n in counting_nodes(dataset)]


def set_counters(dataset: Any, values: Sequence[int], where: str) -> None:
    """Set the iteration counters (the next iteration of each node draws the saved order).

    Raises:
        ValueError: the saved counters come from a pipeline with another number of
            shuffle/sample steps (``where`` names what was being restored).
    """
    nodes = counting_nodes(dataset)
    if len(values) != len(nodes):
        raise ValueError(
            f"{where}: the saved data position comes from a pipeline with {len(values)} shuffle/sample "
            f"steps; this one has {len(nodes)}. Resume with the same tf.data pipeline that was saved."
        )
    for node, value in zip(nodes, values):
        node._iterations = int(value)


def replica_seed(seed_base: int, replica_id: int) -> int:
    """The seed base of replica ``replica_id``'s own pipeline (``distribute_datasets_from_function``).

    Different per replica (so unseeded shuffles differ, as TF's per-pipeline seeds do) and fixed
    by ``seed_base``, so a restored job replays each replica's pipeline.
    """
    text = f"{int(seed_base)}:replica:{int(replica_id)}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") >> 1


@dataclass(frozen=True)
class PipelinePosition:
    """Where a pipeline is: replay the iteration started with ``counters`` and skip ``offset``.

    Args:
        seed_base: the seed base of the iteration's unseeded shuffles.
        counters: the shuffle/sample nodes' iteration counters when the iteration began.
        offset: elements (batches) of that iteration already consumed.
    """

    seed_base: int
    counters: tuple[int, ...]
    offset: int

    def as_dict(self) -> dict[str, Any]:
        """Plain integers, for a checkpoint."""
        return {"seed_base": int(self.seed_base), "counters": [int(c) for c in self.counters], "offset": self.offset}

    @staticmethod
    def from_dict(state: Any, where: str) -> PipelinePosition | None:
        """The position saved by :meth:`as_dict`, or None when ``state`` holds none."""
        if not isinstance(state, dict) or "counters" not in state:
            return None
        try:
            return PipelinePosition(
                int(state["seed_base"]), tuple(int(c) for c in state["counters"]), int(state["offset"])
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: the saved data position is malformed ({exc}): {state!r:.200}") from exc


__all__ = ["PipelinePosition", "counters", "counting_nodes", "replica_seed", "set_counters"]
