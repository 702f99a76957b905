"""The Layer base: a ``torch.nn.Module`` that builds its weights from the first input it sees.

Keras layers learn their input size lazily; unison's do the same, so ``Dense(128)`` needs no
``in_features``. ``input_shape=`` (Keras's keyword, without the batch axis) lets a
``Sequential`` build every layer at construction, so parameters exist inside
``strategy.scope()`` and start equal on all replicas.

Example:
    >>> import torch
    >>> from unison.keras.layers import Dense
    >>> layer = Dense(4)
    >>> layer(torch.zeros(2, 3)).shape
    torch.Size([2, 4])
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import itertools
import operator
import re
import sys
from collections.abc import Callable
from typing import Any, ClassVar, cast

import numpy as np
import torch
from torch import nn

from unison.core.variables import Variable
from unison.errors import did_you_mean
from unison.keras import constraints, dtype_policies, initializers, regularizers
from unison.keras.backend.common import (
    _COUNTERS,  # Keras-style unique default names: dense, dense_1, ...
    global_learning_phase,
)
from unison.keras.backend.keras_tensor import has_keras_tensor, layer_call_tensor, symbolic_call
from unison.keras.backend.torch_mode import INTERNAL_MODE_SWITCH, set_torch_mode
from unison.keras.layers.data_format import from_channels_last, to_channels_last
from unison.keras.layers.input_spec import assert_input_compatibility
from unison.keras.layers.mask_propagation import attach_output_masks, input_masks, mask_rules
from unison.keras.utils.weight_lists import (
    assign_weights,
    keras_non_trainable_weights,
    keras_submodules,
    keras_trainable_weights,
    keras_weights,
)


def _default_name(cls: type) -> str:
    # Keras's to_snake_case: Conv2D -> conv2d, RMSNormalization -> rms_normalization, PReLU -> p_re_lu
    base = re.sub(r"\W+", "", cls.__name__)
    base = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", base)
    base = re.sub("([a-z])([A-Z])", r"\1_\2", base).lower()
    n = _COUNTERS.get(base, 0)
    _COUNTERS[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


class VariableShard:
    """One shard of a variable partitioned across parameter servers (rows ``start:stop``)."""

    def __init__(self, variable: torch.Tensor, task: str, start: int, stop: int, name: str) -> None:
        job, index = task.split(":")
        self.name = name
        self.device = f"/job:{job}/replica:0/task:{index}/device:CPU:0"
        self.shape = torch.Size((stop - start, *variable.shape[1:]))
        self.dtype = variable.dtype
        self._variable, self._rows = variable, (start, stop)

    def numpy(self) -> Any:
        """The coordinator's copy of this shard's rows (refreshed by ``coordinator.join()``)."""
        start, stop = self._rows
        return self._variable.detach()[start:stop].cpu().numpy()

    def __repr__(self) -> str:
        return f"<VariableShard '{self.name}' shape={tuple(self.shape)} device={self.device}>"


def _listed_variables(param: torch.Tensor) -> list[Any]:
    # Only a process that made a parameter-server strategy can hold partitioned variables; looking
    # the module up (not importing it) keeps grpc out of programs that never use one.
    ps = sys.modules.get("unison.distribute.parameter_server.strategy")
    shards = ps.variable_shards_of(param) if ps is not None else None
    if not shards or len(shards) == 1:
        return [param]
    return [VariableShard(param, s["task"], s["rows"][0], s["rows"][1], s["shard"]) for s in shards]


# Keras's call context: `training` given to an outer model or layer call reaches every inner
# layer whose call() was not given one (fit calls the model with training=True, predict with False).
_CALL_TRAINING: contextvars.ContextVar[bool | None] = contextvars.ContextVar("unison_call_training", default=None)


@functools.cache
def takes_training(call: Callable[..., Any] | None) -> bool:
    """Whether a ``call`` method accepts ``training=`` (Keras passes it only then)."""
    if call is None:
        return False
    try:
        params = inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False
    return "training" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


# The running outermost Keras call (its id and module): add_loss tags each loss with the call that
# made it, so `losses` holds the latest call's and nothing has to be cleared by walking the layers.
_CALL: contextvars.ContextVar[tuple[int, nn.Module] | None] = contextvars.ContextVar("unison_layer_call", default=None)
_CALL_IDS = itertools.count(1)


def collect_losses(module: nn.Module) -> list[torch.Tensor]:
    """Keras's ``layer.losses``: the add_loss losses of the latest call and the weight penalties,
    of ``module`` and every layer inside it."""
    found: list[torch.Tensor] = []
    added: list[tuple[int | None, torch.Tensor]] = []
    for m in module.modules():
        added.extend(m.__dict__.get("_added_losses") or ())
        own: Callable[[], list[torch.Tensor]] | None = getattr(m, "_own_losses", None)
        if own is not None:
            found.extend(own())
    call_id = module.__dict__.get("_last_call_id")
    if call_id is None and added:
        # never called itself (an inner layer, or a model only built symbolically): its latest call
        ids = [c for c, _ in added if c is not None]
        call_id = max(ids) if ids else None
    return [loss for c, loss in added if c == call_id] + found


def has_added_losses(module: nn.Module) -> bool:
    """Whether ``module``'s latest outermost call added losses with add_loss (no walk over layers)."""
    call_id = module.__dict__.get("_last_call_id")
    return call_id is not None and module.__dict__.get("_losses_call_id") == call_id


