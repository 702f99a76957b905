"""``tf.saved_model.experimental.TrackableResource`` (the base class of objects that own a resource)
and ``tf.saved_model.Asset`` (a file a SavedModel carries).

``Asset(path)`` holds a file's path as a string tensor (``asset_path``); ``tf.saved_model.save`` of
a ``tf.Module`` copies the file into the SavedModel's ``assets/`` directory and ``load`` gives an
``Asset`` whose ``asset_path`` is that copy, as TF does.

A subclass implements ``_create_resource()`` (returning the handle, e.g. a table or any object) and
may implement ``_initialize()`` and ``_destroy_resource()``; ``resource_handle`` creates the handle
on first use and returns the same one after, as TF's eager ``CapturableResource``. ``device``
pins where TF would create it (``_resource_device``); unison keeps it for reading.

Example:
    >>> class Counter(TrackableResource):
    ...     def _create_resource(self):
    ...         return [0]
    >>> c = Counter()
    >>> c.resource_handle is c.resource_handle
    True
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["Asset", "TrackableResource"]


class Asset:
    """``tf.saved_model.Asset(path)``: a file to export with a SavedModel (see the module notes).

    Example:
        >>> Asset("vocab.txt").asset_path.item()
        b'vocab.txt'
    """

    def __init__(self, path: Any) -> None:
        from unison.ops.string_tensor import as_string_tensor

        value = path.item() if isinstance(path, np.ndarray) else path
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, (str, bytes)):
            raise TypeError(f"tf.saved_model.Asset takes a file path (a string). Received: {path!r}")
        arr = np.empty((), dtype=object)
        arr[()] = value.encode("utf-8") if isinstance(value, str) else value
        self._path = as_string_tensor(arr)

    @property
    def asset_path(self) -> Any:
        """The file's path, a scalar string tensor."""
        return self._path


class TrackableResource:
    """``tf.saved_model.experimental.TrackableResource(device="")`` (see the module notes)."""

    def __init__(self, device: str = "") -> None:
        self._resource_device = device
        self._resource_handle_value: Any = None

    def _create_resource(self) -> Any:
        """The resource's handle; subclasses implement it."""
        raise NotImplementedError("TrackableResource._create_resource not implemented.")

    def _initialize(self) -> None:
        """Fill the resource after it is created; subclasses may implement it."""

    def _destroy_resource(self) -> None:
        """Release the resource; subclasses may implement it."""

    @property
    def resource_handle(self) -> Any:
        """The handle, made by ``_create_resource`` on first use."""
        if self._resource_handle_value is None:
            self._resource_handle_value = self._create_resource()
        return self._resource_handle_value
