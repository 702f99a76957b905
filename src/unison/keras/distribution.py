"""``keras.distribution`` names over unison's engines: ``DataParallel`` and ``ModelParallel``.

What each name means here (and what it does not):

* ``DataParallel``: every replica holds the whole model; gradients are averaged or summed by
  the one synchronisation path (:class:`unison.DistributedOptimizer`, which the strategies
  use). This is what ``MirroredStrategy``/``MultiWorkerMirroredStrategy`` already do.
* ``ModelParallel``: every parameter is split over the replicas of a one-axis ``DeviceMesh``
  (the data axis) with PyTorch's FSDP2 (:func:`unison.distribute.sharding.shard_model`): in
  Keras/JAX terms, a ``LayoutMap`` that shards every variable along the batch axis, which is
  how JAX writes fully sharded data parallelism. A ``LayoutMap`` entry chooses which dimension
  of a parameter is split (``(None, "batch")`` splits dimension 1). Tensor parallelism (a second
  ``"model"`` mesh axis, activations split inside a layer) and replicated entries are not
  supported: they raise an error that says so.

Keys of a ``LayoutMap`` are regular expressions matched (``re.search``) against PyTorch
parameter names (``"blocks.0.mlp.0.weight"``), not Keras variable paths.

Example (one replica: nothing to split, the model comes back as it was):
    >>> import torch
    >>> from unison.keras import distribution
    >>> mesh = distribution.DeviceMesh(shape=(1,), axis_names=("batch",))   # (num_replicas,)
    >>> layout_map = distribution.LayoutMap(mesh)
    >>> layout_map[".*weight"] = ("batch", None)
    >>> dist = distribution.ModelParallel(layout_map=layout_map, batch_dim_name="batch")
    >>> model = dist.distribute_model(torch.nn.Linear(4, 2))
    >>> layout_map["0.weight"].axes
    ('batch', None)

From ``fit``: set the distribution (Keras 3's ``set_distribution``, or ``with dist.scope():``)
and train under a strategy of N replicas; when training starts, each replica shards the model
with ``ModelParallel`` (its gradients are reduce-scattered by FSDP2, not all-reduced), and
``get_weights``/``save_weights``/``save``/``ModelCheckpoint`` gather the whole weights::

    distribution.set_distribution(distribution.ModelParallel(layout_map=layout_map))
    with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
        model = build_model()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=64, epochs=3)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any

import torch

from unison.comm.communicator import Communicator
from unison.distribute.sharding import broadcast_module, shard_model, sharding_communicator
from unison.optim.distributed import Average, ReduceOp

__all__ = [
    "DataParallel",
    "DeviceMesh",
    "LayoutMap",
    "ModelParallel",
    "TensorLayout",
    "distribution",
    "get_device_count",
    "list_devices",
    "set_distribution",
]

# The distribution set_distribution() chose (Keras 3 keeps it as global state too); None: plain
# data parallelism under whatever strategy runs the program.
_CURRENT: list[DataParallel | ModelParallel | None] = [None]


def set_distribution(value: DataParallel | ModelParallel | None) -> None:
    """Make ``value`` the distribution ``fit`` trains with (``None``: the strategy's plain data parallelism).

    Example:
        >>> from unison.keras import distribution
        >>> distribution.set_distribution(distribution.DataParallel())
        >>> type(distribution.distribution()).__name__
        'DataParallel'
        >>> distribution.set_distribution(None)
    """
    if value is not None and not isinstance(value, (DataParallel, ModelParallel)):
        raise TypeError(
            "set_distribution expects a keras.distribution.DataParallel or ModelParallel (or None). "
            f"Received: {type(value).__name__}"
        )
    _CURRENT[0] = value


def distribution() -> DataParallel | ModelParallel | None:
    """The distribution :func:`set_distribution` set, or ``None``."""
    return _CURRENT[0]


@contextlib.contextmanager
def _scope(value: DataParallel | ModelParallel) -> Iterator[DataParallel | ModelParallel]:
    previous = _CURRENT[0]
    _CURRENT[0] = value
    try:
        yield value
    finally:
        _CURRENT[0] = previous


def get_device_count(device_type: str | None = None) -> int:
    """How many devices of ``device_type`` (``None``: the default kind) this process sees."""
    return len(list_devices(device_type))


def list_devices(device_type: str | None = None) -> list[str]:
    """The devices of this process, Keras-style (``"gpu:0"``, ``"cpu:0"``)."""
    if device_type not in (None, "cpu", "gpu"):
        raise ValueError(f"device_type must be None, 'cpu' or 'gpu'. Received: device_type={device_type!r}")
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if device_type == "gpu" or (device_type is None and gpus):
        return [f"gpu:{i}" for i in range(gpus)]
    return ["cpu:0"]


class DeviceMesh:
    """The replicas arranged on named axes; unison supports one axis (the data/batch axis).

    Args:
        shape: ``(num_replicas,)``; checked against the job when the model is distributed.
        axis_names: one name, e.g. ``("batch",)``.
        devices: optional device list (informational: each replica owns its own device).
    """

    def __init__(self, shape: Sequence[int], axis_names: Sequence[str], devices: Sequence[str] | None = None) -> None:
        shape, axis_names = tuple(shape), tuple(axis_names)
        if len(shape) != len(axis_names):
            raise ValueError(
                f"shape and axis_names must have the same length. Received: shape={shape}, axis_names={axis_names}"
            )
        if len(shape) != 1:
            raise ValueError(
                f"unison's DeviceMesh has one axis (the data axis that ModelParallel shards parameters "
                f"over); tensor parallelism over a second axis is not supported. Received: shape={shape}, "
                f"axis_names={axis_names}. Use DeviceMesh(shape=(num_replicas,), axis_names=('batch',))."
            )
        if not all(isinstance(n, int) and n >= 1 for n in shape):
            raise ValueError(f"shape must hold positive integers. Received: shape={shape}")
        self.shape, self.axis_names = shape, axis_names
        self.devices = list(devices) if devices is not None else None

    def __repr__(self) -> str:
        return f"DeviceMesh(shape={self.shape}, axis_names={self.axis_names})"


class TensorLayout:
    """Which mesh axis splits which dimension of one tensor (``None``: that dimension is whole)."""

    def __init__(self, axes: Sequence[str | None], device_mesh: DeviceMesh | None = None) -> None:
        self.axes = tuple(axes)
        self.device_mesh = device_mesh

    def __repr__(self) -> str:
        return f"TensorLayout(axes={self.axes})"


class LayoutMap(MutableMapping[str, TensorLayout]):
    """Regex of parameter names -> :class:`TensorLayout` (tuples are converted), as in Keras.

    Lookup: an exact key first, else the one key whose regex ``re.search``-es the name; several
    matching keys is an error (as in Keras), none returns ``None``.
    """

    def __init__(self, device_mesh: DeviceMesh | None = None) -> None:
        self.device_mesh = device_mesh
        self._layouts: dict[str, TensorLayout] = {}

    def __setitem__(self, key: str, layout: TensorLayout | Sequence[str | None]) -> None:
        if key in self._layouts:
            raise ValueError(f"{key!r} already has a layout ({self._layouts[key]}); delete it first.")
        if not isinstance(layout, TensorLayout):
            if isinstance(layout, str) or not isinstance(layout, Sequence):
                raise ValueError(f"A layout is a TensorLayout or a tuple of axis names/None. Received: {layout!r}")
            layout = TensorLayout(layout, self.device_mesh)
        self._layouts[key] = layout

    def __getitem__(self, key: str) -> TensorLayout:
        if key in self._layouts:
            return self._layouts[key]
        matches = [k for k in self._layouts if re.search(k, key)]
        if len(matches) > 1:
            raise ValueError(f"Parameter {key!r} matches several LayoutMap keys {matches}; make them exclusive.")
        return self._layouts[matches[0]] if matches else None  # type: ignore[return-value]

    def __delitem__(self, key: str) -> None:
        del self._layouts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._layouts)

    def __len__(self) -> int:
        return len(self._layouts)


class DataParallel:
    """Replicate the model; gradients synchronise through :class:`unison.DistributedOptimizer`.

    Args:
        device_mesh: an optional one-axis mesh.
        devices: optional device list.
    """

    def __init__(self, device_mesh: DeviceMesh | None = None, devices: Sequence[str] | None = None) -> None:
        if device_mesh is None:  # as Keras: one "batch" axis over the given (or all local) devices
            listed = list(devices) if devices is not None else list_devices()
            device_mesh = DeviceMesh((len(listed),), ("batch",), listed)
        self.device_mesh = device_mesh
        self.devices = list(devices) if devices is not None else device_mesh.devices
        self.batch_dim_name = device_mesh.axis_names[0]

    def get_data_layout(self, data_shape: Sequence[int]) -> TensorLayout:
        """The layout of an input batch: its first dimension split over the batch axis."""
        return TensorLayout((self.batch_dim_name,) + (None,) * (len(data_shape) - 1), self.device_mesh)

    def get_variable_layout(self, variable: Any) -> TensorLayout:
        """Variables are replicated: every dimension whole."""
        return TensorLayout((None,) * len(tuple(variable.shape)), self.device_mesh)

    def scope(self) -> contextlib.AbstractContextManager[DataParallel | ModelParallel]:
        """The distribution of the block (Keras 3's ``with distribution.scope():``)."""
        return _scope(self)

    def distribute_model(self, model: torch.nn.Module, communicator: Communicator | None = None) -> torch.nn.Module:
        """Move ``model`` to this replica's device and start every replica from replica 0's values."""
        comm = sharding_communicator(communicator)
        model.to(comm.device)
        if comm.is_distributed:
            broadcast_module(model, comm)
        return model


class ModelParallel:
    """Split every parameter over the replicas (FSDP2), as a ``LayoutMap`` on the batch axis says.

    Args:
        layout_map: optional; chooses the split dimension per parameter (default: dimension 0).
        batch_dim_name: the mesh axis the batch and the parameters are split along.
        device_mesh: the mesh; taken from ``layout_map`` when it has one.
    """

    def __init__(
        self,
        *,
        layout_map: LayoutMap | None = None,
        batch_dim_name: str | None = None,
        device_mesh: DeviceMesh | None = None,
    ) -> None:
        # None: one axis over every replica of the job (known once the job exists)
        self.device_mesh = device_mesh or (layout_map.device_mesh if layout_map is not None else None)
        axis = self.device_mesh.axis_names[0] if self.device_mesh is not None else (batch_dim_name or "batch")
        if batch_dim_name is not None and batch_dim_name != axis:
            raise ValueError(
                f"batch_dim_name must be the mesh's axis {axis!r}. Received: batch_dim_name={batch_dim_name!r}"
            )
        self.batch_dim_name = axis
        self.layout_map = layout_map or LayoutMap(self.device_mesh)
        for key, layout in self.layout_map.items():
            self._split_dim(key, layout)  # validate before any process group is touched

    def get_data_layout(self, data_shape: Sequence[int]) -> TensorLayout:
        """The layout of an input batch: its first dimension split over the batch axis."""
        return TensorLayout((self.batch_dim_name,) + (None,) * (len(data_shape) - 1), self.device_mesh)

    def _split_dim(self, key: str, layout: TensorLayout) -> int:
        named = [i for i, a in enumerate(layout.axes) if a is not None]
        bad = [a for a in layout.axes if a is not None and a != self.batch_dim_name]
        if bad or len(named) != 1:
            raise ValueError(
                f"LayoutMap[{key!r}] = {layout.axes}: unison's ModelParallel splits each parameter along "
                f"exactly one dimension over the mesh axis {self.batch_dim_name!r} (FSDP); replicated "
                "layouts and other axes (tensor parallelism) are not supported. Example: "
                f"({self.batch_dim_name!r}, None) splits dimension 0."
            )
        return named[0]

    def scope(self) -> contextlib.AbstractContextManager[DataParallel | ModelParallel]:
        """The distribution of the block (Keras 3's ``with distribution.scope():``)."""
        return _scope(self)

    def distribute_model(
        self,
        model: torch.nn.Module,
        op: ReduceOp = Average,
        block_types: Sequence[type] | None = None,
        communicator: Communicator | None = None,
        sync_initial_values: bool = True,
    ) -> torch.nn.Module:
        """Shard ``model`` over the replicas; build the optimizer on the returned model afterwards.

        ``op``: ``unison.Average`` for per-replica mean losses, ``unison.Sum`` for losses divided
        by the global batch (the strategies' and ``fit``'s contract). ``communicator``: the job
        (by default the current strategy's).
        """
        comm = sharding_communicator(communicator)
        if self.device_mesh is not None and self.device_mesh.shape[0] != comm.world_size:
            raise ValueError(
                f"The DeviceMesh has {self.device_mesh.shape[0]} entries but the job has {comm.world_size} "
                f"replicas. Received: shape={self.device_mesh.shape}. Use shape=({comm.world_size},)."
            )
        dims: dict[str, int] = {}
        for name, param in model.named_parameters():
            layout = self.layout_map[name]
            if layout is not None:
                dim = self._split_dim(name, layout)
                if len(layout.axes) != param.dim():
                    raise ValueError(
                        f"LayoutMap gives {name!r} the layout {layout.axes} ({len(layout.axes)} "
                        f"dimensions) but its shape is {list(param.shape)}."
                    )
                dims[name] = dim
        return shard_model(
            model,
            op=op,
            block_types=block_types,
            shard_dims=dims,
            sync_initial_values=sync_initial_values,
            communicator=comm,
        )

    def __repr__(self) -> str:
        return f"ModelParallel(device_mesh={self.device_mesh}, layout_map={dict(self.layout_map)})"