def add_loss_to(module: nn.Module, loss: Any) -> None:
    """``add_loss``: keep ``loss`` as one of the running call's losses (Keras 3: a tensor)."""
    if callable(loss) and not isinstance(loss, torch.Tensor):
        raise TypeError(
            "add_loss takes a loss tensor computed in call() (Keras 3). Received a callable; "
            "call it and pass the tensor, or use a regularizer."
        )
    current = _CALL.get()
    call_id = current[0] if current is not None else None  # None: a symbolic (functional) build
    added = module.__dict__.setdefault("_added_losses", [])
    if added and added[-1][0] != call_id:
        added.clear()  # an older call's losses
    added.append((call_id, torch.as_tensor(loss)))
    if current is not None:
        current[1].__dict__["_losses_call_id"] = call_id


def call_in_mode(module: nn.Module, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a Keras layer or model call; the outermost one starts a new set of add_loss losses.

    As in Keras, ``layer.losses`` then holds the losses of the latest forward pass only.
    """
    if _CALL.get() is not None:
        return _add_activity_penalty(module, _call_in_mode(module, call, args, kwargs))
    if args and isinstance(args[0], np.ndarray):
        args = (_numpy_input(args[0], getattr(module, "compute_dtype", None) == "float64"), *args[1:])
    if len(args) > 1 or kwargs or (args and type(args[0]) in (list, tuple, dict)):
        # Keras converts every array argument, not only the first: Attention()([q, v]) and
        # MultiHeadAttention()(q, v) of numpy arrays
        args, kwargs = _numpy_arguments(module, args, kwargs)
    call_id = next(_CALL_IDS)
    module.__dict__["_last_call_id"] = call_id
    token = _CALL.set((call_id, module))
    try:
        return _add_activity_penalty(module, _call_in_mode(module, call, args, kwargs))
    finally:
        _CALL.reset(token)


def _add_activity_penalty(module: nn.Module, outputs: Any) -> Any:
    """Keras's ``activity_regularizer``: ``regularizer(output) / batch size`` of each output tensor,
    added to the call's losses (``fit`` adds them to the loss, as Keras does)."""
    regularizer = module.__dict__.get("activity_regularizer")
    if regularizer is None:
        return outputs
    from unison.ops.tree import flatten

    for output in flatten(outputs):
        if isinstance(output, torch.Tensor) and output.is_floating_point():
            batch = output.shape[0] if output.dim() else 1
            add_loss_to(module, regularizer(output) / max(int(batch), 1))
    return outputs


def _numpy_arguments(
    module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Numpy arrays anywhere in a call's arguments (lists, tuples, dicts, keywords) as :func:`_numpy_input` makes them."""
    float64 = getattr(module, "compute_dtype", None) == "float64"

    def convert(value: Any) -> Any:
        if type(value) is np.ndarray:
            return _numpy_input(value, float64)
        if type(value) in (list, tuple):
            return type(value)(convert(v) for v in value)
        if type(value) is dict:
            return {k: convert(v) for k, v in value.items()}
        return value

    return tuple(convert(a) for a in args), {k: convert(v) for k, v in kwargs.items()}


def _numpy_input(value: np.ndarray, float64: bool = False) -> Any:
    """A numpy batch given to a layer or model as Keras converts it: a tensor, float64 as float32
    unless the layer computes in float64 (``dtype="float64"``)."""
    if value.dtype.kind not in "biuf":
        return value  # strings stay numpy (TextVectorization, StringLookup take them)
    from unison.ops.dtypes import as_torch

    tensor = as_torch(value)
    return tensor.float() if tensor.dtype == torch.float64 and not float64 else tensor


@functools.cache
def default_training(call: Callable[..., Any] | None) -> bool | None:
    """The default of ``training`` in a ``call`` signature (``def call(self, x, training=True)``), else None."""
    if call is None:
        return None
    try:
        param = inspect.signature(call).parameters.get("training")
    except (TypeError, ValueError):
        return None
    if param is None or not isinstance(param.default, (bool, int)) or isinstance(param.default, type):
        return None
    return bool(param.default)


def _resolved_training(module: nn.Module) -> bool | None:
    """Keras's ``training`` for a call given none and made outside any other call.

    In order: the learning phase a Keras 2 program set (``K.set_learning_phase``,
    ``K.learning_phase_scope``), then the default in the layer's ``call`` signature; None means
    inference (Dropout off, BatchNorm on its moving statistics), as Keras's layers treat it.
    """
    phase = global_learning_phase()
    if phase is not None:
        return bool(phase)
    return default_training(getattr(type(module), "call", None))


def _call_in_mode(module: nn.Module, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``call(*args, **kwargs)`` of a Keras layer or model with Keras's ``training`` rules.

    ``training`` comes from ``kwargs``, else from the enclosing call, else from the learning phase
    or the signature's default (``_resolved_training``). With none of them the call runs in
    inference mode, as in Keras: ``model(x)`` applies no dropout and updates no BatchNorm
    statistics. The exception is a module its user put in a torch mode (``model.train()`` or
    ``model.eval()``, as a raw PyTorch loop does): it keeps that mode. Otherwise the module runs in
    the resolved mode (Dropout and BatchNorm follow it), its ``call`` gets ``training=`` when it
    declares it, and inner layers see it as their context.
    """
    training = kwargs.pop("training", None)
    context = _CALL_TRAINING.get()
    if training is None:
        training = context
        if training is None:
            if module.__dict__.get("_torch_mode_by_user"):
                return call(*args, **kwargs)
            training = _resolved_training(module)
            if training is None:
                # Keras's inference default. The mode is left switched: the next such call is free,
                # and fit/predict set their own mode and put this one back afterwards.
                if module.training:
                    set_torch_mode(module, False)
                return call(*args, **kwargs)
    training = bool(training)
    if takes_training(getattr(type(module), "call", None)):
        kwargs["training"] = training
    if context is training and module.training == training:
        return call(*args, **kwargs)  # the enclosing call set this mode already: nothing to set or undo
    token = _CALL_TRAINING.set(training)
    flip = module.training != training
    if flip:
        set_torch_mode(module, training)
    try:
        return call(*args, **kwargs)
    finally:
        _CALL_TRAINING.reset(token)
        if flip:
            set_torch_mode(module, not training)


# Keras's add_weight options that describe placement or synchronisation: the strategy decides both.
_PLACEMENT_OPTIONS = frozenset(
    {
        "aggregation",
        "synchronization",
        "autocast",
        "experimental_autocast",
        "use_resource",
        "caching_device",
        "overwrite_with_gradient",
        "partitioner",
    }
)
_KERAS3_ORDER = ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer", "constraint")
_KERAS2_ORDER = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "constraint")


def _weight_arguments(args: tuple[Any, ...], options: dict[str, Any]) -> dict[str, Any]:
    """add_weight's positional arguments by name, in Keras 2's order when the first is a name."""
    unknown = sorted(set(options) - _PLACEMENT_OPTIONS)
    if unknown:
        raise TypeError(
            f"add_weight got unexpected keyword arguments: {unknown}. Check them against Keras's signature."
        )
    order = _KERAS2_ORDER if args and isinstance(args[0], str) else _KERAS3_ORDER
    if len(args) > len(order):
        raise TypeError(f"add_weight takes at most {len(order)} positional arguments ({', '.join(order)})")
    given = dict(zip(order, args))
    given.pop("autocast", None)
    return {k: v for k, v in given.items() if v is not None}


def _weight_dtype(dtype: Any) -> torch.dtype:
    if dtype is None:
        return torch.get_default_dtype()
    if isinstance(dtype, torch.dtype):
        return dtype
    from unison.ops.dtypes import as_dtype

    resolved = as_dtype(dtype)
    if not isinstance(resolved, torch.dtype):
        raise TypeError(f"add_weight needs a numeric dtype. Received: dtype={dtype!r}")
    return resolved


def _unique_weight_name(layer: nn.Module) -> str:
    taken = {n for n, _ in layer.named_parameters(recurse=False)}
    n = 0
    while (name := "variable" if n == 0 else f"variable_{n}") in taken or hasattr(layer, name):
        n += 1
    return name


def set_trainable(module: nn.Module, value: bool) -> None:
    """Keras's ``layer.trainable = value``: the layer and every layer inside it, weights included.

    A weight created with ``add_weight(trainable=False)`` (and any non-float weight) stays frozen
    when ``value`` is True, as in Keras. Recompile after changing it, as Keras asks.
    """
    value = bool(value)
    for m in module.modules():
        m.__dict__["_trainable"] = value
    for p in module.parameters():
        flag = value and p.is_floating_point() and not getattr(p, "_unison_frozen", False)
        p.requires_grad_(flag)
        if isinstance(p, Variable):
            p._tf_trainable = flag  # a pickled or deep-copied weight (strategies) keeps the state


def attach_constraints(layer: nn.Module) -> None:
    """Give the weights the layer's ``<prefix>_constraint`` arguments name their constraints.

    ``kernel_constraint`` goes to weights named ``kernel`` (also of inner layers, as Keras's
    ``MultiHeadAttention`` passes it to its projections), ``recurrent_constraint`` to
    ``recurrent_kernel``, ``depthwise_constraint`` to ``depthwise_kernel``, and so on.
    """
    wanted: dict[str, Any] = layer.__dict__.get("_constraint_args") or {}
    if not wanted:
        return
    matched: set[str] = set()
    for name, param in layer.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        for prefix, constraint in wanted.items():
            if leaf in (prefix, f"{prefix}_kernel"):
                matched.add(prefix)
                if getattr(param, "constraint", None) is None:
                    param.constraint = constraint  # type: ignore[attr-defined]
    unmatched = sorted(f"{p}_constraint" for p in wanted if p not in matched)
    if unmatched:
        raise ValueError(
            f"{type(layer).__name__} {getattr(layer, 'name', '')!r} got {unmatched}, but it has no weight "
            f"those constraints apply to (its weights: {[n for n, _ in layer.named_parameters()]}). "
            "Remove the argument, or give the constraint to the layer that owns the weight."
        )


def shape_argument(value: Any, layer: str, argument: str = "input_shape") -> tuple[int | None, ...] | None:
    """``input_shape=`` as Keras takes it: a tuple or list of dimensions (``None`` for any), no batch axis.

    An int is refused as Keras 3 refuses it ("Cannot convert '784' to a shape"), with the fix:
    ``(784)`` is the int 784, ``(784,)`` the shape.
    """
    if value is None:
        return None
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        fix = f"{argument}=({value},)" if isinstance(value, int) else f"{argument}=(784,)"
        raise ValueError(
            f"Cannot convert {str(value)!r} to a shape: {layer}'s {argument} is a tuple of dimensions without the "
            f"batch axis, e.g. {fix} (mind the comma: ({value}) is just {value!r}). Received: {argument}={value!r}"
        )
    try:
        dims = tuple(value)
    except TypeError:
        raise ValueError(
            f"Cannot convert {value!r} to a shape: {layer}'s {argument} is a tuple of dimensions, e.g. (784,) or "
            f"(28, 28, 1). Received: {argument}={value!r}"
        ) from None
    out: list[int | None] = []
    for d in dims:
        try:
            size = None if d is None else operator.index(d)
        except TypeError:
            size = -1
        if isinstance(d, bool) or (size is not None and size < 0):
            raise ValueError(
                f"Cannot convert {value!r} to a shape: each dimension of {layer}'s {argument} is an int >= 0 "
                f"or None. Received: {argument}={value!r}"
            )
        out.append(size)
    return tuple(out)


def _check_named_arguments(kwargs: dict[str, Any]) -> None:
    """Initializer and regularizer names are looked up when the layer is made, as Keras does, not at build."""
    for key, value in kwargs.items():
        if not isinstance(value, str):
            continue
        try:
            if key.endswith("_initializer"):
                initializers.get(value)
            elif key.endswith("_regularizer"):
                regularizers.get(value)
        except ValueError as exc:
            raise ValueError(f"{exc} (argument {key}={value!r})") from None


def _keyword_hints(cls: type, unknown: dict[str, Any]) -> str:
    """`` ('activaton': did you mean 'activation'?)`` for misspelt keyword arguments of a layer."""
    known: set[str] = {"name", "input_shape", "trainable", "dtype", "input_dim", "batch_input_shape"}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            known.update(
                p.name
                for p in inspect.signature(init).parameters.values()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            )
        except (TypeError, ValueError):
            continue
    known.discard("self")
    hints = []
    for key in sorted(unknown):
        close = did_you_mean(key, known)  # " (did you mean 'x'?)"
        if close:
            hints.append(f"{key!r}: {close[2:-1]}")
    return f" ({'; '.join(hints)})" if hints else ""


def finish_build(layer: nn.Module) -> None:
    """What follows a layer's ``build``: marked built, constraints attached, frozen if not trainable."""
    layer.built = True  # type: ignore[assignment]
    attach_constraints(layer)
    if not layer.trainable:
        for p in layer.parameters():
            p.requires_grad_(False)


def _marking_built(build: Callable[..., None]) -> Callable[..., None]:
    """``build`` that leaves the layer built, as Keras's does, however it is called.

    Keras 3 wraps every layer's ``build`` so that ``layer.build(shape)`` called by the user marks it
    built; otherwise the first call would build again and replace the weights the user set in
    between. Only the outermost ``build`` finishes (a subclass's ``super().build()`` runs before its
    own weights exist, and constraints must find them).
    """

    @functools.wraps(build)
    def build_and_mark(self: nn.Module, *args: Any, **kwargs: Any) -> None:
        depth = self.__dict__.get("_build_depth", 0)
        self.__dict__["_build_depth"] = depth + 1
        try:
            build(self, *args, **kwargs)
        finally:
            self.__dict__["_build_depth"] = depth
        if depth == 0:
            finish_build(self)

    build_and_mark._marks_built = True  # type: ignore[attr-defined]
    return build_and_mark


class Layer(nn.Module):
    """Base of unison's Keras layers: lazy ``build(input_shape)`` then ``call(inputs)``.

    Args:
        name: the layer's name (default: snake-case class name, made unique).
        input_shape: shape of one example (no batch axis), as in Keras.
        trainable: whether its weights get gradients.
        dtype: the layer's dtype policy (layers with ``DTypePolicyMixin`` apply it).
        activity_regularizer: a regularizer (``"l2"``, ``keras.regularizers.L1(0.01)``) of each call's
            outputs: its value divided by the batch size joins the layer's ``losses``, as in Keras.
    """

    _keras_submodule = True  # a TF submodule for keras_submodules (utils/weight_lists.py imports no Layer)
    # Keras's input_spec: an InputSpec (or a list of them) a layer may set; checked on each call
    input_spec: Any = None
    # `*_initializer` arguments a layer resolves itself (RandomFourierFeatures's "laplacian"), not by name
    _own_argument_names: frozenset[str] = frozenset()
    # get_config (layers/layer_config.py): arguments Keras takes but does not list (deprecated
    # aliases, fixed settings), left out while at their default; keys Keras lists that reach this
    # base class through **kwargs (listed as None when not given)
    _config_omitted: frozenset[str] = frozenset()
    _config_extras: tuple[str, ...] = ()
    # arguments Keras saves in a normal form (RandomRotation's factor 0.2 as (-0.2, 0.2)): key -> rule
    # of layer_config.keras_form ("symmetric", "from_zero", "from_one", "list")
    _config_forms: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "_marks_built", False):
            cls.build = _marking_built(build)  # type: ignore[method-assign]

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Remember the constructor arguments: get_config() (and so model saving) rebuilds from them.
        obj = super().__new__(cls)
        object.__setattr__(obj, "_init_arguments", (args, dict(kwargs)))
        return obj

    def train(self, mode: bool = True) -> Layer:
        """torch's ``train(mode)``. Called by a user (``model.train()``, ``model.eval()``), it also
        makes this layer's later calls without ``training=`` follow torch's mode, as in a raw
        PyTorch loop; without it they follow Keras's rule (inference unless told otherwise)."""
        if not INTERNAL_MODE_SWITCH.get():
            self.__dict__["_torch_mode_by_user"] = True
        return super().train(mode)

    def __init__(
        self,
        name: str | None = None,
        input_shape: tuple[int, ...] | None = None,
        trainable: bool = True,
        dtype: Any = None,
        activity_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        # Keras's penalty on the layer's outputs (a regularizer of the output, per example of the
        # batch), added to the call's losses: see _add_activity_penalty
        self.activity_regularizer = regularizers.get(activity_regularizer)
        # Keras's `kernel_constraint=`, `bias_constraint=`, ...: attached to the weights of that
        # name once they exist (see attach_constraints); the optimizer applies them after each update.
        constraint_args = {k: kwargs.pop(k) for k in [k for k in kwargs if k.endswith("_constraint")]}
        if kwargs:
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword arguments: {sorted(kwargs)}"
                f"{_keyword_hints(type(self), kwargs)}. Check the spelling against the Keras signature."
            )
        own = type(self)._own_argument_names
        _check_named_arguments({k: v for k, v in getattr(self, "_init_arguments", ((), {}))[1].items() if k not in own})
        self.name = name if name is not None else _default_name(type(self))  # Keras keeps name=""
        self.input_shape_arg = shape_argument(input_shape, type(self).__name__)
        self.built = False
        self.trainable = trainable
        if "_layer_dtype_policy" not in self.__dict__:  # DTypePolicyMixin's __init__ may have set it
            self.dtype_policy = dtype_policies.get(dtype) if dtype is not None else dtype_policies.global_policy()
        self._regularized: list[tuple[Callable[[torch.Tensor], torch.Tensor], str]] = []
        self._constraint_args = {
            k[: -len("_constraint")]: constraints.get(v) for k, v in constraint_args.items() if v is not None
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # On keras.Input tensors (functional API) the call is recorded as a graph node.
        if has_keras_tensor(args, kwargs):
            return symbolic_call(self, args, kwargs, run=super().__call__)
        return call_in_mode(self, super().__call__, args, kwargs)

    def build(self, input_shape: torch.Size) -> None:
        """Create weights for inputs of ``input_shape`` (batch axis included)."""
        self.built = True

    @property
    def dtype_policy(self) -> Any:
        """Keras's ``layer.dtype_policy``: the ``dtype=`` given, else the global policy when it was made."""
        return self.__dict__["_layer_dtype_policy"]

    @dtype_policy.setter
    def dtype_policy(self, policy: Any) -> None:
        self.__dict__["_layer_dtype_policy"] = policy

    @property
    def compute_dtype(self) -> str:
        """The dtype the layer computes in (``"bfloat16"`` under ``mixed_bfloat16``)."""
        return str(self.dtype_policy.compute_dtype)

    @property
    def variable_dtype(self) -> str:
        """The dtype of the layer's variables (``"float32"`` under the mixed policies)."""
        return str(self.dtype_policy.variable_dtype)

    @property
    def dtype(self) -> Any:
        """Keras's ``layer.dtype``: the variable dtype (``"float32"``), unless the layer set its own."""
        return self.__dict__.get("_dtype_value", self.variable_dtype)

    @dtype.setter
    def dtype(self, value: Any) -> None:
        self.__dict__["_dtype_value"] = value  # InputLayer's dtype of its inputs

    @property
    def trainable(self) -> bool:
        """Whether training updates this layer's weights; setting it applies to inner layers too."""
        return bool(self.__dict__.get("_trainable", True))

    @trainable.setter
    def trainable(self, value: bool) -> None:
        set_trainable(self, value)

    @property
    def input(self) -> Any:
        """The symbolic input of this layer's first call (functional and Sequential models)."""
        return layer_call_tensor(self, "input")

    @property
    def output(self) -> Any:
        """The symbolic output of this layer's first call: ``keras.Model(m.inputs, layer.output)``."""
        return layer_call_tensor(self, "output")

    # Keras 2's layer.input_shape/output_shape (of the first symbolic call); a subclass may still
    # assign its own value, as some Keras 2 layers did.
    @property
    def input_shape(self) -> Any:
        if "_input_shape_value" in self.__dict__:
            return self.__dict__["_input_shape_value"]
        from unison.keras.backend.shapes import layer_shape

        return layer_shape(self, "input")

    @input_shape.setter
    def input_shape(self, value: Any) -> None:
        self.__dict__["_input_shape_value"] = value

    @property
    def output_shape(self) -> Any:
        if "_output_shape_value" in self.__dict__:
            return self.__dict__["_output_shape_value"]
        from unison.keras.backend.shapes import layer_shape

        return layer_shape(self, "output")

    @output_shape.setter
    def output_shape(self, value: Any) -> None:
        self.__dict__["_output_shape_value"] = value

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        """The layer's computation (subclasses implement it)."""
        raise NotImplementedError

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        if not args:
            # Keras lets the first argument of call() come by name: layer(query=q, value=v)
            first = _first_parameter(type(self).call)
            if first is None or first not in kwargs:
                raise TypeError(
                    f"Layer {self.name!r} was called without inputs. Pass them first, or by the name "
                    f"of the first argument of its call() ({first!r}). Received keyword arguments: {sorted(kwargs)}"
                )
            args = (kwargs.pop(first),)
        inputs, args = args[0], args[1:]
        takes_mask, supports_masking = mask_rules(self, Layer.compute_mask)
        previous_mask = None
        if takes_mask or supports_masking:  # Keras's mask rules (layers/mask_propagation.py)
            previous_mask = kwargs["mask"] if "mask" in kwargs else input_masks(inputs)
            if takes_mask and "mask" not in kwargs and previous_mask is not None:
                kwargs["mask"] = previous_mask
        spec = self.input_spec
        if spec is not None:
            assert_input_compatibility(spec, inputs, self.name)
        channels_first = self.__dict__.get("_channels_first", False)
        if channels_first:  # data_format="channels_first": compute channels-last (see layers/data_format.py)
            inputs = to_channels_last(inputs)
        if not self.built:
            self.build(_shape_structure(inputs))
            finish_build(self)  # Layer's own build (a subclass's build already finished)
            if self.__dict__.pop("_cast_after_build", False):  # a float64 policy's first call
                getattr(self, "_cast_variables")()  # noqa: B009 - DTypePolicyMixin's (nn.Module's getattr types it a Tensor)
        if channels_first:
            return cast(torch.Tensor, from_channels_last(self.call(inputs, *args, **kwargs)))
        outputs = self.call(inputs, *args, **kwargs)
        if supports_masking:
            attach_output_masks(self, inputs, outputs, previous_mask)
        return outputs

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The outputs' mask (Keras's default: the input's mask, used when the layer supports masking).

        A layer supports masking when it sets ``supports_masking = True`` or overrides this method.
        """
        return mask

    def add_weight(
        self,
        *args: Any,
        shape: Any = None,
        initializer: Any = None,
        dtype: Any = None,
        trainable: bool | None = None,
        regularizer: Any = None,
        constraint: Any = None,
        name: str | None = None,
        **options: Any,
    ) -> nn.Parameter:
        """Create, initialise and register a weight (Keras's ``add_weight``), in either Keras's spelling.

        Positional arguments follow Keras 3 (``shape, initializer, dtype, trainable``) or, when
        the first one is a string, Keras 2 (``name, shape, dtype, initializer, regularizer,
        trainable``). ``initializer`` defaults to ``"glorot_uniform"`` for floating weights and
        ``"zeros"`` otherwise, as in Keras; ``name`` defaults to ``variable``, ``variable_1``, ...
        Keras's placement and synchronisation options (``aggregation``, ``synchronization``,
        ``autocast``, ...) are accepted: the strategy places and synchronises every weight.

        Example:
            >>> import torch
            >>> from unison.keras.layers import Layer
            >>> class Scale(Layer):
            ...     def build(self, input_shape):
            ...         self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")
            ...     def call(self, inputs):
            ...         return inputs * self.w
            >>> Scale()(torch.full((2, 3), 2.0)).tolist()
            [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
        """
        given = _weight_arguments(args, options)
        for key, value in (
            ("shape", shape),
            ("initializer", initializer),
            ("dtype", dtype),
            ("trainable", trainable),
            ("regularizer", regularizer),
            ("name", name),
        ):
            if value is not None:
                if key in given:
                    raise TypeError(f"add_weight got {key!r} both by position and by keyword")
                given[key] = value
        constraint = constraints.get(constraint if constraint is not None else given.pop("constraint", None))
        if "shape" not in given:
            raise TypeError("add_weight needs shape= (the weight's shape, e.g. shape=(input_dim, units))")
        raw_shape = given["shape"]
        dims = (raw_shape,) if isinstance(raw_shape, int) else tuple(raw_shape)
        if any(not isinstance(d, int) or d < 0 for d in dims):
            raise ValueError(f"add_weight needs a shape of non-negative ints. Received: shape={raw_shape!r}")
        torch_dtype = _weight_dtype(given.get("dtype"))
        init = given.get("initializer")
        if init is None:
            init = "glorot_uniform" if torch_dtype.is_floating_point else "zeros"
        weight_name = given.get("name") or _unique_weight_name(self)
        wants_grad = bool(given.get("trainable", True)) and self.trainable and torch_dtype.is_floating_point
        # A tf.Variable (a Parameter with assign/assign_add/numpy), as Keras's weights are variables:
        # custom layers keep state with `self.total.assign_add(...)`.
        param = Variable(torch.empty(dims, dtype=torch_dtype), trainable=wants_grad, name=weight_name)
        # Keras 3 names a layer's variable "kernel" (no TF ":0") and gives it a path "dense/kernel"
        param._tf_name = weight_name
        param.path = f"{self.name}/{weight_name}"  # type: ignore[attr-defined]
        if not given.get("trainable", True):
            param._unison_frozen = True  # type: ignore[attr-defined]  # stays frozen when the layer is unfrozen
        with torch.no_grad():
            initializers.get(init)(param)
        if constraint is None:  # the layer's `<name>_constraint=` argument (Keras passes it here)
            wanted = self.__dict__.get("_constraint_args") or {}
            constraint = wanted.get(weight_name) or wanted.get(weight_name.removesuffix("_kernel"))
        if constraint is not None:
            param.constraint = constraint  # type: ignore[attr-defined]  # tf.Variable.constraint
        self.register_parameter(weight_name, param)
        reg = regularizers.get(given.get("regularizer"))
        if reg is not None:
            self._regularized.append((reg, weight_name))
        return param

    @property
    def weights(self) -> list[Any]:
        """This layer's variables in Keras's order: own trainable, own non-trainable, then inner layers'.

        Non-trainable variables include states such as BatchNormalization's moving statistics.
        A variable that a ``ParameterServerStrategy`` partitions is listed as its shards, as in
        TF: each shard has ``shape``, ``device`` (its parameter server) and ``numpy()``.
        """
        return [w for p in keras_weights(self) for w in _listed_variables(p)]

    @property
    def variables(self) -> list[Any]:
        """Keras's ``layer.variables`` (the same list as ``weights``)."""
        return self.weights

    @property
    def submodules(self) -> tuple[nn.Module, ...]:
        """tf.Module's ``submodules``: the layers inside this one, depth first."""
        return keras_submodules(self)

    @property
    def trainable_weights(self) -> list[nn.Parameter]:
        """The variables training updates (for ``tape.gradient(loss, layer.trainable_weights)``)."""
        return keras_trainable_weights(self)

    @property
    def trainable_variables(self) -> list[nn.Parameter]:
        """Keras's ``layer.trainable_variables`` (the same list as ``trainable_weights``).

        Example:
            >>> import torch
            >>> from unison.keras.layers import Dense
            >>> layer = Dense(2)
            >>> _ = layer(torch.zeros(1, 3))
            >>> [tuple(v.shape) for v in layer.trainable_variables]
            [(3, 2), (2,)]
        """
        return self.trainable_weights

    @property
    def non_trainable_weights(self) -> list[torch.Tensor]:
        """Frozen weights and states (BatchNormalization's moving mean and variance)."""
        return keras_non_trainable_weights(self)

    @property
    def non_trainable_variables(self) -> list[torch.Tensor]:
        """Keras's ``layer.non_trainable_variables`` (the same list as ``non_trainable_weights``)."""
        return self.non_trainable_weights

    def add_metric(self, *args: Any, **kwargs: Any) -> None:
        """Keras 2's ``add_metric``, which Keras 3 removed: raises ``NotImplementedError`` as Keras 3 does.

        Without it the call failed with torch's ``AttributeError`` (keras.io's endpoint-layer example).

        Example:
            >>> Layer().add_metric(1.0)
            Traceback (most recent call last):
            ...
            NotImplementedError: Layer `add_metric()` method is deprecated. ...
        """
        raise NotImplementedError(
            "Layer `add_metric()` method is deprecated. Add your metric in `Model.compile(metrics=[...])`, "
            "or create metric trackers in init() or build() when subclassing the layer or model, then "
            "call `metric.update_state()` whenever necessary (Keras 3 removed add_metric; unison follows "
            "Keras 3 here, also for tf_keras programs)."
        )

    def add_loss(self, loss: Any) -> None:
        """Add a loss tensor computed in ``call`` (Keras's ``add_loss``); ``fit`` adds it to the loss.

        Example:
            >>> import torch
            >>> class Penalised(Layer):
            ...     def call(self, inputs):
            ...         self.add_loss(inputs.abs().mean())
            ...         return inputs
            >>> layer = Penalised()
            >>> _ = layer(torch.tensor([[-2.0, 2.0]]))
            >>> [float(v) for v in layer.losses]
            [2.0]
        """
        add_loss_to(self, loss)

    def _own_losses(self) -> list[torch.Tensor]:
        """The penalties of this layer's weights (its add_loss losses are kept by the call)."""
        return [reg(getattr(self, name)) for reg, name in self._regularized]

    @property
    def losses(self) -> list[torch.Tensor]:
        """This layer's and its inner layers' add_loss losses (latest call) and weight penalties."""
        return collect_losses(self)

    def get_config(self) -> dict[str, Any]:
        """Keras's config: every constructor argument (defaults applied), ``name``, ``trainable``, ``dtype``.

        Values are in Keras's serialised form (activation names, initializer/regularizer/constraint
        dicts, a DTypePolicy dict), so ``type(layer).from_config(layer.get_config())`` makes an
        equal, unbuilt layer (see ``layers/layer_config.py``). Layers whose state is not in their
        arguments (a vocabulary learned by ``adapt``) extend this.
        """
        from unison.keras.layers.layer_config import full_config

        args, kwargs = getattr(self, "_init_arguments", ((), {}))
        return full_config(self, args, kwargs)

    def _defaulted_config_keys(self) -> set[str]:
        """The constructor arguments this layer was not given (Keras 2's ``.h5`` dialect leaves them out)."""
        from unison.keras.layers.layer_config import defaulted_keys

        return defaulted_keys(self)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """A new layer from ``get_config()``'s output."""
        from unison.keras.layers.layer_config import constructor_arguments

        kwargs, attributes = constructor_arguments(cls, config)
        layer = cls(**kwargs)
        for key, value in attributes.items():
            setattr(layer, key, value)
        return layer

    def compute_output_shape(self, input_shape: Any) -> Any:
        """The shape of this layer's output for inputs of ``input_shape`` (``None``: any size).

        Inferred by running the layer on a copy (see ``layers/output_shape.py``); a list of shapes
        for a layer of several inputs or outputs.
        """
        from unison.keras.layers.output_shape import infer_output_shape

        return infer_output_shape(self, input_shape)

    def count_params(self) -> int:
        """Number of scalars in this layer's weights, non-trainable ones (moving statistics) included."""
        return sum(w.numel() for w in keras_weights(self))

    def get_weights(self) -> list[Any]:
        """The layer's weights as numpy arrays, in the order of ``layer.weights``."""
        # copies, as Keras's: a snapshot must not follow later training (torch's numpy() shares memory)
        return [p.detach().cpu().numpy().copy() for p in keras_weights(self)]

    def set_weights(self, weights: list[Any]) -> None:
        """Set the layer's weights from arrays in the order of ``layer.weights`` (Keras's ``set_weights``)."""
        assign_weights(self, list(weights), f"layer {self.name!r}")

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


@functools.cache
def _first_parameter(call: Callable[..., Any]) -> str | None:
    """The name of ``call``'s first argument after ``self`` (``inputs`` in most layers)."""
    try:
        params = list(inspect.signature(call).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if params and params[0].kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        return params[0].name
    return None


def _shape_structure(inputs: Any) -> Any:
    """``build``'s argument: the input's shape, or a list/tuple/dict of shapes for several inputs."""
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_shape_structure(v) for v in inputs)
    if isinstance(inputs, dict):
        return {k: _shape_structure(v) for k, v in inputs.items()}
    shape = getattr(inputs, "shape", None)
    return shape if shape is not None else torch.as_tensor(inputs).shape


def pair(value: int | tuple[int, int] | list[int], what: str, positive: bool = True) -> tuple[int, int]:
    """Keras accepts ``3`` or ``(3, 3)`` for 2-D sizes; sizes, strides and rates are > 0 (Keras's check)."""
    if isinstance(value, int) and not isinstance(value, bool):
        out = (value, value)
    elif (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        out = (int(value[0]), int(value[1]))
    else:
        raise ValueError(f"{what} must be an int or a tuple of 2 ints. Received: {what}={value!r}")
    bad = {v for v in out if v < (1 if positive else 0)}
    if bad:
        rule = "value > 0" if positive else "value >= 0"
        raise ValueError(
            f"The `{what}` argument must be a tuple of 2 integers. Received {what}={value!r} including {bad} "
            f"that does not satisfy `{rule}`. Fix: e.g. {what}={2 if what in ('pool_size', 'size') else 1}."
        )
    return out
