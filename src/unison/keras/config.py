"""``keras.config``: Keras 3's global settings in one place.

The numeric settings (``epsilon``, ``floatx``, ``image_data_format``) are the backend's
(:mod:`unison.keras.backend.config`); the dtype policy is :mod:`unison.keras.dtype_policies`'s
global policy; interactive logging is :mod:`unison.keras.utils.io_utils`'s switch, which the
progress bar reads. The rest are switches held here, with Keras's defaults:

| setting | default | read by |
| --- | --- | --- |
| ``max_epochs`` / ``max_steps_per_epoch`` | ``None`` (or ``$KERAS_MAX_EPOCHS``, ``$KERAS_MAX_STEPS_PER_EPOCH``) | ``Model.fit`` caps its loop |
| ``is_flash_attention_enabled`` | ``None`` (use it where the inputs allow) | attention ops |
| ``is_traceback_filtering_enabled`` | ``True`` | Keras's own traceback filter |
| ``safe_mode`` (``enable_unsafe_deserialization``) | on | ``saving.load_model``'s lambdas |
| ``is_nnx_enabled`` | ``False`` (JAX's NNX: not on torch) | |

``backend()`` is ``"torch"``: unison runs Keras programs on PyTorch. ``set_backend`` accepts only
``"torch"`` for the same reason.

Example:
    >>> from unison.keras import config
    >>> config.backend(), config.floatx(), config.epsilon()
    ('torch', 'float32', 1e-07)
    >>> config.set_max_epochs(2); config.max_epochs()
    2
    >>> config.set_max_epochs(None)
"""

from __future__ import annotations

import os
from typing import Any

from unison.keras.backend.config import (
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
)
from unison.keras.dtype_policies import Policy, global_policy, set_global_policy
from unison.keras.utils.io_utils import (
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)

__all__ = [
    "backend",
    "disable_flash_attention",
    "disable_interactive_logging",
    "disable_traceback_filtering",
    "dtype_policy",
    "enable_flash_attention",
    "enable_interactive_logging",
    "enable_traceback_filtering",
    "enable_unsafe_deserialization",
    "epsilon",
    "floatx",
    "image_data_format",
    "is_flash_attention_enabled",
    "is_interactive_logging_enabled",
    "is_nnx_enabled",
    "is_traceback_filtering_enabled",
    "max_epochs",
    "max_steps_per_epoch",
    "safe_mode",
    "set_backend",
    "set_dtype_policy",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
    "set_max_epochs",
    "set_max_steps_per_epoch",
]


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else None


class _Settings:
    """The switches Keras keeps in its global state (process-wide by the API's definition)."""

    max_epochs: int | None = _env_int("KERAS_MAX_EPOCHS")
    max_steps_per_epoch: int | None = _env_int("KERAS_MAX_STEPS_PER_EPOCH")
    flash_attention: bool | None = None
    traceback_filtering: bool = True
    safe_mode: bool = True


def backend() -> str:
    """The backend's name: ``"torch"`` (unison runs Keras on PyTorch).

    Example:
        >>> backend()
        'torch'
    """
    return "torch"


def set_backend(backend: str) -> None:
    """Keras's backend switch; unison has the torch backend only, so only ``"torch"`` is accepted.

    Raises:
        ValueError: any other backend name.
    """
    if backend != "torch":
        raise ValueError(
            f"unison runs Keras on PyTorch only, so the backend cannot be switched. Received: backend={backend!r}. "
            "Expected 'torch'; to run on TensorFlow, JAX or NumPy import the keras package itself."
        )


def dtype_policy() -> Policy:
    """The global dtype policy (``keras.config.dtype_policy``; ``DTypePolicy("float32")`` by default)."""
    return global_policy()


def set_dtype_policy(policy: str | Policy) -> None:
    """Set the global dtype policy: a name such as ``"mixed_float16"`` or a ``DTypePolicy``.

    Raises:
        ValueError: an unknown policy name, or a value that is neither a name nor a policy.
    """
    if not isinstance(policy, (str, Policy)):
        raise ValueError(
            "Invalid `policy` argument. Expected the string name of a policy (such as 'mixed_float16') or a "
            f"`DTypePolicy` instance. Received: policy={policy!r} (of type {type(policy).__name__})"
        )
    set_global_policy(policy)


def _check_limit(name: str, value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"`{name}` must be an integer or None (no limit). Received: {name}={value!r}")
    return value


def max_epochs() -> int | None:
    """The cap on ``fit``'s epochs (``None``: no cap)."""
    return _Settings.max_epochs


def set_max_epochs(max_epochs: int | None) -> None:
    """Cap the epochs of every ``fit`` call (for debugging; ``None`` lifts the cap)."""
    _Settings.max_epochs = _check_limit("max_epochs", max_epochs)


def max_steps_per_epoch() -> int | None:
    """The cap on the steps of each ``fit`` epoch (``None``: no cap)."""
    return _Settings.max_steps_per_epoch


def set_max_steps_per_epoch(max_steps_per_epoch: int | None) -> None:
    """Cap the steps of each epoch of ``fit`` (for debugging; ``None`` lifts the cap)."""
    _Settings.max_steps_per_epoch = _check_limit("max_steps_per_epoch", max_steps_per_epoch)


def enable_flash_attention() -> None:
    """Let attention use flash attention where the inputs allow (Keras's default: ``None``, automatic)."""
    _Settings.flash_attention = None


def disable_flash_attention() -> None:
    """Never use flash attention."""
    _Settings.flash_attention = False


def is_flash_attention_enabled() -> bool | None:
    """``None`` (automatic, the default) or ``False`` (switched off), as Keras reports it."""
    return _Settings.flash_attention


def enable_traceback_filtering() -> None:
    """Turn on Keras's traceback filtering (the default)."""
    _Settings.traceback_filtering = True


def disable_traceback_filtering() -> None:
    """Turn off Keras's traceback filtering."""
    _Settings.traceback_filtering = False


def is_traceback_filtering_enabled() -> bool:
    """Whether Keras's traceback filtering is on."""
    return _Settings.traceback_filtering


def enable_unsafe_deserialization() -> None:
    """Let ``load_model`` rebuild lambdas (Python bytecode) in every later call: safe mode off."""
    _Settings.safe_mode = False


def safe_mode() -> bool:
    """Whether deserialization runs in safe mode (``False`` after ``enable_unsafe_deserialization``)."""
    return _Settings.safe_mode


def is_nnx_enabled() -> bool:
    """``False``: Flax NNX is a JAX feature."""
    return False


def fit_limits(epochs: int, steps_per_epoch: int | None) -> tuple[int, int | None]:
    """``fit``'s epochs and steps per epoch under the ``max_epochs``/``max_steps_per_epoch`` caps.

    Example:
        >>> set_max_epochs(1); fit_limits(5, None)
        (1, None)
        >>> set_max_epochs(None)
    """
    if _Settings.max_epochs is not None:
        epochs = min(epochs, _Settings.max_epochs)
    cap = _Settings.max_steps_per_epoch
    if cap is not None and (steps_per_epoch is None or steps_per_epoch > cap):
        steps_per_epoch = cap
    return epochs, steps_per_epoch
