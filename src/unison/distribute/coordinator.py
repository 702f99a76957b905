"""``tf.distribute.coordinator``: ``ClusterCoordinator`` and the values it returns (TF 2.12+ name)."""

from unison.distribute.parameter_server.coordinator import (
    ClusterCoordinator,
    PerWorkerValues,
    RemoteValue,
)
from unison.errors import (
    CancelledError,
    DatasetExhaustedError,
    FunctionError,
    NoWorkerAvailableError,
    ParameterServerUnavailableError,
)

__all__ = [
    "CancelledError",
    "ClusterCoordinator",
    "DatasetExhaustedError",
    "FunctionError",
    "NoWorkerAvailableError",
    "ParameterServerUnavailableError",
    "PerWorkerValues",
    "RemoteValue",
]
