"""A model's weights and files: ``get_weights``/``set_weights``, ``save_weights``/``load_weights``, ``save``.

``Model``'s methods of the same names call these. Every replica calls them (as every replica runs
the program); only the chief writes, and every replica returns once the file is complete. A
sharded model (``keras.distribution.ModelParallel``) gathers its shards first, a collective
every replica joins (``weights_gathered``), so the chief's half (``write_weights``,
``write_model``) can run on the chief alone (``ModelCheckpoint``).

Example:
    >>> from unison import keras
    >>> model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    >>> [w.shape for w in get_weights(model)]
    [(3, 2), (2,)]
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
import torch

from unison.distribute import sharding
from unison.keras.saving import weights_file


def get_weights(model: Any) -> list[np.ndarray]:
    """The model's weights as numpy arrays, in Keras's order (``model.weights``).

    Keras (3 and 2) lists a model's variables layer by layer, each layer's own in creation
    order (a BatchNormalization's gamma, beta, moving mean, moving variance), so arrays from a
    Keras model of the same architecture load here, and back. A model that
    ``keras.distribution.ModelParallel`` sharded gathers its shards: every replica calls it (as
    every replica runs the program) and each gets the whole weights.
    """
    state = full_state(model)
    return [state[name].detach().cpu().numpy().copy() for name in keras_state_names(model)]


def set_weights(model: Any, weights: Sequence[Any]) -> None:
    """Load weights in the order ``get_weights`` returns them (Keras's ``model.weights`` order)."""
    state = full_state(model)
    names = keras_state_names(model)
    if len(weights) != len(names):
        raise ValueError(
            f"set_weights expects {len(names)} arrays (one per weight, in the order of model.weights), "
            f"received {len(weights)}. Pass model.get_weights() of a model of the same architecture."
        )
    new = dict(state)
    for i, (name, w) in enumerate(zip(names, weights)):
        t = state[name]
        w = torch.as_tensor(np.asarray(w))
        if tuple(w.shape) != tuple(t.shape):
            raise ValueError(
                f"set_weights: weight {i} ('{name}') has shape {tuple(t.shape)}, received an array of shape "
                f"{tuple(w.shape)}. Pass arrays in the order and shapes of model.weights."
            )
        new[name] = w.to(t.dtype)
    if sharding.is_sharded(model):
        sharding.load_full_state(model, new)
        return
    with torch.no_grad():
        for name in names:
            state[name].copy_(new[name])


def keras_state_names(model: Any) -> list[str]:
    """The ``state_dict`` names of ``model.weights``, in Keras's order (each shared variable once).

    The order is the same on every replica (it follows the model's construction), so a
    sharded model's replicas agree on it.
    """
    from unison.keras.utils.weight_lists import keras_weights

    names: dict[int, str] = {}
    for name, p in model.named_parameters():
        names.setdefault(id(p), name)
    for name, b in model.named_buffers():
        names.setdefault(id(b), name)
    return [names[id(v)] for v in keras_weights(model) if id(v) in names]


def full_state(model: Any) -> dict[str, torch.Tensor]:
    """``state_dict()`` with whole tensors (a collective when the model is sharded)."""
    gathered = model.__dict__.get("_unison_gathered")
    return gathered[0] if gathered is not None else sharding.full_state(model)


def full_optimizer_state(model: Any) -> dict[str, Any] | None:
    """The torch optimizer's ``state_dict()`` with whole tensors, or ``None`` before it exists."""
    gathered = model.__dict__.get("_unison_gathered")
    if gathered is not None:
        return cast(dict[str, Any] | None, gathered[1])
    opt = model.optimizer.torch_optimizer if model.optimizer is not None else None
    return sharding.full_optimizer_state(model, opt) if opt is not None else None


@contextlib.contextmanager
def weights_gathered(model: Any) -> Iterator[None]:
    """Gather a sharded model's weights and optimizer state on every replica for the block.

    The chief alone writes files (``write_weights_file``/``write_model_file``, ``ModelCheckpoint``);
    gathering shards is a collective every replica must join, so it happens here first,
    where every replica still runs. A model that is not sharded gathers nothing.
    """
    if not sharding.is_sharded(model) or "_unison_gathered" in model.__dict__:
        yield
        return
    object.__setattr__(model, "_unison_gathered", (full_state(model), full_optimizer_state(model)))
    try:
        yield
    finally:
        del model.__dict__["_unison_gathered"]


def save_weights(model: Any, filepath: str | os.PathLike[str], overwrite: bool = True) -> None:
    """Write the weights to ``filepath`` atomically, with a SHA-256 checksum; only the chief writes.

    Every replica calls it (as every replica runs the program) and returns once the file is
    complete, so a replica that reads the file next finds it.
    """
    with weights_gathered(model):
        write_weights(model, filepath)
    wait_for_chief(model, "save_weights")


def wait_for_chief(model: Any, op: str) -> None:
    comm = model.distribute_strategy.extended.communicator
    if comm.is_distributed:
        comm.barrier(name=f"model.{op}")


def write_weights(model: Any, filepath: str | os.PathLike[str]) -> None:
    """The chief's half of ``save_weights`` (ModelCheckpoint calls it on the chief alone)."""
    if not model.distribute_strategy.extended.should_checkpoint:
        return
    if is_hdf5_path(filepath):
        # HDF5 as Keras writes it: Keras 3's layout for .weights.h5, Keras 2's for any other .h5
        from unison.keras.saving import keras_files

        keras_files.save_weights_h5(model, filepath)
        return
    weights_file.write_state(filepath, {"state_dict": full_state(model)}, weights_file.WEIGHTS_KIND)


def is_hdf5_path(filepath: str | os.PathLike[str]) -> bool:
    """Whether a path names a Keras HDF5 file (``.h5``, ``.hdf5``, ``.keras`` excluded)."""
    return os.fspath(filepath).lower().endswith((".h5", ".hdf5"))


def load_weights(model: Any, filepath: str | os.PathLike[str]) -> None:
    """Read weights written by ``save_weights`` or ``save`` (every replica reads the same file).

    The checksum is verified before anything is decoded, and the names and shapes are checked
    against this model: a damaged or foreign file raises ``WeightsFileError`` naming the file,
    the model's structure and what the file holds, and loads nothing. A file Keras wrote (HDF5
    ``.h5``/``.weights.h5``, or a Keras 3 ``.keras`` zip) is read with ``h5py`` instead
    (:mod:`unison.keras.saving.keras_h5`: Keras's layer order and shapes).
    """
    from unison.keras.saving import keras_h5 as weights_h5

    exported = os.path.join(os.fspath(filepath), weights_file.EXPORTED_MODEL_FILE)
    if os.path.isdir(os.fspath(filepath)) and os.path.isfile(exported):
        filepath = exported  # a directory of model.save("my_model") / tf.saved_model.save
    if weights_h5.is_keras_file(filepath):
        from unison.keras.saving import keras_files

        state = keras_files.verified_unison_state(filepath)  # checksums first, where unison wrote them
        if state is None:  # a file Keras wrote: by Keras's layer order
            weights_h5.load_weights(model, filepath)
            return
        expected = full_state(model)
        sharding.load_full_state(model, weights_file.check_state(os.fspath(filepath), state, expected))
        return
    state = weights_file.read_state(filepath, full_state(model), model._device())
    sharding.load_full_state(model, state)


def save(model: Any, filepath: str | os.PathLike[str], overwrite: bool = True, **kwargs: Any) -> None:
    """Save the model to ``filepath`` atomically, with a checksum (chief only).

    Any path (``"m.keras"``, tf.keras's ``"my_model"`` or ``"m.h5"``) holds the architecture,
    weights, compile arguments and optimizer state, for ``keras.models.load_model``
    (:mod:`unison.keras.saving`); ``load_weights`` reads the same file.
    """
    # tf.keras 2's keywords: save_format="tf"|"h5"|"keras", options=SaveOptions, and the
    # SavedModel knobs that have no meaning without traced graphs.
    save_format = kwargs.pop("save_format", None)
    options = kwargs.pop("options", None)
    for ignored in ("include_optimizer", "signatures", "save_traces"):
        kwargs.pop(ignored, None)
    if kwargs:
        raise TypeError(f"save() got unexpected keyword arguments: {sorted(kwargs)}.")
    if save_format not in (None, "tf", "h5", "keras"):
        raise ValueError(f"save_format must be 'tf', 'h5' or 'keras'. Received: save_format={save_format!r}")
    if options is not None:
        from unison.saved_model import SaveOptions

        if not isinstance(options, SaveOptions):
            raise TypeError(f"options must be a tf.saved_model.SaveOptions. Received: {type(options).__name__}")
    with weights_gathered(model):
        write_model(model, filepath, save_format)
    wait_for_chief(model, "save")  # every replica returns once the chief's file is complete


def save_spec(model: Any, dynamic_batch: bool = True) -> Any:
    """tf.keras 2's ``save_spec()``: ``None`` until the model knows its input, then ``([spec], {})``."""
    shape = model.input_shape_hint
    if not model.built or shape is None:
        return None
    from unison.data.specs import TensorSpec

    return ([TensorSpec(shape=(None, *shape))], {})


def write_model(model: Any, filepath: str | os.PathLike[str], save_format: str | None = None) -> None:
    """The chief's half of ``save`` (ModelCheckpoint calls it on the chief alone).

    Every path holds the whole model (architecture when it has one, weights, compile
    arguments, optimizer state): tf.keras programs save to ``"my_model"`` or ``"model.h5"``
    and call ``load_model`` on the same path, and ``load_weights`` reads the file too. A
    path without an extension, an existing directory or ``save_format="tf"`` becomes a
    directory as tf.keras 2's SavedModel did (:func:`unison.saved_model.write_keras_export`),
    which ``tf.saved_model.load`` also reads.
    """
    from unison.keras import saving

    path = os.fspath(filepath)
    if save_format == "tf" or os.path.isdir(path) or (save_format is None and not os.path.splitext(path)[1]):
        if model.built or save_format == "tf" or os.path.isdir(path):
            from unison.saved_model import write_keras_export

            write_keras_export(model, path)
            return
    if not model.built and not os.fspath(filepath).endswith(".keras"):
        # an unbuilt model has no weights yet: a weights-format file (ModelCheckpoint's paths)
        if model.distribute_strategy.extended.should_checkpoint:
            weights_file.write_state(
                filepath,
                {"state_dict": full_state(model), "optimizer": full_optimizer_state(model)},
                weights_file.MODEL_FORMAT,
            )
        return
    saving.save_model(model, filepath)


def get_config(model: Any) -> dict[str, Any]:
    """The architecture's config (Keras's ``{"class_name", "config"}``'s ``config``)."""
    from unison.keras import saving

    config: dict[str, Any] = saving.model_config(model)["config"]
    return config


def to_json(model: Any, **kwargs: Any) -> str:
    """The architecture as JSON text, for ``keras.models.model_from_json``."""
    import json

    from unison.keras import saving

    return json.dumps(saving.model_config(model), **kwargs)
