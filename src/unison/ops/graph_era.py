"""TF's top-level names from the graph era that eager TF 2 programs still call, with their eager meaning:
``DeviceSpec``, ``CriticalSection``, ``RegisterGradient``/``no_gradient``, ``vectorized_map``.

Example:
    >>> import unison as tf
    >>> tf.DeviceSpec.from_string("/job:worker/task:1/gpu:0").to_string()
    '/job:worker/task:1/device:GPU:0'
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch

from unison.ops import tree
from unison.ops.control_flow import map_fn

__all__ = ["CriticalSection", "DeviceSpec", "RegisterGradient", "no_gradient", "vectorized_map"]


class DeviceSpec:
    """``tf.DeviceSpec``: a (partial) device name: job, replica, task, device type and index.

    Example:
        >>> DeviceSpec(job="ps", device_type="cpu", device_index=0).to_string()
        '/job:ps/device:CPU:0'
    """

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(
        self,
        job: str | None = None,
        replica: int | None = None,
        task: int | None = None,
        device_type: str | None = None,
        device_index: int | None = None,
    ) -> None:
        self._job = job
        self._replica = None if replica is None else int(replica)
        self._task = None if task is None else int(task)
        # TF spells the two common types in capitals ("gpu" is "GPU"), others as given
        self._device_type = (
            device_type.upper() if device_type and device_type.upper() in ("CPU", "GPU") else device_type
        )
        self._device_index = None if device_index is None else int(device_index)

    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    @classmethod
    def from_string(cls, spec: str) -> DeviceSpec:
        """Parses ``"/job:<name>/replica:<id>/task:<id>/device:<type>:<id>"`` (each part optional; ``/gpu:0`` too)."""
        fields: dict[str, Any] = {}
        for part in (p for p in (spec or "").split("/") if p):
            pieces = part.split(":")
            key = pieces[0].lower()
            if key in ("job", "replica", "task") and len(pieces) == 2:
                fields[key] = pieces[1] if key == "job" else int(pieces[1])
            elif key == "device" and len(pieces) in (2, 3):
                fields["device_type"] = pieces[1]
                if len(pieces) == 3 and pieces[2] != "*":
                    fields["device_index"] = int(pieces[2])
            elif len(pieces) in (1, 2) and key in ("cpu", "gpu") or (len(pieces) == 2 and pieces[1].isdigit()):
                fields["device_type"] = pieces[0]
                if len(pieces) == 2 and pieces[1] != "*":
                    fields["device_index"] = int(pieces[1])
            else:
                raise ValueError(
                    f"Unknown attribute: '{part}' in '{spec}'. A device spec looks like /job:worker/task:0/device:GPU:0."
                )
        return cls(**fields)

    def parse_from_string(self, spec: str) -> DeviceSpec:
        """The spec ``spec`` names (TF 2's method ignores this spec's fields)."""
        return DeviceSpec.from_string(spec)

    def make_merged_spec(self, dev: DeviceSpec) -> DeviceSpec:
        """A new spec: this one with every field ``dev`` sets taken from ``dev``."""
        return self.replace(**{k: v for k, v in dev._fields().items() if v is not None})

    def replace(self, **kwargs: Any) -> DeviceSpec:
        """A new spec with the given fields changed."""
        fields = self._fields()
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise TypeError(f"DeviceSpec.replace: unknown fields {sorted(unknown)}; fields are {sorted(fields)}.")
        fields.update(kwargs)
        return DeviceSpec(**fields)

    def _fields(self) -> dict[str, Any]:
        return {
            "job": self._job,
            "replica": self._replica,
            "task": self._task,
            "device_type": self._device_type,
            "device_index": self._device_index,
        }

    def to_string(self) -> str:
        """The canonical name: ``/job:.../replica:.../task:.../device:TYPE:INDEX`` of the fields set."""
        out = ""
        if self._job is not None:
            out += f"/job:{self._job}"
        if self._replica is not None:
            out += f"/replica:{self._replica}"
        if self._task is not None:
            out += f"/task:{self._task}"
        if self._device_type is not None:
            index = "*" if self._device_index is None else str(self._device_index)
            out += f"/device:{self._device_type}:{index}"
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return f"<DeviceSpec {self.to_string()!r}>"


class CriticalSection:
    """``tf.CriticalSection``: ``execute(fn)`` runs ``fn`` with no other ``execute`` of this section at once.

    Running ``execute`` of a section from inside its own ``fn`` is a ValueError (it could never
    proceed), as in TF.

    Example:
        >>> section = CriticalSection()
        >>> section.execute(lambda: 3)
        3
    """

    def __init__(
        self, name: str | None = None, shared_name: str | None = None, critical_section_def: Any = None
    ) -> None:
        self._name = name or "CriticalSection"
        self._lock = threading.Lock()
        self._inside = threading.local()

    @property
    def name(self) -> str:
        return self._name

    def execute(self, fn: Callable[[], Any], exclusive_resource_access: bool = True, name: str | None = None) -> Any:
        """Runs ``fn()`` holding the section and returns its result."""
        if getattr(self._inside, "active", False):
            raise ValueError(
                "Attempting to lock a CriticalSection in which we are already running. This is illegal and may "
                "cause deadlocks: call the function directly instead of through execute()."
            )
        with self._lock:
            self._inside.active = True
            try:
                # TF returns a snapshot of the outputs (identity), not the variables they may be
                return tree.map_structure(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t, fn())
            finally:
                self._inside.active = False


_GRADIENTS: dict[str, Callable[..., Any] | None] = {}  # TF's op-type gradient registry (process-wide in TF too)


def _register(op_type: Any, function: Callable[..., Any] | None) -> None:
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in _GRADIENTS:
        raise KeyError(f"Registering two gradient with name '{op_type}'! (Previous registration was elsewhere.)")
    _GRADIENTS[op_type] = function


class RegisterGradient:
    """``tf.RegisterGradient(op_type)``: a decorator recording ``fn`` as the gradient of the op type ``op_type``.

    TF uses the registry for graph ops (and ``gradient_override_map``); unison's ops are torch's,
    whose gradients are torch's, so the registry is kept for programs that register and look up.
    Registering one op type twice is a KeyError, as in TF.

    Example:
        >>> @RegisterGradient("MyDoctestOp")
        ... def _grad(op, grad):
        ...     return grad
        >>> _grad.__name__
        '_grad'
    """

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: Callable[..., Any]) -> Callable[..., Any]:
        _register(self._op_type, f)
        return f


def no_gradient(op_type: str) -> None:
    """``tf.no_gradient(op_type)``: records that ``op_type`` has no gradient (KeyError when registered already)."""
    _register(op_type, None)


def vectorized_map(fn: Callable[[Any], Any], elems: Any, fallback_to_while_loop: bool = True, warn: bool = True) -> Any:
    """``tf.vectorized_map``: ``fn`` applied to each slice of ``elems`` along axis 0, results stacked.

    TF vectorizes the function; the values are those of ``tf.map_fn(fn, elems)`` (TF's own fallback).

    Example:
        >>> import unison as tf
        >>> vectorized_map(lambda row: tf.reduce_sum(row), tf.ones([3, 2])).tolist()
        [2.0, 2.0, 2.0]
    """
    if not callable(fn):
        raise TypeError(f"tf.vectorized_map: fn must be callable. Received: {fn!r}.")
    return map_fn(fn, elems)
