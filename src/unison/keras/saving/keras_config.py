"""Model configs in Keras's own JSON dialect: written for ``config.json`` and read back from it.

Keras 3 stores an architecture as nested ``{"module", "class_name", "config", "registered_name",
"build_config"}`` entries (``keras.saving.serialize_keras_object``); a functional model lists its
layers with ``inbound_nodes`` whose arguments name tensors by ``keras_history``
(``[layer name, node index, tensor index]``). Keras 2 (``tf_keras``, and Keras 3's legacy ``.h5``)
writes the same shape with ``batch_input_shape`` and list-form ``inbound_nodes``. This module turns
a unison model into the Keras 3 dialect (:func:`to_keras`) and either dialect into a unison model
(:func:`from_keras`), so ``.keras`` and ``.h5`` files are the files Keras writes and reads.

Nothing here imports code: classes are found by name among ``keras.layers``, ``custom_objects``
and the ``register_keras_serializable`` registry (:mod:`unison.keras.saving.serialization`).

Example:
    >>> from unison import keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="d")])
    >>> entry = to_keras(model)
    >>> entry["class_name"], [e["class_name"] for e in entry["config"]["layers"]]
    ('Sequential', ['InputLayer', 'Dense'])
    >>> type(from_keras(entry)).__name__
    'Sequential'
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Iterator
from typing import Any

from torch import nn

from unison.errors import SavingError
from unison.keras.backend.keras_tensor import Input, KerasTensor, flatten
from unison.keras.saving.keras_h5 import snake_case
from unison.keras.saving.serialization import (
    _find_class,
    _json_value,
    _model_classes,
    _namespace,
    _objects_from_config,
)

_POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}
_OBJECT_MODULES = {"initializers", "regularizers", "constraints", "losses", "metrics", "optimizers"}
# Keys Keras writes whose value here means "the default": a unison layer without the argument
# behaves the same, so they are dropped instead of refused.
_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "groups": (1,),
    "data_format": ("channels_last",),
    "sparse": (False,),
    "ragged": (False,),
    "optional": (False,),
    "lora_rank": (0,),
    "lora_alpha": (None,),
    "autocast": (True,),
    "renorm_momentum": (0.99,),
}
# Keys Keras writes that say how to build, not what to build: unison builds from the first call.
_BUILD_ONLY = ("query_shape", "key_shape", "value_shape", "build_input_shape")


_KERAS_NEEDS: dict[str, dict[str, Any]] = {"Rescaling": {"offset": 0.0}}


_ONE_AXIS = ("BatchNormalization", "LayerNormalization")
_KERAS_BASE_ONLY = ("activity_regularizer", "autocast", "input_dim")


def _is_default(key: str, value: Any) -> bool:
    """A value Keras writes for a feature left off: None, False, 0, empty, or its listed default.

    An argument unison lacks is dropped only when Keras's value means the feature is off
    (``renorm=False``, ``use_gate=False``); a feature turned on is an error that names it.
    """
    if value is None or value is False or (isinstance(value, (list, dict, str)) and not value):
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return True
    return value in _DEFAULTS.get(key, ())


# --- unison -> Keras --------------------------------------------------------------------------
def _keras_value(value: Any) -> Any:
    """A value of unison's config JSON in Keras's dialect (objects as module/class_name entries)."""
    if isinstance(value, (list, tuple)):
        return [_keras_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__object__" in value:
        prefix, _, cls = str(value["__object__"]).partition(".")
        config = _keras_value(value.get("config", {}))
        if prefix == "regularizers" and cls == "L1L2":
            cls, config = _regularizer_name(config)
        return {"module": f"keras.{prefix}", "class_name": cls, "config": config, "registered_name": None}
    if "__registered__" in value and "config" not in value:  # a custom function, as Keras 3 writes one
        return {
            "module": "builtins",
            "class_name": "function",
            "config": value["__registered__"],
            "registered_name": "function",
        }
    if "__registered__" in value:
        name = str(value["__registered__"])
        return {
            "module": None,
            "class_name": name.split(">", 1)[-1],
            "config": _keras_value(value.get("config", {})),
            "registered_name": name,
        }
    return {k: _keras_value(v) for k, v in value.items()}


def _without_fan_axes(value: Any) -> Any:
    """``value`` without Keras 3.15's ``input_axes``/``output_axes`` of None in its initializers:
    tf_keras's initializers refuse the keys, and None is the only meaning they have there."""
    if isinstance(value, list):
        return [_without_fan_axes(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("module") == "keras.initializers" and isinstance(value.get("config"), dict):
        inner = {k: v for k, v in value["config"].items() if not (k in ("input_axes", "output_axes") and v is None)}
        return {**value, "config": inner}
    return {k: _without_fan_axes(v) for k, v in value.items()}


def _regularizer_name(config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    # Keras's L2(0.1) saves as class L2 with {"l2": 0.1}; unison holds every one as an L1L2
    l1, l2 = float(config.get("l1", 0.0)), float(config.get("l2", 0.0))
    if l1 and not l2:
        return "L1", {"l1": l1}
    if l2 and not l1:
        return "L2", {"l2": l2}
    return "L1L2", {"l1": l1, "l2": l2}


def _module_of(cls: type) -> str:
    layers_mod = _namespace("layers")[0]
    if getattr(layers_mod, cls.__name__, None) is cls:
        return "keras.layers"
    return cls.__module__


def layer_entry(layer: nn.Module, *, in_sequential: bool = False) -> dict[str, Any]:
    """Keras 3's entry for one layer: module, class_name, config, registered_name (and build_config)."""
    from unison.keras.utils.object_registration import get_registered_name, is_registered

    _, Sequential, Functional = _model_classes()
    if isinstance(layer, (Sequential, Functional)):
        return to_keras(layer)
    name = getattr(layer, "name", type(layer).__name__)
    get_config = getattr(layer, "get_config", None)
    if get_config is None:
        raise SavingError(
            f"Cannot write layer {name!r} to a Keras file: {type(layer).__name__} is a torch module without "
            "get_config(). Use keras.layers (or define get_config), or save the weights with save_weights()."
        )
    config = _keras_value(_json_value(get_config(), f"layer {name!r}"))
    defaulted = getattr(layer, "_defaulted_config_keys", None)  # Layer's (the layers tier: looked up, not imported)
    if _KERAS2_DIALECT.get() and type(layer).__module__.startswith("unison.") and defaulted is not None:
        # tf_keras refuses arguments it does not know (Keras 3 added seed, quantization_config...):
        # Keras 2's dialect lists the arguments the layer was made with, as Keras 2 itself did
        for key in defaulted():
            config.pop(key, None)
    if _KERAS2_DIALECT.get():
        config = _without_fan_axes(config)
    if in_sequential:
        config.pop("input_shape", None)  # the Sequential's InputLayer carries it
    for key, default in _KERAS_NEEDS.get(type(layer).__name__, {}).items():
        config.setdefault(key, default)  # Keras's from_config reads these keys without a default
    if type(layer).__name__ == "Normalization" and list(getattr(layer, "weights", [])):
        # Keras keeps an adapted mean and variance as the layer's variables (in the weights file)
        config.update(mean=None, variance=None)
    config.setdefault("name", name)
    config.setdefault("trainable", bool(getattr(layer, "trainable", True)))
    config.setdefault("dtype", dict(_POLICY))
    cls = type(layer)
    entry = {
        "module": _module_of(cls),
        "class_name": cls.__name__,
        "config": config,
        "registered_name": get_registered_name(cls) if is_registered(cls) else None,
    }
    return entry


def _input_entry(name: str, shape: Any, dtype: str = "float32") -> dict[str, Any]:
    return {
        "module": "keras.layers",
        "class_name": "InputLayer",
        "config": {"batch_shape": [None, *list(shape)], "dtype": dtype, "sparse": False, "name": name},
        "registered_name": None,
    }


def to_keras(model: nn.Module) -> dict[str, Any]:
    """The architecture of ``model`` as Keras 3 writes it into ``config.json``.

    Raises:
        SavingError: a layer without ``get_config``, or a functional graph step that is a torch
            function rather than a layer (Keras has no entry for it); the message says what to change.
    """
    from unison.keras.utils.object_registration import get_registered_name, is_registered

    Model, Sequential, Functional = _model_classes()
    own = getattr(type(model), "get_config", None)
    if isinstance(model, Model) and own is not None and own is not getattr(Model, "get_config", None):
        cls = type(model)
        shape = model.__dict__.get("_first_input_shape") or getattr(model, "input_shape_hint", None)
        entry = {
            "module": cls.__module__,
            "class_name": cls.__name__,
            "config": _keras_value(_json_value(model.get_config(), f"model {cls.__name__}")),
            "registered_name": get_registered_name(cls) if is_registered(cls) else cls.__name__,
        }
        if shape is not None:
            entry["build_config"] = {"input_shape": _batch_shape(shape)}
        return entry
    if isinstance(model, Functional):
        return {
            "module": "keras.src.models.functional",
            "class_name": "Functional",
            "config": _functional(model),
            "registered_name": "Functional",
            "build_config": {"input_shape": None},
        }
    if isinstance(model, Sequential):
        hint = model.input_shape_hint or model.__dict__.get("_called_shape")
        layers = [_input_entry("input_layer", _example_shape(hint))] if hint is not None else []
        layers += [layer_entry(layer, in_sequential=True) for layer in model.layers]
        entry = {
            "module": "keras",
            "class_name": "Sequential",
            "config": {"name": model.name, "trainable": True, "dtype": dict(_POLICY), "layers": layers},
            "registered_name": None,
        }
        if hint is not None:
            entry["build_config"] = {"input_shape": [None, *_example_shape(hint)]}
        return entry
    raise SavingError(
        f"Cannot write the architecture of {type(model).__name__} to a Keras file: a subclassed or wrapped model "
        "has no config. Define get_config() on it and register it with "
        "@keras.saving.register_keras_serializable(), or use save_weights()/load_weights()."
    )


def _example_shape(shape: Any) -> list[Any]:
    return [None if s is None else int(s) for s in shape]


def _batch_shape(shape: Any) -> list[Any]:
    # unison remembers the shape of one example; Keras's build_config holds it with the batch axis
    return [None, *_example_shape(list(shape))]


def _functional(model: Any) -> dict[str, Any]:
    history: dict[int, list[Any]] = {}
    layers: list[dict[str, Any]] = []
    input_layers = []
    for kt in model.inputs:
        name = str(kt.name)
        history[id(kt)] = [name, 0, 0]
        entry = _input_entry(name, list(kt.shape[1:]), str(kt.dtype).removeprefix("torch."))
        entry.update(name=name, inbound_nodes=[])
        layers.append(entry)
        input_layers.append([name, 0, 0])
    by_layer: dict[int, dict[str, Any]] = {}
    calls: dict[int, int] = {}
    for node in model._nodes:
        op = node.op
        if not isinstance(op, nn.Module):
            raise SavingError(
                f"Cannot write model {model.name!r} to a Keras file: its graph calls the function "
                f"{getattr(op, '__name__', op)!r}, which Keras has no entry for. Use a keras.layers layer "
                "(Add, Multiply, Lambda-free layers) or a registered custom layer instead."
            )
        if id(op) not in by_layer:
            entry = layer_entry(op)
            entry.update(name=op.name, inbound_nodes=[])
            by_layer[id(op)] = entry
            layers.append(entry)
        index = calls.get(id(op), 0)
        calls[id(op)] = index + 1
        by_layer[id(op)]["inbound_nodes"].append(
            {"args": _node_value(list(node.args), history), "kwargs": _node_value(dict(node.kwargs), history)}
        )
        for i, kt in enumerate(node.outputs):
            history[id(kt)] = [op.name, index, i]
    outputs = [history[id(kt)] for kt in flatten(model.output)]
    return {
        "name": model.name,
        "trainable": True,
        "layers": layers,
        "input_layers": input_layers if len(input_layers) > 1 else input_layers[0],
        "output_layers": outputs if len(outputs) > 1 or isinstance(model.output, (list, tuple)) else outputs[0],
    }


def _node_value(value: Any, history: dict[int, list[Any]]) -> Any:
    if isinstance(value, KerasTensor):
        return {
            "class_name": "__keras_tensor__",
            "config": {
                "shape": [None if s is None else int(s) for s in value.shape],
                "dtype": str(value.dtype).removeprefix("torch."),
                "keras_history": history[id(value)],
            },
        }
    if isinstance(value, (list, tuple)):
        return [_node_value(v, history) for v in value]
    if isinstance(value, dict):
        return {k: _node_value(v, history) for k, v in value.items()}
    return _json_value(value, "a node argument")


# --- Keras 2's dialect (the legacy .h5 files tf_keras writes, which Keras 3 reads too) -------------
_KERAS2_DIALECT: contextvars.ContextVar[bool] = contextvars.ContextVar("unison_keras2_dialect", default=False)


@contextlib.contextmanager
def keras2_dialect() -> Iterator[None]:
    """Within the block, :func:`to_keras` leaves out the constructor arguments a unison layer was not
    given (their defaults), as Keras 2 wrote configs: the entry then suits :func:`to_keras2`."""
    token = _KERAS2_DIALECT.set(True)
    try:
        yield
    finally:
        _KERAS2_DIALECT.reset(token)


def to_keras2(entry: dict[str, Any]) -> dict[str, Any]:
    """A Keras 3 config entry (:func:`to_keras`) in Keras 2's dialect, as tf_keras writes ``model_config``.

    ``batch_input_shape`` for InputLayer, ``dtype`` as a name, a registered class by its registered
    name, list-form ``inbound_nodes`` (tensors as ``[layer, node, tensor, kwargs]``, later positional
    arguments as keywords named by the layer's ``call``), input and output lists of lists.
    """
    out: dict[str, Any] = {"class_name": entry.get("registered_name") or entry["class_name"]}
    if out["class_name"] in ("Functional", "function"):
        out["class_name"] = entry["class_name"]
    config = {k: _keras2_value(v) for k, v in (entry.get("config") or {}).items()}
    if entry["class_name"] == "InputLayer" and "batch_shape" in config:
        config["batch_input_shape"] = config.pop("batch_shape")
        config.setdefault("ragged", False)
    if entry["class_name"] in ("Sequential", "Functional") and "layers" in config:
        config["layers"] = [to_keras2(layer) for layer in entry["config"]["layers"]]
        config.pop("dtype", None)
        for key in ("input_layers", "output_layers"):
            refs = config.get(key)
            if refs and isinstance(refs[0], str):
                config[key] = [refs]
    if entry["class_name"] == "MultiHeadAttention" and entry.get("inbound_nodes"):
        # tf_keras builds the layer from these shapes before its weights are set
        node = entry["inbound_nodes"][0]
        shapes = [a["config"]["shape"] for a in node.get("args", []) if _history(a) is not None]
        named = {k: v["config"]["shape"] for k, v in node.get("kwargs", {}).items() if _history(v) is not None}
        query = shapes[0] if shapes else named.get("query")
        value = shapes[1] if len(shapes) > 1 else named.get("value", query)
        config.update(query_shape=query, value_shape=value, key_shape=named.get("key", value))
    out["config"] = config
    if "name" in entry:
        out["name"] = entry["name"]
    if "inbound_nodes" in entry:
        out["inbound_nodes"] = [_keras2_node(node, entry["class_name"]) for node in entry["inbound_nodes"]]
    return out


def _keras2_value(value: Any) -> Any:
    if isinstance(value, dict) and value.get("class_name") == "DTypePolicy":
        return value["config"]["name"]
    return value


def _keras2_ref(value: Any) -> Any:
    ref = _history(value)
    if ref is not None:
        return list(ref)
    if isinstance(value, list):
        return [_keras2_ref(v) for v in value]
    if isinstance(value, dict):
        return {k: _keras2_ref(v) for k, v in value.items()}
    return value


def _call_names(class_name: str) -> list[str]:
    """The argument names of a layer's call (``query, value, key`` for MultiHeadAttention)."""
    try:
        cls = _find_class(class_name, None)
    except SavingError:
        return []
    for klass in cls.__mro__:  # the most derived call() or forward() that names its arguments
        for attr in ("call", "forward"):
            fn = klass.__dict__.get(attr)
            if fn is None:
                continue
            params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
            if params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
                return [p.name for p in params]
    return []


def _keras2_node(node: dict[str, Any], class_name: str) -> list[Any]:
    args, kwargs = list(node.get("args", [])), dict(node.get("kwargs", {}))
    if len(args) > 1:  # Keras 2 keeps only the first argument positional: the rest by call()'s names
        names = _call_names(class_name)
        if len(names) < len(args):
            raise SavingError(
                f"Cannot write a call of {class_name} with {len(args)} positional arguments in Keras 2's "
                "format; call it with keyword arguments, or save to .keras."
            )
        kwargs.update(zip(names[1:], args[1:]))
    first = args[0] if args else []
    tensors = first if isinstance(first, list) else [first]
    extra = {k: _keras2_ref(v) for k, v in kwargs.items()}
    return [[*list(_history(t) or ()), extra] for t in tensors]


# --- Keras -> unison --------------------------------------------------------------------------
def _unison_value(value: Any) -> Any:
    """A Keras config value as unison's constructors take it (objects rebuilt by class name)."""
    if isinstance(value, list):
        return [_unison_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    module = str(value.get("module") or "")
    if "class_name" in value and "config" in value:
        if value["class_name"] == "function":
            return _objects_from_config({"__registered__": value["config"]})
        if value["class_name"] == "DTypePolicy":
            return value["config"].get("name", "float32")
        prefix = module.removeprefix("keras.").split(".")[0]
        config = {k: v for k, v in (_unison_value(value["config"]) or {}).items() if v is not None}
        if prefix == "initializers" and not config:
            return snake_case(str(value["class_name"]))  # "GlorotUniform" -> "glorot_uniform"
        if prefix in _OBJECT_MODULES:
            if prefix == "regularizers":
                return _objects_from_config(
                    {"__object__": "regularizers.L1L2", "config": {"l1": 0.0, "l2": 0.0, **config}}
                )
            return _objects_from_config({"__object__": f"{prefix}.{value['class_name']}", "config": config})
        if value.get("registered_name"):
            return _objects_from_config({"__registered__": value["registered_name"], "config": config})
    return {k: _unison_value(v) for k, v in value.items()}


def _accepted(cls: type) -> set[str]:
    """Argument names a unison layer class takes, over its bases (Layer's name, trainable, dtype...)."""
    names: set[str] = {"name", "trainable", "dtype", "input_shape"}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            params = inspect.signature(init).parameters.values()
            names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names


def _layer_arguments(cls: type, config: dict[str, Any], where: str) -> dict[str, Any]:
    config = {k: _unison_value(v) for k, v in config.items()}
    axis = config.get("axis")
    if isinstance(axis, list) and len(axis) == 1 and cls.__name__ in _ONE_AXIS:
        config["axis"] = axis[0]  # Keras 2 writes BatchNormalization's axis=-1 as [3]
    if cls.__name__ == "MultiHeadAttention" and config.get("attention_axes") == [1]:
        config["attention_axes"] = None  # Keras writes the default (the sequence axis) as [1]
    if config.get("dtype") == "float32":
        config.pop("dtype")
    if not cls.__module__.startswith("unison."):
        # a custom class: its own from_config takes its own get_config, less what Keras's Layer
        # base adds to every config and unison's base has no argument for
        return {k: v for k, v in config.items() if not (k in _KERAS_BASE_ONLY and _is_default(k, v))}
    accepted = _accepted(cls)
    out = {}
    for key, value in config.items():
        if key in accepted or key.endswith("_constraint"):
            if not (key.endswith("_constraint") and value is None):
                out[key] = value
        elif _is_default(key, value) or key in _BUILD_ONLY:
            continue  # Keras wrote the default of an argument unison does not spell out
        else:
            raise SavingError(
                f"The Keras file sets {key}={value!r} on {where} ({cls.__name__}), which unison's "
                f"{cls.__name__} does not support. Rebuild the model without it in Keras, or build it in code "
                "and load only the weights."
            )
    return out


def from_keras(entry: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> nn.Module:
    """A unison model (or layer) from a Keras 3 or Keras 2 config entry (``config.json``, ``model_config``).

    Raises:
        SavingError: a class that is neither a unison layer nor registered nor in
            ``custom_objects``, or an argument unison does not support; the message names it.
    """
    class_name = str(entry.get("class_name"))
    config = dict(entry.get("config") or {})
    if class_name in ("Functional", "Model") and "layers" in config:
        return _rebuild_functional(config, custom_objects)
    if class_name == "Sequential":
        return _rebuild_sequential(config, entry, custom_objects)
    cls = _find_class(class_name, custom_objects, entry.get("registered_name") or _registered_as(class_name))
    if not cls.__module__.startswith("unison."):  # a custom class: its from_config gets its own get_config
        own = {k: v for k, v in _unison_value(config).items() if not (k in _KERAS_BASE_ONLY and _is_default(k, v))}
        own.pop("dtype", None) if own.get("dtype") == "float32" else None
        made = cls.from_config(own) if hasattr(cls, "from_config") else cls(**own)
        shape = (entry.get("build_config") or {}).get("input_shape")
        if shape is not None and hasattr(made, "build") and isinstance(made, _model_classes()[0]):
            made.build([1 if s is None else int(s) for s in shape])
        return made
    where = f"layer {config.get('name', class_name)!r}"
    return cls.from_config(_layer_arguments(cls, config, where))


def _registered_as(class_name: str) -> str | None:
    """The registered name ``package>ClassName`` of a class Keras's legacy ``.h5`` names bare."""
    from unison.keras.utils.object_registration import get_custom_objects

    found = [name for name in get_custom_objects() if name.endswith(">" + class_name)]
    return found[0] if len(found) == 1 else None


def _input_from(config: dict[str, Any]) -> KerasTensor:
    shape = config.get("batch_shape") or config.get("batch_input_shape")
    if shape is None:
        shape = [None, *config.get("shape", config.get("input_shape", []))]
    dtype = config.get("dtype") or "float32"
    if isinstance(dtype, dict):
        dtype = dtype.get("config", {}).get("name", "float32")
    return Input(shape=tuple(shape[1:]), dtype=dtype, name=config.get("name"))


def _rebuild_sequential(config: dict[str, Any], entry: dict[str, Any], custom_objects: Any) -> nn.Module:
    Sequential = _model_classes()[1]
    stack: list[Any] = []
    for item in config.get("layers", []):
        layer_config = dict(item.get("config") or {})
        if item.get("class_name") == "InputLayer":
            stack.append(_input_from(layer_config))
            continue
        shape = layer_config.pop("batch_input_shape", None)  # Keras 2 puts the input on the first layer
        if shape is not None and not stack:
            stack.append(Input(shape=tuple(shape[1:])))
        stack.append(from_keras({**item, "config": layer_config}, custom_objects))
    if not any(isinstance(s, KerasTensor) for s in stack):
        shape = config.get("build_input_shape") or (entry.get("build_config") or {}).get("input_shape")
        if shape is not None:
            stack.insert(0, Input(shape=tuple(shape[1:])))
    return Sequential(stack, name=config.get("name"))


def _history(value: Any) -> tuple[str, int, int] | None:
    if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
        name, node, index = value["config"]["keras_history"]
        return str(name), int(node), int(index)
    return None


def _rebuild_functional(config: dict[str, Any], custom_objects: Any) -> nn.Module:
    Functional = _model_classes()[2]
    produced: dict[tuple[str, int], list[Any]] = {}
    pending: list[tuple[Any, str, Any]] = []
    for item in config["layers"]:
        name = str(item.get("name") or item["config"]["name"])
        if item.get("class_name") == "InputLayer":
            produced[(name, 0)] = [_input_from({**item["config"], "name": name})]
            continue
        layer = from_keras(item, custom_objects)
        pending.extend((layer, name, node) for node in item.get("inbound_nodes", []))
    calls: dict[str, int] = {}
    while pending:
        left = []
        for layer, name, node in pending:
            args = _resolve_node(node, produced)
            if args is None:
                left.append((layer, name, node))
                continue
            index = calls.get(name, 0)
            calls[name] = index + 1
            produced[(name, index)] = flatten(layer(*args[0], **args[1]))
        if len(left) == len(pending):
            raise SavingError(
                f"The saved graph of model {config.get('name')!r} does not replay: layers "
                f"{sorted({n for _, n, _ in left})[:8]} wait for tensors no layer produces."
            )
        pending = left

    def tensor(ref: Any) -> Any:
        return produced[(str(ref[0]), int(ref[1]))][int(ref[2])]

    def refs(value: Any) -> Any:
        if isinstance(value, list) and value and isinstance(value[0], str):
            return tensor(value)
        return [refs(v) for v in value]

    inputs, outputs = refs(config["input_layers"]), refs(config["output_layers"])
    # Keras 2 writes every list of inputs and outputs as a list, one entry or many: one is one tensor
    inputs = inputs[0] if isinstance(inputs, list) and len(inputs) == 1 else inputs
    outputs = outputs[0] if isinstance(outputs, list) and len(outputs) == 1 else outputs
    return Functional(inputs, outputs, name=config.get("name"))


_MISSING = object()


def _keras2_tensor(value: Any, produced: dict[tuple[str, int], list[Any]]) -> Any:
    """A Keras 2 keyword argument: ``[layer, node, tensor]`` names a tensor (MultiHeadAttention's value)."""
    if (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], str)
        and all(isinstance(v, int) for v in value[1:])
    ):
        outs = produced.get((value[0], value[1]))
        return _MISSING if outs is None else outs[value[2]]
    return value


def _resolve_node(node: Any, produced: dict[tuple[str, int], list[Any]]) -> tuple[list[Any], dict[str, Any]] | None:
    """The call arguments of one inbound node, or None while one of its tensors is not made yet."""
    missing = False

    def value(v: Any) -> Any:
        nonlocal missing
        ref = _history(v)
        if ref is not None:
            outs = produced.get((ref[0], ref[1]))
            if outs is None:
                missing = True
                return None
            return outs[ref[2]]
        if isinstance(v, list):
            return [value(x) for x in v]
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        return v

    if isinstance(node, dict):  # Keras 3: {"args": [...], "kwargs": {...}}
        args, kwargs = value(node.get("args", [])), value(node.get("kwargs", {}))
        # Keras records mask=None (and the like) on every call; a None is the call's own default
        # and training= fixed at build time (EfficientNet's Dropout): unison's layers take the mode
        # from the model's call, as Keras's do when it is not fixed
        kwargs = {k: v for k, v in kwargs.items() if v is not None and k != "training"}
    else:  # Keras 2: [[layer, node, tensor, kwargs], ...]
        tensors, kwargs = [], {}
        for ref in node:
            outs = produced.get((str(ref[0]), int(ref[1])))
            if outs is None:
                return None
            tensors.append(outs[int(ref[2])])
            kwargs = dict(ref[3]) if len(ref) > 3 and ref[3] else kwargs
        args = [tensors[0] if len(tensors) == 1 else tensors]
        kwargs = {k: _keras2_tensor(v, produced) for k, v in kwargs.items()}
        if any(v is _MISSING for v in kwargs.values()):
            return None
    if missing:
        return None
    return list(args), dict(kwargs)


__all__ = ["from_keras", "keras2_dialect", "layer_entry", "to_keras", "to_keras2"]
