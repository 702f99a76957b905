"""Whole-model files: ``model.save("m.keras")`` and ``keras.models.load_model("m.keras")``.

The file holds the architecture as a JSON config (Keras's ``{"class_name", "config"}`` shape),
the weights (the model's ``state_dict``) and, for a compiled model, the compile arguments. It is
written through :mod:`unison.keras.weights_file` (atomic, SHA-256-verified, read with
``torch.load(weights_only=True)``), so loading never unpickles code: layer classes are looked up
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

import importlib
import json
import operator
import os
from typing import Any

import torch
from torch import nn

from unison.errors import SavingError
from unison.keras import weights_file
from unison.keras.keras_tensor import KerasTensor, flatten, symbolic_call
from unison.keras.utils.object_registration import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    is_registered,
    register_keras_serializable,
)

KERAS_FORMAT = "unison.keras/1"
_FUNCTION_ROOTS = ("torch", "operator")
_NOT_CUSTOM = ("torch", "numpy", "builtins", "operator", "functools", "math", "unison")


# --- configs --------------------------------------------------------------------------------------
def _json_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v, where) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _json_value(v, where) for k, v in value.items()}
    if hasattr(value, "tolist") and not isinstance(value, torch.Tensor):  # numpy arrays and scalars
        return _json_value(value.tolist(), where)
    obj = _object_config(value)
    if obj is not None:
        return obj
    raise SavingError(
        f"Cannot save {where}: the value {value!r:.80} ({type(value).__name__}) is not a number, string, list "
        "or dict. Pass it by name (e.g. activation='relu'), or save the weights with save_weights() and "
        "rebuild the model in code."
    )


def _object_config(value: Any) -> dict[str, Any] | str | None:
    """Keras objects given as layer arguments (initializers, regularizers), by class and config."""
    from unison.keras import constraints, initializers, regularizers

    if isinstance(value, constraints.Constraint) and getattr(constraints, type(value).__name__, None) is type(value):
        return {"__object__": "constraints." + type(value).__name__, "config": value.get_config()}
    if isinstance(value, initializers.Initializer):
        return {"__object__": "initializers." + type(value).__name__, "config": value.get_config()}
    if isinstance(value, regularizers.L1L2):  # L1 and L2 are L1L2 with one factor
        return {"__object__": "regularizers.L1L2", "config": {"l1": value.l1, "l2": value.l2}}
    # compile(loss=keras.losses.X(...), metrics=[keras.metrics.Y()]): built-in classes by config
    from unison.keras import losses, metrics

    for prefix, module, base, wrapper in (
        ("losses", losses, losses.Loss, losses.LossFunctionWrapper),
        ("metrics", metrics, metrics.Metric, metrics.MeanMetricWrapper),
    ):
        cls = type(value)
        if isinstance(value, base) and cls not in (base, wrapper) and getattr(module, cls.__name__, None) is cls:
            return {"__object__": f"{prefix}.{cls.__name__}", "config": _json_value(value.get_config(), prefix)}
        if isinstance(value, base) and not isinstance(value, wrapper):
            # a custom loss or metric class: by its registered name (load_model looks it up)
            config = _json_value(value.get_config(), f"{prefix[:-1]} {cls.__name__}")
            return {"__registered__": get_registered_name(cls), "config": config}
    if callable(value) and not isinstance(value, type) and not isinstance(value, nn.Module):
        name = get_registered_name(value)
        owner = str(getattr(value, "__module__", None) or "")
        if owner.startswith("unison.keras.") and getattr(importlib.import_module(owner), name, None) is value:
            return name  # keras.losses.mse, keras.activations.relu: their names mean the same on load
        if owner.startswith("unison.") and callable(
            getattr(importlib.import_module("unison.keras.activations"), name, None)
        ):
            return name  # tf.nn.relu given as an activation: Keras saves it as "relu" too
        if is_registered(value) or (name.isidentifier() and owner and owner.split(".")[0] not in _NOT_CUSTOM):
            return {"__registered__": name}  # a custom function (loss=my_loss): by name, as Keras saves it
    if is_registered(type(value)) and hasattr(value, "get_config"):
        return {"__registered__": get_registered_name(type(value)), "config": _json_value(value.get_config(), "")}
    return None


def _registered_from_config(value: dict[str, Any]) -> Any:
    """A custom class instance or function recorded by :func:`_object_config` under its registered name."""
    name = str(value["__registered__"])
    found = get_registered_object(name)
    if found is None and ">" in name:
        found = get_registered_object(name.split(">", 1)[1])  # custom_objects keyed by the bare name
    if found is None:
        bare = name.split(">", 1)[-1]
        raise SavingError(
            f"The saved model uses the custom object {name!r}, which is not known here. Decorate its "
            f"definition with @keras.saving.register_keras_serializable() (imported before load_model), or pass "
            f"custom_objects={{'{bare}': {bare}}} to load_model; or load with compile=False and compile again."
        )
    if "config" not in value:
        return found
    config = _objects_from_config(value["config"])
    maker = getattr(found, "from_config", None)
    return maker(config) if maker is not None else found(**config)


def _objects_from_config(value: Any) -> Any:
    """The inverse of :func:`_object_config`, inside a layer's or compile config (only those modules)."""
    from unison.keras import constraints, initializers, losses, metrics, regularizers

    if isinstance(value, list):
        return [_objects_from_config(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__registered__" in value:
        return _registered_from_config(value)
    if "__object__" not in value:
        return {k: _objects_from_config(v) for k, v in value.items()}
    module_name, _, class_name = str(value["__object__"]).partition(".")
    module, base = {
        "initializers": (initializers, initializers.Initializer),
        "constraints": (constraints, constraints.Constraint),
        "regularizers": (regularizers, regularizers.L1L2),
        "losses": (losses, losses.Loss),
        "metrics": (metrics, metrics.Metric),
    }.get(module_name, (None, None))
    cls = getattr(module, class_name, None) if module is not None else None
    if not (isinstance(cls, type) and base is not None and issubclass(cls, base)):
        raise SavingError(
            f"The saved config names {value['__object__']!r}, which is not a unison initializer, "
            "regularizer, loss or metric; refusing to load it."
        )
    return cls(**value.get("config", {}))


def layer_config(layer: nn.Module) -> dict[str, Any]:
    """``{"class_name", "config"}`` of a layer or a nested model."""
    from unison.keras.functional import Functional
    from unison.keras.model import Sequential

    name = getattr(layer, "name", type(layer).__name__)
    if isinstance(layer, (Sequential, Functional)):
        return model_config(layer)
    get_config = getattr(layer, "get_config", None)
    if get_config is None:
        raise SavingError(
            f"Cannot save layer {name!r}: {type(layer).__name__} is a torch module without get_config(). Use "
            "keras.layers (or define get_config), or save the weights with save_weights()."
        )
    return _with_registered_name(
        type(layer), {"class_name": type(layer).__name__, "config": _json_value(get_config(), f"layer {name!r}")}
    )


def _with_registered_name(cls: type, entry: dict[str, Any]) -> dict[str, Any]:
    # Keras records "package>name" next to class_name: load_model finds registered classes by it.
    if is_registered(cls):
        entry["registered_name"] = get_registered_name(cls)
    return entry


def model_config(model: nn.Module) -> dict[str, Any]:
    """The architecture of ``model`` as a JSON-able dict; ``SavingError`` when it has none."""
    from unison.keras.functional import Functional
    from unison.keras.model import Model, Sequential

    own = getattr(type(model), "get_config", None)
    if isinstance(model, Model) and own is not None and own is not getattr(Model, "get_config", None):
        # a subclass with its own get_config (also a functional subclass): rebuilt by custom_objects
        return _with_registered_name(
            type(model),
            {
                "class_name": type(model).__name__,
                "config": _json_value(model.get_config(), f"model {type(model).__name__}"),
            },
        )
    if isinstance(model, Functional):
        return {"class_name": "Functional", "config": _functional_config(model)}
    if isinstance(model, Sequential):
        # built by its first call (no keras.Input): that call's shape rebuilds it, as Keras's build_config
        hint = model.input_shape_hint or model.__dict__.get("_called_shape")
        return {
            "class_name": "Sequential",
            "config": {
                "name": model.name,
                "input_shape": list(hint) if hint is not None else None,
                "layers": [layer_config(layer) for layer in model.layers],
            },
        }
    raise SavingError(
        f"Cannot save the architecture of {type(model).__name__}: a subclassed or wrapped model has no config. "
        "Define get_config() on it (and pass custom_objects={'" + type(model).__name__ + "': "
        f"{type(model).__name__}}} to load_model), or use save_weights()/load_weights()."
    )


def _function_name(fn: Any) -> str:
    if getattr(fn, "__module__", None) == "operator" or fn in vars(operator).values():
        return "operator." + fn.__name__
    owner = getattr(fn, "__objclass__", None)
    if owner is not None and issubclass(owner, torch._C.TensorBase):
        return "torch.Tensor." + fn.__name__
    qual = getattr(fn, "__qualname__", "")
    if qual.startswith("TensorBase.") or qual.startswith("Tensor."):
        return "torch.Tensor." + fn.__name__
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", "")
    for candidate in ("torch", "torch.nn.functional", "torch.special", "torch.linalg"):
        if module.startswith("torch") and getattr(importlib.import_module(candidate), name, None) is fn:
            return f"{candidate}.{name}"
    if name and getattr(torch, name, None) is fn:
        return "torch." + name
    raise SavingError(
        f"Cannot save the operation {fn!r} of a functional model: only layers and torch/operator "
        "functions save. Wrap it in a layer with get_config()."
    )


def _resolve_function(dotted: str) -> Any:
    if dotted.split(".", 1)[0] not in _FUNCTION_ROOTS:
        raise SavingError(f"The file names the function {dotted!r}, outside torch and operator; refusing to load it.")
    module_name, _, attr = dotted.rpartition(".")
    if module_name == "torch.Tensor":
        return getattr(torch.Tensor, attr)
    return getattr(importlib.import_module(module_name), attr)


def _encode(value: Any, ids: dict[int, int], where: str) -> Any:
    if isinstance(value, KerasTensor):
        return {"__tensor__": ids[id(value)]}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, ids, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, ids, where) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {k: _encode(v, ids, where) for k, v in value.items()}}
    if isinstance(value, slice):
        return {"__slice__": [value.start, value.stop, value.step]}
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if isinstance(value, torch.dtype):
        return {"__dtype__": str(value).removeprefix("torch.")}
    return _json_value(value, where)


