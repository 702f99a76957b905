"""Keras 3's top-level scopes and version: ``keras.name_scope``, ``keras.device``, ``keras.version``.

``name_scope(name)`` nests names (``outer/inner``) that :func:`current_path` reports; ``device("gpu:0")``
makes new tensors default to that torch device inside it (``"gpu"`` is CUDA), as the torch backend
of Keras does. ``version()`` is the Keras API version unison follows.

Example:
    >>> with name_scope("outer"):
    ...     with name_scope("inner") as scope:
    ...         current_path()
    'outer/inner'
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["current_path", "device", "name_scope", "version"]

# The Keras release whose API unison follows (the coverage report measures against it).
KERAS_API_VERSION = "3.15.1"
_SCOPES: list[str] = []


def version() -> str:
    """The Keras API version unison follows (``"3.15.1"``)."""
    return KERAS_API_VERSION


class name_scope:  # noqa: N801  (Keras's class name)
    """A context that prefixes names: ``with keras.name_scope("block1"): ...``.

    Raises:
        ValueError: an empty or non-string ``name``.
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"Argument `name` must be a non-empty string. Received: name={name!r}")
        self.name = name
        self._kwargs = kwargs

    def __enter__(self) -> name_scope:
        _SCOPES.append(self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        _SCOPES.pop()


def current_path() -> str:
    """The names of the open :class:`name_scope` contexts joined by ``/``."""
    return "/".join(_SCOPES)


@contextlib.contextmanager
def device(device_name: str) -> Iterator[None]:
    """Create tensors on ``device_name`` (``"cpu"``, ``"cpu:0"``, ``"gpu:1"``, ``"cuda:0"``) inside the block.

    Raises:
        ValueError: a device name torch does not know.
    """
    if not isinstance(device_name, str):
        raise ValueError(
            f"Invalid value for argument `device_name`. Expected a string like 'gpu:0'. Received: device_name={device_name!r}"
        )
    name = device_name.lower().lstrip("/").replace("device:", "")
    name = "cuda" + name[3:] if name.startswith("gpu") else name
    try:
        target = torch.device(name)
    except RuntimeError as e:
        raise ValueError(
            f"Invalid value for argument `device_name`. Expected a string like 'gpu:0' or 'cpu'. Received: device_name={device_name!r}"
        ) from e
    with target:
        yield
