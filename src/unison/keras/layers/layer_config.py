"""Keras 3's ``Layer.get_config`` layout, derived from a layer's constructor signature.

Keras lists every constructor argument (defaults applied) plus ``name``, ``trainable`` and
``dtype``, in serialised form: activations as names, initializers/regularizers/constraints as
``{"module", "class_name", "config", "registered_name"}`` dicts, the dtype as a DTypePolicy dict.
:func:`full_config` builds that from the arguments a layer was created with (recorded by
``Layer.__new__``); :func:`constructor_arguments` turns such a config back into arguments.

Example:
    >>> from unison.keras.layers import Dense
    >>> config = Dense(4).get_config()
    >>> config["activation"], config["use_bias"], config["kernel_initializer"]["class_name"]
    ('linear', True, 'GlorotUniform')
    >>> config["dtype"]["config"], config["trainable"]
    ({'name': 'float32'}, True)
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import torch

from unison.keras import activations, constraints, dtype_policies, initializers, regularizers

_BASE_KEYS = ("name", "trainable", "dtype")
# Keras normalises these arguments (3 -> (3, 3), None -> "channels_last"); the layer's attribute of
# the same name holds that normal form, so it is saved instead of the argument as given.
_DATA_FORMATS = ("channels_last", "channels_first")
_TUPLE_ARGUMENTS = frozenset(
    ("kernel_size", "strides", "dilation_rate", "pool_size", "size", "padding", "cropping", "output_padding")
)
# Sizes Keras stores as a tuple of the layer's rank even for one dimension (Conv1D's kernel_size=(3,))
_RANK_TUPLES = frozenset(("kernel_size", "strides", "dilation_rate", "pool_size", "output_size"))


def _signature(cls: type) -> inspect.Signature | None:
    try:
        return inspect.signature(cls.__init__)  # type: ignore[misc]
    except (TypeError, ValueError):
        return None


def _builtin(module: Any, value: Any) -> bool:
    """Whether ``value`` is an instance of one of ``module``'s own classes (not a user subclass)."""
    return getattr(module, type(value).__name__, None) is type(value)


def _activation_name(value: Any) -> Any:
    """A Keras activation's saved name; a custom or torch function stays as given (saving names it)."""
    if value is None:
        return "linear"
    try:
        name = activations.serialize(value)
        if isinstance(value, str) or activations.deserialize(name) is value:
            return name
    except (TypeError, ValueError):
        pass
    return value


def _serialize_value(key: str, value: Any, own: frozenset[str]) -> Any:
    """``value`` in Keras's serialised form for an argument called ``key`` (unchanged when it has none).

    Only Keras's own objects are turned into dicts (they load back by class name); a custom
    initializer, regularizer, constraint or function is kept as the object, which model saving
    writes by its registered name.
    """
    if key in own:
        return value
    if key == "activation" or key.endswith("_activation"):
        return _activation_name(value)
    if value is None:
        return None
    made: Any
    try:
        if key.endswith("_initializer"):
            made = initializers.get(value)
            return initializers.serialize(made) if _builtin(initializers, made) else value
        if key.endswith("_regularizer"):
            made = regularizers.get(value)
            return regularizers.serialize(made) if _builtin(regularizers, made) else value
        if key.endswith("_constraint"):
            made = constraints.get(value)
            if _builtin(constraints, made):
                return {"module": "keras.constraints", **constraints.serialize(made), "registered_name": None}
    except (TypeError, ValueError):
        pass  # not resolvable here: kept as given (the layer's constructor reported it already)
    return value


def _rank(cls: type) -> int | None:
    """The spatial rank a ``Conv1D``/``MaxPooling2D``/... class name states (Keras writes sizes as tuples of it)."""
    for klass in cls.__mro__:
        match = re.search(r"([123])D(?:Transpose)?$", klass.__name__)
        if match:
            return int(match.group(1))
    return None


