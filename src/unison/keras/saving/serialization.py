"""Configs of layers and models: Keras's ``{"class_name", "config"}`` JSON, and rebuilding from it.

This module sits low (layers import it: ``Bidirectional``/``TimeDistributed`` save their inner
layer), so it imports no layer, loss, metric or model. The packages that own those classes
register them here when they are imported (``register_namespace``: ``keras.layers``,
``keras.losses``, ``keras.metrics``; ``register_model_classes``: ``Model``, ``Sequential``,
``Functional``), as Keras 3's ``serialization_lib`` finds classes by name rather than by import.
Classes are found only among those, ``custom_objects`` and the ``register_keras_serializable``
registry; functions of a functional graph only under ``torch`` and ``operator``.

Example:
    >>> from unison import keras
    >>> layer = keras.layers.Dense(2, name="d")
    >>> entry = layer_config(layer)
    >>> entry["class_name"], type(from_config(entry)).__name__
    ('Dense', 'Dense')
"""

from __future__ import annotations

import importlib
import operator
import sys
from typing import Any

import torch
from torch import nn

from unison.errors import SavingError
from unison.keras import initializers, regularizers
from unison.keras.backend.keras_tensor import Input, KerasTensor, flatten, symbolic_call
from unison.keras.utils.object_registration import get_registered_name, get_registered_object, is_registered

KERAS_FORMAT = "unison.keras/1"
_FUNCTION_ROOTS = ("torch", "operator")
_NOT_CUSTOM = ("torch", "numpy", "builtins", "operator", "functools", "math", "unison")

# Filled by the packages that own the classes, when they are imported (see the module docstring).
_NAMESPACES: dict[str, tuple[Any, Any, Any]] = {}  # "losses": (module, base class, wrapper class)
_MODEL_CLASSES: dict[str, type] = {}  # "Model", "Sequential", "Functional"


def register_namespace(prefix: str, module: Any, base: type, wrapper: type) -> None:
    """Let configs name the built-in classes of ``module`` (subclasses of ``base``) as ``prefix.Name``.

    ``wrapper`` is the class that wraps a plain function (``LossFunctionWrapper``): it saves by
    the function, not by class (``base`` itself where there is none). ``keras.layers``, ``keras.losses`` and ``keras.metrics`` call this.
    """
    _NAMESPACES[prefix] = (module, base, wrapper)


def register_model_classes(model: type, sequential: type, functional: type) -> None:
    """Tell configs which classes are ``Model``, ``Sequential`` and ``Functional`` (``keras.models`` calls this)."""
    _MODEL_CLASSES.update(Model=model, Sequential=sequential, Functional=functional)


def _namespace(prefix: str) -> tuple[Any, Any, Any]:
    return _NAMESPACES[prefix]  # registered when unison.keras is imported, before any config is read


def model_class(name: str) -> type:
    """The class ``keras.models`` registered as ``name`` (``"Model"``, ``"Sequential"``, ``"Functional"``)."""
    return _MODEL_CLASSES[name]


def _model_classes() -> tuple[Any, Any, Any]:
    """``(Model, Sequential, Functional)`` as ``keras.models`` registered them."""
    return _MODEL_CLASSES["Model"], _MODEL_CLASSES["Sequential"], _MODEL_CLASSES["Functional"]


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
    from unison.keras import constraints

    if isinstance(value, constraints.Constraint) and getattr(constraints, type(value).__name__, None) is type(value):
        return {"__object__": "constraints." + type(value).__name__, "config": value.get_config()}
    if isinstance(value, initializers.Initializer):
        return {"__object__": "initializers." + type(value).__name__, "config": value.get_config()}
    if isinstance(value, regularizers.L1L2):  # L1 and L2 are L1L2 with one factor
        return {"__object__": "regularizers.L1L2", "config": {"l1": value.l1, "l2": value.l2}}
    # compile(loss=keras.losses.X(...), metrics=[keras.metrics.Y()]): built-in classes by config
    for prefix in ("losses", "metrics"):
        module, base, wrapper = _namespace(prefix)
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
    from unison.keras import constraints

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
        "losses": _namespace("losses")[:2],
        "metrics": _namespace("metrics")[:2],
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
    _, Sequential, Functional = _model_classes()

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
    Model, Sequential, Functional = _model_classes()

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
    layers_mod = _namespace("layers")[0]
    Model, Sequential, _ = _model_classes()

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
    # keras.utils.FeatureSpace: a layer outside keras.layers (the face is loaded with unison.keras)
    cls = getattr(sys.modules.get("unison.keras.utils"), class_name, None)
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
    _, Sequential, Functional = _model_classes()

    class_name, config = entry["class_name"], entry["config"]
    if class_name == "Functional":
        return _rebuild_functional(config, custom_objects)
    cls = _find_class(class_name, custom_objects, entry.get("registered_name"))
    if cls is Sequential:
        layers: list[Any] = [Input(shape=tuple(config["input_shape"]))] if config.get("input_shape") else []
        layers += [from_config(e, custom_objects) for e in config["layers"]]
        return Sequential(layers, name=config.get("name"))
    if cls is Functional:
        return _rebuild_functional(config, custom_objects)
    config = _objects_from_config(config)
    maker = getattr(cls, "from_config", None)
    return maker(config) if maker is not None else cls(**config)


def _rebuild_functional(config: dict[str, Any], custom_objects: dict[str, Any] | None) -> nn.Module:
    Functional = _model_classes()[2]

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
