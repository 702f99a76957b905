"""``tf.saved_model.experimental.TrackableResource``: the base class of objects that own a resource.

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

from typing import Any

__all__ = ["TrackableResource"]


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
