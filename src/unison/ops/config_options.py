"""``tf.config``'s runtime settings: placement, graph-optimizer options, memory statistics, TF32.

TF keeps these settings in its eager context, one per process; unison keeps them in this module
(one per process too) and applies what has a torch counterpart:

* ``experimental.enable_tensor_float_32_execution`` sets torch's TF32 switches for matmul and cuDNN
  (``torch.backends.cuda.matmul.allow_tf32``, ``torch.backends.cudnn.allow_tf32``).
* ``experimental.get_memory_info``/``reset_memory_stats``/``get_memory_usage`` read torch's CUDA
  allocator statistics; a CPU device reports zeros, as TF's CPU allocator does without tracking.
* ``optimizer.set_jit``/``set_experimental_options`` record TF's graph-optimizer settings and
  report them back as TF does; unison runs ops eagerly, so there is no graph for them to change.
* ``experimental_connect_to_cluster`` validates and records the cluster. TF makes remote devices
  visible to eager ops; unison's ops always run in this process, and its strategies
  (``MultiWorkerMirroredStrategy``, ``ParameterServerStrategy``) connect to the tasks themselves.

Example:
    >>> import unison as tf
    >>> tf.config.optimizer.set_jit(True)
    >>> tf.config.optimizer.get_jit()
    'autoclustering'
    >>> tf.config.optimizer.set_jit(False)
"""

from __future__ import annotations

import copy
from typing import Any

import torch

_STATE: dict[str, Any] = {
    "soft_device_placement": True,
    "jit": "",
    "device_policy": "silent",
    "synchronous_execution": True,
    "mlir_bridge": None,
    "cluster": None,
}
_OPTIMIZER_DEFAULTS = {"disable_model_pruning": False, "disable_meta_optimizer": False}
_OPTIMIZER_OPTIONS: dict[str, Any] = {}
# TF's rewriter options (RewriterConfig fields set_experimental_options accepts).
_OPTIMIZER_KEYS = (
    "layout_optimizer",
    "constant_folding",
    "shape_optimization",
    "remapping",
    "arithmetic_optimization",
    "dependency_optimization",
    "loop_optimization",
    "function_optimization",
    "debug_stripper",
    "disable_model_pruning",
    "scoped_allocator_optimization",
    "pin_to_host_optimization",
    "implementation_selector",
    "auto_mixed_precision",
    "disable_meta_optimizer",
    "min_graph_nodes",
    "auto_parallel",
)
_DEVICE_POLICIES = ("warn", "explicit", "silent", "silent_for_int32")


# --- placement --------------------------------------------------------------------------------
def get_soft_device_placement() -> bool:
    """``tf.config.get_soft_device_placement``: whether an op may fall back to another device."""
    return bool(_STATE["soft_device_placement"])


def set_soft_device_placement(enabled: bool) -> None:
    """``tf.config.set_soft_device_placement``: record the setting (TF's default: True)."""
    _STATE["soft_device_placement"] = bool(enabled)


def get_device_policy() -> str:
    """``tf.config.experimental.get_device_policy``: ``'silent'`` unless set otherwise."""
    return str(_STATE["device_policy"])


def set_device_policy(device_policy: str | None) -> None:
    """``tf.config.experimental.set_device_policy``: one of TF's policies (None: the default)."""
    if device_policy is not None and device_policy not in _DEVICE_POLICIES:
        raise ValueError(
            f"Invalid argument `device_policy`: {device_policy!r}. Expected one of {list(_DEVICE_POLICIES)} or None."
        )
    _STATE["device_policy"] = device_policy or "silent"


def get_synchronous_execution() -> bool:
    """``tf.config.experimental.get_synchronous_execution``."""
    return bool(_STATE["synchronous_execution"])


def set_synchronous_execution(enable: bool) -> None:
    """``tf.config.experimental.set_synchronous_execution``: record it (torch's CUDA ops are queued either way)."""
    _STATE["synchronous_execution"] = bool(enable)


# --- the graph optimizer -------------------------------------------------------------------------
def get_jit() -> str:
    """``tf.config.optimizer.get_jit``: ``'autoclustering'`` once enabled, else ``''``."""
    return str(_STATE["jit"])


