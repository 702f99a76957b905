"""The TensorFlow half of :mod:`unison.saved_model.tf_graph`: rebuild, set weights, export, serve.

Run by file path (``python tf_graph_worker.py WORK_DIR``) with a Python that has TensorFlow; it
imports TensorFlow (Keras 3), numpy and the standard library, never unison or torch. It reads
``WORK_DIR/model.json`` (architecture config, input specs, the weight arrays of each layer path)
with ``weights.npz`` and ``batch.npz`` (loaded with ``allow_pickle=False``), writes the SavedModel
to ``WORK_DIR/saved_model`` through Keras's ``model.export``, loads it back with
``tf.saved_model.load``, serves the check batch through ``serving_default`` into ``served.npz``,
and reports in ``result.json`` (``{"ok": ...}`` or ``{"error": "..."}``).

Example:
    >>> import subprocess, sys
    >>> subprocess.run([sys.executable, WORKER_FILE, work_dir], check=True)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import operator
import os
import sys
import traceback
from typing import Any

WORKER_FILE = os.path.abspath(__file__)


def _object(value: Any) -> Any:
    """unison's encoded layer arguments in Keras's spelling (initializers and the like by class)."""
    if isinstance(value, list):
        return [_object(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__object__" in value:
        return {"class_name": str(value["__object__"]).split(".", 1)[1], "config": value.get("config", {})}
    if "__registered__" in value:
        raise ValueError(
            f"the argument {value['__registered__']!r} is a custom (registered) object that only unison's code "
            "defines; TensorFlow cannot rebuild it"
        )
    return {k: _object(v) for k, v in value.items()}


def _layer(keras: Any, entry: dict[str, Any]) -> Any:
    name = entry.get("class_name")
    config = _object(entry.get("config", {}))
    try:
        if "module" in entry:  # Keras's own layer entry
            return keras.layers.deserialize(entry)
        from_config = getattr(getattr(keras.layers, str(name), None), "from_config", None)
        if from_config is None:
            raise ValueError(f"keras.layers has no class {name!r}")
        return from_config(config)
    except Exception as error:  # Keras raises TypeError/ValueError for unknown classes and arguments
        raise ValueError(f"TF's Keras cannot rebuild layer {config.get('name')!r} ({name}): {error}") from None


def _decode(value: Any, tensors: dict[int, Any]) -> Any:
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    if isinstance(value, dict):
        if "__tensor__" in value:
            return tensors[value["__tensor__"]]
        if "__tuple__" in value:
            return tuple(_decode(v, tensors) for v in value["__tuple__"])
        if "__dict__" in value:
            return {k: _decode(v, tensors) for k, v in value["__dict__"].items()}
        if "__slice__" in value:
            return slice(*value["__slice__"])
        if "__ellipsis__" in value:
            return Ellipsis
    return value


def _function(keras: Any, dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    if module == "operator":
        return getattr(operator, name)
    found = getattr(keras.ops, name, None)  # torch.add -> keras.ops.add, torch.Tensor.mean -> keras.ops.mean
    if found is None:
        raise ValueError(f"the functional model calls {dotted}, which has no keras.ops counterpart for TF")
    return found


def _functional(keras: Any, config: dict[str, Any]) -> Any:
    tensors: dict[int, Any] = {}
    for i, spec in enumerate(config["inputs"]):
        tensors[i] = keras.Input(shape=tuple(spec["shape"]), name=spec["name"], dtype=spec.get("dtype", "float32"))
    layers = [_layer(keras, entry) for entry in config["layers"]]
    for node in config["nodes"]:
        args = _decode(node["args"], tensors)
        kwargs = _decode(node["kwargs"], tensors)
        op = layers[node["layer"]] if "layer" in node else _function(keras, node["function"])
        out = op(*args, **kwargs)
        flat = keras.tree.flatten(out)
        for index, tensor in zip(node["outputs"], flat):
            tensors[index] = tensor
    return keras.Model(
        _decode(config["input_structure"], tensors), _decode(config["outputs"], tensors), name=config.get("name")
    )


def _sequential(keras: Any, config: dict[str, Any], inputs: list[dict[str, Any]]) -> Any:
    shape = config.get("input_shape") or inputs[0]["shape"][1:]
    layers = [keras.Input(shape=tuple(shape))] + [_layer(keras, entry) for entry in config["layers"]]
    return keras.Sequential(layers, name=config.get("name"))


def rebuild(keras: Any, job: dict[str, Any]) -> Any:
    """The Keras 3 model of ``job["config"]`` (unison's config, or Keras's own)."""
    config = job["config"]
    if "class_name" in config and "config" in config:  # {"class_name": ..., "config": ...} (Keras's)
        return keras.saving.deserialize_keras_object(config)
    if "nodes" in config:
        return _functional(keras, config)
    if "input_layers" in config:
        return keras.Model.from_config(config)
    if "layers" in config and any("module" in entry for entry in config["layers"]):
        return keras.Sequential.from_config(config)  # Keras's own Sequential config
    if "layers" in config and ("input_shape" in config or job["inputs"]):
        return _sequential(keras, config, job["inputs"])
    raise ValueError(f"the architecture config has no layers TF can rebuild (keys {sorted(config)})")


def _find(model: Any, path: str) -> Any:
    layer = model
    for name in path.split("/"):
        layer = layer.get_layer(name)
    return layer


def set_weights(model: Any, job: dict[str, Any], arrays: Any) -> None:
    """Each layer path's arrays into TF's layer, reshaped where Keras keeps the same numbers in more axes."""
    for path, keys in job["weights"].items():
        layer = _find(model, path)
        values = [arrays[k] for k in keys]
        targets = [tuple(w.shape) for w in layer.weights]
        if len(targets) != len(values):
            raise ValueError(
                f"layer {path!r} has {len(targets)} weights in TF's Keras and {len(values)} in unison "
                f"(shapes {targets} vs {[v.shape for v in values]})"
            )
        shaped = []
        for value, target in zip(values, targets):
            if value.size != int(_prod(target)):
                raise ValueError(f"layer {path!r}: a weight of shape {value.shape} cannot become TF's {target}")
            shaped.append(value.reshape(target))
        layer.set_weights(shaped)


def _prod(shape: tuple[int, ...]) -> int:
    total = 1
    for d in shape:
        total *= int(d)
    return total


def main(work: str) -> int:
    os.environ["KERAS_BACKEND"] = "tensorflow"  # Keras 3 on TensorFlow, whatever the user's default
    import keras
    import numpy as np
    import tensorflow as tf

    with open(os.path.join(work, "model.json"), encoding="utf-8") as fh:
        job = json.load(fh)
    try:
        model = rebuild(keras, job)
        set_weights(model, job, np.load(os.path.join(work, "weights.npz"), allow_pickle=False))
        out_dir = os.path.join(work, "saved_model")
        model.export(out_dir, format="tf_saved_model", verbose=False)
        served = tf.saved_model.load(out_dir).signatures["serving_default"]
        batch = np.load(os.path.join(work, "batch.npz"), allow_pickle=False)
        names = sorted(served.structured_input_signature[1])
        feed = {name: tf.constant(batch[f"x{i}"]) for i, name in enumerate(_input_order(job, names))}
        result = served(**feed)
        outputs = [result[k].numpy() for k in sorted(result, key=_output_index)]
        np.savez(os.path.join(work, "served.npz"), **{f"y{i}": y for i, y in enumerate(outputs)})
        report: dict[str, Any] = {"ok": True, "inputs": names, "outputs": sorted(result)}
    except Exception as error:  # every failure goes back to the parent as one sentence
        report = {"error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:600]}
        traceback.print_exc()
    with open(os.path.join(work, "result.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh)
    return 0


def _input_order(job: dict[str, Any], names: list[str]) -> list[str]:
    """The signature's input names in the order of unison's inputs (matched by name, else by position)."""
    wanted = [spec["name"] for spec in job["inputs"]]
    if sorted(wanted) == names:
        return wanted
    if len(names) == 1:
        return names
    raise ValueError(f"the SavedModel's inputs {names} do not match the model's inputs {wanted}")


def _output_index(key: str) -> Any:
    tail = key.rsplit("_", 1)[-1]
    return (0, int(tail)) if tail.isdigit() else (1, key)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
