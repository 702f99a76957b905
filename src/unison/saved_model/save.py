"""``tf.saved_model``: save a Keras model to a directory and load it back as a serving object.

TF's SavedModel stores traced graphs, so it reloads any ``tf.Module`` without its Python code.
unison has no graphs: what it can rebuild without running code from the directory is a Keras
model whose architecture saves (``Sequential``, functional models, registered subclasses with
``get_config``, see :mod:`unison.keras.saving`). So:

* ``tf.saved_model.save(model, export_dir)`` writes ``export_dir/`` holding ``keras_model.keras``
  (architecture, weights, compile arguments; SHA-256-verified, never unpickled) and
  ``saved_model.json`` (the ``serving_default`` signature: input names, shapes and dtypes, and
  output names). Only the chief writes; every replica may call it. Where TensorFlow is installed
  the folder also gets TF's own SavedModel (``saved_model.pb`` + ``variables/``), written by
  TensorFlow in a child process (:mod:`unison.saved_model.tf_graph`, ``$UNISON_SAVED_MODEL_GRAPH``;
  docs/export.md), which TF Serving reads.
* ``tf.saved_model.load(export_dir)`` rebuilds the model (in the current strategy's scope) and
  returns a :class:`LoadedModel`: ``loaded(x)`` runs the model in inference mode,
  ``loaded.signatures["serving_default"](x)`` returns ``{output_name: tensor}`` as TF's serving
  signature does, and ``variables``/``trainable_variables`` are the model's weights.

A module (``tf.Module`` or any ``torch.nn.Module`` that is not a Keras model) exports its
variables and its module tree; ``load`` rebuilds the object from its own classes when this
process defines them (its methods then run as exported), else returns a
:class:`~unison.saved_model.modules.LoadedModule` of the variables (see :mod:`unison.saved_model.modules`). A
Keras model whose architecture does not save, and custom ``signatures=`` functions, are refused at
save time.

Example:
    >>> import os, tempfile, unison as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,), name="out")])
    >>> path = os.path.join(tempfile.mkdtemp(), "exported")
    >>> tf.saved_model.save(model, path)
    >>> loaded = tf.saved_model.load(path)
    >>> list(loaded.signatures["serving_default"](tf.ones([4, 3])))
    ['out']
"""

from __future__ import annotations

import enum
import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

from unison.core.atomic_io import atomic_write_text
from unison.saved_model.keras_hook import KerasSaving, registered_keras
from unison.saved_model.modules import LoadedModule, load_module, save_module
from unison.saved_model.signatures import SignatureFunction, _SignatureMap

__all__ = ["LoadOptions", "LoadedModel", "LoadedModule", "SaveOptions", "contains_saved_model", "load", "save"]

_MODEL_FILE = "keras_model.keras"  # keras.weights_file.EXPORTED_MODEL_FILE: load_model reads it too
_META_FILE = "saved_model.json"
_FORMAT = "unison.saved_model/1"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


class VariablePolicy(enum.Enum):
    """``tf.saved_model.experimental.VariablePolicy``: how a SavedModel keeps variables' devices (TF's values)."""

    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"

    @classmethod
    def from_obj(cls, obj: Any) -> VariablePolicy:
        """A policy from a policy, its value (a string, any case) or None, as SaveOptions accepts them."""
        if isinstance(obj, cls):
            return obj
        for policy in cls:
            if obj == policy.value or (isinstance(obj, str) and obj.lower() == str(policy.value)):
                return policy
        raise ValueError(f"Received invalid VariablePolicy value: {obj!r}. Choose one of {[p.value for p in cls]}.")


