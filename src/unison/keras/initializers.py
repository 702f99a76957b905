"""Keras weight initializers that fill a torch tensor in place.

``get("glorot_uniform")`` returns an ``Initializer``: ``init(tensor)`` fills ``tensor`` under
``torch.no_grad()`` and returns ``None``. Fans follow Keras's rule for its kernel layout (the
layout unison's layers keep): a ``Dense`` kernel ``(in, units)`` has ``fan_in=in``,
``fan_out=units``; a ``Conv2D`` kernel ``(kh, kw, in, filters)`` has ``fan_in=kh*kw*in``,
``fan_out=kh*kw*filters``; a 1-D tensor has ``fan_in=fan_out=len``.

The ``*_normal`` variance-scaling initializers draw from a normal truncated at two standard
deviations and divide the standard deviation by ``0.87962566103423978`` (the standard
deviation of a unit normal truncated to [-2, 2]), so the variance is the one asked for.

A seeded initializer (``GlorotUniform(seed=1)``) gives the same values on every call, as in
Keras 3; unseeded ones draw from torch's global generator.

Example:
    >>> import torch
    >>> from unison.keras import initializers
    >>> w = torch.empty(3, 4)
    >>> initializers.get("ones")(w)
    >>> w.sum().item()
    12.0
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import torch

from unison.errors import did_you_mean, format_choices

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Initializer",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "Orthogonal",
    "Identity",
    "RandomNormal",
    "RandomUniform",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "IdentityInitializer",
    "OrthogonalInitializer",
    "STFT",
    "STFTInitializer",
    "compute_fans",
    "constant",
    "deserialize",
    "get",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "serialize",
    "stft",
    "truncated_normal",
    "variance_scaling",
    "zeros",
]

_TRUNCATED_STD = 0.87962566103423978


def compute_fans(
    shape: tuple[int, ...] | torch.Size,
    input_axes: Sequence[int] | None = None,
    output_axes: Sequence[int] | None = None,
) -> tuple[int, int]:
    """Return ``(fan_in, fan_out)`` for a kernel in Keras's layout (``(..., in, out)``).

    Keras 3.15's ``input_axes``/``output_axes`` (both given) name the axes whose sizes multiply
    into each fan instead (an einsum kernel's layout).

    Example:
        >>> compute_fans((3, 3, 32, 64))
        (288, 576)
        >>> compute_fans((4, 3, 2), input_axes=[0], output_axes=[1, 2])
        (4, 6)
    """
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        return math.prod(shape[a] for a in input_axes), math.prod(shape[a] for a in output_axes)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class Initializer:
    """Base class: subclasses implement ``_fill(tensor, generator)``.

    ``__call__`` runs ``_fill`` under ``no_grad``. When the initializer has a seed, values are
    drawn on the CPU from a generator seeded afresh on every call and copied into the tensor,
    so the result does not depend on the device.
    """

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"Argument `seed` must be an integer or None. Received: seed={seed!r}")
        self.seed = seed

    def __call__(self, tensor: Any = None, dtype: Any = None, *, shape: Any = None) -> Any:
        """Fill ``tensor`` in place, or (Keras's call) return a new tensor of ``shape``.

        ``init(shape=(2, 3))`` and ``init((2, 3), dtype="float32")`` return the values as Keras does.
        """
        if not isinstance(tensor, torch.Tensor):
            size = shape if shape is not None else tensor
            if size is None:
                raise TypeError(f"{type(self).__name__}() needs a shape, e.g. init(shape=(2, 3)), or a tensor to fill.")
            new = torch.empty(tuple(size) if isinstance(size, (tuple, list, torch.Size)) else (int(size),))
            if dtype is not None:
                new = new.to(_torch_dtype(dtype))
            self(new)
            return new
        with torch.no_grad():
            if self.seed is None:
                self._fill(tensor, None)
                return None
            generator = torch.Generator().manual_seed(self.seed)
            scratch = torch.empty(tensor.shape, dtype=torch.float32)
            self._fill(scratch, generator)
            tensor.copy_(scratch)
        return None

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        """Return the constructor arguments (Keras's ``get_config``)."""
        return {"seed": self.seed}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        """The initializer ``get_config()`` describes (Keras's ``Initializer.from_config``).

        Example:
            >>> Constant.from_config(Constant(0.5).get_config()).value
            0.5
        """
        return cls(**config)

    def __repr__(self) -> str:
        # unset fan axes (Keras 3.15's einsum option) stay out of the repr, as the default layout
        shown = {k: v for k, v in self.get_config().items() if not (k in ("input_axes", "output_axes") and v is None)}
        args = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"{type(self).__name__}({args})"


class Zeros(Initializer):
    """Fill with 0."""

    def __init__(self) -> None:
        super().__init__(None)

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        tensor.zero_()

    def get_config(self) -> dict[str, Any]:
        return {}


class Ones(Initializer):
    """Fill with 1."""

    def __init__(self) -> None:
        super().__init__(None)

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        tensor.fill_(1.0)

    def get_config(self) -> dict[str, Any]:
        return {}


class Constant(Initializer):
    """Fill with ``value``."""

    def __init__(self, value: Any = 0.0) -> None:
        super().__init__(None)
        # a scalar, or (as TF's constant_initializer and Keras 3's Constant) a list or array
        array = np.asarray(value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value)
        self.value: float | np.ndarray = float(array) if array.ndim == 0 else array

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        if isinstance(self.value, float):
            tensor.fill_(self.value)
            return
        values = torch.as_tensor(self.value, dtype=tensor.dtype)
        if values.numel() == tensor.numel():
            tensor.copy_(values.reshape(tensor.shape))
        else:
            try:
                tensor.copy_(torch.broadcast_to(values, tensor.shape))
            except RuntimeError as exc:
                raise ValueError(
                    f"Constant initializer: a value of shape {list(values.shape)} fits neither the shape "
                    f"{list(tensor.shape)} by size nor by broadcasting. Pass a scalar, or a value with "
                    f"{tensor.numel()} elements."
                ) from exc

    def get_config(self) -> dict[str, Any]:
        return {"value": self.value if isinstance(self.value, float) else self.value.tolist()}


class RandomUniform(Initializer):
    """Uniform on ``[minval, maxval)``; Keras default ``[-0.05, 0.05)``."""

    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None) -> None:
        super().__init__(seed)
        if not minval < maxval:
            raise ValueError(
                f"Argument `minval` must be smaller than `maxval`. Received: minval={minval}, maxval={maxval}"
            )
        self.minval, self.maxval = float(minval), float(maxval)

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        tensor.uniform_(self.minval, self.maxval, generator=generator)

    def get_config(self) -> dict[str, Any]:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(Initializer):
    """Normal with ``mean`` and ``stddev``; Keras default ``stddev=0.05``."""

    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None) -> None:
        super().__init__(seed)
        if not stddev > 0:
            raise ValueError(f"Argument `stddev` must be positive. Received: stddev={stddev}")
        self.mean, self.stddev = float(mean), float(stddev)

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        tensor.normal_(self.mean, self.stddev, generator=generator)

    def get_config(self) -> dict[str, Any]:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal with ``mean`` and ``stddev``, redrawn beyond two standard deviations."""

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        _truncated_normal(tensor, self.mean, self.stddev, generator)


def _truncated_normal(tensor: torch.Tensor, mean: float, std: float, generator: torch.Generator | None) -> None:
    torch.nn.init.trunc_normal_(tensor, mean=mean, std=std, a=mean - 2 * std, b=mean + 2 * std, generator=generator)


class VarianceScaling(Initializer):
    """Keras's ``VarianceScaling``: variance ``scale / n`` with ``n`` chosen by ``mode``.

    Args:
        scale: positive scaling factor.
        mode: ``"fan_in"``, ``"fan_out"`` or ``"fan_avg"``.
        distribution: ``"truncated_normal"``, ``"untruncated_normal"`` or ``"uniform"``.
        seed: optional integer seed.
        input_axes, output_axes: Keras 3.15's axes that make up the fans (see :func:`compute_fans`);
            ``None``: Keras's kernel layout.

    Example:
        >>> import torch
        >>> w = torch.empty(200, 100)  # a Dense kernel (in=200, units=100)
        >>> VarianceScaling(2.0, "fan_in", "uniform")(w)
        >>> bool(w.abs().max() <= (6.0 / 200) ** 0.5)
        True
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        input_axes: Sequence[int] | None = None,
        output_axes: Sequence[int] | None = None,
    ) -> None:
        super().__init__(seed)
        if not scale > 0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in self._MODES:
            raise ValueError(
                f"Invalid `mode` argument: expected one of {format_choices(self._MODES)}. Received: mode={mode!r}"
            )
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(
                "Invalid `distribution` argument: expected one of "
                f"{format_choices(self._DISTRIBUTIONS)}. Received: distribution={distribution!r}"
            )
        self.scale, self.mode, self.distribution = float(scale), mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        fan_in, fan_out = compute_fans(tensor.shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            tensor.uniform_(-limit, limit, generator=generator)
        elif self.distribution == "untruncated_normal":
            tensor.normal_(0.0, math.sqrt(variance), generator=generator)
        else:
            _truncated_normal(tensor, 0.0, math.sqrt(variance) / _TRUNCATED_STD, generator)

    def get_config(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "input_axes": self.input_axes,
            "output_axes": self.output_axes,
        }


class _FixedVarianceScaling(VarianceScaling):
    """A named ``VarianceScaling`` preset; the seed and Keras 3.15's fan axes are configurable."""

    _PRESET: tuple[float, str, str] = (1.0, "fan_in", "truncated_normal")

    def __init__(
        self, seed: int | None = None, input_axes: Sequence[int] | None = None, output_axes: Sequence[int] | None = None
    ) -> None:
        super().__init__(*self._PRESET, seed=seed, input_axes=input_axes, output_axes=output_axes)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed, "input_axes": self.input_axes, "output_axes": self.output_axes}


