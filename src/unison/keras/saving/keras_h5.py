"""Read weights files that Keras wrote into a unison functional model (through ``h5py``).

Three layouts are read:

* **HDF5, Keras 2 / legacy** (``model.save_weights("x.h5")`` in tf.keras, ``model.save("x.h5")``,
  and Keras's ImageNet files such as ``resnet50_weights_tf_dim_ordering_tf_kernels.h5``): the
  root (or its ``model_weights`` group) lists ``layer_names``; each layer's group lists
  ``weight_names``. As Keras does, layers are matched by name when the file names exactly the
  model's layers with weights, otherwise in order.
* **Keras 3 ``.weights.h5``** (``model.save_weights("x.weights.h5")``): ``layers/<name>/vars/<i>``,
  where ``<name>`` is the layer class in snake case numbered by order (``conv2d``, ``conv2d_1``)
  over the model's layers in Keras's order.
* **Keras 3 ``.keras``**: a zip archive holding ``model.weights.h5`` in the layout above.

"In order" means Keras's order of ``model.layers`` (by depth from the inputs, ties broken as
Keras's graph traversal does), which :func:`keras_layer_order` reproduces, so files written by
Keras load even where unison lists layers in another order. Each layer's values go in in the
order of ``layer.weights`` (Keras's order: a BatchNormalization's gamma, beta, moving mean,
moving variance); every shape is checked and a mismatch names the file, the layer and both shapes.

Example:
    >>> import os, tempfile
    >>> from unison.keras import Input, Model, layers
    >>> inputs = Input(shape=(3,))
    >>> model = Model(inputs, layers.Dense(2, name="dense_out")(inputs))
    >>> path = os.path.join(tempfile.mkdtemp(), "w.weights.h5")
    >>> save_keras3_weights(model, path)
    >>> load_weights(model, path) is model
    True
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from typing import Any

import numpy as np
import torch

from unison.errors import WeightsFileError

_EXTRA = 'pip install "unison[tf]"'


def _h5py() -> Any:
    try:
        import h5py
    except ImportError as exc:
        raise ImportError(
            f"Reading Keras weights files (.h5, .weights.h5, .keras) needs the h5py package. Install it with "
            f"`{_EXTRA}` (or `pip install h5py`)."
        ) from exc
    return h5py


def snake_case(name: str) -> str:
    """Keras's ``to_snake_case`` (``Conv2D`` -> ``conv2d``, ``BatchNormalization`` -> ``batch_normalization``)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def keras_layer_order(model: Any) -> list[Any]:
    """``model.layers`` in Keras's order: by depth from the inputs, then by Keras's traversal index.

    Keras numbers operations in the order a depth-first walk from the outputs first reaches them
    and gives each node a depth (an output node 0, its parents at least one more); layers are then
    listed deepest (nearest the inputs) first. unison lists layers in call order, which agrees on
    chains but not always across parallel branches (Inception's), hence this.
    """
    outputs = list(getattr(model, "outputs", None) or [])
    if not outputs:
        return list(model.layers)
    index: dict[int, int] = {}
    decreasing: list[Any] = []  # nodes, each after its parents
    finished: set[int] = set()
    input_ids = {id(kt) for kt in model.inputs}
    stack: list[tuple[Any, bool]] = [(kt, False) for kt in reversed(outputs)]
    while stack:  # the iterative form of Keras's recursive _build_map_helper
        kt, done = stack.pop()
        node = kt._node
        if node is None or id(kt) in input_ids:
            continue
        if done:
            if id(node) not in finished:
                finished.add(id(node))
                decreasing.append(node)
            continue
        if id(node) in finished:
            continue
        index.setdefault(id(node.op), len(index))
        stack.append((kt, True))
        stack.extend((parent, False) for parent in reversed(node.parents))
    node_depth: dict[int, int] = {}
    layer_depth: dict[int, int] = {}
    ops: dict[int, Any] = {}
    for node in reversed(decreasing):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.op), 0))
        layer_depth[id(node.op)] = depth
        node_depth[id(node)] = depth
        ops[id(node.op)] = node.op
        for parent in node.parents:
            if parent._node is not None and id(parent) not in input_ids:
                key = id(parent._node)
                node_depth[key] = max(depth + 1, node_depth.get(key, 0))
    layer_ids = {id(layer) for layer in model.layers}
    ordered = sorted(
        (op for key, op in ops.items() if key in layer_ids),
        key=lambda op: (-layer_depth[id(op)], index[id(op)]),
    )
    return ordered if len(ordered) == len(model.layers) else list(model.layers)


def _weighted(layers: list[Any]) -> list[Any]:
    return [layer for layer in layers if list(getattr(layer, "weights", []))]


def _assign(layer: Any, values: list[np.ndarray], path: str, where: str) -> None:
    targets = list(layer.weights)
    name = getattr(layer, "name", type(layer).__name__)
    if len(values) != len(targets):
        raise WeightsFileError(
            f"{path}: {where} holds {len(values)} weights for layer {name!r} ({type(layer).__name__}), which "
            f"has {len(targets)} ({[tuple(t.shape) for t in targets]}). The file was written for another "
            "architecture or configuration (include_top, classes, alpha...); build the model the file came from."
        )
    with torch.no_grad():
        for i, (target, value) in enumerate(zip(targets, values)):
            array = np.asarray(value)
            if array.size != target.numel() or (
                array.ndim == target.dim() and tuple(array.shape) != tuple(target.shape)
            ):
                raise WeightsFileError(
                    f"{path}: weight {i} of layer {name!r} ({type(layer).__name__}) has shape {tuple(target.shape)} "
                    f"in the model and {tuple(array.shape)} in the file ({where}). Build the model with the "
                    "configuration the file was written for (input channels, classes, include_top, alpha...)."
                )
            # same values, other rank: a Normalization's mean is (3,) in Keras and (1, 1, 3) here
            tensor = torch.as_tensor(array.reshape(tuple(target.shape)), dtype=target.dtype)
            target.copy_(tensor.to(target.device))


