"""``tf.distribute.experimental.partitioners``: how ParameterServerStrategy shards variables."""

from unison.distribute.parameter_server.partitioners import (
    FixedShardsPartitioner,
    MaxSizePartitioner,
    MinSizePartitioner,
    Partitioner,
)

__all__ = ["FixedShardsPartitioner", "MaxSizePartitioner", "MinSizePartitioner", "Partitioner"]
