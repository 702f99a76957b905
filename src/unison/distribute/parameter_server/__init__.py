"""Parameter-server training: ``ParameterServerStrategy``, ``ClusterCoordinator`` and ``Server``.

See :mod:`~unison.distribute.parameter_server.strategy` (variables and their placement),
:mod:`~unison.distribute.parameter_server.coordinator` (scheduling and failures) and
:mod:`~unison.distribute.parameter_server.server` (the ``ps``/``worker`` processes).

The names load on first use (PEP 562): the stack needs grpc and cloudpickle, which a program
that never builds a parameter-server cluster should not pay for at ``import unison``.
"""

from __future__ import annotations

import importlib
from typing import Any

from unison.errors import (
    CancelledError as CancelledError,
)
from unison.errors import (
    DatasetExhaustedError as DatasetExhaustedError,
)
from unison.errors import (
    FunctionError as FunctionError,
)
from unison.errors import (
    NoWorkerAvailableError as NoWorkerAvailableError,
)
from unison.errors import (
    ParameterServerUnavailableError as ParameterServerUnavailableError,
)

_HOMES = {
    "ClusterCoordinator": "coordinator",
    "PerWorkerDataset": "coordinator",
    "PerWorkerIterator": "coordinator",
    "PerWorkerValues": "coordinator",
    "RemoteValue": "coordinator",
    "Server": "server",
    "ParameterServerStrategy": "strategy",
}

__all__ = sorted(
    [
        *_HOMES,
        "CancelledError",
        "DatasetExhaustedError",
        "FunctionError",
        "NoWorkerAvailableError",
        "ParameterServerUnavailableError",
    ]
)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