def _legacy_groups(root: Any) -> tuple[Any, list[str]] | None:
    """The group with ``layer_names`` (the root, or ``model_weights`` of a full-model .h5 file)."""
    for group in (root, root.get("model_weights")):
        if group is not None and "layer_names" in group.attrs:
            return group, [_text(n) for n in group.attrs["layer_names"]]
    return None


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _load_legacy(model: Any, group: Any, names: list[str], path: str) -> None:
    saved = []
    for name in names:
        weight_names = [_text(n) for n in group[name].attrs.get("weight_names", [])]
        if weight_names:
            saved.append((name, [np.asarray(group[name][w]) for w in weight_names]))
    layers = _weighted(keras_layer_order(model))
    by_name: dict[str, Any] = {str(getattr(layer, "name", "")): layer for layer in layers}
    if sorted(by_name) == sorted(name for name, _ in saved):
        for name, values in saved:
            _assign(by_name[name], values, path, f"layer group {name!r}")
        return
    if len(saved) != len(layers):
        raise WeightsFileError(
            f"{path}: Layer count mismatch when loading weights from file. Model expected {len(layers)} layers "
            f"with weights, found {len(saved)} saved layers. The file was written for another architecture or "
            "configuration (include_top, classes...); build the model the file came from."
        )
    for layer, (name, values) in zip(layers, saved):
        _assign(layer, values, path, f"layer group {name!r}")


def _load_keras3(model: Any, root: Any, path: str) -> None:
    group = root.get("layers")
    if group is None:
        raise WeightsFileError(
            f"{path}: not a Keras weights file: it has neither Keras 3's 'layers' group nor Keras 2's "
            f"'layer_names' (top-level keys: {sorted(root.keys())[:8]})."
        )
    counts: dict[str, int] = {}
    for layer in [None, *keras_layer_order(model)]:  # None: Keras's InputLayer, first of model.layers
        base = "input_layer" if layer is None else snake_case(type(layer).__name__)
        n = counts.get(base)
        counts[base] = 0 if n is None else n + 1
        key = base if n is None else f"{base}_{n + 1}"
        if layer is None or not list(layer.weights):
            continue
        entry = group.get(key)
        holder = entry.get("vars") if entry is not None else None
        if holder is None:
            raise WeightsFileError(
                f"{path}: the file has no weights for layer {layer.name!r} (Keras's entry 'layers/{key}/vars'). "
                "It was written for another architecture; build the model the file came from."
            )
        values = [np.asarray(holder[str(i)]) for i in range(len(holder))]
        _assign(layer, values, path, f"'layers/{key}/vars'")


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def is_keras_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file Keras wrote: HDF5, or a zip archive holding ``model.weights.h5``."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        if f.read(8) == _HDF5_SIGNATURE:
            return True
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return "model.weights.h5" in archive.namelist()
    except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError):
        # A damaged unison file can look like a zip with a nonsense header: it is not Keras's, and
        # unison's own reader names the damage.
        return False
    return False


def load_weights(model: Any, path: str | os.PathLike[str]) -> Any:
    """Load a weights file Keras wrote (``.h5``, ``.weights.h5`` or ``.keras``) into ``model``.

    Raises:
        WeightsFileError: a missing or unreadable file, or one written for another architecture.
        ImportError: without ``h5py`` (``pip install "unison[tf]"``).
    """
    h5py = _h5py()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise WeightsFileError(f"No weights file at {path!r}. Pass the path of a file Keras wrote.")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            if "model.weights.h5" not in archive.namelist():
                raise WeightsFileError(
                    f"{path}: a zip archive without 'model.weights.h5'; not a Keras 3 .keras file "
                    f"(it holds {archive.namelist()[:8]})."
                )
            data = io.BytesIO(archive.read("model.weights.h5"))
        with h5py.File(data, "r") as root:
            _load_keras3(model, root, path)
        return model
    try:
        root = h5py.File(path, "r")
    except OSError as exc:
        raise WeightsFileError(
            f"{path}: not an HDF5 file ({exc}). unison reads Keras's .h5, .weights.h5 and .keras files; files "
            "from unison's own model.save_weights load with model.load_weights."
        ) from exc
    with root:
        legacy = _legacy_groups(root)
        if legacy is not None:
            _load_legacy(model, legacy[0], legacy[1], path)
        else:
            _load_keras3(model, root, path)
    return model


def save_keras3_weights(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model``'s weights in Keras 3's ``.weights.h5`` layout (``layers/<name>/vars/<i>``).

    Keras 3 reads such a file into the same architecture with ``model.load_weights(path)``.
    """
    h5py = _h5py()
    counts: dict[str, int] = {}
    with h5py.File(os.fspath(path), "w") as root:
        group = root.create_group("layers")
        for layer in [None, *keras_layer_order(model)]:
            base = "input_layer" if layer is None else snake_case(type(layer).__name__)
            n = counts.get(base)
            counts[base] = 0 if n is None else n + 1
            key = base if n is None else f"{base}_{n + 1}"
            holder = group.create_group(key).create_group("vars")
            for i, weight in enumerate([] if layer is None else list(layer.weights)):
                holder.create_dataset(str(i), data=weight.detach().cpu().numpy())
        root.create_group("vars")


__all__ = ["is_keras_file", "keras_layer_order", "load_weights", "save_keras3_weights", "snake_case"]
