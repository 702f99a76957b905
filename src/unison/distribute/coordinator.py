"""``tf.distribute.coordinator``: ``ClusterCoordinator`` and the values it returns (TF 2.12+ name)."""

from unison.distribute.parameter_server.coordinator import (
    ClusterCoordinator,
    PerWorkerValues,
    RemoteValue,
)

__all__ = ["ClusterCoordinator", "PerWorkerValues", "RemoteValue"]