@dataclass(frozen=True)
class SaveOptions:
    """TF's ``tf.saved_model.SaveOptions``: accepted; nothing here changes what unison writes.

    ``experimental_variable_policy`` is converted to a :class:`VariablePolicy`, as in TF.
    """

    namespace_whitelist: Any = None
    save_debug_info: bool = False
    function_aliases: Any = None
    experimental_io_device: str | None = None
    experimental_variable_policy: Any = None
    experimental_custom_gradients: bool = True
    experimental_image_format: bool = False
    experimental_skip_saver: bool = False
    experimental_sharding_callback: Any = None
    extra_tags: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "experimental_variable_policy", VariablePolicy.from_obj(self.experimental_variable_policy)
        )


@dataclass(frozen=True)
class LoadOptions:
    """TF's ``tf.saved_model.LoadOptions``: accepted; nothing here changes how unison reads."""

    allow_partial_checkpoint: bool = False
    experimental_io_device: str | None = None
    experimental_load_function_aliases: bool = False
    experimental_skip_checkpoint: bool = False
    experimental_variable_policy: Any = None
    experimental_load_with_sharding: Any = field(default=None)


def _is_keras_model(obj: Any) -> bool:
    keras = registered_keras()
    return keras is not None and isinstance(obj, keras.model_class)


def _keras() -> KerasSaving:
    keras = registered_keras()
    if keras is None:  # unison/__init__.py registers it: only a partial import of unison gets here
        raise RuntimeError("Keras's saving functions are not registered with unison.saved_model: import unison first.")
    return keras


def _signature(model: Any) -> dict[str, Any]:
    """The serving signature TF's Keras export gives ``model``: input and output names."""
    try:
        inputs = getattr(model, "inputs", None)
    except ValueError:  # a Sequential without keras.Input has no symbolic inputs
        inputs = None
    if inputs:  # a functional model: its Input names and shapes
        spec = [
            {"name": kt.name, "shape": list(kt.shape), "dtype": str(kt.dtype).replace("torch.", "")} for kt in inputs
        ]
        outputs = [_output_name(kt, i) for i, kt in enumerate(model.outputs)]
    else:  # Sequential: TF names the input after the first layer, the output after the last
        layers = list(getattr(model, "layers", []))
        first = getattr(layers[0], "name", "input") if layers else "input"
        hint = getattr(model, "input_shape_hint", None)
        spec = [{"name": f"{first}_input", "shape": None if hint is None else [None, *hint], "dtype": "float32"}]
        outputs = [getattr(layers[-1], "name", "output_0") if layers else "output_0"]
    return {"inputs": spec, "outputs": outputs}


def _output_name(kt: Any, index: int) -> str:
    node = getattr(kt, "_node", None)
    layer = getattr(node, "op", None)
    name = getattr(layer, "name", None)
    return name if isinstance(name, str) else f"output_{index}"


def save(obj: Any, export_dir: str | os.PathLike[str], signatures: Any = None, options: Any = None) -> None:
    """``tf.saved_model.save`` for a Keras model whose architecture saves (see the module doc)."""
    path = os.fspath(export_dir)
    if not _is_keras_model(obj) and not isinstance(obj, torch.nn.Module):
        raise NotImplementedError(
            f"tf.saved_model.save in unison saves Keras models and modules (tf.Module, torch.nn.Module); received "
            f"a {type(obj).__name__}. TF stores traced graphs that reload without your code, and unison has no "
            "graphs. Save its variables with tf.train.Checkpoint(obj=...).save(prefix) and rebuild it in code."
        )
    if signatures is not None:
        raise NotImplementedError(
            "tf.saved_model.save(signatures=...) is not supported: unison exports the model's own call as the "
            "'serving_default' signature. Drop signatures= (the loaded object's signatures['serving_default'] "
            "calls the model)."
        )
    if options is not None and not isinstance(options, SaveOptions):
        raise TypeError(f"options must be a tf.saved_model.SaveOptions. Received: {type(options).__name__}")
    if os.path.isfile(path):
        raise ValueError(f"export_dir {path!r} is a file; tf.saved_model.save writes a directory. Pass a new path.")
    if not _is_keras_model(obj):
        save_module(obj, path, _META_FILE, _FORMAT)
        return
    from unison.errors import SavingError

    saving = _keras()
    try:
        saving.model_config(obj) if getattr(obj, "built", False) else None
        rebuildable = getattr(obj, "built", False)
    except SavingError:
        rebuildable = False
    if not rebuildable:
        # TF exports a subclassed or not-yet-called model without serving signatures (no traced
        # call): export its variables and module tree; the loaded object's signatures are empty.
        save_module(obj, path, _META_FILE, _FORMAT)
        return
    with obj._weights_gathered():
        _save_keras(obj, path)
    obj._wait_for_chief("saved_model.save")