class GlorotUniform(_FixedVarianceScaling):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / (fan_in + fan_out))``."""

    _PRESET = (1.0, "fan_avg", "uniform")


class GlorotNormal(_FixedVarianceScaling):
    """Truncated normal, ``stddev = sqrt(2 / (fan_in + fan_out))``."""

    _PRESET = (1.0, "fan_avg", "truncated_normal")


class HeUniform(_FixedVarianceScaling):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(6 / fan_in)``."""

    _PRESET = (2.0, "fan_in", "uniform")


class HeNormal(_FixedVarianceScaling):
    """Truncated normal, ``stddev = sqrt(2 / fan_in)``."""

    _PRESET = (2.0, "fan_in", "truncated_normal")


class LecunUniform(_FixedVarianceScaling):
    """Uniform in ``[-limit, limit]``, ``limit = sqrt(3 / fan_in)``."""

    _PRESET = (1.0, "fan_in", "uniform")


class LecunNormal(_FixedVarianceScaling):
    """Truncated normal, ``stddev = sqrt(1 / fan_in)``."""

    _PRESET = (1.0, "fan_in", "truncated_normal")


class Orthogonal(Initializer):
    """(Semi-)orthogonal matrix times ``gain``; tensors of rank > 2 are flattened to
    ``(prod(shape[:-1]), shape[-1])``, as Keras does for its kernel layout."""

    def __init__(self, gain: float = 1.0, seed: int | None = None) -> None:
        super().__init__(seed)
        self.gain = float(gain)

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        if tensor.dim() < 2:
            raise ValueError(
                f"The Orthogonal initializer needs a tensor of rank >= 2. Received: shape={tuple(tensor.shape)}"
            )
        # torch flattens to (shape[0], rest); Keras to (rest, shape[-1]): fill that view transposed.
        flat = torch.empty(tensor.shape[-1], math.prod(tensor.shape[:-1]), dtype=tensor.dtype, device=tensor.device)
        torch.nn.init.orthogonal_(flat, gain=self.gain, generator=generator)
        tensor.copy_(flat.t().reshape(tensor.shape))

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D tensors only, as Keras's ``Identity``).

    Example:
        >>> w = torch.empty(2, 3)
        >>> Identity(gain=2.0)(w)
        >>> w.tolist()
        [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    """

    def __init__(self, gain: float = 1.0) -> None:
        super().__init__(None)
        self.gain = float(gain)

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        if tensor.dim() != 2:
            raise ValueError(
                "The Identity initializer makes 2-D tensors only (a Dense kernel or a recurrent matrix). "
                f"Received: shape={tuple(tensor.shape)}"
            )
        tensor.copy_(torch.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device) * self.gain)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain}


_WINDOWS: dict[str, Callable[..., torch.Tensor]] = {
    "hann": torch.hann_window,
    "hanning": torch.hann_window,
    "hamming": torch.hamming_window,
    "blackman": torch.blackman_window,
    "bartlett": torch.bartlett_window,
}


class STFT(Initializer):
    """Conv kernels computing a short-time Fourier transform (Keras 3's ``STFT``).

    A kernel of shape ``(frame_length, 1, fft_length // 2 + 1)`` holds
    ``cos(-2 pi t f / fft_length)`` (``side="real"``) or its ``sin`` (``side="imag"``), times the
    window divided by its L2 norm (``scaling="density"``) or L1 norm (``"spectrum"``).

    Args:
        side: ``"real"`` or ``"imag"``.
        window: ``"hann"``, ``"hamming"``, ``"blackman"``, ``"bartlett"``, the window's values, or ``None``.
        scaling: ``"density"``, ``"spectrum"`` or ``None``.
        periodic: a periodic window (for spectral analysis) instead of a symmetric one.

    Example:
        >>> STFT(window=None, scaling=None)(shape=(4, 1, 3))[:, 0, 1].round(decimals=3).tolist()
        [1.0, 0.0, -1.0, -0.0]
    """

    def __init__(
        self, side: str = "real", window: Any = "hann", scaling: str | None = "density", periodic: bool = False
    ) -> None:
        super().__init__(None)
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side!r}")
        if isinstance(window, str) and window not in _WINDOWS:
            raise ValueError(
                f"Unknown window {window!r}. Expected one of {format_choices(list(_WINDOWS))}, the window's "
                "values, or None."
            )
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(
                f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received scaling={scaling!r}"
            )
        self.side, self.window, self.scaling, self.periodic = side, window, scaling, periodic

    def _fill(self, tensor: torch.Tensor, generator: torch.Generator | None) -> None:
        if tensor.dim() != 3:
            raise ValueError(
                "The STFT initializer makes kernels of shape (frame_length, 1, fft_length // 2 + 1). "
                f"Received: shape={tuple(tensor.shape)}"
            )
        frame_length, _, bins = tensor.shape
        fft_length = (bins - 1) * 2
        t = torch.arange(frame_length, dtype=torch.float64).reshape(-1, 1, 1)
        f = torch.arange(bins, dtype=torch.float64).reshape(1, 1, -1) / fft_length
        args = -2.0 * t * f * math.pi
        kernel = torch.cos(args) if self.side == "real" else torch.sin(args)
        if self.window is not None:
            if isinstance(self.window, str):
                win = _WINDOWS[self.window](frame_length, periodic=self.periodic, dtype=torch.float64)
            else:
                win = torch.as_tensor(np.asarray(self.window), dtype=torch.float64)
            if win.dim() != 1 or win.shape[0] != frame_length:
                raise ValueError(
                    f"The shape of `window` must be equal to [frame_length]. Received: window shape={tuple(win.shape)}"
                )
            win = win.reshape(-1, 1, 1)
            scale = 1.0
            if self.scaling == "density":
                scale = float(torch.sqrt(torch.sum(win * win)))
            elif self.scaling == "spectrum":
                scale = float(torch.sum(win.abs()))
            kernel = kernel * win / scale
        tensor.copy_(kernel.to(tensor.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"side": self.side, "window": self.window, "periodic": self.periodic, "scaling": self.scaling}


_REGISTRY: dict[str, Callable[[], Initializer]] = {
    "identity": Identity,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_uniform": HeUniform,
    "he_normal": HeNormal,
    "lecun_uniform": LecunUniform,
    "lecun_normal": LecunNormal,
    "zeros": Zeros,
    "zero": Zeros,
    "ones": Ones,
    "one": Ones,
    "constant": Constant,
    "random_uniform": RandomUniform,
    "uniform": RandomUniform,
    "random_normal": RandomNormal,
    "normal": RandomNormal,
    "truncated_normal": TruncatedNormal,
    "orthogonal": Orthogonal,
    "variance_scaling": VarianceScaling,
    "stft": STFT,
}
for _cls in (
    GlorotUniform,
    GlorotNormal,
    HeUniform,
    HeNormal,
    LecunUniform,
    LecunNormal,
    Zeros,
    Ones,
    Constant,
    RandomUniform,
    RandomNormal,
    TruncatedNormal,
    Orthogonal,
    VarianceScaling,
    Identity,
    STFT,
):
    _REGISTRY[_cls.__name__] = _cls
del _cls

InitializerLike = str | Initializer | Callable[[torch.Tensor], None]


def _torch_dtype(dtype: Any) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    from unison.ops.dtypes import as_dtype

    return cast(torch.dtype, as_dtype(dtype))


def _takes_shape(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is a Keras-style initializer ``fn(shape, dtype=None) -> values``."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] == "shape"


class _FromShape:
    """A Keras-style initializer (``fn(shape, dtype=None)`` returns values) as an in-place fill."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, tensor: torch.Tensor) -> None:
        with torch.no_grad():
            values = self.fn(tuple(tensor.shape), dtype=tensor.dtype)
            values = torch.as_tensor(values)  # numpy arrays and lists too
            if tuple(values.shape) != tuple(tensor.shape):
                raise ValueError(
                    f"The initializer {self.fn!r} returned values of shape {tuple(values.shape)} for a weight of "
                    f"shape {tuple(tensor.shape)}. A Keras initializer must return an array of the shape it is given."
                )
            tensor.copy_(values)

    def __repr__(self) -> str:
        return repr(self.fn)


def get(identifier: InitializerLike) -> Callable[[torch.Tensor], None]:
    """Resolve a Keras initializer identifier to a callable ``init(tensor) -> None``.

    Args:
        identifier: a Keras name (``"glorot_uniform"``, ``"he_normal"``, ``"zeros"``...,
            snake_case or CamelCase), an ``Initializer`` instance or class, or any callable
            that fills a tensor in place (returned as is).

    Raises:
        ValueError: for an unknown name or an identifier that is not callable.

    Example:
        >>> get("he_normal")
        HeNormal(seed=None)
    """
    if isinstance(identifier, str):
        factory = _REGISTRY.get(identifier)
        if factory is None:
            raise ValueError(
                f"Unknown initializer: {identifier!r}{did_you_mean(identifier, _REGISTRY)}. Expected one of: "
                f"{format_choices([k for k in _REGISTRY if k.islower()])}. "
                f"Received: initializer={identifier!r}"
            )
        return factory()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        identifier = identifier()
    if isinstance(identifier, Initializer):
        # A subclass that overrides __call__ is written Keras's way: __call__(shape, dtype=None)
        overridden = type(identifier).__call__ is not Initializer.__call__
        return _FromShape(identifier) if overridden else identifier
    if callable(identifier):
        if _takes_shape(identifier):
            return _FromShape(identifier)
        return cast(Callable[[torch.Tensor], None], identifier)
    raise ValueError(
        "Could not interpret initializer identifier: expected a name such as "
        f"'glorot_uniform' or a callable. Received: initializer={identifier!r}"
    )


def serialize(initializer: Initializer) -> dict[str, Any]:
    """Keras's serialized form of a built-in initializer: ``module``, ``class_name``, ``config``, ``registered_name``.

    Example:
        >>> serialize(Constant(2.0))["config"]
        {'value': 2.0}
    """
    if not isinstance(initializer, Initializer):
        raise TypeError(
            "serialize() takes a keras.initializers.Initializer such as GlorotUniform(). "
            f"Received: {initializer!r} ({type(initializer).__name__})"
        )
    return {
        "module": "keras.initializers",
        "class_name": type(initializer).__name__,
        "config": initializer.get_config(),
        "registered_name": None,
    }


def deserialize(config: dict[str, Any] | str, custom_objects: dict[str, Any] | None = None) -> Initializer:
    """The initializer a name (``"he_normal"``, ``"HeNormal"``) or a :func:`serialize` dict describes.

    Raises:
        ValueError: an unknown name (the message lists the known ones).

    Example:
        >>> deserialize({"class_name": "Constant", "config": {"value": 2.0}}).value
        2.0
    """
    if isinstance(config, str):
        name, options = config, {}
    elif isinstance(config, dict) and "class_name" in config:
        name, options = str(config["class_name"]), dict(config.get("config") or {})
    else:
        raise TypeError(
            "deserialize() takes an initializer's name or the dict serialize() returns "
            f"({{'class_name': ..., 'config': ...}}). Received: {config!r}"
        )
    factory = (custom_objects or {}).get(name) or _REGISTRY.get(name)
    if factory is None:
        raise ValueError(
            f"Unknown initializer: {name!r}{did_you_mean(name, _REGISTRY)}. Expected one of: "
            f"{format_choices([k for k in _REGISTRY if k.islower()])}."
        )
    return cast(Initializer, factory(**options))


# Keras's other spellings of the classes: snake_case aliases and the *Initializer names
constant = Constant
glorot_normal = GlorotNormal
glorot_uniform = GlorotUniform
he_normal = HeNormal
he_uniform = HeUniform
identity = IdentityInitializer = Identity
lecun_normal = LecunNormal
lecun_uniform = LecunUniform
ones = Ones
orthogonal = OrthogonalInitializer = Orthogonal
random_normal = RandomNormal
random_uniform = RandomUniform
stft = STFTInitializer = STFT
truncated_normal = TruncatedNormal
variance_scaling = VarianceScaling
zeros = Zeros
