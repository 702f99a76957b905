"""One step's data on this replica: :class:`Batch`, and how an element becomes one."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from unison.distribute.input import to_tensor


@dataclass
class Batch:
    """This replica's rows of one global batch (``global_size=None``: sum it across replicas)."""

    x: Any
    y: Any
    sample_weight: torch.Tensor | None
    global_size: int | None


def is_structure(a: Any) -> bool:
    """A list or dict of arrays (the inputs or targets of a multi-input/-output model)."""
    values: list[Any] = list(a.values()) if isinstance(a, dict) else a if isinstance(a, list) else []
    return bool(values) and all(isinstance(v, (np.ndarray, torch.Tensor)) or is_structure(v) for v in values)


def as_batch(element: Any, device: torch.device | None = None) -> Batch:
    """One element of a dataset, ``x``, ``(x, y)``, ``(x, y, sample_weight)`` or a dict, as a Batch."""
    return _unpack(to_tensor(element, device or torch.device("cpu")), None)


def _unpack(batch: Any, global_size: int | None) -> Batch:
    if isinstance(batch, (tuple, list)):
        if len(batch) == 2:
            return Batch(batch[0], batch[1], None, global_size)
        if len(batch) == 3:
            return Batch(batch[0], batch[1], batch[2], global_size)
        if len(batch) == 1:
            return Batch(batch[0], None, None, global_size)
    if isinstance(batch, dict) and "x" in batch:
        return Batch(batch["x"], batch.get("y"), batch.get("sample_weight"), global_size)
    return Batch(batch, None, None, global_size)


def ran_out_of_data(replica_id: int = 0) -> None:
    """Keras 3's warning when ``steps_per_epoch`` asks for more batches than the data holds.

    The epoch ends there and the next one starts a new pass over the data (Keras 3's
    ``EpochIterator``); only replica 0 warns, as only the chief prints.
    """
    if replica_id == 0:
        warnings.warn(
            "Your input ran out of data; interrupting training. Make sure that your dataset or generator "
            "can generate at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` "
            "function when building your dataset.",
            UserWarning,
            stacklevel=4,
        )


def _floatx(t: Any) -> Any:
    # Keras computes in float32 (floatx): float64 inputs (x / 255.0 in numpy) are cast, as for arrays.
    return t.float() if isinstance(t, torch.Tensor) and t.dtype == torch.float64 else t
