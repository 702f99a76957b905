"""Per-iteration context: seeds of unseeded shuffles, file sharding, options.

Every ``iter(dataset)`` makes one :class:`IterContext`. An unseeded ``shuffle`` draws its seed
from the context's ``seed_base`` (random unless a distributed input sets it, so that every
replica of a strategy shuffles alike), the shuffle's position in the pipeline and how many
times that shuffle has been iterated.

Example:
    >>> ctx = IterContext(seed_base=7)
    >>> ctx.derive_seed("a", 0) == IterContext(seed_base=7).derive_seed("a", 0)
    True
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from typing import Any

from unison.data.options import Options


class IterContext:
    """What one iteration of a pipeline shares between its transformations.

    ``ignore_errors`` is set (``"silent"`` or ``"log"``) in the copy an ``ignore_errors()`` node hands
    to the nodes above it: their ``map``/``filter`` then drop an element whose function raised.

    Args:
        seed_base: base of unseeded shuffles' seeds (``None``: fresh randomness).
        file_shard: ``(num_shards, index)``: file sources read only their share of files.
        options: the pipeline's merged ``tf.data.Options``.
    """

    def __init__(
        self,
        seed_base: int | None = None,
        file_shard: tuple[int, int] | None = None,
        options: Options | None = None,
        peek: bool = False,
    ) -> None:
        self.seed_base = secrets.randbits(63) if seed_base is None else int(seed_base)
        self.file_shard = file_shard
        self.options = options or Options()
        self.peek = peek
        self.ignore_errors = ""
        self._nodes: dict[int, int] = {}

    def drops(self, exc: BaseException, where: str) -> bool:
        """Whether ``exc``, raised by a user function of ``where``, drops its element (``ignore_errors``)."""
        if not self.ignore_errors:
            return False
        if self.ignore_errors == "log":
            logging.getLogger("unison.data").warning(
                "ignore_errors: dropped an element whose %s raised %s: %s", where, type(exc).__name__, exc
            )
        return True

    def node_index(self, node: Any) -> int:
        """A stable number for a pipeline node within this iteration (first-visit order)."""
        return self._nodes.setdefault(id(node), len(self._nodes))

    def derive_seed(self, *parts: Any) -> int:
        text = ":".join(str(p) for p in (self.seed_base, *parts)).encode()
        return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") >> 1
