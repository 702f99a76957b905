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
    try:
        outputs = list(getattr(model, "outputs", None) or [])
    except ValueError:  # a Sequential built by a call, without an Input: its layers' own order
        return list(model.layers)
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
            # same values, other rank (a Normalization's (1, 1, 3) mean of a file unison wrote before it kept (3,))
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


def _container_names(layers: list[Any]) -> list[tuple[str, Any]]:
    """Keras 3's names for a list of layers: snake-case class, numbered by order (``dense``, ``dense_1``)."""
    counts: dict[str, int] = {}
    out = []
    for layer in layers:
        # a private stand-in for a Keras layer (applications' GroupedConv2D is Keras's Conv2D) names
        # the Keras class it stands for, as Keras's file does
        kind = getattr(type(layer), "keras_class_name", type(layer).__name__)
        base = "input_layer" if layer is None else snake_case(kind)
        n = counts.get(base)
        counts[base] = 0 if n is None else n + 1
        out.append((base if n is None else f"{base}_{n + 1}", layer))
    return out


def keras3_layer_paths(model: Any) -> list[tuple[str, Any]]:
    """Where Keras 3's weights file keeps each layer of ``model`` (``None``: an InputLayer's place).

    Functional and Sequential models: ``layers/<name>`` over Keras's layer order. A subclassed
    model as Keras 3 walks it: its attributes in sorted order, each layer at its attribute name,
    and the ``layers`` list (every layer not met yet at ``layers/<name>``, names counted over all).
    """
    from unison.keras.saving.serialization import _model_classes

    _, Sequential, Functional = _model_classes()
    if isinstance(model, (Sequential, Functional)) or not hasattr(model, "named_children"):
        return [(f"layers/{key}", layer) for key, layer in _container_names([None, *keras_layer_order(model)])]
    attributes = {name: child for name, child in model.named_children() if hasattr(child, "weights")}
    seen: set[int] = set()
    paths: list[tuple[str, Any]] = []
    for name in sorted({*attributes, "layers"}):
        if name == "layers" and name not in attributes:
            for key, layer in _container_names(list(model.layers)):
                if id(layer) not in seen:
                    seen.add(id(layer))
                    paths.append((f"layers/{key}", layer))
        elif id(attributes[name]) not in seen:
            seen.add(id(attributes[name]))
            paths.append((name, attributes[name]))
    return paths


def _other_paths(model: Any) -> dict[int, list[str]]:
    """Each layer's other places in a subclassed model's file: its attribute, ``layers/<name>``.

    Keras 3 and tf_keras walk a subclassed model in different orders, so a layer sits under its
    attribute name in one and under the ``layers`` list in the other; unison reads either and
    writes both (hard links, one copy of the data).
    """
    from unison.keras.saving.serialization import _model_classes

    _, Sequential, Functional = _model_classes()
    if isinstance(model, (Sequential, Functional)) or not hasattr(model, "named_children"):
        return {}
    out: dict[int, list[str]] = {}
    for name, child in model.named_children():
        if hasattr(child, "weights"):
            out.setdefault(id(child), []).append(name)
    for key, layer in _container_names(list(model.layers)):
        out.setdefault(id(layer), []).append(f"layers/{key}")
    return out


def _is_container(layer: Any) -> bool:
    """Whether Keras 3 files ``layer``'s weights under its own ``layers/<name>`` (a nested model)."""
    from unison.keras.saving.serialization import _model_classes

    _, Sequential, Functional = _model_classes()
    return isinstance(layer, (Sequential, Functional))


