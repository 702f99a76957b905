"""Setting a model up for its first step: build it, place it, give every replica replica 0's weights.

``setup_model`` runs when ``fit``/``evaluate``/``predict`` open their data: it checks the data
against the model (shapes, labels), builds the model on an example, moves it to the replica's
device and dtype, broadcasts replica 0's values, then (the first time labels are given) builds
the optimizer, the synchroniser (``Trainer._build_update``) and the compiled metrics.

Example::

    setup_model(model, data)  # data: this replica's adapter (trainers/data_adapters.py)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.distribute.input import map_tensors
from unison.keras.backend.torch_mode import set_torch_mode
from unison.keras.trainers.compile_utils import resolve_metrics
from unison.keras.trainers.data_adapters import ArrayAdapter
from unison.keras.utils.input_hints import unbatched_hint


def setup_model(
    model: Any, data: Any, need_labels: bool = True, where: str = "labels (y) given to fit/evaluate"
) -> None:
    """Build, place and synchronise the model the first time; check ``data`` fits it."""
    if need_labels:
        _check_data(data, model.loss is not None)
    example = tuple(data.example_shape)
    sample = getattr(data, "example", None)
    multi_input = isinstance(sample, (dict, list, tuple))
    hint = getattr(model, "input_shape_hint", None)
    # a None size of keras.Input(shape=(None, ...)) takes any size
    fits = hint is not None and _fits_hint(hint, example, hasattr(model, "_adjust_input_rank"))
    if hint is not None and not fits and not multi_input:
        first = model.layers[0] if model.layers else model
        raise ValueError(
            f"Input 0 of layer '{getattr(first, 'name', type(first).__name__)}' is incompatible "
            f"with the layer: expected shape={(None, *hint)}, but received input with shape "
            f"{(None, *example)}. Reshape the data or change the model's input_shape." + unbatched_hint(hint, example)
        )
    if not model._placed:
        model.to(model._step_device)
        if model._policy.variable_dtype != "float32":  # pure 'bfloat16'/'float16' policies
            model.to(model._policy.torch_variable_dtype)
        if _has_no_forward(model):
            # a train_step override on a model without call() (Keras's GAN guide): the step
            # calls the sub-models itself; there is no forward pass to build or shape
            object.__setattr__(model, "_out_shapes", ())
            object.__setattr__(model, "_out_shape", ())
            model.distribute_strategy.broadcast_tensors(list(model.parameters()) + list(model.buffers()))
            object.__setattr__(model, "_placed", True)
        elif isinstance(sample, np.ndarray) and sample.dtype.kind in "SUO":
            # string inputs (a model that starts with TextVectorization/StringLookup): zeros are
            # no text, so the first real row builds and shapes the model
            zeros: Any = sample
        elif multi_input:
            # string inputs among them (a dict of features with a StringLookup column) keep the
            # real example, as a single text input does; numeric ones are zeros
            zeros = map_tensors(_zeros_or_text(model._step_device), sample)
        elif isinstance(sample, np.ndarray) and sample.dtype.kind in "OUS":
            zeros = np.asarray(sample).reshape((-1, *example))[:1]  # text: built on a real example
        else:
            model.build((1, *example))
            zeros = torch.zeros((1, *example), device=model._step_device)
    if not model._placed:
        with torch.no_grad():
            was = model.training
            set_torch_mode(model, False)
            out = model(zeros)
            set_torch_mode(model, was)
        if hasattr(model, "reset_states"):
            model.reset_states()  # stateful RNNs start the first batch from zeros, not the example
        # One output: its shape; several (a list/dict): the structure of their shapes.
        object.__setattr__(model, "_out_shapes", map_tensors(lambda t: tuple(t.shape[1:]), out))
        object.__setattr__(model, "_out_shape", model._out_shapes if isinstance(out, torch.Tensor) else ())
        # Mirrored variables: every replica starts from replica 0's weights.
        model.distribute_strategy.broadcast_tensors(list(model.parameters()) + list(model.buffers()))
        object.__setattr__(model, "_placed", True)
    if need_labels and not model._compiled_ready:
        model._build_update()
        metrics = resolve_metrics(model._metric_specs, model.loss, data.y_shape, model._out_shapes)
        object.__setattr__(model, "_compiled_metric_list", metrics)
        object.__setattr__(model, "_compiled_ready", True)
    if need_labels:
        check_labels(model, data, where)


def check_labels(model: Any, data: Any, where: str) -> None:
    """Check array labels against the loss and the model's outputs before any step runs.

    A label the loss cannot take (a class index beyond the model's outputs) would otherwise
    surface as torch's ``IndexError`` in the middle of an epoch, without saying which data.
    """
    if not (isinstance(data, ArrayAdapter) and isinstance(data.y, torch.Tensor) and model.loss is not None):
        return
    if not hasattr(model.loss, "check_targets"):  # one label array for several outputs: checked per step
        return
    n_out = model._out_shape[-1] if model._out_shape else None
    try:
        model.loss.check_targets(data.y.numpy() if data.y.device.type == "cpu" else data.y.cpu().numpy(), n_out)
    except ValueError as exc:
        raise ValueError(f"In the {where}: {exc}") from None


def _zeros_or_text(device: torch.device) -> Callable[[Any], Any]:
    """For building a model on its first batch: zeros of a numeric input, the example of a text one."""

    def leaf(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype.kind in "SUO":
            return value
        return torch.zeros_like(torch.as_tensor(value), device=device)

    return leaf


def _has_no_forward(model: Any) -> bool:
    """A Model subclass that overrides ``train_step`` but defines no ``call`` (and wraps no module)."""
    # The model says whether it has a forward pass of its own (Model._inherits_call): this module
    # sits below models/ and never imports the Model class.
    inherits_call = getattr(model, "_inherits_call", None)
    return (
        inherits_call is not None
        and inherits_call()
        and getattr(model, "module", None) is None
        and model._step_overridden("train_step")
    )


def _check_data(data: Any, need_labels: bool) -> None:
    """Refuse data with no rows, or without labels where the loss needs them (clear errors)."""
    if isinstance(data, ArrayAdapter) and data.n == 0:
        raise ValueError(
            f"The input data has 0 samples (x has shape {tuple(data.x.shape)}). fit()/evaluate() need "
            "at least one sample: check how x was built (an empty filter or split?)."
        )
    if not need_labels:
        return
    if isinstance(data, ArrayAdapter):
        missing = data.y is None and not hasattr(data, "dataset")
    else:
        peek = getattr(data, "_peek", None)
        missing = peek is not None and _unpack_y(peek) is None
    if missing:
        raise ValueError(
            "The model was compiled with a loss, so training and evaluation need targets, but y is None. "
            "Pass y (fit(x, y)), or a dataset whose elements are (x, y) or (x, y, sample_weight) tuples. "
            "Received: y=None."
        )


def _unpack_y(element: Any) -> Any:
    from unison.keras.trainers.data_adapters import _unpack

    return _unpack(element, None).y


def _fits_hint(hint: tuple[Any, ...], example: tuple[int, ...], adjusts_rank: bool) -> bool:
    """Whether data of ``example``'s shape fits an input of shape ``hint`` (a None size takes any).

    A functional model adds or drops a last axis of size 1 as Keras does (``(N, 28, 28)`` data
    for ``Input((28, 28, 1))``), so such data fits it too.
    """

    def same(h: tuple[Any, ...], e: tuple[int, ...]) -> bool:
        return len(h) == len(e) and all(a is None or a == b for a, b in zip(h, e))

    if same(hint, example):
        return True
    if not adjusts_rank or not hint:
        return False
    if len(example) == len(hint) - 1 and hint[-1] == 1:
        return same(hint[:-1], example)
    return len(example) == len(hint) + 1 and example[-1] == 1 and same(hint, example[:-1])
