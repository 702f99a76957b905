"""``keras.Model`` over ``torch.nn``.

A model is any ``torch.nn.Module``: ``Model(module)`` wraps one you already have, subclasses
define ``call()``, and ``Sequential`` (``sequential.py``) stacks layers. The model remembers the strategy whose
scope it was created in (``distribute_strategy``); ``fit``/``evaluate``/``predict`` (in
:mod:`unison.keras.trainers.loop`) talk only to that strategy.

Example:
    >>> from unison import keras
    >>> model = keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)),
    ...                           keras.layers.Dense(2)])
    >>> model.count_params()
    26
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from unison.distribute.strategy import Strategy, get_strategy, has_strategy
from unison.errors import NotCompiledError
from unison.keras import optimizers as optimizers_mod
from unison.keras.backend.keras_tensor import KerasTensor, has_keras_tensor, symbolic_call
from unison.keras.backend.torch_mode import set_torch_mode
from unison.keras.layers.base import Layer, call_in_mode
from unison.keras.models import model_io
from unison.keras.trainers.compile_utils import OutputLosses, check_legacy_compile_kwargs
from unison.keras.trainers.trainer import Trainer
from unison.keras.utils.weight_lists import keras_non_trainable_weights, keras_trainable_weights, keras_weights

# keras.Model(inputs, outputs) is a Functional (functional.py), a subclass of Model: functional.py
# registers the class here when it is defined, so this module never imports it back.
_FUNCTIONAL: list[type[Model]] = []


def register_functional(cls: type[Model]) -> None:
    """Record the class that ``keras.Model(inputs, outputs)`` builds (functional.py calls it)."""
    _FUNCTIONAL[:] = [cls]


def _functional() -> Any:
    return _FUNCTIONAL[0]  # registered as soon as keras.models is imported


class Model(Trainer, Layer):
    """A trainable model with Keras's ``compile``/``fit``/``evaluate``/``predict``.

    Args:
        module: an existing ``torch.nn.Module`` to wrap (optional for subclasses with ``call``).
        name: the model's name.
    """

    @classmethod
    def _inherits_call(cls) -> bool:
        """Whether this class defines no ``call`` of its own (the trainer asks, without importing Model)."""
        return cls.call is Model.call

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # keras.Model(inputs, outputs) builds a functional model, as in Keras.
        if cls is Model and ("inputs" in kwargs or "outputs" in kwargs or (args and _symbolic(args[0]))):
            return super().__new__(_functional())
        return super().__new__(cls)

    def __init__(self, module: nn.Module | None = None, name: str | None = None, **kwargs: Any) -> None:
        Functional = _functional()
        if not isinstance(self, Functional) and ("inputs" in kwargs or "outputs" in kwargs or _symbolic(module)):
            # A subclass whose __init__ calls super().__init__(inputs=..., outputs=...) becomes a
            # functional model, as in Keras: Functional takes Model's place among its bases.
            _make_functional(type(self))
            if module is not None:
                kwargs["inputs"] = module
            if name is not None and not isinstance(name, str):
                # CustomModel(inputs, outputs): the second positional argument is the outputs
                kwargs["outputs"], name = name, kwargs.pop("name", None)
            Functional.__init__(self, name=name, **kwargs)
            return
        # Layer.__init__ draws the default name (model, functional, sequential): drawing it again
        # here named a program's first model functional_1 where Keras says functional
        super().__init__(name=name)
        if kwargs:
            raise TypeError(f"Model got unexpected keyword arguments: {sorted(kwargs)}.")
        if module is self:
            # super().__init__(self) in a subclass (TF's text-generation tutorial): tf_keras ignores
            # the stray argument (Keras 3 raises); wrapping the model in itself would recurse forever
            module = None
        if module is not None and not isinstance(module, nn.Module):
            raise TypeError(f"Model wraps a torch.nn.Module. Received: {type(module).__name__}")
        self.module = module
        # TF binds a model to the strategy whose scope it was created in.
        self.distribute_strategy: Strategy = get_strategy()
        self.optimizer: optimizers_mod.Optimizer | None = None
        self.loss: Any = None
        self._metric_specs: list[Any] = []  # compile(metrics=...), resolved on the first step
        self.stop_training = False
        self.history: Any = None
        self.input_shape_hint: tuple[int, ...] | None = None
        self._compiled = False
        self._mirrored_build = False  # see _build_mirrored

    # --- computation ------------------------------------------------------------------------
    def call(self, inputs: Any) -> Any:
        """The forward computation; subclasses override this (or wrap a module)."""
        if self.module is None:
            raise NotImplementedError("Subclasses of keras.Model must implement call(inputs).")
        return self.module(inputs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.call(*args, **kwargs)

    def __call__(self, *args: Any, training: bool | None = None, **kwargs: Any) -> Any:
        """``model(x)``; ``training=True/False`` sets Dropout/BatchNorm behaviour for this call.

        ``training=None`` follows Keras: the enclosing call's mode, else ``K.set_learning_phase``'s,
        else the default of a subclass's ``call`` signature, else inference (no dropout, BatchNorm
        on its moving statistics). A model its user put in a torch mode with ``model.train()`` or
        ``model.eval()`` keeps that mode instead, as in a raw PyTorch loop. A
        ``call(inputs, training=...)`` of a subclass gets the flag.
        """
        if has_keras_tensor(args, kwargs):  # a model used as a layer of a functional model
            return symbolic_call(self, args, kwargs, run=nn.Module.__call__.__get__(self))
        if not getattr(self, "_mirrored_build", True) and args and isinstance(args[0], torch.Tensor):
            self._build_mirrored(args[0])
        if args and isinstance(args[0], torch.Tensor) and "_first_input" not in self.__dict__:
            # what a subclassed model was first called with: model.export traces that (keras/export/)
            self.__dict__["_first_input"] = (tuple(args[0].shape[1:]), args[0].dtype)
        if args and "_first_input_shape" not in self.__dict__ and hasattr(args[0], "shape"):
            # a subclassed model's build shape, as Keras's build_config records it (model.save writes it)
            self.__dict__["_first_input_shape"] = tuple(int(s) for s in args[0].shape[1:])
        if training is not None:
            kwargs["training"] = training
        # torch's call straight: Layer.__call__ would check for symbolic inputs and set the mode again
        return call_in_mode(self, nn.Module.__call__.__get__(self), args, kwargs)

    def _build_mirrored(self, example: torch.Tensor) -> None:
        """Give lazily-built weights replica 0's values before the first call computes anything.

        A model created under a multi-replica strategy without an input shape (Keras builds
        it on its first input, e.g. inside ``strategy.run``) gets its weights after the scope's
        broadcast; TF mirrors such variables from the first replica, and so does unison: the
        model is built on a zero-filled example of the input's shape and its weights and
        buffers are broadcast from replica 0. Every replica makes this first call together.
        """
        strategy = self.distribute_strategy
        if strategy.num_replicas_in_sync <= 1 or self.built:
            self._mirrored_build = self.built or strategy.num_replicas_in_sync <= 1
            return
        was_training = self.training
        set_torch_mode(self, False)
        with torch.no_grad():
            nn.Module.__call__(self, torch.zeros_like(example[:1]))
        set_torch_mode(self, was_training)
        strategy.broadcast_tensors([*self.parameters(), *self.buffers()])
        self._mirrored_build = True

    @property  # type: ignore[misc]  # read-only on a model: its graph decides
    def input_shape(self) -> Any:
        """Shape of the model's input, batch axis ``None`` (functional and Sequential models)."""
        from unison.keras.backend.shapes import model_shape

        return model_shape(self, "input")

    @property  # type: ignore[misc]
    def output_shape(self) -> Any:
        """Shape of the model's output (a list of shapes for several outputs)."""
        from unison.keras.backend.shapes import model_shape

        return model_shape(self, "output")

    # --- Keras's variable lists (torch parameters and buffers) ----------------------------------
    @property
    def trainable_variables(self) -> list[nn.Parameter]:
        """Parameters that training updates, layer by layer in Keras's order (``trainable_weights``)."""
        return keras_trainable_weights(self)

    @property
    def trainable_weights(self) -> list[nn.Parameter]:
        return self.trainable_variables

    @property
    def non_trainable_weights(self) -> list[torch.Tensor]:
        """Frozen parameters and floating-point states (e.g. BatchNorm's moving statistics)."""
        return keras_non_trainable_weights(self)

    @property
    def weights(self) -> list[torch.Tensor]:
        """Every variable layer by layer, each layer's own in creation order, as Keras 3 and 2 list
        a model's (a BatchNormalization's gamma, beta, moving mean, moving variance in a row)."""
        return keras_weights(self)

    def build(self, input_shape: Sequence[int | None]) -> None:
        """Create every lazily-sized weight by running one example of ``input_shape`` (batch axis
        included; ``None`` for an unknown size, as in ``model.build((None, 784))``, runs as 1)."""
        shape = tuple(1 if d is None else int(d) for d in input_shape)
        was_training = self.training
        set_torch_mode(self, False)
        with torch.no_grad():
            self(torch.zeros(shape, device=self._device()))
        set_torch_mode(self, was_training)
        self.reset_states()  # a stateful RNN starts the first real batch from zeros, not from the example

    def _device(self) -> torch.device:
        for p in self.parameters():
            return p.device
        return self.distribute_strategy.extended.device

    @property
    def built(self) -> bool:
        """Whether every layer inside has its weights (a model is built when its layers are)."""
        return all(getattr(m, "built", True) for m in self.modules() if isinstance(m, Layer) and m is not self)

    @built.setter
    def built(self, value: bool) -> None:
        """Layer's constructor marks a new layer unbuilt; a model's state is its layers'."""

    @property
    def layers(self) -> list[nn.Module]:
        """The model's direct sub-layers."""
        return [m for m in self.children()]

    def get_layer(self, name: str | None = None, index: int | None = None) -> nn.Module:
        """A layer of ``self.layers`` by name or index (Keras's ``get_layer``)."""
        if index is not None:
            layers = self.layers
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"get_layer(index={index}) is out of range: model {self.name!r} has {len(layers)} layers."
                )
            return layers[index]
        if name is None:
            raise ValueError("get_layer needs name= or index=.")
        for layer in self.layers:
            if getattr(layer, "name", None) == name:
                return layer
        raise ValueError(
            f"No such layer: {name!r}. Existing layers are: "
            f"{[getattr(m, 'name', type(m).__name__) for m in self.layers]}."
        )

    # --- compile -----------------------------------------------------------------------------
    def compile(
        self,
        optimizer: Any = "rmsprop",
        loss: Any = None,
        metrics: Sequence[Any] | None = None,
        loss_weights: Any = None,
        weighted_metrics: Any = None,
        run_eagerly: bool = False,
        steps_per_execution: int = 1,
        jit_compile: Any = None,
        **kwargs: Any,
    ) -> None:
        """Configure training: optimizer, loss and metrics (strings as in Keras).

        Under a strategy's scope the optimizer's gradients are synchronised by that strategy.
        """
        check_legacy_compile_kwargs(kwargs)
        # loss=None is allowed, as in Keras 3: a model that adds its loss with add_loss() (fit
        # checks that there is one), or a train_step override that computes its own.
        if isinstance(metrics, str) or (metrics is not None and not isinstance(metrics, Iterable)):
            metrics = [metrics]
        specs: Any = dict(metrics) if isinstance(metrics, dict) else list(metrics or [])
        self._compile_arguments = (optimizer, loss, specs)  # saved by model.save('x.keras')
        self.optimizer = optimizers_mod.get(optimizer)
        # Several outputs: a loss (and weight) per output, by position or by output name.
        self.loss = OutputLosses.from_compile(self, loss, loss_weights) if loss is not None else None
        self._metric_specs = specs
        self._adopt_scope_strategy()
        self._compiled = True
        trainable = [p for p in self.parameters() if p.requires_grad]
        if trainable and self.built and not any(isinstance(p, nn.parameter.UninitializedParameter) for p in trainable):
            self.optimizer.prebuild(trainable)

    def _adopt_scope_strategy(self) -> None:
        """A model built outside any scope joins the strategy compile() runs under; TF forbids mixing."""
        current = get_strategy()
        if current is self.distribute_strategy or not has_strategy():
            return
        if self.distribute_strategy.num_replicas_in_sync == 1 and type(self.distribute_strategy) is Strategy:
            self.distribute_strategy = current
            return
        raise ValueError(
            f"This model was created under {self.distribute_strategy!r} but compile() runs under "
            f"{current!r}. Create and compile the model inside the same `with strategy.scope():` block."
        )

    def _require_compiled(self, what: str) -> None:
        if not self._compiled:
            raise NotCompiledError(
                f"You must call `compile()` before using the model for {what}. Call "
                "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy', "
                "metrics=['accuracy']) first."
            )

    # --- training API (implemented in trainer.py) ----------------------------------------------
    def fit(self, x: Any = None, y: Any = None, **kwargs: Any) -> Any:
        """Train the model; see :func:`unison.keras.trainers.loop.fit` for every argument."""
        from unison.keras.trainers import loop as trainer

        return trainer.fit(self, x, y, **kwargs)

    def evaluate(self, x: Any = None, y: Any = None, **kwargs: Any) -> Any:
        """Loss and metrics on ``x, y`` (each sample counted once across replicas)."""
        from unison.keras.trainers import loop as trainer

        return trainer.evaluate(self, x, y, **kwargs)

    def predict(self, x: Any, **kwargs: Any) -> np.ndarray | list[np.ndarray] | dict[str, np.ndarray]:
        """Outputs for ``x`` in input order, gathered from every replica (several outputs: a list or dict)."""
        from unison.keras.trainers import loop as trainer

        return trainer.predict(self, x, **kwargs)

    def train_on_batch(self, x: Any, y: Any = None, **kwargs: Any) -> Any:
        """One training step on one batch; see :mod:`unison.keras.trainers.on_batch`."""
        from unison.keras.trainers import on_batch

        return on_batch.train_on_batch(self, x, y, **kwargs)

    def test_on_batch(self, x: Any, y: Any = None, **kwargs: Any) -> Any:
        """The loss and metrics of one batch; see :mod:`unison.keras.trainers.on_batch`."""
        from unison.keras.trainers import on_batch

        return on_batch.test_on_batch(self, x, y, **kwargs)

    def predict_on_batch(self, x: Any) -> Any:
        """The outputs for one batch, as numpy arrays."""
        from unison.keras.trainers import on_batch

        return on_batch.predict_on_batch(self, x)

    # --- weights and files (models/model_io.py) ---------------------------------------------
    def get_weights(self) -> list[np.ndarray]:
        """The weights as numpy arrays in Keras's order, layer by layer (a sharded model's whole)."""
        return model_io.get_weights(self)

    def set_weights(self, weights: Sequence[Any]) -> None:
        """Load weights in the order ``get_weights`` returns them."""
        model_io.set_weights(self, weights)

    def save_weights(self, filepath: str | os.PathLike[str], overwrite: bool = True) -> None:
        """Write the weights to ``filepath`` atomically, with a SHA-256 checksum; only the chief writes."""
        model_io.save_weights(self, filepath, overwrite)

    def load_weights(self, filepath: str | os.PathLike[str]) -> None:
        """Read weights written by ``save_weights``/``save``, or by Keras (``.h5``, ``.keras``), checked first."""
        model_io.load_weights(self, filepath)

    def save(self, filepath: str | os.PathLike[str], overwrite: bool = True, **kwargs: Any) -> None:
        """Save architecture, weights, compile arguments and optimizer state atomically (chief only)."""
        model_io.save(self, filepath, overwrite, **kwargs)

    def export(
        self,
        filepath: str | os.PathLike[str],
        format: str = "tf_saved_model",
        verbose: bool | None = True,
        input_signature: Any = None,
        **kwargs: Any,
    ) -> None:
        """Export for serving, as Keras 3: ``format="onnx"`` or ``"tf_saved_model"`` (docs/export.md).

        Example:
            >>> import os, tempfile, unison as tf
            >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
            >>> model.export(os.path.join(tempfile.mkdtemp(), "m.onnx"), format="onnx")  # doctest: +SKIP
        """
        from unison.keras.export import export_model

        export_model(self, filepath, format=format, verbose=verbose, input_signature=input_signature, **kwargs)

    def save_spec(self, dynamic_batch: bool = True) -> Any:
        """tf.keras 2's ``save_spec()``: ``None`` until the model knows its input, then ``([spec], {})``."""
        return model_io.save_spec(self, dynamic_batch)

    # what saving and SavedModel call (model_io's functions, as methods)
    _full_state = model_io.full_state
    _full_optimizer_state = model_io.full_optimizer_state
    _weights_gathered = model_io.weights_gathered
    _wait_for_chief = model_io.wait_for_chief
    # for checkpoint callbacks (public, as fit_state_dict): all replicas gather, then the chief writes
    checkpoint_gathered = model_io.weights_gathered
    write_weights_file = model_io.write_weights
    write_model_file = model_io.write_model

    def get_config(self) -> dict[str, Any]:
        """The architecture as Keras's ``{"class_name", "config"}`` (Sequential and functional models)."""
        return model_io.get_config(self)

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> Any:
        """A new, untrained model from ``get_config()``'s output (Keras's ``Model.from_config``).

        A functional or Sequential config rebuilds its graph of layers (custom layer classes by
        ``custom_objects``); a subclass with its own ``get_config`` is made as ``cls(**config)``.

        Example:
            >>> from unison import keras
            >>> inputs = keras.Input(shape=(4,))
            >>> model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
            >>> keras.Model.from_config(model.get_config()).count_params()
            10
        """
        from unison.keras import saving

        if not isinstance(config, dict):
            raise TypeError(f"from_config takes the dict get_config() returns. Received: {type(config).__name__}")
        if "nodes" in config and "inputs" in config:
            return saving.from_config({"class_name": "Functional", "config": config}, custom_objects)
        if cls is saving.serialization.model_class("Sequential") or (
            cls is Model and "layers" in config and "input_shape" in config
        ):
            return saving.from_config({"class_name": "Sequential", "config": config}, custom_objects)
        if cls is Model:
            raise ValueError(
                "Model.from_config got a config that describes no functional or Sequential model "
                f"(keys: {sorted(config)}). For a subclassed model call YourModel.from_config(config)."
            )
        return cls(**config)

    def to_json(self, **kwargs: Any) -> str:
        """The architecture as JSON text, for ``keras.models.model_from_json``."""
        return model_io.to_json(self, **kwargs)

    def count_params(self) -> int:
        """Number of scalars in the model's weights, non-trainable ones (moving statistics) included, as Keras."""
        return sum(w.numel() for w in self.weights)

    def reset_states(self) -> None:
        """Keras 2's ``model.reset_states()``: zero the carried states of every ``stateful=True`` layer."""
        for module in self.modules():
            reset = getattr(module, "reset_states", None)
            if module is not self and getattr(module, "stateful", False) and callable(reset):
                reset()

    def summary(
        self,
        line_length: int | None = None,
        positions: Any = None,
        print_fn: Any = None,
        expand_nested: bool = False,
        show_trainable: bool = False,
        layer_range: Any = None,
    ) -> None:
        """Print a Keras-style table of layers, output shapes and parameter counts.

        Keras's arguments: ``line_length`` (total width), ``positions`` (each column's end, as
        fractions of the width or in characters), ``print_fn`` (default ``print``),
        ``expand_nested`` (the layers of nested models too, indented), ``show_trainable`` (a
        column with Y/N, or - for a layer without weights) and ``layer_range`` (the rows from
        the layer named first to the one named second).

        Example:
            >>> from unison import keras
            >>> m = keras.Sequential([keras.layers.Dense(2, input_shape=(3,), name="d")], name="tiny")
            >>> m.summary(show_trainable=True)
            Model: "tiny"
            ┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━┓
            ┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃ Trainable ┃
            ┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━┩
            │ d (Dense)                       │ (None, 2)              │             8 │     Y     │
            └─────────────────────────────────┴────────────────────────┴───────────────┴───────────┘
             Total params: 8 (32.00 B)
             Trainable params: 8 (32.00 B)
             Non-trainable params: 0 (0.00 B)
        """
        from unison.keras.utils.summary_utils import summary_lines

        lines = summary_lines(self, line_length, positions, expand_nested, show_trainable, layer_range)
        for line in lines:
            (print if print_fn is None else print_fn)(line)


def _make_functional(cls: type) -> None:
    """Put ``Functional`` in place of ``Model`` among the bases of ``cls`` (or of its ancestors)."""
    Functional = _functional()

    if issubclass(cls, Functional):
        return
    if Model in cls.__bases__:
        cls.__bases__ = tuple(Functional if base is Model else base for base in cls.__bases__)
        return
    for base in cls.__bases__:
        if issubclass(base, Model):
            _make_functional(base)


def _symbolic(obj: Any) -> bool:
    """A KerasTensor or a list/tuple/dict of them (the ``inputs`` of a functional model)."""
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return bool(obj) and all(isinstance(v, KerasTensor) for v in obj)
    return isinstance(obj, KerasTensor)
