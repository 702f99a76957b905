"""``tf.distribute.experimental.coordinator``: ``ClusterCoordinator`` and the values it returns."""

from unison.distribute.parameter_server.coordinator import (
    ClusterCoordinator,
    PerWorkerValues,
    RemoteValue,
)

__all__ = ["ClusterCoordinator", "PerWorkerValues", "RemoteValue"]
