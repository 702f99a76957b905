"""``tf.config``: the devices torch sees, in TF's shapes; TF's settings (see also :mod:`.config_options`).

* ``list_physical_devices`` / ``list_logical_devices``: the CPU and every CUDA device torch sees;
  a type it does not have (``"TPU"``) lists nothing, as in TF.
* ``set_logical_device_configuration(cpu, [LogicalDeviceConfiguration()] * n)`` records ``n``
  logical CPUs, which ``list_logical_devices`` then reports. unison places replicas by device
  string, so ``MirroredStrategy(["/cpu:0", "/cpu:1"])`` runs two CPU replicas with or without it.
* ``experimental.set_memory_growth``: recorded for GPUs (a ValueError for the CPU, as in TF);
  torch's caching allocator already takes GPU memory as it is needed (TF's growth behaviour).
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

from unison.ops import config_options as _options
from unison.ops.config_options import (
    experimental_connect_to_cluster,
    experimental_connect_to_host,
    get_soft_device_placement,
    set_soft_device_placement,
)
from unison.ops.determinism import enable_op_determinism


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
    # TF matches the type exactly and lists nothing for a type it does not have ("TPU", "cpu"):
    # TPU-probing programs call list_logical_devices("TPU") and expect [].
    return device_type


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
        raise ValueError(
            "Unrecognized device: set_logical_device_configuration takes a device from "
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
        # TF's error once its runtime is initialised (which torch always is by now).
        raise RuntimeError(
            "Visible devices cannot be modified after being initialized: unison cannot hide devices from a "
            f"running process. Set CUDA_VISIBLE_DEVICES before starting Python instead. Received: {chosen!r:.120}"
        )


def run_functions_eagerly(run_eagerly: bool) -> None:
    """``tf.config.run_functions_eagerly``: a no-op (unison's ``tf.function`` is always eager)."""
    if not isinstance(run_eagerly, bool):
        raise TypeError(f"run_functions_eagerly takes a bool. Received: run_eagerly={run_eagerly!r}")


def functions_run_eagerly() -> bool:
    """Always ``True``."""
    return True


# Memory growth per physical device, as set (TF answers only for devices it was set on).
_MEMORY_GROWTH: dict[str, bool] = {}


def _set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Record it: torch's caching allocator takes GPU memory on demand already (growth is how it works)."""
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"set_memory_growth takes a device from list_physical_devices(). Received: {device!r:.80}")
    if device.device_type != "GPU":
        raise ValueError(
            f"Cannot set memory growth on non-GPU devices: memory growth is a GPU allocator setting. "
            f"Received: device={device!r}"
        )
    _MEMORY_GROWTH[device.name] = bool(enable)


def _get_memory_growth(device: PhysicalDevice) -> bool:
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"get_memory_growth takes a device from list_physical_devices(). Received: {device!r:.80}")
    return _MEMORY_GROWTH.get(device.name, device.device_type == "GPU")


experimental = types.SimpleNamespace(
    set_memory_growth=_set_memory_growth,
    get_memory_growth=_get_memory_growth,
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    set_virtual_device_configuration=set_logical_device_configuration,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    enable_op_determinism=enable_op_determinism,
    set_visible_devices=set_visible_devices,
    get_visible_devices=get_visible_devices,
    get_virtual_device_configuration=get_logical_device_configuration,
    ClusterDeviceFilters=_options.ClusterDeviceFilters,
    enable_mlir_bridge=_options.enable_mlir_bridge,
    disable_mlir_bridge=_options.disable_mlir_bridge,
    enable_tensor_float_32_execution=_options.enable_tensor_float_32_execution,
    tensor_float_32_execution_enabled=_options.tensor_float_32_execution_enabled,
    get_device_details=_options.get_device_details,
    get_device_policy=_options.get_device_policy,
    set_device_policy=_options.set_device_policy,
    get_synchronous_execution=_options.get_synchronous_execution,
    set_synchronous_execution=_options.set_synchronous_execution,
    get_memory_info=_options.get_memory_info,
    get_memory_usage=_options.get_memory_usage,
    reset_memory_stats=_options.reset_memory_stats,
)
optimizer = types.SimpleNamespace(
    get_jit=_options.get_jit,
    set_jit=_options.set_jit,
    get_experimental_options=_options.get_experimental_options,
    set_experimental_options=_options.set_experimental_options,
)
# TF's older spellings (deprecated there, still in its public API).
experimental_run_functions_eagerly = run_functions_eagerly


def experimental_functions_run_eagerly() -> bool:
    """TF's older spelling of :func:`functions_run_eagerly`."""
    return functions_run_eagerly()


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
    "experimental_connect_to_cluster",
    "experimental_connect_to_host",
    "experimental_functions_run_eagerly",
    "experimental_run_functions_eagerly",
    "functions_run_eagerly",
    "get_soft_device_placement",
    "get_logical_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "optimizer",
    "run_functions_eagerly",
    "set_logical_device_configuration",
    "set_soft_device_placement",
    "set_visible_devices",
    "threading",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.config", name)