def _decode(value: Any, tensors: dict[int, KerasTensor]) -> Any:
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
        if "__dtype__" in value:
            return getattr(torch, value["__dtype__"])
    return value


def _functional_config(model: Any) -> dict[str, Any]:
    ids: dict[int, int] = {}
    inputs = []
    for kt in model.inputs:
        ids[id(kt)] = len(ids)
        inputs.append({"name": kt.name, "shape": list(kt.shape[1:]), "dtype": str(kt.dtype).removeprefix("torch.")})
    layers = [layer_config(layer) for layer in model.graph_layers]
    keys = {id(layer): index for index, layer in enumerate(model.graph_layers)}
    nodes = []
    for node in model._nodes:
        where = f"a node of model {model.name!r}"
        entry: dict[str, Any] = {"args": _encode(node.args, ids, where), "kwargs": _encode(node.kwargs, ids, where)}
        if isinstance(node.op, nn.Module):
            entry["layer"] = keys[id(node.op)]
        else:
            entry["function"] = _function_name(node.op)
        for kt in node.outputs:
            ids[id(kt)] = len(ids)
        entry["outputs"] = [ids[id(kt)] for kt in node.outputs]
        nodes.append(entry)
    return {
        "name": model.name,
        "inputs": inputs,
        "input_structure": _encode(model.input, ids, "inputs"),
        "layers": layers,
        "nodes": nodes,
        "outputs": _encode(model.output, ids, "outputs"),
    }