def _save_keras(model: Any, path: str) -> None:
    """unison's files, and TF's graph when :func:`_graph_wanted` (a model TF's Keras cannot
    rebuild keeps unison's files only, with a warning, unless the graph was required)."""
    from unison.errors import SavedModelExportError

    mode = _graph_wanted()
    if mode:
        try:
            write_serving_export(model, path)  # the chief writes
            return
        except SavedModelExportError as error:
            if os.environ.get("UNISON_SAVED_MODEL_GRAPH", "auto").strip() == "1":
                raise
            warnings.warn(f"{error} tf.saved_model.save wrote unison's files only.", stacklevel=4)
    write_keras_export(model, path)


def _graph_wanted() -> bool:
    """Whether ``tf.saved_model.save`` adds TF's graph: ``$UNISON_SAVED_MODEL_GRAPH`` = ``auto``
    (the default: when TensorFlow is installed), ``1`` (always; an error without TensorFlow) or ``0``."""
    from unison.saved_model.tf_graph import tensorflow_python

    mode = os.environ.get("UNISON_SAVED_MODEL_GRAPH", "auto").strip().lower()
    if mode not in ("auto", "0", "1"):
        raise ValueError(f"UNISON_SAVED_MODEL_GRAPH must be 'auto', '1' or '0'. Received: {mode!r}")
    if mode == "auto" and tensorflow_python() is None:
        warnings.warn(
            "tf.saved_model.save wrote unison's files only (no saved_model.pb): TensorFlow, which writes the "
            "graph, is not installed. pip install 'unison[export-tf]' to get a SavedModel TF Serving reads; "
            "UNISON_SAVED_MODEL_GRAPH=0 silences this.",
            stacklevel=3,
        )
        return False
    return mode != "0"


def write_serving_export(model: Any, export_dir: str) -> None:
    """The chief's export of a Keras model for serving: a TensorFlow SavedModel (``saved_model.pb``,
    ``variables/``, written by TensorFlow: :mod:`unison.saved_model.tf_graph`) and, beside it,
    unison's own files (:func:`write_keras_export`), which ``load`` reads back."""
    from unison.saved_model.tf_graph import write_tf_saved_model

    if not model.distribute_strategy.extended.should_checkpoint:
        return
    write_tf_saved_model(model, export_dir)  # first: a model TF cannot take leaves no half-written folder
    write_keras_export(model, export_dir)


