"""``Model.train_on_batch``, ``test_on_batch`` and ``predict_on_batch``: one step on one given batch.

Keras 3's semantics (TF 2.21's ``tf.keras``): the batch is one global batch (split across the
strategy's replicas as ``fit`` splits one); the metrics are reset before the step, so what comes
back describes this batch alone (``reset_metrics=False`` keeps them accumulating, as ``tf_keras``'s
argument of that name did); the result is the loss alone when nothing else is tracked, else the
list ``[loss, *metrics]`` in ``model.metrics_names`` order, or a dict with ``return_dict=True``.
``class_weight`` becomes per-sample weights from the batch's labels and may not be combined with
``sample_weight`` (Keras's ValueError).

Example:
    >>> import numpy as np
    >>> from unison import keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, activation="softmax")])
    >>> model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    >>> logs = model.train_on_batch(np.zeros((4, 3), "float32"), np.zeros(4, "int64"), return_dict=True)
    >>> sorted(logs)
    ['accuracy', 'loss']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.core.contention import follow_load
from unison.distribute.input import first_leaf
from unison.keras.backend.torch_mode import set_torch_mode
from unison.keras.trainers import loop
from unison.keras.trainers.data_adapters import from_pandas
from unison.keras.trainers.host_threads import busy_host_threads


def _rows(x: Any, where: str) -> int:
    """The number of rows of the one batch ``x`` (arrays, tensors, or a list/dict of them)."""
    leaf = first_leaf(x) if isinstance(x, (list, tuple, dict)) else x
    if isinstance(leaf, (np.ndarray, torch.Tensor)) and leaf.ndim >= 1:
        return int(leaf.shape[0])
    raise ValueError(
        f"{where} takes one batch: a numpy array or tensor (or a list/dict of them for a multi-input "
        f"model), whose first axis is the batch. Received: x of type {type(x).__name__}. For a dataset "
        "or a generator use fit()/evaluate()/predict()."
    )


def _result(logs: dict[str, float], return_dict: bool) -> Any:
    if return_dict:
        return dict(sorted(logs.items()))  # Keras 3's order: by name (the list keeps loss first)
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def train_on_batch(
    model: Any,
    x: Any,
    y: Any = None,
    sample_weight: Any = None,
    class_weight: dict[int, float] | None = None,
    reset_metrics: bool = True,
    return_dict: bool = False,
) -> Any:
    """One training step on the batch ``x, y``; the loss and metrics of this batch."""
    model._require_compiled("train_on_batch")
    x, y, sample_weight = from_pandas((x, y, sample_weight))
    if class_weight is not None:
        if sample_weight is not None:
            raise ValueError(
                "Arguments `sample_weight` and `class_weight` cannot be specified at the same time. "
                f"Received: sample_weight={sample_weight}, class_weight={class_weight}"
            )
        sample_weight = loop.class_weight_to_sample_weight(class_weight, y)
    n = _rows(x, "train_on_batch")
    steps = loop.step_executor(model)
    with steps.context(), busy_host_threads():
        train = steps.open_train(x, y, sample_weight, max(1, n), False, None)
        set_torch_mode(model, True)
        if reset_metrics:
            model.reset_metrics()
        steps.last_result = None
        epoch_steps = steps.train_steps(train, 0, None, 0)
        try:
            for run in epoch_steps:
                follow_load()  # idle threads spin only while the host is quiet (core/contention.py)
                run()
        finally:
            epoch_steps.close()
        steps.finish_epoch()
        logs = loop.step_logs(model, steps)
    model._start_epoch_iterator(None)  # keep no reference to the batch
    return _result(logs, return_dict)


def test_on_batch(
    model: Any,
    x: Any,
    y: Any = None,
    sample_weight: Any = None,
    reset_metrics: bool = True,
    return_dict: bool = False,
) -> Any:
    """The loss and metrics of the batch ``x, y``, without training."""
    model._require_compiled("test_on_batch")
    x, y, sample_weight = from_pandas((x, y, sample_weight))
    n = max(1, _rows(x, "test_on_batch"))
    steps = loop.step_executor(model)
    evaluator = steps.evaluator(x)
    with evaluator.context(), busy_host_threads():
        data, _ = evaluator.open_eval(x, y, sample_weight, n, None)
        set_torch_mode(model, False)
        if reset_metrics:
            model.reset_metrics()
        evaluator.last_result = None
        for run in evaluator.eval_steps(data, n, None):
            run()
        evaluator.finish_eval()
        logs = loop.step_logs(model, evaluator)
    return _result(logs, return_dict)


def predict_on_batch(model: Any, x: Any) -> Any:
    """The model's outputs for the batch ``x``, as numpy (a list or dict for several outputs)."""
    n = _rows(x, "predict_on_batch")
    return loop.predict(model, x, batch_size=max(1, n), verbose=0)


# not tests, though pytest would collect a name starting with "test_" from a module importing it
test_on_batch.__test__ = False  # type: ignore[attr-defined]

__all__ = ["predict_on_batch", "test_on_batch", "train_on_batch"]
