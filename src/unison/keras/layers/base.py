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

import re
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from unison.keras import initializers, regularizers
from unison.keras.keras_tensor import has_keras_tensor, symbolic_call

_COUNTERS: dict[str, int] = {}  # Keras-style unique default names: dense, dense_1, ...


def _default_name(cls: type) -> str:
    base = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
    base = base.replace("2_d", "2d").replace("1_d", "1d")
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


class Layer(nn.Module):
    """Base of unison's Keras layers: lazy ``build(input_shape)`` then ``call(inputs)``.

    Args:
        name: the layer's name (default: snake-case class name, made unique).
        input_shape: shape of one example (no batch axis), as in Keras.
        trainable: whether its weights get gradients.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Remember the constructor arguments: get_config() (and so model saving) rebuilds from them.
        obj = super().__new__(cls)
        object.__setattr__(obj, "_init_arguments", (args, dict(kwargs)))
        return obj

    def __init__(
        self,
        name: str | None = None,
        input_shape: tuple[int, ...] | None = None,
        trainable: bool = True,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        if kwargs:
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword arguments: {sorted(kwargs)}. "
                "Check the spelling against the Keras signature."
            )
        self.name = name or _default_name(type(self))
        self.input_shape_arg = tuple(input_shape) if input_shape is not None else None
        self.built = False
        self.trainable = trainable
        self._regularized: list[tuple[Callable[[torch.Tensor], torch.Tensor], str]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # On keras.Input tensors (functional API) the call is recorded as a graph node.
        if has_keras_tensor(args, kwargs):
            return symbolic_call(self, args, kwargs, run=super().__call__)
        return super().__call__(*args, **kwargs)

    def build(self, input_shape: torch.Size) -> None:
        """Create weights for inputs of ``input_shape`` (batch axis included)."""
        self.built = True

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        """The layer's computation (subclasses implement it)."""
        raise NotImplementedError

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self.built:
            self.build(inputs.shape)
            self.built = True
            if not self.trainable:
                for p in self.parameters():
                    p.requires_grad_(False)
        return self.call(inputs)

    def add_weight(
        self, name: str, shape: tuple[int, ...], initializer: Any, regularizer: Any = None, trainable: bool = True
    ) -> nn.Parameter:
        """Create, initialise and register a weight (Keras's ``add_weight``)."""
        param = nn.Parameter(torch.empty(shape), requires_grad=trainable and self.trainable)
        initializers.get(initializer)(param)
        self.register_parameter(name, param)
        reg = regularizers.get(regularizer)
        if reg is not None:
            self._regularized.append((reg, name))
        return param

    @property
    def weights(self) -> list[Any]:
        """This layer's variables (Keras's ``layer.weights``).

        A variable that a ``ParameterServerStrategy`` partitions is listed as its shards, as in
        TF: each shard has ``shape``, ``device`` (its parameter server) and ``numpy()``.
        """
        return [w for p in self.parameters() for w in _listed_variables(p)]

    @property
    def trainable_weights(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]

    @property
    def non_trainable_weights(self) -> list[torch.Tensor]:
        return [p for p in self.parameters() if not p.requires_grad]

    @property
    def losses(self) -> list[torch.Tensor]:
        """Regularisation penalties of this layer's weights (recomputed on each access)."""
        return [reg(getattr(self, name)) for reg, name in self._regularized]

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments this layer was created with, by name (Keras's ``get_config``).

        ``name`` is always included, so ``type(layer).from_config(layer.get_config())`` makes an
        equal, unbuilt layer. Layers whose state is not in their arguments (a vocabulary learned by
        ``adapt``) override this.
        """
        args, kwargs = getattr(self, "_init_arguments", ((), {}))
        return bind_arguments(type(self), args, kwargs, self.name)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Layer:
        """A new layer from ``get_config()``'s output."""
        return cls(**config)

    def count_params(self) -> int:
        """Number of scalars in this layer's weights."""
        return sum(p.numel() for p in self.parameters())

    def get_weights(self) -> list[Any]:
        """The layer's weights as numpy arrays."""
        return [p.detach().cpu().numpy() for p in self.parameters()]

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


def bind_arguments(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> dict[str, Any]:
    """``cls(*args, **kwargs)``'s arguments as one dict keyed by parameter name, with ``name``."""
    import inspect

    try:
        signature = inspect.signature(cls.__init__)  # type: ignore[misc]
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return {**kwargs, "name": name}
    config: dict[str, Any] = {}
    for key, value in list(bound.arguments.items())[1:]:
        kind = signature.parameters[key].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            config.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                raise ValueError(
                    f"{cls.__name__} was created with extra positional arguments {value!r}; "
                    "its configuration cannot name them. Pass them by keyword."
                )
        else:
            config[key] = value
    config["name"] = name
    return config


def pair(value: int | tuple[int, int] | list[int], what: str) -> tuple[int, int]:
    """Keras accepts ``3`` or ``(3, 3)`` for 2-D sizes."""
    if isinstance(value, int):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (int(value[0]), int(value[1]))
    raise ValueError(f"{what} must be an int or a tuple of 2 ints. Received: {what}={value!r}")
