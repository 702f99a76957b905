"""``tf.config``: the devices torch sees, in TF's shapes; TF's memory settings as documented no-ops.

* ``list_physical_devices`` / ``list_logical_devices``: the CPU and every CUDA device torch sees.
* ``set_logical_device_configuration(cpu, [LogicalDeviceConfiguration()] * n)`` records ``n``
  logical CPUs, which ``list_logical_devices`` then reports. unison places replicas by device
  string, so ``MirroredStrategy(["/cpu:0", "/cpu:1"])`` runs two CPU replicas with or without it.
* ``experimental.set_memory_growth``: a no-op; torch's caching allocator already takes GPU memory
  as it is needed (TF's behaviour with growth enabled).
* ``run_functions_eagerly``: a no-op; ``tf.function`` always runs eagerly in unison.

Example:
    >>> import unison as tf
    >>> [d.device_type for d in tf.config.list_physical_devices("CPU")]
    ['CPU']
"""

from __future__ import annotations

import types
from typing import Any, NamedTuple

import torch


class PhysicalDevice(NamedTuple):
    """``tf.config.PhysicalDevice``."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """``tf.config.LogicalDevice``."""

    name: str
    device_type: str


class LogicalDeviceConfiguration:
    """``tf.config.LogicalDeviceConfiguration`` (``memory_limit`` is recorded, not enforced)."""

    def __init__(
        self,
        memory_limit: int | None = None,
        experimental_priority: int | None = None,
        experimental_device_ordinal: int | None = None,
    ) -> None:
        self.memory_limit = memory_limit

    def __repr__(self) -> str:
        return f"LogicalDeviceConfiguration(memory_limit={self.memory_limit})"


# TF keeps one device configuration per process (its eager context); so does this table:
# physical device name -> how many logical devices it was split into.
_LOGICAL_SPLITS: dict[str, int] = {}
_TYPES = ("CPU", "GPU")


def _check_type(device_type: str | None) -> str | None:
    if device_type is None:
        return None
    upper = device_type.upper()
    if upper not in _TYPES:
        raise ValueError(f"Unknown device_type {device_type!r}. Expected 'CPU' or 'GPU' (or None for all).")
    return upper


def _gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """``tf.config.list_physical_devices``: one CPU, and each GPU torch sees."""
    wanted = _check_type(device_type)
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(_gpu_count())]
    return [d for d in devices if wanted is None or d.device_type == wanted]


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """``tf.config.list_logical_devices``: physical devices, split as configured."""
    out = []
    for phys in list_physical_devices(device_type):
        count = _LOGICAL_SPLITS.get(phys.name, 1)
        first = int(phys.name.rsplit(":", 1)[1])
        out += [LogicalDevice(f"/device:{phys.device_type}:{first + k}", phys.device_type) for k in range(count)]
    return out


def set_logical_device_configuration(
    device: PhysicalDevice, logical_devices: list[LogicalDeviceConfiguration] | None
) -> None:
    """``tf.config.set_logical_device_configuration``: split ``device`` into logical devices."""
    if not isinstance(device, PhysicalDevice):
        raise TypeError(
            "set_logical_device_configuration takes a device from "
            f"tf.config.list_physical_devices(). Received: {device!r:.80}"
        )
    if logical_devices is None:
        _LOGICAL_SPLITS.pop(device.name, None)
        return
    if not logical_devices:
        raise ValueError("logical_devices must hold at least one LogicalDeviceConfiguration. Received: []")
    _LOGICAL_SPLITS[device.name] = len(logical_devices)


def get_logical_device_configuration(device: PhysicalDevice) -> list[LogicalDeviceConfiguration] | None:
    """``tf.config.get_logical_device_configuration``."""
    count = _LOGICAL_SPLITS.get(device.name)
    return None if count is None else [LogicalDeviceConfiguration() for _ in range(count)]


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """``tf.config.get_visible_devices``: every physical device (use CUDA_VISIBLE_DEVICES to hide)."""
    return list_physical_devices(device_type)


def set_visible_devices(devices: Any, device_type: str | None = None) -> None:
    """``tf.config.set_visible_devices``: only "all devices" is possible once torch has started."""
    chosen = list(devices) if isinstance(devices, (list, tuple)) else [devices]
    if sorted(d.name for d in chosen) != sorted(d.name for d in list_physical_devices(device_type)):
        raise ValueError(
            "unison cannot hide devices from a running process. Set CUDA_VISIBLE_DEVICES "
            f"before starting Python instead. Received: {chosen!r:.120}"
        )


def run_functions_eagerly(run_eagerly: bool) -> None:
    """``tf.config.run_functions_eagerly``: a no-op (unison's ``tf.function`` is always eager)."""


def functions_run_eagerly() -> bool:
    """Always ``True``."""
    return True


def _set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """A no-op: torch's caching allocator takes GPU memory on demand already."""


def _get_memory_growth(device: PhysicalDevice) -> bool:
    return True


def _enable_op_determinism() -> None:
    torch.use_deterministic_algorithms(True)


experimental = types.SimpleNamespace(
    set_memory_growth=_set_memory_growth,
    get_memory_growth=_get_memory_growth,
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    set_virtual_device_configuration=set_logical_device_configuration,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    enable_op_determinism=_enable_op_determinism,
    set_visible_devices=set_visible_devices,
)
threading = types.SimpleNamespace(
    set_intra_op_parallelism_threads=lambda n: torch.set_num_threads(n) if n > 0 else None,
    get_intra_op_parallelism_threads=torch.get_num_threads,
    set_inter_op_parallelism_threads=lambda n: None,
    get_inter_op_parallelism_threads=torch.get_num_interop_threads,
)


__all__ = [
    "LogicalDevice",
    "LogicalDeviceConfiguration",
    "PhysicalDevice",
    "experimental",
    "functions_run_eagerly",
    "get_logical_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "run_functions_eagerly",
    "set_logical_device_configuration",
    "set_visible_devices",
    "threading",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.config", name)
