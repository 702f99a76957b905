"""The functional API: ``keras.Model(inputs, outputs)`` over a graph of recorded layer calls.

Layers called on ``keras.Input`` tensors record nodes (see :mod:`unison.keras.backend.keras_tensor`);
:class:`Functional` orders the nodes that lead from ``inputs`` to ``outputs``, registers every
layer as a submodule (so parameters, ``state_dict``, strategies and ``fit``/``evaluate``/
``predict`` work through the ordinary :class:`~unison.keras.Model` path) and replays the nodes on
real tensors. Inputs and outputs may be one tensor, a list/tuple, or a dict.

Example:
    >>> import torch
    >>> from unison import keras
    >>> inputs = keras.Input(shape=(3,))
    >>> outputs = keras.layers.Dense(2)(keras.layers.Dense(4, activation="relu")(inputs))
    >>> model = keras.Model(inputs, outputs)
    >>> tuple(model(torch.zeros(5, 3)).shape)
    (5, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torch import nn

from unison.keras.backend.keras_tensor import KerasTensor, Node, conform_input, flatten, flatten_values, pack_like
from unison.keras.models.model import Model, register_functional
from unison.ops.dtypes import as_torch
from unison.ops.sparse_tensor import SparseTensor


def is_symbolic_structure(obj: Any) -> bool:
    """Whether ``obj`` is a KerasTensor or a non-empty list/tuple/dict made only of them."""
    if isinstance(obj, KerasTensor):
        return True
    if isinstance(obj, (list, tuple)) and obj:
        return all(isinstance(v, KerasTensor) for v in obj)
    if isinstance(obj, dict) and obj:
        return all(isinstance(v, KerasTensor) for v in obj.values())
    return False


def _check_structure(value: Any, what: str) -> list[KerasTensor]:
    if not is_symbolic_structure(value):
        raise ValueError(
            f"keras.Model({what}=...) takes a KerasTensor (from keras.Input or a layer called on one) or a "
            f"list/tuple/dict of them. Received: {what}={value!r:.200}"
        )
    return flatten(value)


def _trace(inputs: list[KerasTensor], outputs: list[KerasTensor]) -> list[Node]:
    """The nodes from ``inputs`` to ``outputs`` in execution order; errors for a disconnected graph."""
    given = {id(kt) for kt in inputs}
    order: list[Node] = []
    seen: set[int] = set()
    reached: set[int] = set()
    for out in outputs:
        missing: list[str] = []
        stack: list[tuple[KerasTensor, bool]] = [(out, False)]
        while stack:  # iterative post-order DFS (deep models would overflow recursion)
            kt, expanded = stack.pop()
            if id(kt) in given:
                reached.add(id(kt))
                continue
            node = kt._node
            if node is None:
                missing.append(kt.name)
                continue
            if expanded:
                if id(node) not in seen:
                    seen.add(id(node))
                    order.append(node)
                continue
            if id(node) in seen:
                continue
            stack.append((kt, True))
            stack.extend((p, False) for p in reversed(node.parents))
        if missing:
            raise ValueError(
                f"Graph disconnected: output {out.name!r} {out.shape} needs the input(s) "
                f"{sorted(set(missing))}, which are not in this model's inputs "
                f"{[kt.name for kt in inputs]}. Pass every keras.Input the outputs are computed from."
            )
    unused = [kt.name for kt in inputs if id(kt) not in reached]
    if unused:
        raise ValueError(
            f"The input(s) {unused} do not reach any output of the model (outputs: "
            f"{[kt.name for kt in outputs]}). Remove them from inputs, or use them to compute an output."
        )
    return order


def _keras_layer_order(inputs: list[KerasTensor], outputs: list[KerasTensor], nodes: list[Node]) -> list[Any]:
    """The ops of ``nodes`` in the order Keras lists a functional model's layers (and so its weights).

    Keras (3 and 2, ``map_graph``) orders them by depth, the longest path to an output, deepest
    first; among equal depths by when a depth-first walk from the outputs first reached them. So
    ResNet50's shortcut ``conv2_block1_0_conv`` comes after ``conv2_block1_2_conv``, not where it
    was called. ``nodes`` is ``_trace``'s post-order (Keras's nodes in decreasing depth).
    """
    given = {id(kt) for kt in inputs}

    def key(node: Node) -> int:  # a layer called twice is one layer; each torch function call is its own
        return id(node.op) if isinstance(node.op, nn.Module) else id(node)

    index: dict[int, int] = {}
    done: set[int] = set()
    for out in outputs:  # Keras's _build_map: each op's index is its first visit (pre-order)
        stack = [out]
        while stack:
            kt = stack.pop()
            node = kt._node
            if node is None or id(kt) in given or id(node) in done:
                continue
            done.add(id(node))
            index.setdefault(key(node), len(index))
            stack.extend(reversed(node.parents))
    node_depth: dict[int, int] = {}
    op_depth: dict[int, int] = {}
    ops: dict[int, Any] = {}
    for node in reversed(nodes):
        depth = max(node_depth.setdefault(id(node), 0), op_depth.get(key(node), 0))
        op_depth[key(node)], node_depth[id(node)], ops[key(node)] = depth, depth, node.op
        for parent in node.parents:
            if parent._node is not None and id(parent) not in given:
                node_depth[id(parent._node)] = max(depth + 1, node_depth.get(id(parent._node), 0))
    ordered = sorted(op_depth, key=lambda k: (-op_depth[k], index.get(k, len(index))))
    return [ops[k] for k in ordered]


class Functional(Model):
    """A model defined by its symbolic ``inputs`` and ``outputs`` (``keras.Model(inputs, outputs)``).

    Args:
        inputs: ``keras.Input`` tensor(s): one, a list/tuple, or a dict keyed by name.
        outputs: tensor(s) computed from ``inputs`` by layers and torch functions.
        name: the model's name.
    """

    def __init__(
        self, inputs: Any = None, outputs: Any = None, name: str | None = None, trainable: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(name=name, **kwargs)
        flat_in = _check_structure(inputs, "inputs")
        flat_out = _check_structure(outputs, "outputs")
        # An input may also be a layer's output (Keras 3): the model then starts there, as
        # FeatureSpace's training model does on get_encoded_features()
        names = [kt.name for kt in flat_in]
        if len(set(names)) != len(names):
            raise ValueError(f"keras.Model inputs need distinct names. Received: {names}")
        self._nodes = _trace(flat_in, flat_out)
        self._input_struct, self._output_struct = inputs, outputs
        self._flat_inputs, self._flat_outputs = flat_in, flat_out
        # Register each layer once (a shared layer is one module), in Keras's order (model.layers,
        # model.weights): state_dict keys are positional (graph_layers.0.kernel), like Sequential's,
        # so the same architecture built again in one process (its layers auto-named dense_2, ...)
        # loads the same weights file.
        self.graph_layers = nn.ModuleList()
        seen: set[str] = set()
        for op in _keras_layer_order(flat_in, flat_out, self._nodes):
            if isinstance(op, nn.Module) and not any(m is op for m in self.graph_layers):
                key = getattr(op, "name", None) or f"module_{len(self.graph_layers)}"
                if key in seen:
                    raise ValueError(
                        f"All layers of a functional model need unique names; {key!r} is used "
                        "by two different layers. Give one of them another name=."
                    )
                seen.add(key)
                self.graph_layers.append(op)
        if len(flat_in) == 1:
            self.input_shape_hint = tuple(flat_in[0].shape[1:])  # type: ignore[arg-type]
        if not trainable:
            self.trainable = False

    # --- Keras's structural properties ----------------------------------------------------
    @property
    def inputs(self) -> list[KerasTensor]:
        return list(self._flat_inputs)

    @property
    def outputs(self) -> list[KerasTensor]:
        return list(self._flat_outputs)

    @property
    def input(self) -> Any:
        return self._input_struct

    @property
    def output(self) -> Any:
        return self._output_struct

    @property
    def input_names(self) -> list[str]:
        return [kt.name for kt in self._flat_inputs]

    @property
    def layers(self) -> list[nn.Module]:
        return list(self.graph_layers)

    # --- computation ------------------------------------------------------------------------
    def _flat_call_inputs(self, inputs: Any) -> list[Any]:
        # A dict of inputs is matched by the keys it was declared with (Keras), else by input names.
        struct = self._input_struct
        names = list(struct) if isinstance(struct, dict) else self.input_names
        if isinstance(inputs, dict):
            absent = [n for n in names if n not in inputs]
            if absent:
                raise ValueError(
                    f"Model {self.name!r} expects inputs named {names}; the dict passed lacks "
                    f"{absent}. Received keys: {sorted(inputs)}."
                )
            return [inputs[n] for n in names]
        if len(names) == 1:
            if isinstance(inputs, (list, tuple)) and len(inputs) == 1:
                return [inputs[0]]
            return [inputs]
        if not isinstance(inputs, (list, tuple)) or len(inputs) != len(names):
            got = len(inputs) if isinstance(inputs, (list, tuple)) else f"one {type(inputs).__name__}"
            raise ValueError(
                f"Model {self.name!r} expects {len(names)} inputs {names}, as a list in that order or "
                f"a dict keyed by name. Received: {got}."
            )
        return list(flatten_values(inputs))

    def call(self, inputs: Any) -> Any:
        values: dict[int, Any] = {}
        for kt, value in zip(self._flat_inputs, self._flat_call_inputs(inputs)):
            if kt.dtype == "string":
                value = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
            else:
                if isinstance(value, SparseTensor):
                    # keras.Input(sparse=True): layers compute on the dense form, with TF's results
                    # (Dense on a SparseTensor is a sparse-dense matmul, equal to the dense one)
                    value = value.to_dense()
                value = conform_input(as_torch(value), kt.dtype)
            # tf_keras runs a string-preprocessing model on one unbatched example too (TF's
            # parameter-server tutorial maps its StringLookup models over single examples in
            # tf.data); other rank mismatches are mistakes. An Input whose last size is 1 takes
            # one rank less as a batch first (tf_keras's rule): (1,) is one row, not one example.
            unbatched = (
                kt.dtype == "string"
                and value.ndim == kt.ndim - 1
                and tuple(value.shape) == tuple(kt.shape[1:])
                and kt.shape[-1] != 1
            )
            values[id(kt)] = value if unbatched else self._adjust_input_rank(kt, value)
        for node in self._nodes:
            for kt, value in zip(node.outputs, node.run(values)):
                values[id(kt)] = value
        return pack_like(self._output_struct, [values[id(kt)] for kt in self._flat_outputs])

    def _adjust_input_rank(self, kt: KerasTensor, value: Any) -> Any:
        """Keras's rank adjustment: data one rank short of an ``Input`` whose last size is 1 gets
        that axis (``(N, 28, 28)`` for ``Input((28, 28, 1))``), data one rank over it whose last
        size is 1 loses it; any other rank difference is an error naming the input."""
        if value.ndim == kt.ndim:
            return value
        if value.ndim == kt.ndim + 1 and value.shape[-1] == 1:
            return value.squeeze(-1)
        if value.ndim == kt.ndim - 1 and kt.shape[-1] == 1:
            return value[..., None]  # a tensor, or a numpy array of strings for a string Input
        raise ValueError(
            f"Input {kt.name!r} of model {self.name!r} expects shape {kt.shape} (rank {kt.ndim}, the "
            f"batch axis included); received an input of shape {tuple(value.shape)} (rank {value.ndim}). "
            "Keras adds or drops only a last axis of size 1; reshape the data to the Input's rank."
        )

    def build(self, input_shape: Any) -> None:
        """Every layer was built when the graph was traced; a single-input model still checks the shape."""
        if len(self._flat_inputs) == 1:
            super().build(input_shape)

    def summary_shapes(self) -> dict[int, str]:
        """Output shape of each layer's (last) call, for ``summary()``."""
        shapes: dict[int, str] = {}
        for node in self._nodes:
            if isinstance(node.op, nn.Module) and node.outputs:
                shown = [str(kt.shape).replace(",)", ")") for kt in node.outputs]
                shapes[id(node.op)] = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
        return shapes


__all__ = ["Functional", "is_symbolic_structure"]


register_functional(Functional)
