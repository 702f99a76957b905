"""The one ``ReduceOp``: how the values of the replicas are combined, in TF's and Horovod's spellings.

TF writes ``tf.distribute.ReduceOp.SUM`` / ``.MEAN``; Horovod writes ``hvd.Sum``, ``hvd.Average``,
``hvd.Adasum``. They are the same enum here: ``ReduceOp.AVERAGE`` is ``ReduceOp.MEAN`` (an alias),
so an op written in either spelling is accepted by every API that takes one. Strings are
accepted too, in the vocabulary of the API they are passed to (:meth:`ReduceOp.parse`).

Example:
    >>> ReduceOp.AVERAGE is ReduceOp.MEAN
    True
    >>> ReduceOp.parse("sum", ("SUM", "MEAN")), ReduceOp.parse("Average", ("AVERAGE", "SUM"))
    (<ReduceOp.SUM: 'SUM'>, <ReduceOp.MEAN: 'MEAN'>)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence


class ReduceOp(enum.Enum):
    """How replicas' values are combined: a sum, a mean (Horovod's ``Average``) or Adasum."""

    SUM = "SUM"
    MEAN = "MEAN"
    AVERAGE = "MEAN"  # Horovod's name for the mean: the same member
    ADASUM = "ADASUM"

    @classmethod
    def parse(cls, op: ReduceOp | str, names: Sequence[str], expected: str = "") -> ReduceOp:
        """``op`` as a member, where it is one of ``names`` (member names; strings case-insensitive).

        Args:
            op: a member, or its name as a string.
            names: the member names the caller supports, e.g. ``("SUM", "MEAN")``.
            expected: how the error spells the valid choices (default: ``ReduceOp.<name>``).

        Raises:
            ValueError: ``op`` is not one of ``names``, naming the value received.
        """
        allowed = {cls[n] for n in names}
        if isinstance(op, cls) and op in allowed:
            return op
        if isinstance(op, str) and op.upper() in names:
            return cls[op.upper()]
        choices = expected or " or ".join(f"ReduceOp.{n}" for n in names)
        raise ValueError(
            f"Unknown op {op!r}. Expected {choices} (or the strings {', '.join(repr(n.lower()) for n in names)})."
        )


__all__ = ["ReduceOp"]
