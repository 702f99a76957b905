"""Whole-model files: ``model.save("m.keras")`` and ``keras.models.load_model("m.keras")``.

``.keras``, ``.h5`` and ``.hdf5`` paths are Keras's own formats, written and read by
:mod:`unison.keras.saving.keras_files` (docs/saving.md). Any other path (ModelCheckpoint's
``"ckpt-{epoch}"``) is unison's own file: the architecture as a JSON config, the weights (the
model's ``state_dict``) and, for a compiled model, the compile arguments, written through
:mod:`unison.keras.saving.weights_file` (atomic, SHA-256-verified, read with
``torch.load(weights_only=True)``). Loading never unpickles code: layer classes are looked up
by name among ``custom_objects`` (and ``custom_object_scope``), the classes registered with
``@keras.saving.register_keras_serializable`` (:mod:`unison.keras.utils.object_registration`),
``keras.layers`` and ``keras.Sequential``/``keras.Model``; torch functions of a functional graph by
dotted name under ``torch`` and ``operator`` only.

What rebuilds: ``Sequential`` and functional models of unison layers (their constructor
arguments must be JSON values: numbers, strings, lists, dicts; an activation given as a
function does not save), nested models, and subclasses of ``keras.Model``/``Layer`` that define
``get_config`` when they are registered or ``custom_objects`` names the class; custom losses
and metrics (classes with ``get_config``, or functions) given to ``compile`` are recorded by their
registered name and found the same way on load. A model wrapping an arbitrary
``torch.nn.Module`` saves its weights, and ``load_model`` says to rebuild it in code and call
``load_weights``. A model compiled with a named loss and metrics is compiled again on load, with
the optimizer's configuration, slot state (Adam's moments) and ``iterations``, so training resumes
where it stopped.

Example:
    >>> import os, tempfile
    >>> from unison import keras
    >>> model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    >>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
    >>> model.save(path)
    >>> keras.models.load_model(path).count_params()
    8
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch

from unison.errors import ModelFileNotFoundError, SavingError
from unison.keras.saving import weights_file
from unison.keras.saving.keras_files import _compile_config
from unison.keras.saving.safe_mode import safe_mode_scope
from unison.keras.saving.serialization import (
    KERAS_FORMAT,
    _namespace,
    _objects_from_config,
    from_config,
    model_config,
)
from unison.keras.utils.object_registration import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)


# --- files --------------------------------------------------------------------------------------
def save_model(model: Any, filepath: str | os.PathLike[str]) -> None:
    """Write architecture, weights and compile arguments to ``filepath`` (the chief writes)."""
    if not model.built:
        raise SavingError(
            f"Model {model.name!r} is not built yet, so it has no weights to save. Give the first "
            "layer input_shape=, start with keras.Input, or call the model on data first."
        )
    path = os.fspath(filepath)
    if path.lower().endswith((".keras", ".h5", ".hdf5")):
        # Keras's own formats: what Keras 3 and tf_keras read (keras_files)
        from unison.keras.saving import keras_files

        if model.distribute_strategy.extended.should_checkpoint:
            if path.lower().endswith(".keras"):
                keras_files.save_keras_zip(model, path)
            else:
                keras_files.save_legacy_h5(model, path)
        return
    # unison's own format for any other name (ModelCheckpoint's "ckpt-{epoch}"): as in Keras 3, a
    # model without a config (subclassed, wrapped module) still saves its weights; load_model then
    # explains why it cannot rebuild it.
    try:
        config, config_error = json.dumps(model_config(model)), None
    except SavingError as exc:
        config, config_error = None, str(exc)
    compile_config = json.dumps(_compile_config(model)) if model._compiled else None
    if not model.distribute_strategy.extended.should_checkpoint:
        return
    opt = model.optimizer.torch_optimizer if model._compiled and compile_config else None
    weights_file.write_state(
        filepath,
        {
            "config": config,
            "config_error": config_error,
            "compile_config": compile_config,
            "state_dict": model._full_state(),
            "optimizer": model._full_optimizer_state() if opt is not None else None,
            "iterations": int(model.optimizer.iterations) if opt is not None else 0,
        },
        KERAS_FORMAT,
    )


def load_model(
    filepath: str | os.PathLike[str],
    custom_objects: dict[str, Any] | None = None,
    compile: bool = True,
    safe_mode: bool = True,
    options: Any = None,
) -> Any:
    """Rebuild the model saved at ``filepath`` (in the current strategy's scope), with its weights.

    ``filepath`` may be a ``.keras`` file or a directory written by ``model.save("my_model")`` /
    ``tf.saved_model.save``. ``options`` (tf.keras 2's ``tf.saved_model.LoadOptions``) is checked
    and otherwise changes nothing: files are read on this host.
    """
    # safe_mode=False lets a TorchModuleWrapper's pickled module load (Keras's rule); nothing else unpickles
    with safe_mode_scope(safe_mode):
        return _load_model(filepath, custom_objects, compile, options)


def _load_model(filepath: str | os.PathLike[str], custom_objects: Any, compile: bool, options: Any) -> Any:
    if options is not None:
        from unison.saved_model import LoadOptions

        if not isinstance(options, LoadOptions):
            raise TypeError(f"options must be a tf.saved_model.LoadOptions. Received: {type(options).__name__}")
    path = os.fspath(filepath)
    if not os.path.exists(path):
        raise ModelFileNotFoundError(
            f"File not found: filepath={path}. load_model reads a model saved with model.save(filepath) "
            "(a .keras or .h5 file, or a directory written by tf.saved_model.save); check the path, or "
            "save the model first."
        )
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, weights_file.EXPORTED_MODEL_FILE)):
        path = os.path.join(path, weights_file.EXPORTED_MODEL_FILE)
    from unison.keras.saving import keras_files, keras_h5

    if keras_h5.is_keras_file(path) or (os.path.isfile(path) and _is_zip_or_hdf5(path)):
        return keras_files.load_keras_file(path, custom_objects, compile)
    payload = weights_file._payload(path, {}, torch.device("cpu"))
    if isinstance(payload, dict) and payload.get("format") == KERAS_FORMAT and payload.get("config_error"):
        raise SavingError(
            f"{path!r} holds the weights of a model whose architecture was not saved: {payload['config_error']}"
        )
    if not isinstance(payload, dict) or payload.get("format") != KERAS_FORMAT or not payload.get("config"):
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        raise SavingError(
            f"{path!r} holds weights only (format {found!r}), not a model architecture. Build the model in code "
            "and call model.load_weights(path); save whole models with model.save('name.keras')."
        )
    with CustomObjectScope(custom_objects):  # custom losses and metrics in the compile config too
        model = from_config(json.loads(payload["config"]), custom_objects)
        state = weights_file.read_state(path, model.state_dict())
        model.load_state_dict(state, strict=True)
        compile_config = json.loads(payload["compile_config"]) if payload.get("compile_config") else None
        if compile and compile_config:
            opt = compile_config["optimizer"]
            cls = getattr(_namespace("optimizers")[0], opt["class_name"])  # keras.optimizers registers itself
            model.compile(
                optimizer=cls.from_config(opt["config"]),
                loss=_objects_from_config(compile_config["loss"]),
                metrics=_objects_from_config(compile_config["metrics"]),
            )
            _restore_optimizer(model, payload, path)
    return model


def _is_zip_or_hdf5(path: str) -> bool:
    from unison.keras.saving.file_kinds import HDF5_SIGNATURE

    with open(path, "rb") as fh:
        head = fh.read(8)
    return head.startswith(HDF5_SIGNATURE) or head.startswith(b"PK\x03\x04") and path.endswith(".keras")


def _restore_optimizer(model: Any, payload: dict[str, Any], path: str) -> None:
    """Put the saved slot state (Adam's moments, step counts) into the freshly compiled optimizer."""
    state = payload.get("optimizer")
    torch_opt = model.optimizer.torch_optimizer  # built by compile() for a model whose weights exist
    if not state or torch_opt is None:
        return
    try:
        torch_opt.load_state_dict(state)
        weights_file.optimizer_slots_from_torch_layout(payload, torch_opt)
    except (ValueError, KeyError) as exc:
        raise SavingError(
            f"The optimizer state in {path!r} does not fit the rebuilt model's optimizer ({exc}). "
            "Load with compile=False and compile again."
        ) from None
    model.optimizer._counter.count.fill_(int(payload.get("iterations") or 0))


def model_from_json(json_string: str, custom_objects: dict[str, Any] | None = None) -> Any:
    """A new, unbuilt-weights model from ``model.to_json()`` (Keras's ``model_from_json``)."""
    try:
        entry = json.loads(json_string)
    except (TypeError, ValueError) as exc:
        raise SavingError(
            f"model_from_json needs the JSON text of model.to_json(). Received: {json_string!r:.80} ({exc})."
        ) from None
    with CustomObjectScope(custom_objects):
        return from_config(entry, custom_objects)


def clone_model(model: Any, input_tensors: Any = None, clone_function: Any = None) -> Any:
    """A new model of the same architecture with freshly initialised weights (Keras's ``clone_model``)."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError(
            "clone_model supports only the model argument (input_tensors and clone_function are not implemented)."
        )
    return from_config(model_config(model))


__all__ = [
    "KERAS_FORMAT",
    "CustomObjectScope",
    "SavingError",
    "clone_model",
    "custom_object_scope",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "load_model",
    "model_config",
    "model_from_json",
    "register_keras_serializable",
    "save_model",
]