def _load_keras3(model: Any, root: Any, path: str) -> None:
    if root.get("layers") is None and root.get("vars") is None:
        raise WeightsFileError(
            f"{path}: not a Keras weights file: it has neither Keras 3's 'layers' group nor Keras 2's "
            f"'layer_names' (top-level keys: {sorted(root.keys())[:8]})."
        )
    others = _other_paths(model)
    for key, layer in keras3_layer_paths(model):
        if layer is None or not list(layer.weights):
            continue
        entry = root.get(key)
        if _is_container(layer) and entry is not None and entry.get("layers") is not None:
            _load_keras3(layer, entry, path)  # a nested Sequential/Functional: its own layers/<name>
            continue
        for other in others.get(id(layer), []):
            if entry is not None and entry.get("vars") is not None and len(entry["vars"]):
                break
            entry, key = root.get(other), other
        holder = entry.get("vars") if entry is not None else None
        if holder is None:
            raise WeightsFileError(
                f"{path}: the file has no weights for layer {layer.name!r} (Keras's entry '{key}/vars'). "
                "It was written for another architecture; build the model the file came from."
            )
        values = [np.asarray(holder[str(i)]) for i in range(len(holder))]
        if not values:  # a layer whose weights Keras keeps in sublayers (MultiHeadAttention's query_dense...)
            for child, _ in layer.named_children():
                sub = entry.get(child) or entry.get("_" + child)  # Keras 3's name, tf_keras's
                if sub is not None and sub.get("vars") is not None:
                    values += [np.asarray(sub["vars"][str(i)]) for i in range(len(sub["vars"]))]
        _assign(layer, values, path, f"'{key}/vars'")


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
UNISON_STATE = "unison_state"  # the group of a unison-written file that holds its state_dict by key


def read_unison_state(root: Any) -> dict[str, torch.Tensor] | None:
    """The ``state_dict`` a unison-written Keras weights file carries, or None (a file Keras wrote)."""
    group = root.get(UNISON_STATE)
    if group is None:
        return None
    return {key: torch.from_numpy(np.array(group[key])) for key in group}


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


_MHA_PARTS = ("query_dense", "key_dense", "value_dense", "output_dense")
_MHA_LEGACY = {"query_dense": "query", "key_dense": "key", "value_dense": "value", "output_dense": "attention_output"}


def whole_weights(model: Any, state: dict[str, torch.Tensor] | None) -> dict[int, torch.Tensor]:
    """Each parameter and buffer of ``model`` (by id) as a whole tensor from ``state`` (its full
    ``state_dict``): a sharded model's weights are shards, the saved file holds them whole."""
    if not state:
        return {}
    named = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    return {id(value): state[key] for key, value in named if key in state}


def keras_parts(layer: Any, whole: dict[int, torch.Tensor] | None = None) -> list[tuple[str | None, list[np.ndarray]]]:
    """A layer's weights as Keras stores them: ``(sublayer or None, arrays in Keras's shapes)``.

    Most layers hold their weights themselves (one part, ``None``). ``MultiHeadAttention`` holds them
    in four sublayers whose kernels Keras keeps per head (``(d, heads, key_dim)``; unison's Dense
    keeps ``(d, heads * key_dim)``, the same numbers in the same order).
    """
    values = [(whole or {}).get(id(w), w).detach().cpu().numpy() for w in layer.weights]
    kind = type(layer).__name__
    if kind == "MultiHeadAttention" and len(values) == 8:
        heads, key_dim, value_dim = int(layer.num_heads), int(layer.key_dim), int(layer.value_dim)
        parts: list[tuple[str | None, list[np.ndarray]]] = []
        for i, part in enumerate(_MHA_PARTS):
            kernel, bias = values[2 * i], values[2 * i + 1]
            if part == "output_dense":
                kernel = kernel.reshape(heads, value_dim, kernel.shape[-1])
            else:
                per_head = value_dim if part == "value_dense" else key_dim
                kernel, bias = kernel.reshape(kernel.shape[0], heads, per_head), bias.reshape(heads, per_head)
            parts.append((part, [kernel, bias]))
        return parts
    return [(None, values)]


def _write_layers(
    model: Any, root: Any, whole: dict[int, torch.Tensor], written: dict[tuple[int, tuple[int, ...]], Any]
) -> None:
    """``model``'s layers under ``root/layers/<name>/vars/<i>``, nested models recursively."""
    root.create_group("layers")
    for key, layer in keras3_layer_paths(model):
        entry = root.create_group(key)
        holder = entry.create_group("vars")
        if layer is None:
            continue
        if _is_container(layer):  # a nested Sequential/Functional: Keras nests its layers/<name>
            _write_layers(layer, entry, whole, written)
            continue
        parts = keras_parts(layer, whole)
        if parts and parts[0][0] is not None:  # sublayers (MultiHeadAttention's), as Keras nests them
            for extra in ("_dropout_layer", "_softmax"):
                entry.create_group(extra).create_group("vars")
        weights, n = list(layer.weights), 0
        for part, arrays in parts:
            if part is not None:
                target = entry.create_group(part).create_group("vars")
                entry["_" + part] = entry[part]  # tf_keras names the sublayer _query_dense: a hard link
            else:
                target = holder
            for i, array in enumerate(arrays):
                dataset = target.create_dataset(str(i), data=array)
                source = whole.get(id(weights[n]), weights[n])
                if array.shape == tuple(source.shape):
                    written[(source.data_ptr(), tuple(source.shape))] = dataset
                n += 1