def set_jit(enabled: bool | str) -> None:
    """``tf.config.optimizer.set_jit``: ``True``/``'autoclustering'`` enable it, ``False`` disables it."""
    if enabled not in (True, False, "autoclustering"):
        raise ValueError(
            f"tf.config.optimizer.set_jit: `enabled` must be True, False or 'autoclustering'. "
            f"Received: enabled={enabled!r}"
        )
    _STATE["jit"] = "autoclustering" if enabled else ""


def get_experimental_options() -> dict[str, Any]:
    """``tf.config.optimizer.get_experimental_options``: TF's two defaults plus what was set."""
    return {**_OPTIMIZER_OPTIONS, **{k: _OPTIMIZER_OPTIONS.get(k, v) for k, v in _OPTIMIZER_DEFAULTS.items()}}


def set_experimental_options(options: dict[str, Any]) -> None:
    """``tf.config.optimizer.set_experimental_options``: record the rewriter options given."""
    unknown = sorted(set(options) - set(_OPTIMIZER_KEYS))
    if unknown:
        raise ValueError(
            f"tf.config.optimizer.set_experimental_options: unknown option(s) {unknown}. "
            f"Expected some of {list(_OPTIMIZER_KEYS)}."
        )
    _OPTIMIZER_OPTIONS.update(options)


# --- the MLIR bridge (TF's graph compiler: no graph here, the choice is recorded) ---------------
def enable_mlir_bridge() -> None:
    """``tf.config.experimental.enable_mlir_bridge``: recorded; unison compiles no TF graphs."""
    _STATE["mlir_bridge"] = True


def disable_mlir_bridge() -> None:
    """``tf.config.experimental.disable_mlir_bridge``: recorded; unison compiles no TF graphs."""
    _STATE["mlir_bridge"] = False


# --- TF32 ----------------------------------------------------------------------------------------
def enable_tensor_float_32_execution(enabled: bool) -> None:
    """``tf.config.experimental.enable_tensor_float_32_execution``: torch's TF32 matmul/cuDNN switches."""
    torch.backends.cuda.matmul.allow_tf32 = bool(enabled)
    torch.backends.cudnn.allow_tf32 = bool(enabled)


def tensor_float_32_execution_enabled() -> bool:
    """Whether float32 matmuls may use TF32 (torch's ``backends.cuda.matmul.allow_tf32``)."""
    return bool(torch.backends.cuda.matmul.allow_tf32)


# --- memory --------------------------------------------------------------------------------------
def _parse_device(device: str) -> tuple[str, int]:
    """``'GPU:0'``/``'/device:GPU:0'``/``'/physical_device:CPU:0'`` -> (``'GPU'``, 0), or ValueError."""
    text = str(device).rsplit("/", 1)[-1].replace("device:", "").replace("physical_device:", "")
    kind, _, index = text.partition(":")
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    count = {"CPU": 1, "GPU": gpus}.get(kind.upper() if kind.upper() in ("CPU", "GPU") else kind, 0)
    if not index.isdigit() or int(index) >= count:
        raise ValueError(f"No matching devices found for {device!r}. Expected 'CPU:0' or 'GPU:<i>' with i < {gpus}.")
    return kind.upper(), int(index)


def get_memory_info(device: str) -> dict[str, int]:
    """``tf.config.experimental.get_memory_info``: ``{'current': bytes, 'peak': bytes}`` on ``device``.

    GPU numbers are torch's allocator's (``memory_allocated``/``max_memory_allocated``); the CPU
    reports zeros, as TF's untracked CPU allocator does.
    """
    kind, index = _parse_device(device)
    if kind == "CPU":
        return {"current": 0, "peak": 0}
    return {"current": int(torch.cuda.memory_allocated(index)), "peak": int(torch.cuda.max_memory_allocated(index))}


def reset_memory_stats(device: str) -> None:
    """``tf.config.experimental.reset_memory_stats``: the peak starts again from the current use."""
    kind, index = _parse_device(device)
    if kind == "GPU":
        torch.cuda.reset_peak_memory_stats(index)


