"""TensorFlow device strings ("/gpu:0", "/cpu:1", "/job:worker/task:0/device:GPU:0") to torch.

Validated before any process starts, so a typo never costs a launch.

Example:
    >>> [d.kind for d in parse_devices(["/cpu:0", "/cpu:1"])]
    ['cpu', 'cpu']
    >>> parse_device("/device:GPU:1").kind, parse_device("GPU:1").index
    ('gpu', 1)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from unison.cluster.placement import (
    ENV_CPU_OVERSUBSCRIBE,
    cpu_oversubscription_allowed,
    usable_cores,
)

_DEVICE_RE = re.compile(
    r"^(?:/job:[\w-]+)?(?:/replica:\d+)?(?:/task:\d+)?"
    r"(?:/?(?:device:)?(?P<kind>cpu|gpu|cuda):(?P<index>\d+))$",
    re.IGNORECASE,
)
_FORMAT_HELP = (
    'Expected TensorFlow device strings such as "/cpu:0", "/gpu:1", "GPU:0" or '
    '"/job:worker/replica:0/task:0/device:GPU:0".'
)


@dataclass(frozen=True)
class DeviceSpec:
    """One parsed device: kind ``"cpu"`` or ``"gpu"`` and its index."""

    kind: str
    index: int
    text: str

    def to_torch(self) -> torch.device:
        """The torch device a replica on this device computes on."""
        return torch.device("cuda", self.index) if self.kind == "gpu" else torch.device("cpu")


def parse_device(text: str) -> DeviceSpec:
    """Parse one TF device string, or raise ``ValueError`` naming it and the expected forms."""
    if not isinstance(text, str):
        raise TypeError(f"A device must be a string. {_FORMAT_HELP} Received: {text!r}")
    m = _DEVICE_RE.match(text.strip())
    if m is None:
        raise ValueError(f"Malformed device string {text!r}. {_FORMAT_HELP} Received: devices entry {text!r}")
    kind = "gpu" if m.group("kind").lower() in ("gpu", "cuda") else "cpu"
    return DeviceSpec(kind, int(m.group("index")), text)


def _check_cpu_replicas(parsed: list[DeviceSpec], devices: Sequence[str]) -> None:
    """A ``/cpu:k`` is one of this machine's cores: each CPU replica is a process on its own core."""
    cores = usable_cores()
    beyond = [d.text for d in parsed if d.index >= cores]
    if beyond:
        raise ValueError(
            f"CPU devices {beyond} do not exist: this process may use {cores} CPU core(s) "
            f"(os.cpu_count()={os.cpu_count()}), and each CPU replica is a process that needs a core of "
            f"its own, '/cpu:0' to '/cpu:{cores - 1}'. Use at most {cores} CPU replicas, or set "
            f"{ENV_CPU_OVERSUBSCRIBE}=1 to run more replicas than cores (they share the cores, "
            f"slower). Received: devices={list(devices)!r}"
        )


def substitute_missing_gpus(parsed: list[DeviceSpec]) -> tuple[list[DeviceSpec], list[str]]:
    """TF's soft placement: when a requested GPU does not exist, run the same number of
    replicas on the CPU. Returns the devices to use and the texts of the missing ones."""
    available = torch.cuda.device_count() if torch.cuda.is_available() else 0
    missing = [d.text for d in parsed if d.kind == "gpu" and d.index >= available]
    if not missing:
        return parsed, []
    return [DeviceSpec("cpu", i, f"/cpu:{i}") for i in range(len(parsed))], missing


def parse_devices(devices: Sequence[str] | None, missing_gpus: str = "raise") -> list[DeviceSpec]:
    """Validate a ``MirroredStrategy`` device list and return the parsed devices.

    ``None`` means TF's default: every visible GPU, else one CPU. ``missing_gpus="keep"``
    returns GPUs this machine lacks (for :func:`substitute_missing_gpus`) instead of raising.
    """
    if devices is None:
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return [DeviceSpec("gpu", i, f"/gpu:{i}") for i in range(n)] or [DeviceSpec("cpu", 0, "/cpu:0")]
    if isinstance(devices, str):
        raise ValueError(  # TF's class (it parses the string's characters as device specs)
            f"devices must be a list of device strings, not one string. Received: devices={devices!r}. "
            f"Did you mean devices=[{devices!r}]?"
        )
    parsed = [parse_device(d) for d in devices]
    if not parsed:
        raise ValueError("devices must name at least one device. Received: devices=[]")
    kinds = {d.kind for d in parsed}
    if len(kinds) > 1:
        raise ValueError(
            f"MirroredStrategy needs devices of one kind, all CPUs or all GPUs. Received: devices={list(devices)!r}"
        )
    seen: set[str] = set()
    for d in parsed:
        key = f"{d.kind}:{d.index}"
        if key in seen:
            raise ValueError(
                f"Device {d.text!r} appears twice. Each device holds one replica. Received: devices={list(devices)!r}"
            )
        seen.add(key)
    if "cpu" in kinds and not cpu_oversubscription_allowed():
        _check_cpu_replicas(parsed, devices)
    if "gpu" in kinds and missing_gpus == "raise":
        available = torch.cuda.device_count() if torch.cuda.is_available() else 0
        missing = [d.text for d in parsed if d.index >= available]
        if missing:
            raise ValueError(
                f"GPU devices {missing} are not available: this machine has {available} visible GPU(s). "
                f"Use CPU replicas ('/cpu:0', '/cpu:1', ...) or fewer GPUs. Received: devices={list(devices)!r}"
            )
    return parsed