def write_keras_export(model: Any, export_dir: str) -> None:
    """The chief's half of exporting a Keras model: ``export_dir/keras_model.keras`` + signatures.

    ``model.save("my_model")`` (tf.keras 2's SavedModel paths) writes the same directory, so
    ``load_model`` and ``tf.saved_model.load`` read either. A model whose architecture does not
    save (a subclassed one) keeps its weights there and gets no signature file: ``load_model``
    then explains what is missing, as for a ``.keras`` file.
    """
    from unison.errors import SavingError

    saving = _keras()
    if not getattr(model, "built", False):
        # tf.keras 2's words: the tutorial on saving with a strategy prints this ValueError
        raise SavingError(
            f"Model {model.name!r} cannot be saved either because the input shape is not available or because "
            "the forward pass of the model is not defined. Call the model on data (or fit it) first, give the "
            "first layer input_shape=, or start it with keras.Input."
        )
    if os.path.isfile(export_dir):
        raise SavingError(f"{export_dir!r} is a file; a model export is a directory. Pass a new path.")
    chief = model.distribute_strategy.extended.should_checkpoint
    if chief:
        os.makedirs(export_dir, exist_ok=True)
    saving.save_model(model, os.path.join(export_dir, _MODEL_FILE))  # the chief writes
    try:
        signature = _signature(model) if saving.model_config(model) is not None else None
    except SavingError:
        signature = None
    meta_file = os.path.join(export_dir, _META_FILE)
    if chief and signature is not None:
        meta = {"format": _FORMAT, "signatures": {DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature}}
        atomic_write_text(meta_file, json.dumps(meta, indent=1))
    elif chief and os.path.isfile(meta_file):
        os.remove(meta_file)  # an earlier export's signatures would describe another model


def contains_saved_model(export_dir: str | os.PathLike[str]) -> bool:
    """``tf.saved_model.contains_saved_model``: whether ``export_dir`` holds an export of ``save``."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), _META_FILE))


class LoadedModel:
    """What ``tf.saved_model.load`` returns: call it, use its ``signatures``, read its variables."""

    def __init__(self, model: Any, signatures: dict[str, Any]) -> None:
        self._model = model
        self.signatures = _SignatureMap({k: SignatureFunction(model, v) for k, v in signatures.items()})

    def __call__(self, inputs: Any, training: bool = False, mask: Any = None) -> Any:
        """Run the restored model (TF's restored ``__call__``); inference mode unless ``training=True``."""
        if training:
            return self._model(inputs, training=True)
        with torch.no_grad():
            return self._model(inputs, training=False)

    @property
    def variables(self) -> list[torch.Tensor]:
        return list(self._model.variables)

    @property
    def trainable_variables(self) -> list[torch.Tensor]:
        return list(self._model.trainable_variables)

    @property
    def non_trainable_variables(self) -> list[torch.Tensor]:
        return list(self._model.non_trainable_variables)

    @property
    def keras_model(self) -> Any:
        """The rebuilt Keras model (unison's addition: train it, save it again)."""
        return self._model


def load(export_dir: str | os.PathLike[str], tags: Any = None, options: Any = None) -> Any:
    """``tf.saved_model.load``: the object exported by :func:`save` (see the module doc)."""
    path = os.fspath(export_dir)
    if options is not None and not isinstance(options, LoadOptions):
        raise TypeError(f"options must be a tf.saved_model.LoadOptions. Received: {type(options).__name__}")
    meta_file = os.path.join(path, _META_FILE)
    if not os.path.isfile(meta_file):
        if os.path.isfile(path):
            why = (
                "it is a file (model.save('m.keras') or 'm.h5' writes one: read it with keras.models.load_model, "
                "or model.save('my_model') to write a directory)"
            )
        elif os.path.isfile(os.path.join(path, "saved_model.pb")):
            why = (
                "it is a TensorFlow SavedModel (a graph) without unison's files beside it (saved_model.json), and "
                "unison cannot run TF graphs; serve it with TensorFlow or TF Serving"
            )
        else:
            why = "it holds no saved_model.json"
        raise FileNotFoundError(
            f"{path!r} is not a directory written by tf.saved_model.save: {why}. Export the model with "
            "tf.saved_model.save(model, export_dir) first."
        )
    with open(meta_file, encoding="utf-8") as fh:
        meta = json.load(fh)
    if meta.get("format") != _FORMAT:
        raise ValueError(f"{meta_file!r} has format {meta.get('format')!r}; this unison reads {_FORMAT!r}.")
    if meta.get("kind") == "module":
        return load_module(path, meta)
    model = _keras().load_model(os.path.join(path, _MODEL_FILE), compile=False)
    return LoadedModel(model, meta["signatures"])
