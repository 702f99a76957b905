"""``tf.distribute.coordinator``: ``ClusterCoordinator`` and the values it returns (TF 2.12+ name)."""

from unison.distribute.parameter_server.coordinator import (
    ClusterCoordinator,
    PerWorkerValues,
    RemoteValue,
)
from unison.distribute.strategy import get_strategy
from unison.errors import (
    CancelledError,
    DatasetExhaustedError,
    FunctionError,
    NoWorkerAvailableError,
    ParameterServerUnavailableError,
)

# TF 2.12+'s name for the values create_per_worker_dataset/create_per_worker_variables return.
PerWorkerValue = PerWorkerValues


def experimental_get_current_worker_index() -> int:
    """The index of the worker running this code (TF's ``coordinator.experimental_get_current_worker_index``).

    Only inside a function given to ``ClusterCoordinator.schedule`` or a ``dataset_fn`` given to
    ``create_per_worker_dataset``: those run on a worker.

    Raises:
        RuntimeError: anywhere else (the coordinator itself is no worker).
    """
    index = getattr(get_strategy(), "worker_index", None)
    if index is None:
        raise RuntimeError(
            "Cannot retrieve the worker index: experimental_get_current_worker_index works only on a worker, "
            "inside a function passed to ClusterCoordinator.schedule or a dataset_fn passed to "
            "ClusterCoordinator.create_per_worker_dataset."
        )
    return int(index)


__all__ = [
    "CancelledError",
    "ClusterCoordinator",
    "DatasetExhaustedError",
    "FunctionError",
    "NoWorkerAvailableError",
    "ParameterServerUnavailableError",
    "PerWorkerValue",
    "PerWorkerValues",
    "RemoteValue",
    "experimental_get_current_worker_index",
]