def _normal_form(layer: Any, key: str, value: Any, arguments: dict[str, Any]) -> Any:
    """The value Keras saves for ``key`` where it normalises the argument (``3`` -> ``(3, 3)``, ``None`` ->
    ``"channels_last"``): the layer's attribute of that name when it holds the normal form, else
    Keras's rule applied here."""
    attr = layer.__dict__.get(key, None)
    if key in _TUPLE_ARGUMENTS and isinstance(attr, tuple):
        # ZeroPadding2D's (1, 2) is saved as ((1, 1), (2, 2)), the pairs form its attribute holds
        pairs = bool(attr) and all(isinstance(a, tuple) for a in attr)
        if value is None or isinstance(value, (int, list)) or (pairs and isinstance(value, tuple)):
            return attr
    if key == "oov_token" and value is None and isinstance(attr, str):
        return attr  # StringLookup's None means "[UNK]", which Keras's signature states
    if key == "data_format" and value is None:
        if attr in _DATA_FORMATS:
            return attr
        from unison.keras.backend.config import image_data_format

        return image_data_format()  # Keras's standardize_data_format(None)
    rank = _rank(type(layer))
    if rank is not None and key in _RANK_TUPLES:
        if key == "strides" and value is None and "pool_size" in arguments:
            value = arguments["pool_size"]  # a pooling layer's strides default to its pool size
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,) * rank
        if isinstance(value, list):
            return tuple(value)
    if value is None and key != "seed" and isinstance(attr, (int, float)) and not isinstance(attr, bool):
        return attr  # an argument resolved at construction (LeakyReLU's slope, a key_dim-sized value_dim)
    return value