def write_keras3_weights(
    model: Any,
    root: Any,
    optimizer_vars: list[np.ndarray] | None = None,
    state: dict[str, torch.Tensor] | None = None,
) -> None:
    """Fill an open ``h5py`` file (or group) with Keras 3's weights layout (``layers/<name>/vars/<i>``).

    ``optimizer_vars`` (Keras's order: iterations, learning rate, then the slots) go under
    ``optimizer/vars`` as Keras 3 stores a compiled model's optimizer. ``state`` (the model's
    ``state_dict``) goes under ``unison_state/<key>``, a group Keras ignores: each entry is a hard
    link to the dataset Keras's layout already holds for that tensor (no second copy), plus the
    buffers Keras has no place for, so unison reads its own files back exactly.
    """
    written: dict[tuple[int, tuple[int, ...]], Any] = {}
    whole = whole_weights(model, state)
    _write_layers(model, root, whole, written)
    for key, layer in keras3_layer_paths(model):
        for other in _other_paths(model).get(id(layer), []) if layer is not None else []:
            if other not in root:
                root[other] = root[key]  # the same group under tf_keras's name for it
    if state is not None:
        _write_state(root, state, written)
    if optimizer_vars is not None:
        holder = root.create_group("optimizer").create_group("vars")
        for i, value in enumerate(optimizer_vars):
            holder.create_dataset(str(i), data=value)
    root.create_group("vars")


def write_legacy_weights(model: Any, root: Any, state: dict[str, torch.Tensor] | None = None) -> None:
    """Fill an open ``h5py`` group with Keras 2's layout: ``layer_names``, each layer's ``weight_names``.

    This is what ``save_weights("w.h5")`` writes in tf_keras and Keras 3, and the ``model_weights``
    group of a full-model ``.h5``.
    """
    layers = keras_layer_order(model)
    written: dict[tuple[int, tuple[int, ...]], Any] = {}
    whole = whole_weights(model, state)
    root.attrs["layer_names"] = np.array([str(layer.name).encode() for layer in layers])
    root.attrs["backend"] = b"tensorflow"
    for layer in layers:
        group = root.create_group(str(layer.name))
        names = []
        weights = list(layer.weights)
        i = 0
        for part, arrays in keras_parts(layer, whole):
            for array in arrays:
                short = str(getattr(weights[i], "name", f"weight_{i}")).split("/")[-1].split(":")[0] or f"weight_{i}"
                full = f"{layer.name}/{_MHA_LEGACY[part]}/{short}" if part else f"{layer.name}/{short}"
                while full in names:
                    full = f"{full}_{i}"
                names.append(full)
                dataset = group.create_dataset(full, data=array)
                source = whole.get(id(weights[i]), weights[i])
                if array.shape == tuple(source.shape):
                    written[(source.data_ptr(), tuple(source.shape))] = dataset
                i += 1
        group.attrs["weight_names"] = np.array([n.encode() for n in names])
    if state is not None:
        _write_state(root.file, state, written)


def _write_state(root: Any, state: dict[str, torch.Tensor], written: dict[tuple[int, tuple[int, ...]], Any]) -> None:
    own = root.create_group(UNISON_STATE)
    for key, value in state.items():
        if not isinstance(value, torch.Tensor):
            continue
        same = written.get((value.data_ptr(), tuple(value.shape)))
        if same is not None and value.numel() > 0:
            own[key] = same  # a hard link: the same bytes under a second name
        else:
            own.create_dataset(key, data=value.detach().cpu().numpy())


def save_keras3_weights(model: Any, path: str | os.PathLike[str]) -> None:
    """Write ``model``'s weights in Keras 3's ``.weights.h5`` layout (``layers/<name>/vars/<i>``).

    Keras 3 reads such a file into the same architecture with ``model.load_weights(path)``.
    """
    h5py = _h5py()
    with h5py.File(os.fspath(path), "w") as root:
        write_keras3_weights(model, root)


__all__ = [
    "is_keras_file",
    "keras_layer_order",
    "read_unison_state",
    "load_weights",
    "save_keras3_weights",
    "snake_case",
    "write_keras3_weights",
    "write_legacy_weights",
]
