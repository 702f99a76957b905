"""A real TensorFlow SavedModel (``saved_model.pb`` + ``variables/``) of a Keras model, written by TensorFlow.

unison has no graphs to store, so TensorFlow builds them: the model's architecture (its
``get_config()``) and each layer's weights go to a private temporary folder as JSON and a
``.npz`` (no pickles), and a child process (:mod:`unison.saved_model.tf_graph_worker`, run by
file path, importing TensorFlow and numpy only) rebuilds the same layers with Keras 3, sets the
weights, exports the SavedModel with Keras's ``serving_default`` signature and serves the check
batch through the loaded SavedModel. This process compares those outputs with its own, so a layer
TF's Keras computes differently is an error here, not a silently different SavedModel. TensorFlow
never enters this process (replicas fork after it; TF's runtime threads do not survive a fork).

TensorFlow is an optional extra: ``pip install 'unison[export-tf]'``; ``$UNISON_TF_PYTHON`` names
another Python that has it.

Example:
    >>> import os, tempfile, unison as tf
    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    >>> write_tf_saved_model(model, os.path.join(tempfile.mkdtemp(), "served"))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np
import torch

from unison.errors import ExportDependencyError, ModelNotBuiltError, SavedModelExportError, SavingError

__all__ = ["GRAPH_FILES", "tensorflow_python", "write_tf_saved_model"]

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_graph_worker.py")
# what TF writes into a SavedModel folder (moved into the export folder once complete)
GRAPH_FILES = ("saved_model.pb", "fingerprint.pb", "variables", "assets")
_TIMEOUT_S = 900.0


def tensorflow_python() -> str | None:
    """The Python that has TensorFlow: ``$UNISON_TF_PYTHON``, else this one if it can import it."""
    other = os.environ.get("UNISON_TF_PYTHON")
    if other:
        return other
    return sys.executable if importlib.util.find_spec("tensorflow") is not None else None


def _layer_weights(model: Any, prefix: str = "") -> dict[str, list[np.ndarray]]:
    """Each layer's weights by its path of names (nested models walked), in the layer's Keras order."""
    found: dict[str, list[np.ndarray]] = {}
    for layer in getattr(model, "layers", []):
        path = f"{prefix}{getattr(layer, 'name', '')}"
        if getattr(layer, "layers", None) and hasattr(layer, "get_config"):
            found.update(_layer_weights(layer, path + "/"))
        elif hasattr(layer, "get_weights"):
            weights = [np.asarray(w) for w in layer.get_weights()]
            if weights:
                found[path] = weights
    return found


def _savez(path: str, arrays: dict[str, np.ndarray]) -> None:
    np.savez(path, **arrays)  # type: ignore[arg-type]  # numpy's stub types the first keyword only


def _inputs(model: Any) -> list[dict[str, Any]]:
    try:
        symbolic = list(getattr(model, "inputs", None) or [])
    except (ValueError, AttributeError):
        symbolic = []
    if symbolic:
        return [
            {"name": kt.name, "shape": list(kt.shape), "dtype": str(kt.dtype).replace("torch.", "")} for kt in symbolic
        ]
    hint = getattr(model, "input_shape_hint", None)
    if hint is None:
        raise ModelNotBuiltError(
            f"Model {model.name!r} cannot be exported as a SavedModel: its input shape is not known. Start it "
            "with keras.Input(shape=...) or give the first layer input_shape=."
        )
    return [{"name": "inputs", "shape": [None, *hint], "dtype": "float32"}]


def _check_batch(specs: list[dict[str, Any]]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    batch = []
    for spec in specs:
        shape = [3 if d is None else int(d) for d in spec["shape"]]
        if spec["dtype"].startswith("float"):
            batch.append(rng.random(shape, dtype=np.float32).astype(spec["dtype"]))
        else:
            batch.append(np.zeros(shape, dtype=spec["dtype"]))
    return batch


def _unison_outputs(model: Any, batch: list[np.ndarray]) -> list[np.ndarray]:
    tensors = [torch.from_numpy(b) for b in batch]
    structure = getattr(model, "_input_struct", None)
    if isinstance(structure, dict):
        x: Any = {spec: t for spec, t in zip(structure, tensors)}
    elif isinstance(structure, (list, tuple)) or len(tensors) > 1:
        x = tensors
    else:
        x = tensors[0]
    with torch.no_grad():
        out = model(x, training=False)  # a Keras call: its own mode is put back afterwards
    flat = list(out.values()) if isinstance(out, dict) else list(out) if isinstance(out, (list, tuple)) else [out]
    return [o.detach().cpu().numpy() for o in flat]


def write_tf_saved_model(model: Any, export_dir: str, timeout_s: float = _TIMEOUT_S) -> float:
    """Add ``saved_model.pb`` + ``variables/`` of ``model`` to ``export_dir`` (see the module doc).

    Returns the largest difference between TF's serving outputs and unison's on a check batch.

    Raises:
        ExportDependencyError: no Python with TensorFlow (``pip install 'unison[export-tf]'``).
        SavedModelExportError: TF's Keras cannot rebuild a layer, or computes other numbers.
        ModelNotBuiltError: the model's input shape is not known.
    """
    python = tensorflow_python()
    if python is None:
        raise ExportDependencyError(
            "Writing a TensorFlow SavedModel needs TensorFlow, which is not installed: TensorFlow itself writes "
            "the graph. Install it with: pip install 'unison[export-tf]' (or set UNISON_TF_PYTHON to a Python "
            "that has it). format='onnx' needs no TensorFlow."
        )
    try:
        config = model.get_config()
    except (SavingError, NotImplementedError):
        config = None  # a subclassed model: its architecture is its Python code
    if not isinstance(config, dict) or not config:
        raise SavedModelExportError(
            f"Model {model.name!r} cannot be written as a TensorFlow SavedModel: TensorFlow rebuilds the model "
            f"from its architecture config, and this {type(model).__name__} (a subclassed model) has no "
            "architecture config TF's Keras can read. Build it as a functional or Sequential model, or export it "
            "with format='onnx' or torch.export (docs/export.md)."
        )
    specs = _inputs(model)
    batch = _check_batch(specs)
    want = _unison_outputs(model, batch)
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".tf_export_", dir=parent)
    try:
        weights = _layer_weights(model)
        arrays = {f"w{i}": w for i, w in enumerate(a for ws in weights.values() for a in ws)}
        index, k = {}, 0
        for path, ws in weights.items():
            index[path] = [f"w{k + j}" for j in range(len(ws))]
            k += len(ws)
        _savez(os.path.join(work, "weights.npz"), arrays)
        _savez(os.path.join(work, "batch.npz"), {f"x{i}": b for i, b in enumerate(batch)})
        job = {"name": model.name, "config": config, "inputs": specs, "weights": index, "outputs": len(want)}
        with open(os.path.join(work, "model.json"), "w", encoding="utf-8") as fh:
            json.dump(job, fh)
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
        try:
            done = subprocess.run(
                [python, WORKER, work],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            raise SavedModelExportError(
                f"TensorFlow did not finish writing the SavedModel of {model.name!r} within {timeout_s:.0f} s."
            ) from None
        result_file = os.path.join(work, "result.json")
        result = json.load(open(result_file, encoding="utf-8")) if os.path.isfile(result_file) else {}
        if done.returncode != 0 or "error" in result or not result:
            why = result.get("error") or (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise SavedModelExportError(
                f"TensorFlow could not write the SavedModel of {model.name!r}: {why}. Layers TF's Keras cannot "
                "rebuild from their config (custom layers, unison-only arguments) cannot go into a SavedModel; "
                "format='onnx' or torch.export can export them (docs/export.md)."
            )
        got = np.load(os.path.join(work, "served.npz"), allow_pickle=False)
        diff = max(float(np.max(np.abs(got[f"y{i}"] - w))) if w.size else 0.0 for i, w in enumerate(want))
        scale = max(float(np.max(np.abs(w))) if w.size else 0.0 for w in want)
        if not diff <= 1e-4 * max(1.0, scale):
            raise SavedModelExportError(
                f"TensorFlow's rebuild of {model.name!r} computes other numbers than unison (largest difference "
                f"{diff:.3g} on a check batch): a layer's config means something else to TF's Keras. The "
                "SavedModel was not written; export with format='onnx' instead and report the layer."
            )
        os.makedirs(export_dir, exist_ok=True)
        for name in GRAPH_FILES:
            src, dst = os.path.join(work, "saved_model", name), os.path.join(export_dir, name)
            if os.path.isdir(dst):
                shutil.rmtree(dst)
            if os.path.exists(src):
                os.replace(src, dst)
        return diff
    finally:
        shutil.rmtree(work, ignore_errors=True)