def keras_form(form: str, value: Any) -> Any:
    """``value`` as Keras 3 saves an argument it normalises (a layer's ``_config_forms`` names the rule).

    ``"symmetric"``: a number ``f`` is the range ``(-|f|, |f|)`` (RandomRotation's ``factor``);
    ``"from_zero"``/``"from_one"``: ``(0, f)``/``(1, f)`` (RandomContrast's, RandomPosterization's);
    a two-item list becomes a tuple under these three. ``"list"``: a range is saved as a list
    (RandomBrightness's ``value_range``, whatever sequence was given).

    Example:
        >>> keras_form("symmetric", 0.2), keras_form("from_zero", [0.1, 0.4]), keras_form("list", (0, 255))
        ((-0.2, 0.2), (0.1, 0.4), [0, 255])
    """
    if form == "list":
        return list(value) if isinstance(value, (tuple, list)) else value
    if isinstance(value, list) and len(value) == 2:
        return tuple(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if form == "symmetric":
            return (-abs(value), abs(value))
        return (0 if form == "from_zero" else 1, value)
    return value


def dtype_entry(layer: Any, given: Any = None, default: Any = None) -> dict[str, Any]:
    """Keras's ``dtype`` entry: the layer's DTypePolicy (else ``given``, ``default``, the global one), serialised."""
    policy = layer.__dict__.get("dtype_policy")
    if not isinstance(policy, dtype_policies.Policy):
        value = given if given is not None else default
        if isinstance(value, dict):
            return value
        if isinstance(value, torch.dtype):
            value = str(value).removeprefix("torch.")
        try:
            policy = dtype_policies.get(value) if value is not None else dtype_policies.global_policy()
        except (TypeError, ValueError):
            policy = dtype_policies.global_policy()
    return dtype_policies.serialize(policy)


def _inherited_parameters(cls: type) -> dict[str, inspect.Parameter]:
    """Keyword parameters that ``cls(...)`` accepts: its ``__init__``'s, then (through ``**kwargs``) its bases'.

    The walk stops at a constructor without ``**kwargs`` and at unison's ``Layer`` (whose own
    arguments, ``name``/``trainable``/``dtype``, are listed separately).
    """
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass.__name__ == "Layer" and klass.__module__ == "unison.keras.layers.base":
            break
        try:
            params = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            break
        for p in params:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in found:
                found[p.name] = p
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return found


def full_config(layer: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every constructor argument of ``layer`` (defaults applied) in Keras's serialised form.

    ``name``, ``trainable`` (the current flag) and ``dtype`` come first, as in Keras; arguments
    passed through ``**kwargs`` to a base class are listed by name (with the base's default when
    not given), a ``**kwargs`` catch-all itself is not. ``cls._config_omitted`` names arguments
    Keras takes but does not list (deprecated aliases), left out while they hold their default.

    Raises:
        ValueError: the layer was made with extra positional arguments that no parameter names.
    """
    cls = type(layer)
    config: dict[str, Any] = {"name": layer.name, "trainable": bool(layer.trainable)}
    signature = _signature(cls)
    arguments: dict[str, Any] = {}
    bound = None
    if signature is not None:
        try:
            bound = signature.bind(None, *args, **kwargs)
        except TypeError:
            bound = None
    if bound is None or signature is None:
        arguments = dict(kwargs)
    else:
        for key, value in list(bound.arguments.items())[1:]:
            kind = signature.parameters[key].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(value)
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                if value:
                    raise ValueError(
                        f"{cls.__name__} was created with extra positional arguments {value!r}; "
                        "its configuration cannot name them. Pass them by keyword."
                    )
            else:
                arguments[key] = value
    parameters = _inherited_parameters(cls)
    for key, param in parameters.items():
        if key not in arguments and param.default is not inspect.Parameter.empty:
            arguments[key] = param.default
    for key in getattr(cls, "_config_omitted", frozenset()):
        omitted = parameters.get(key)
        if key in arguments and omitted is not None and _same(arguments[key], omitted.default):
            del arguments[key]
    dtype_param = parameters.get("dtype")
    dtype_default = (
        None if dtype_param is None or dtype_param.default is inspect.Parameter.empty else dtype_param.default
    )
    config["dtype"] = dtype_entry(layer, arguments.get("dtype"), dtype_default)
    own: frozenset[str] = getattr(cls, "_own_argument_names", frozenset())
    forms: dict[str, str] = getattr(cls, "_config_forms", {})
    for key, value in arguments.items():
        if key in _BASE_KEYS or (key == "input_shape" and value is None):
            continue  # Keras 3 lists an input shape only where one was given
        value = _normal_form(layer, key, value, arguments)
        config[key] = _serialize_value(key, keras_form(forms[key], value) if key in forms else value, own)
    if (
        bound is not None
        and signature is not None
        and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    ):
        _add_constraint_keys(config)
    for key in getattr(cls, "_config_extras", ()):
        config.setdefault(key, None)
    return config


def defaulted_keys(layer: Any) -> set[str]:
    """The constructor arguments of ``layer`` that its maker did not pass (so hold their defaults).

    Keras 2's dialect (tf_keras's ``.h5`` files) leaves them out: tf_keras refuses arguments it does
    not know, and Keras 3 added many (``seed``, ``quantization_config``, ...); a value the maker passed
    is written as before.

    Example:
        >>> import unison as tf
        >>> sorted(defaulted_keys(tf.keras.layers.Dropout(0.5)))
        ['noise_shape', 'seed']
    """
    cls = type(layer)
    args, kwargs = getattr(layer, "_init_arguments", ((), {}))
    signature = _signature(cls)
    given = set(kwargs)
    if signature is not None:
        try:
            bound = signature.bind(None, *args, **kwargs)
        except TypeError:
            return set()
        for key, value in list(bound.arguments.items())[1:]:
            kind = signature.parameters[key].kind
            if kind is inspect.Parameter.VAR_KEYWORD:
                given |= set(value)
            else:
                given.add(key)
    return {key for key in _inherited_parameters(cls) if key not in given} - set(_BASE_KEYS)


def _same(value: Any, default: Any) -> bool:
    try:
        return bool(value is default or value == default)
    except Exception:  # an array compared elementwise: not a default
        return False


def _add_constraint_keys(config: dict[str, Any]) -> None:
    """Keras lists ``X_constraint`` beside each trainable weight's ``X_initializer``.

    unison's base layer takes any ``X_constraint`` keyword (see ``attach_constraints``), so a layer
    whose own signature does not name it still accepts the ``None`` listed here.
    """
    for key in list(config):
        if key.endswith("_initializer") and not key.startswith("moving_"):
            config.setdefault(key[: -len("_initializer")] + "_constraint", None)


def constructor_arguments(cls: type, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``config`` as keyword arguments for ``cls(...)``, and the attributes to set on the new layer.

    A DTypePolicy dict becomes its policy name. A constructor that takes neither ``**kwargs``
    nor ``name``/``trainable``/``dtype`` (a custom layer's) is not given them: ``name`` and
    ``trainable`` come back as attributes to set after construction, ``dtype`` is dropped.
    """
    kwargs = dict(config)
    dtype = kwargs.get("dtype")
    if isinstance(dtype, dict) and dtype.get("class_name") in ("DTypePolicy", "FloatDTypePolicy"):
        kwargs["dtype"] = (dtype.get("config") or {}).get("name")
    later: dict[str, Any] = {}
    signature = _signature(cls)
    if signature is not None:
        params = signature.parameters
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            for key in _BASE_KEYS:
                if key in kwargs and key not in params:
                    value = kwargs.pop(key)
                    if key != "dtype":
                        later[key] = value
    return kwargs, later
