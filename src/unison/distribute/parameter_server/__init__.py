"""Parameter-server training: ``ParameterServerStrategy``, ``ClusterCoordinator`` and ``Server``.

See :mod:`~unison.distribute.parameter_server.strategy` (variables and their placement),
:mod:`~unison.distribute.parameter_server.coordinator` (scheduling and failures) and
:mod:`~unison.distribute.parameter_server.server` (the ``ps``/``worker`` processes).
"""

from unison.distribute.parameter_server.coordinator import (
    CancelledError,
    ClusterCoordinator,
    FunctionError,
    NoWorkerAvailableError,
    PerWorkerDataset,
    PerWorkerIterator,
    PerWorkerValues,
    RemoteValue,
)
from unison.distribute.parameter_server.server import Server
from unison.distribute.parameter_server.strategy import ParameterServerStrategy
from unison.distribute.parameter_server.worker import DatasetExhaustedError, ParameterServerUnavailableError

__all__ = ["CancelledError", "ClusterCoordinator", "DatasetExhaustedError", "FunctionError",
           "NoWorkerAvailableError", "ParameterServerStrategy", "ParameterServerUnavailableError",
           "PerWorkerDataset", "PerWorkerIterator", "PerWorkerValues", "RemoteValue", "Server"]
