"""Dtype policies (Keras 3's ``dtype_policies``): computation under ``torch.autocast``.

``keras.mixed_precision`` re-exports them with its loss scaling; they live here, below the layers
(which compute under their policy), while loss scaling builds on ``keras.optimizers``, above them.

A :class:`Policy` names a compute dtype and a variable dtype, as in Keras 3:

| policy             | compute    | variables |
| ---                | ---        | ---       |
| ``float32``        | float32    | float32   |
| ``mixed_bfloat16`` | bfloat16   | float32   |
| ``mixed_float16``  | float16    | float32   |
| ``bfloat16``       | bfloat16   | bfloat16  |
| ``float16``        | float16    | float16   |

Mixed policies keep every variable in float32 and run the forward pass under
``torch.autocast(device, dtype=compute_dtype)``: matrix products run in the low precision,
reductions and normalisations stay in float32 (torch's autocast lists), and gradients reach
the float32 variables in float32. ``fit``/``evaluate``/``predict`` enter that context for the
whole forward pass; a layer created with ``dtype=`` (or under a mixed global policy and called
outside ``fit``) enters its own, so ``Dense(10, dtype="float32")`` as the last layer computes
in float32 inside a mixed model, as Keras users write it.

The global policy is process-wide state by the API's definition (Keras's
``set_global_policy``); it is read when a layer is created and when a model is first trained.

Example:
    >>> from unison.keras import mixed_precision
    >>> mixed_precision.set_global_policy("mixed_bfloat16")
    >>> p = mixed_precision.global_policy()
    >>> (p.compute_dtype, p.variable_dtype)
    ('bfloat16', 'float32')
    >>> mixed_precision.set_global_policy("float32")
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, cast

import numpy as np
import torch

from unison.errors import format_choices

_POLICIES: dict[str, tuple[str, str]] = {
    "float32": ("float32", "float32"),
    "mixed_bfloat16": ("bfloat16", "float32"),
    "mixed_float16": ("float16", "float32"),
    "bfloat16": ("bfloat16", "bfloat16"),
    "float16": ("float16", "float16"),
    "float64": ("float64", "float64"),
}
_TORCH = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "float64": torch.float64}


# Input dtypes the float32 policy leaves as they are (its cast touches other floats only).
_NO_CAST = frozenset({torch.float32, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool})


class Policy:
    """A dtype policy: the dtype layers compute in and the dtype their variables are stored in.

    Args:
        name: ``"float32"``, ``"mixed_bfloat16"``, ``"mixed_float16"``, ``"bfloat16"`` or
            ``"float16"``.

    Example:
        >>> Policy("mixed_float16").compute_dtype
        'float16'
    """

    def __init__(self, name: str) -> None:
        if isinstance(name, torch.dtype):
            name = str(name).replace("torch.", "")
        if not isinstance(name, str):
            raise TypeError(
                f"'name' must be a string, such as 'mixed_float16'. Received: name={name!r} (of type {type(name)})"
            )
        if name not in _POLICIES:
            raise ValueError(
                f"Cannot convert {name!r} to a mixed precision policy. Expected one of: "
                f"{format_choices(list(_POLICIES))}. Received: name={name!r}"
            )
        self.name = name
        self.compute_dtype, self.variable_dtype = _POLICIES[name]

    @property
    def is_mixed(self) -> bool:
        """Whether variables and computation use different dtypes (computation under autocast)."""
        return self.compute_dtype != self.variable_dtype

    @property
    def torch_compute_dtype(self) -> torch.dtype:
        return _TORCH[self.compute_dtype]

    @property
    def torch_variable_dtype(self) -> torch.dtype:
        return _TORCH[self.variable_dtype]

    def autocast(self, device_type: str) -> AbstractContextManager[Any]:
        """The context a forward pass under this policy runs in.

        Mixed: ``torch.autocast`` to the compute dtype. Otherwise autocast is switched off, so
        a float32 layer inside a mixed model computes in float32.
        """
        if self.is_mixed:
            return torch.autocast(device_type, dtype=self.torch_compute_dtype)
        return torch.autocast(device_type, enabled=False)

    def cast_inputs(self, x: Any) -> Any:
        """Floating tensors to the compute dtype where autocast does not do it (pure policies,
        and float32 layers inside a mixed model); integer ids and other values pass unchanged."""
        if not self.is_mixed and isinstance(x, np.ndarray) and x.dtype.kind == "f":
            return torch.as_tensor(x, dtype=self.torch_compute_dtype)  # Keras converts arrays to its dtype too
        if (
            self.is_mixed
            or not isinstance(x, torch.Tensor)
            or not x.is_floating_point()
            or x.dtype == self.torch_compute_dtype
        ):
            return x
        cast = x.to(self.torch_compute_dtype)
        mask = getattr(x, "_keras_mask", None)
        if mask is not None:
            cast._keras_mask = mask  # type: ignore[attr-defined]  # a padding mask survives the cast
        return cast

    @property
    def quantization_mode(self) -> str | None:
        """``None``: float policies do not quantize."""
        return None

    def get_config(self) -> dict[str, Any]:
        """``{"name": ...}`` (Keras's ``DTypePolicy.get_config``)."""
        return {"name": self.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Policy:
        return cls(**config)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f'<DTypePolicy "{self.name}">'


DTypePolicy = Policy


class FloatDTypePolicy(Policy):
    """Keras 3's name for a float (not quantized) policy; a :class:`Policy` in every way."""


def serialize(policy: Policy) -> dict[str, Any]:
    """Keras's serialized form: ``{"module": "keras", "class_name": "DTypePolicy", "config": {"name": ...}, ...}``.

    Example:
        >>> serialize(Policy("mixed_float16"))["config"]
        {'name': 'mixed_float16'}
    """
    if not isinstance(policy, Policy):
        raise TypeError(f"serialize() takes a DTypePolicy. Received: {policy!r}")
    name = "DTypePolicy" if type(policy) is Policy else type(policy).__name__
    return {"module": "keras", "class_name": name, "config": policy.get_config(), "registered_name": None}


def deserialize(config: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    """The policy :func:`serialize` described; a name comes back as it is (as in Keras).

    Raises:
        ValueError: an unknown policy class.
    """
    if isinstance(config, str):
        return config
    cls = {"DTypePolicy": Policy, "FloatDTypePolicy": FloatDTypePolicy, **(custom_objects or {})}.get(
        str(config.get("class_name"))
    )
    if cls is None:
        raise ValueError(
            f"Unknown dtype policy class {config.get('class_name')!r}. Expected 'DTypePolicy' or 'FloatDTypePolicy'."
        )
    return cls.from_config(dict(config.get("config") or {}))


class _Global:
    """Holder of the process-wide policy (Keras's global dtype policy)."""

    policy = Policy("float32")


def get(identifier: Any) -> Policy:
    """A :class:`Policy` from a name, a ``torch.dtype`` or a policy.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    if isinstance(identifier, Policy):
        return identifier
    if isinstance(identifier, dict):
        return cast(Policy, deserialize(identifier))
    if not isinstance(identifier, (str, torch.dtype)):
        raise ValueError(
            "Cannot interpret `dtype` argument. Expected a string or an instance of DTypePolicy. "
            f"Received: dtype={identifier!r}"
        )
    return Policy(identifier)  # type: ignore[arg-type]  # a torch.dtype is converted by Policy


def set_global_policy(policy: str | Policy | None) -> None:
    """Set the policy of layers created from now on, and of models trained from now on.

    ``None`` restores ``"float32"``.

    Example:
        >>> set_global_policy("mixed_bfloat16"); global_policy().name
        'mixed_bfloat16'
        >>> set_global_policy(None); global_policy().name
        'float32'
    """
    _Global.policy = Policy("float32") if policy is None else get(policy)


def global_policy() -> Policy:
    """The current global policy (``Policy("float32")`` unless set)."""
    return _Global.policy


def _device_type(values: tuple[Any, ...]) -> str:
    for v in values:
        if isinstance(v, torch.Tensor):
            return v.device.type
        if isinstance(v, (list, tuple)):
            found = _device_type(tuple(v))
            if found:
                return found
    return ""


def autocast_enabled(device_type: str) -> bool:
    """Whether ``torch.autocast`` is on for ``device_type`` (torch < 2.4 has no argument)."""
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:
        return torch.is_autocast_cpu_enabled() if device_type == "cpu" else torch.is_autocast_enabled()


@contextlib.contextmanager
def policy_scope(policy: Policy, device_type: str) -> Iterator[None]:
    """Run a forward pass under ``policy`` on ``device_type`` (no-op for float32 without autocast)."""
    if not policy.is_mixed and policy.compute_dtype == "float32" and not autocast_enabled(device_type):
        yield
        return
    with policy.autocast(device_type):
        yield


def _policy_free_modules(layer: torch.nn.Module, inner: list[DTypePolicyMixin]) -> Iterator[torch.nn.Module]:
    """``layer`` and the modules below it that no layer with its own dtype policy owns; those
    layers (the first below each path) are appended to ``inner``."""
    yield layer
    for child in layer.children():
        if isinstance(child, DTypePolicyMixin):
            inner.append(child)
        else:
            yield from _policy_free_modules(child, inner)


class DTypePolicyMixin:
    """Gives a layer Keras's ``dtype=`` argument: a per-layer policy applied to its calls.

    A layer given ``dtype=`` always computes under that policy (a ``"float32"`` layer inside a
    mixed model switches autocast off and casts its floating inputs to float32). A layer
    without it takes the global policy at creation; it computes under that policy when called
    outside any autocast context and follows the enclosing context (``fit``'s) otherwise.
    Variables of pure ``"bfloat16"``/``"float16"`` layers are stored in that dtype.

    Put it before the layer base: ``class MyLayer(DTypePolicyMixin, Layer)``.
    """

    def __init__(self, *args: Any, dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._explicit_policy = dtype is not None
        self.dtype_policy = get(dtype) if dtype is not None else global_policy()

    @property
    def compute_dtype(self) -> str:
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self) -> str:
        return self.dtype_policy.variable_dtype

    def _cast_variables(self) -> None:
        """Store this layer's floating variables in the policy's variable dtype.

        Its variables are its parameters and its floating buffers (BatchNormalization's moving
        statistics are buffers; Keras's are non-trainable variables of the layer's variable
        dtype), its own and those of inner modules that have no policy of their own (a plain
        ``torch.nn`` module inside it); an inner layer with a policy keeps its own dtype, as in
        Keras. Mixed policies store variables in float32, so they leave float32 statistics as they are.
        """
        dtype = self.dtype_policy.torch_variable_dtype
        inner: list[DTypePolicyMixin] = []
        for module in _policy_free_modules(cast(torch.nn.Module, self), inner):
            for param in module.parameters(recurse=False):
                if param.is_floating_point() and param.dtype != dtype:
                    param.data = param.data.to(dtype)
            for name, buf in list(module.named_buffers(recurse=False)):
                if buf is not None and buf.is_floating_point() and buf.dtype != dtype:
                    setattr(module, name, buf.to(dtype))
        for layer in inner:
            # an inner layer built by this one's build (a wrapper's): its variables take its own
            # float32/float64 policy now, before this layer computes with them (a half-precision
            # policy casts after its own first call, which runs under autocast)
            if layer.dtype_policy.torch_variable_dtype in (torch.float32, torch.float64):
                layer._cast_variables()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        policy = self.dtype_policy
        if (
            policy.name == "float32"
            and not self._explicit_policy
            and not kwargs
            and all(type(a) is torch.Tensor and a.dtype in _NO_CAST for a in args)
        ):
            # The default policy on float32 (or integer) inputs: nothing to cast, and inside an
            # autocast context the layer follows it anyway. One check per call on the hot path.
            return super().__call__(*args, **kwargs)  # type: ignore[misc]
        device = _device_type((*args, *kwargs.values())) or "cpu"
        in_autocast = autocast_enabled(device)
        if in_autocast and not self._explicit_policy:
            return super().__call__(*args, **kwargs)  # type: ignore[misc]  # follow the context
        if policy.is_mixed:
            with policy.autocast(device):
                return super().__call__(*args, **kwargs)  # type: ignore[misc]
        args = tuple(policy.cast_inputs(a) for a in args)  # Keras casts floating inputs too
        kwargs = {k: policy.cast_inputs(v) for k, v in kwargs.items()}
        if policy.name == "float32" and not in_autocast:
            return super().__call__(*args, **kwargs)  # type: ignore[misc]
        # float32 inside autocast, or a pure low-precision policy: autocast off.
        # A pure layer's first call builds float32 weights, so it runs under autocast once
        # and stores its variables in the policy's dtype afterwards.
        first = not getattr(self, "built", True)
        self._cast_variables()
        context: Any
        if first and policy.torch_compute_dtype not in (torch.float32, torch.bfloat16, torch.float16):
            # autocast has no float64: the weights are cast as soon as build has made them
            # (Layer.forward), so the first call computes in the policy's dtype too, as Keras's does
            self.__dict__["_cast_after_build"] = True
            context = contextlib.nullcontext()
        elif first and policy.name != "float32":
            context = torch.autocast(device, dtype=policy.torch_compute_dtype)
        else:
            context = policy.autocast(device)
        with context:
            out = super().__call__(*args, **kwargs)  # type: ignore[misc]
        self._cast_variables()
        return out


__all__ = [
    "DTypePolicy",
    "DTypePolicyMixin",
    "FloatDTypePolicy",
    "Policy",
    "deserialize",
    "get",
    "global_policy",
    "policy_scope",
    "serialize",
    "set_global_policy",
]
