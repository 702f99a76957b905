"""``tf.data.experimental``: the names TF programs still reach there.

Example:
    >>> AUTOTUNE == -1 and AutoShardPolicy.DATA.name == "DATA"
    True
"""

from typing import Any

from unison.data.options import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    AutoShardPolicy,
    DistributeOptions,
)


def cardinality(dataset: Any) -> Any:
    """``tf.data.experimental.cardinality(ds)``: same as ``ds.cardinality()``."""
    return dataset.cardinality()


def assert_cardinality(expected_cardinality: int) -> Any:
    """A transformation (for ``ds.apply``) that checks the dataset has ``expected_cardinality`` elements."""

    def apply(dataset: Any) -> Any:
        found = int(dataset.cardinality())
        if found >= 0 and found != expected_cardinality:
            raise ValueError(
                f"Input dataset was expected to contain {expected_cardinality} elements but contained {found}."
            )
        return dataset

    return apply


__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "DistributeOptions",
    "assert_cardinality",
    "cardinality",
]