def get_memory_usage(device: str) -> int:
    """``tf.config.experimental.get_memory_usage`` (deprecated in TF): ``get_memory_info(device)['current']``."""
    return get_memory_info(device)["current"]


def get_device_details(device: Any) -> dict[str, Any]:
    """``tf.config.experimental.get_device_details``: a GPU's name and compute capability; ``{}`` for a CPU."""
    if getattr(device, "device_type", None) not in ("CPU", "GPU"):
        raise ValueError(
            f"get_device_details takes a device from tf.config.list_physical_devices(). Received: device={device!r:.80}"
        )
    if device.device_type == "CPU":
        return {}
    props = torch.cuda.get_device_properties(int(device.name.rsplit(":", 1)[1]))
    return {"device_name": props.name, "compute_capability": (props.major, props.minor)}


# --- clusters -----------------------------------------------------------------------------------
class ClusterDeviceFilters:
    """``tf.config.experimental.ClusterDeviceFilters``: which remote devices each task may see.

    Example:
        >>> f = ClusterDeviceFilters()
        >>> f.set_device_filters("worker", 0, ["/job:ps"])
    """

    def __init__(self) -> None:
        self._device_filters: dict[str, dict[int, list[str]]] = {}

    def set_device_filters(self, job_name: str, task_index: int, device_filters: list[str]) -> None:
        """Set the filters of ``job_name:task_index`` (a list of device name prefixes)."""
        try:
            filters = list(device_filters)  # TF takes any iterable (a string is one of characters)
        except TypeError:
            raise TypeError(
                f"device_filters must be a list of device strings such as ['/job:ps']. "
                f"Received: device_filters={device_filters!r}"
            ) from None
        self._device_filters.setdefault(job_name, {})[task_index] = filters

    def filters(self) -> dict[str, dict[int, list[str]]]:
        """``{job: {task_index: [filters]}}``, a copy."""
        return copy.deepcopy(self._device_filters)


def connected_cluster() -> dict[str, Any] | None:
    """The cluster given to ``experimental_connect_to_cluster`` as ``{job: [addresses]}`` (None before)."""
    return copy.deepcopy(_STATE["cluster"])


def experimental_connect_to_cluster(
    cluster_spec_or_resolver: Any,
    job_name: str = "localhost",
    task_index: int = 0,
    protocol: str | None = None,
    make_master_device_default: bool = True,
    cluster_device_filters: ClusterDeviceFilters | None = None,
) -> None:
    """``tf.config.experimental_connect_to_cluster``: validate and record the cluster.

    A resolver whose ``master()`` is local is ignored, as in TF. unison's ops run in this
    process; its strategies connect to the cluster's tasks themselves, so nothing is dialled here.
    """
    # Duck-typed: this tier does not import unison.cluster (a ClusterSpec has as_dict and
    # num_tasks, a ClusterResolver has cluster_spec and master).
    target = cluster_spec_or_resolver
    if callable(getattr(target, "cluster_spec", None)) and callable(getattr(target, "master", None)):
        if target.master() in ("", "local"):
            return
        target = target.cluster_spec()
    if not (callable(getattr(target, "as_dict", None)) and callable(getattr(target, "num_tasks", None))):
        raise ValueError(
            "`cluster_spec_or_resolver` must be a `ClusterSpec` or a `ClusterResolver`. "
            f"Received: {type(cluster_spec_or_resolver).__name__}"
        )
    if cluster_device_filters is not None and not isinstance(cluster_device_filters, ClusterDeviceFilters):
        raise ValueError(
            "`cluster_device_filters` must be an instance of `tf.config.experimental.ClusterDeviceFilters`. "
            f"Received: {type(cluster_device_filters).__name__}"
        )
    _STATE["cluster"] = target.as_dict()


def experimental_connect_to_host(remote_host: str | list[str] | None = None, job_name: str = "worker") -> None:
    """``tf.config.experimental_connect_to_host``: connect to the cluster ``{job_name: remote_host(s)}``."""
    if not remote_host:
        raise ValueError("Must provide at least one remote_host. Received: remote_host=" + repr(remote_host))
    hosts = [remote_host] if isinstance(remote_host, str) else list(remote_host)
    _STATE["cluster"] = {job_name: [h.split("://")[-1] for h in hosts]}