# --- rebuilding -------------------------------------------------------------------------------
def _find_class(class_name: str, custom_objects: dict[str, Any] | None, registered_name: str | None = None) -> Any:
    from unison.keras import layers as layers_mod
    from unison.keras.model import Model, Sequential

    if custom_objects and class_name in custom_objects:
        return custom_objects[class_name]
    for name in (registered_name, class_name):  # custom_object_scope, then the registry
        found = get_registered_object(name) if name else None
        if found is not None:
            return found
    known = {"Sequential": Sequential, "Model": Model}
    if class_name in known:
        return known[class_name]
    cls = getattr(layers_mod, class_name, None)
    if isinstance(cls, type) and issubclass(cls, nn.Module):
        return cls
    raise SavingError(
        f"Unknown layer or model class {class_name!r}"
        + (f" (registered as {registered_name!r})" if registered_name else "")
        + " in the saved config. If it is a custom class, decorate it with "
        "@keras.saving.register_keras_serializable() (and define get_config()), or pass "
        f"custom_objects={{'{class_name}': {class_name}}} to load_model."
    )


def from_config(entry: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> nn.Module:
    """Rebuild a layer or model from ``{"class_name", "config"}`` (unbuilt weights stay lazy)."""
    from unison.keras.functional import Functional
    from unison.keras.model import Sequential

    class_name, config = entry["class_name"], entry["config"]
    if class_name == "Functional":
        return _rebuild_functional(config, custom_objects)
    cls = _find_class(class_name, custom_objects, entry.get("registered_name"))
    if cls is Sequential:
        from unison.keras.keras_tensor import Input

        layers: list[Any] = [Input(shape=tuple(config["input_shape"]))] if config.get("input_shape") else []
        layers += [from_config(e, custom_objects) for e in config["layers"]]
        return Sequential(layers, name=config.get("name"))
    if cls is Functional:
        return _rebuild_functional(config, custom_objects)
    config = _objects_from_config(config)
    maker = getattr(cls, "from_config", None)
    return maker(config) if maker is not None else cls(**config)


def _rebuild_functional(config: dict[str, Any], custom_objects: dict[str, Any] | None) -> nn.Module:
    from unison.keras.functional import Functional
    from unison.keras.keras_tensor import Input

    tensors: dict[int, KerasTensor] = {}
    for i, spec in enumerate(config["inputs"]):
        tensors[i] = Input(shape=tuple(spec["shape"]), dtype=spec["dtype"], name=spec["name"])
    layers = [from_config(e, custom_objects) for e in config["layers"]]
    for entry in config["nodes"]:
        args, kwargs = _decode(entry["args"], tensors), _decode(entry["kwargs"], tensors)
        if "layer" in entry:
            out = layers[entry["layer"]](*args, **kwargs)
        else:
            out = symbolic_call(_resolve_function(entry["function"]), tuple(args), dict(kwargs))
        produced = flatten(out)
        if len(produced) != len(entry["outputs"]):
            raise SavingError(
                f"The saved graph of model {config['name']!r} does not replay: a node made "
                f"{len(produced)} outputs where the file records {len(entry['outputs'])}."
            )
        for index, kt in zip(entry["outputs"], produced):
            tensors[index] = kt
    return Functional(
        _decode(config["input_structure"], tensors), _decode(config["outputs"], tensors), name=config["name"]
    )


# --- files --------------------------------------------------------------------------------------
def save_model(model: Any, filepath: str | os.PathLike[str]) -> None:
    """Write architecture, weights and compile arguments to ``filepath`` (the chief writes)."""
    if not model.built:
        raise SavingError(
            f"Model {model.name!r} is not built yet, so it has no weights to save. Give the first "
            "layer input_shape=, start with keras.Input, or call the model on data first."
        )
    # As in Keras 3, a model without a config (subclassed, wrapped module, a function argument)
    # still saves its weights; load_model then explains why it cannot rebuild it.
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


def _compile_config(model: Any) -> dict[str, Any] | None:
    optimizer, loss, metrics = getattr(model, "_compile_arguments", (None, None, None))
    try:
        opt = model.optimizer
        opt_config = {k: (float(v.numpy()) if hasattr(v, "numpy") else v) for k, v in opt.get_config().items()}
        return {
            "optimizer": {"class_name": type(opt).__name__, "config": _json_value(opt_config, "optimizer")},
            "loss": _json_value(loss, "loss"),
            "metrics": _json_value(metrics, "metrics"),
        }
    except (SavingError, TypeError, ValueError, AttributeError):
        return None  # a loss or metric object without a name: the loaded model needs compile() again


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
    if options is not None:
        from unison.saved_model import LoadOptions

        if not isinstance(options, LoadOptions):
            raise TypeError(f"options must be a tf.saved_model.LoadOptions. Received: {type(options).__name__}")
    from unison.keras import optimizers as optimizers_mod

    path = os.fspath(filepath)
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
            cls = getattr(optimizers_mod, opt["class_name"])
            model.compile(
                optimizer=cls.from_config(opt["config"]),
                loss=_objects_from_config(compile_config["loss"]),
                metrics=_objects_from_config(compile_config["metrics"]),
            )
            _restore_optimizer(model, payload, path)
    return model


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
