"""``tf.distribute.experimental.CentralStorageStrategy``: synchronous training on one host.

TF keeps the variables on one device (the CPU, or the only GPU) and mirrors the computation on
the local GPUs; each step's gradients are reduced onto the central copy and applied once. The
result of a step is the one ``MirroredStrategy`` computes on the same devices (the same summed
gradient applied to the same weights), so unison runs it as a ``MirroredStrategy`` over the
compute devices: one process per device, each holding the variables.

Example:
    >>> import unison as tf
    >>> strategy = tf.distribute.experimental.CentralStorageStrategy()
    >>> strategy.num_replicas_in_sync
    1
"""

from __future__ import annotations

from collections.abc import Sequence

from unison.distribute.mirrored import MirroredStrategy


class CentralStorageStrategy(MirroredStrategy):
    """Synchronous training with variables held centrally in TF; mirrored replicas here.

    Args:
        compute_devices: TF device strings to compute on (default: every GPU, else one CPU).
        parameter_device: where TF keeps the variables; accepted (every replica holds them here).
    """

    def __init__(self, compute_devices: Sequence[str] | None = None, parameter_device: str | None = None) -> None:
        if parameter_device is not None and not isinstance(parameter_device, str):
            raise TypeError(
                f"parameter_device must be a device string such as '/cpu:0'. "
                f"Received: parameter_device={parameter_device!r}"
            )
        super().__init__(devices=compute_devices)
        self.parameter_device = parameter_device


__all__ = ["CentralStorageStrategy"]
