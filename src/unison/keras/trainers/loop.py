"""``fit``, ``evaluate`` and ``predict``: the one training loop, for every strategy.

The loop owns the epochs, the callbacks, validation and the logs; how each step runs is the
strategy's part, a step executor from :func:`step_executor`: here on this
process's replica (default, Mirrored, MultiWorkerMirrored), or scheduled onto parameter-server
workers with an epoch-end join (ParameterServerStrategy). A step is ``model.train_step(data)``
(``test_step`` for evaluation), the built-in one or the user's override.
Per step each replica computes ``sum(per-example losses) / global_batch_size`` on its rows and
the gradients are SUM-reduced, so N replicas step exactly as one device on the global batch.
Metric states are additive and reduced once when read, so every reported number covers the
whole global batch / validation set, each sample counted once.

Example:
    >>> import numpy as np
    >>> from unison import keras
    >>> model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(3,))])
    >>> model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    >>> h = model.fit(np.zeros((8, 3), "float32"), np.zeros(8, "int64"), epochs=2, verbose=0)
    >>> sorted(h.history)
    ['accuracy', 'loss']
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.core.contention import follow_load
from unison.data import Dataset
from unison.debug.straggler import active_timings, log_stragglers
from unison.distribute.input import map_tensors
from unison.keras import config as keras_config
from unison.keras.backend.torch_mode import set_torch_mode
from unison.keras.callbacks import Callback, CallbackList, History, ProgbarLogger
from unison.keras.trainers.class_weights import with_class_weight
from unison.keras.trainers.compile_utils import flat_logs
from unison.keras.trainers.data_adapters import (
    ArrayAdapter,
    Batch,
    IterableAdapter,
    from_pandas,
    make_adapter,
    warn_if_batch_size_ignored,
)
from unison.keras.trainers.epoch_iterator import adapter
from unison.keras.trainers.host_threads import busy_host_threads
from unison.keras.trainers.local_steps import LocalSteps, run_predict_step
from unison.keras.trainers.model_setup import setup_model
from unison.keras.utils import scaling

# A 1-replica fit shorter than this is too noisy to be the reference a multi-replica fit compares with.
MIN_REFERENCE_S = 1.0
_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end")


def _coordinated(model: Any) -> Any:
    from unison.keras.trainers.coordinated_steps import CoordinatedSteps  # grpc and cloudpickle load only here

    return CoordinatedSteps(model)


# The executors this loop can drive; the model's strategy picks one (Strategy.step_executor).
_EXECUTORS: dict[str, Callable[[Any], Any]] = {"local": LocalSteps, "coordinated": _coordinated}


def step_executor(model: Any) -> Any:
    """How the model's strategy runs steps: ``LocalSteps`` here, or ``CoordinatedSteps`` on a cluster."""
    return model.distribute_strategy.step_executor(model, _EXECUTORS)


def _check_int(name: str, value: Any, low: int) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
        raise ValueError(f"`{name}` must be an integer >= {low}. Received: {name}={value!r}")


def _verbose(verbose: Any) -> int:
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"`verbose` must be 'auto', 0, 1 or 2. Received: verbose={verbose!r}")
    return int(verbose)


def class_weight_to_sample_weight(class_weight: Any, y: Any, sample_weight: Any = None) -> np.ndarray:
    """``fit(class_weight={class: weight})`` as per-sample weights (times ``sample_weight``).

    Labels are class ids (shape ``(n,)`` or ``(n, 1)``) or one-hot rows (``(n, classes)``,
    their argmax); a class missing from the dict weighs 1.0.

    Example:
        >>> class_weight_to_sample_weight({0: 1.0, 1: 3.0}, np.array([0, 1, 1])).tolist()
        [1.0, 3.0, 3.0]
    """
    if not isinstance(class_weight, dict):
        raise TypeError(
            f"class_weight must be a dict mapping class ids to weights, e.g. {{0: 1.0, 1: 2.0}}. "
            f"Received: {type(class_weight).__name__}"
        )
    if y is None or isinstance(y, (list, tuple, dict)) or not hasattr(y, "shape"):
        raise ValueError(
            "class_weight needs the labels as one array (a model with one output, trained on arrays) or a "
            "tf.data.Dataset of (x, y) batches. With a generator, a DataLoader or several outputs, yield "
            "(x, y, sample_weight) instead."
        )
    labels = y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] > 1:
        ids = labels.argmax(axis=1)
    elif labels.ndim in (1, 2):
        ids = labels.reshape(len(labels))
    else:
        raise ValueError(
            f"class_weight supports labels of shape (n,), (n, 1) or one-hot (n, classes). Received: {labels.shape}"
        )
    ids = np.rint(ids).astype(np.int64)
    weights = np.array([float(class_weight.get(int(c), 1.0)) for c in ids], dtype=np.float32)
    if sample_weight is not None:
        sw = (
            sample_weight.detach().cpu().numpy()
            if isinstance(sample_weight, torch.Tensor)
            else np.asarray(sample_weight)
        )
        weights = weights * sw.reshape(len(weights)).astype(np.float32)
    return weights


def _split_validation(x: Any, y: Any, sample_weight: Any, split: float) -> tuple[Any, Any]:
    """Keras's validation_split: the *last* fraction of the arrays, taken before shuffling."""
    if not 0.0 <= split < 1.0:
        raise ValueError(f"`validation_split` must be in [0, 1). Received: validation_split={split}")
    if not isinstance(x, (np.ndarray, torch.Tensor)):
        raise ValueError(
            "`validation_split` is only supported for numpy arrays or tensors; for a dataset pass "
            f"`validation_data` instead. Received: x of type {type(x).__name__}"
        )
    cut = int(len(x) * (1.0 - split))
    train = (x[:cut], None if y is None else y[:cut], None if sample_weight is None else sample_weight[:cut])
    val = (x[cut:], None if y is None else y[cut:], None if sample_weight is None else sample_weight[cut:])
    return train, val


def _validation_data(data: Any) -> tuple[Any, Any, Any]:
    """``validation_data``: ``(x, y)``, ``(x, y, sample_weight)`` of arrays, or a dataset."""
    if isinstance(data, (tuple, list)) and 2 <= len(data) <= 3 and _is_x(data[0]):
        x, y, *sw = data
        return x, y, (sw[0] if sw else None)
    return data, None, None


def _is_x(x: Any) -> bool:
    """Arrays, or a list or dict of arrays (a multi-input model); a tuple is a batch of a batch list."""
    if isinstance(x, (np.ndarray, torch.Tensor)):
        return True
    values: list[Any] = list(x.values()) if isinstance(x, dict) else x if isinstance(x, list) else []
    return bool(values) and all(isinstance(v, (np.ndarray, torch.Tensor)) for v in values)


def _overrides_batch_hooks(cb: Callback) -> bool:
    return not isinstance(cb, (History, ProgbarLogger)) and any(
        getattr(type(cb), h) is not getattr(Callback, h) for h in _BATCH_HOOKS
    )


def step_logs(model: Any, steps: Any) -> dict[str, float]:
    """The metrics over every replica; a user's step chooses the names (what it returned)."""
    reduced = model._read_metrics()
    result = steps.last_result
    if not isinstance(result, dict):
        return reduced
    logs: dict[str, float] = {}
    for name, value in flat_logs(result).items():
        # detached: a step may return a loss that still carries its graph (torch warns on float())
        logs[name] = reduced[name] if name in reduced else float(torch.as_tensor(value).detach().float().mean())
    return logs


def fit(
    model: Any,
    x: Any = None,
    y: Any = None,
    batch_size: int | None = None,
    epochs: int = 1,
    verbose: Any = "auto",
    callbacks: list[Callback] | None = None,
    validation_split: float = 0.0,
    validation_data: Any = None,
    shuffle: bool = True,
    class_weight: Any = None,
    sample_weight: Any = None,
    initial_epoch: int = 0,
    steps_per_epoch: int | None = None,
    validation_steps: int | None = None,
    validation_batch_size: int | None = None,
    validation_freq: int = 1,
) -> History:
    """Train ``model`` on ``x, y`` for ``epochs`` (Keras's ``Model.fit``; ``batch_size`` is global)."""
    model._require_compiled("training")
    if x is None:
        raise ValueError("fit() needs training data: pass x (and y), a Dataset or a DataLoader.")
    warn_if_batch_size_ignored(x, batch_size, "fit")
    batch_size = 32 if batch_size is None else batch_size
    _check_int("batch_size", batch_size, 1)
    _check_int("epochs", epochs, 0)
    _check_int("initial_epoch", initial_epoch, 0)
    _check_int("validation_freq", validation_freq, 1)
    if steps_per_epoch is not None:
        _check_int("steps_per_epoch", steps_per_epoch, 1)
    epochs, steps_per_epoch = keras_config.fit_limits(epochs, steps_per_epoch)
    verbose = _verbose(verbose)
    x, y, sample_weight, validation_data = from_pandas((x, y, sample_weight, validation_data))
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = _split_validation(x, y, sample_weight, validation_split)
    if class_weight is not None and isinstance(x, Dataset):  # per batch, from each batch's labels
        x = with_class_weight(x, class_weight)
    elif class_weight is not None:  # training data only, as in Keras (validation stays unweighted)
        sample_weight = class_weight_to_sample_weight(class_weight, y, sample_weight)
    val_batch = validation_batch_size or batch_size

    steps = step_executor(model)
    with steps.context(), busy_host_threads():  # one torch thread on an oversubscribed host
        train = steps.open_train(x, y, sample_weight, batch_size, shuffle, steps_per_epoch, callbacks)
        comm = model.distribute_strategy.extended.communicator
        val = None
        if validation_data is not None:
            val = _Evaluation(
                model,
                steps.evaluator(_validation_data(validation_data)[0]),
                validation_data,
                val_batch,
                validation_steps,
                where="validation data (validation_data or validation_split)",
            )
        n_steps = steps.steps_per_epoch(train, steps_per_epoch)
        cbs = CallbackList(
            callbacks,
            add_history=True,
            add_progbar=verbose != 0,
            model=model,
            verbose=verbose,
            epochs=epochs,
            steps=n_steps,
        )
        dynamic_bar = verbose == 1 and not steps.coordinated and comm.broadcast_object(sys.stdout.isatty())
        # a dataset of unknown length: the batch hooks count its steps for the epoch line ("3/3 - ...")
        hooks = dynamic_bar or (verbose != 0 and n_steps is None) or any(_overrides_batch_hooks(cb) for cb in cbs)
        logs_every = 1 if cbs.needs_batch_logs() else (max(1, (n_steps or 50) // 50) if dynamic_bar else 0)

        model.stop_training = False
        cbs.on_train_begin()
        # BackupAndRestore may have restored a backup: continue at its exact epoch and step.
        start_epoch, first_step = steps.resume(train, initial_epoch)
        train_seconds, wait_at_start = 0.0, active_timings().total_wait_s
        logs: dict[str, float] = {}
        for epoch in range(start_epoch, epochs):
            set_torch_mode(model, True)
            model.reset_metrics()
            steps.last_result = None
            cbs.on_epoch_begin(epoch)
            epoch_steps = steps.train_steps(train, epoch, steps_per_epoch, first_step, callbacks_between=hooks)
            started = time.perf_counter()
            try:
                for step, run in enumerate(epoch_steps, first_step):
                    if hooks:
                        cbs.on_train_batch_begin(step)
                    follow_load()  # idle threads spin only while the host is quiet (core/contention.py)
                    run()
                    if hooks:
                        want = logs_every and (step + 1) % logs_every == 0 and not steps.coordinated
                        cbs.on_train_batch_end(step, step_logs(model, steps) if want else None)
                        if model.stop_training:  # as Keras: a batch callback (TerminateOnNaN) ends the epoch now
                            break
            finally:
                epoch_steps.close()  # a step that raised leaves no replica context entered
                train_seconds += time.perf_counter() - started
            first_step = 0
            steps.finish_epoch()
            logs = step_logs(model, steps)
            if val is not None and (epoch + 1) % validation_freq == 0:
                cbs.on_test_begin()  # as Keras's fit, whose validation is an evaluate() with its callbacks
                val_logs = val.run(None)
                cbs.on_test_end(val_logs)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, logs)
            if verbose and comm.is_distributed:  # every replica's figures; the chief names stragglers
                log_stragglers(comm.rank == 0)
            _wait_for_chief_files(comm, "fit.epoch_end")
            if model.stop_training:
                break
        finalize = getattr(model.optimizer, "finalize_variable_values", None)
        if finalize is not None and epochs > initial_epoch:  # use_ema: the weights become their averages
            finalize(model.trainable_weights)
        cbs.on_train_end(logs)
        _report_scaling(model, steps, verbose, train_seconds, active_timings().total_wait_s - wait_at_start)
        model._start_epoch_iterator(None)  # do not keep the training data alive through the model
    return model.history


class _Evaluation:
    """One evaluation set, run through a step executor (validation in fit, or evaluate())."""

    def __init__(
        self,
        model: Any,
        steps: Any,
        data: Any,
        batch_size: int,
        n: int | None,
        y: Any = None,
        sample_weight: Any = None,
        unpack: bool = True,
        where: str = "labels (y) given to evaluate",
    ) -> None:
        if unpack and y is None and sample_weight is None:
            data, y, sample_weight = _validation_data(data)
        self.model, self.steps, self.batch_size, self.n = model, steps, batch_size, n
        # the labels are checked against the model as the set opens, named as the user gave them
        self.data, self.total = steps.open_eval(data, y, sample_weight, batch_size, n, where=where)

    def run(self, cbs: CallbackList | None) -> dict[str, float]:
        with self.steps.context():
            return self._run(cbs)

    def _run(self, cbs: CallbackList | None) -> dict[str, float]:
        set_torch_mode(self.model, False)
        self.model.reset_metrics()
        self.steps.last_result = None
        # the running loss and metrics, for a callback that reads them (one reduction per batch)
        want_logs = cbs is not None and cbs.needs_batch_logs() and not self.steps.coordinated
        for step, run in enumerate(self.steps.eval_steps(self.data, self.batch_size, self.n)):
            if cbs is not None:
                cbs.on_test_batch_begin(step)
            follow_load()
            run()
            if cbs is not None:
                cbs.on_test_batch_end(step, step_logs(self.model, self.steps) if want_logs else None)
        self.steps.finish_eval()
        return step_logs(self.model, self.steps)


def evaluate(
    model: Any,
    x: Any = None,
    y: Any = None,
    batch_size: int | None = None,
    verbose: Any = "auto",
    sample_weight: Any = None,
    steps: int | None = None,
    callbacks: list[Callback] | None = None,
    return_dict: bool = False,
) -> Any:
    """Loss and metrics over ``x, y``; every sample counted once across replicas."""
    model._require_compiled("evaluation")
    warn_if_batch_size_ignored(x, batch_size, "evaluate")
    batch_size = 32 if batch_size is None else batch_size
    _check_int("batch_size", batch_size, 1)
    verbose = _verbose(verbose)
    x, y, sample_weight = from_pandas((x, y, sample_weight))
    executor = step_executor(model)
    evaluator = executor.evaluator(x)
    with evaluator.context(), busy_host_threads():
        # evaluate(x) takes x as given; only where the coordinator evaluates for a parameter-server
        # strategy is an (x, y) tuple in x unpacked (as validation_data is).
        run = _Evaluation(model, evaluator, x, batch_size, steps, y, sample_weight, unpack=executor.coordinated)
        cbs = CallbackList(callbacks, add_progbar=verbose != 0, model=model, verbose=verbose, epochs=1, steps=run.total)
        cbs.on_test_begin()
        logs = run.run(cbs)
        cbs.on_test_end(logs)
    if return_dict:
        return dict(sorted(logs.items()))  # Keras 3's order: by name (the list keeps loss first)
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _cat(parts: list[Any]) -> Any:
    """Concatenate per-batch outputs: tensors, or lists/dicts of them (a multi-output model)."""
    first = parts[0]
    if isinstance(first, dict):
        return {k: _cat([p[k] for p in parts]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_cat([p[i] for p in parts]) for i in range(len(first)))
    return torch.cat(parts)


def _gather(comm: Any, local: Any) -> Any:
    """Every replica's outputs, in rank order (each structure leaf gathered)."""
    return map_tensors(lambda t: torch.cat(comm.all_gather(t, name="predict.gather")), local)


def predict(
    model: Any,
    x: Any,
    batch_size: int | None = None,
    verbose: Any = "auto",
    steps: int | None = None,
    callbacks: list[Callback] | None = None,
) -> np.ndarray | list[np.ndarray] | dict[str, np.ndarray]:
    """Model outputs for ``x``, in input order, gathered from every replica.

    Under a parameter-server strategy the coordinator predicts (with the weights it holds).
    """
    warn_if_batch_size_ignored(x, batch_size, "predict")
    batch_size = 32 if batch_size is None else batch_size
    _check_int("batch_size", batch_size, 1)
    x = from_pandas(x)
    strategy = model.distribute_strategy
    verbose = _verbose(verbose)
    cbs: CallbackList | None = None

    def step(index: int, batch: Batch) -> Any:
        # Keras's predict hooks: on_predict_batch_end gets this batch's outputs
        if cbs is not None:
            cbs.on_predict_batch_begin(index)
        follow_load()
        out = run_predict_step(model, batch)
        if cbs is not None:
            cbs.on_predict_batch_end(index, {"outputs": out})
        return out

    with strategy.replica_context(), busy_host_threads():
        model._prepare_training()
        comm = strategy.extended.communicator
        data = adapter(model, x, None, None, batch_size, shuffle=False)
        setup_model(model, data, need_labels=False)
        set_torch_mode(model, False)
        if callbacks or verbose != 0:
            # Keras prints predict's progress line (`8/8 ━━━━ 0s 2ms/step`) unless verbose=0.
            total = data.eval_steps(batch_size) if steps is None else steps
            cbs = CallbackList(callbacks, add_progbar=verbose != 0, model=model, verbose=verbose, epochs=1, steps=total)
        if cbs is not None:
            cbs.on_predict_begin()
        if isinstance(data, ArrayAdapter) and steps is None:
            # Each replica predicts one contiguous block; rank order is input order.
            outputs = [step(i, b) for i, b in enumerate(data.blocks(batch_size))]
            local = _cat(outputs) if outputs else torch.empty((0, *model._out_shape), device=model._step_device)
            result = _gather(comm, local)
        else:
            # Each batch is split across replicas: gather batch by batch to keep the order.
            parts = [_gather(comm, step(i, b)) for i, b in enumerate(data.epoch(0, steps))]
            result = _cat(parts)
        if cbs is not None:
            cbs.on_predict_end()
        return map_tensors(lambda t: t.cpu().numpy(), result)


__all__ = ["ArrayAdapter", "Batch", "IterableAdapter", "evaluate", "fit", "make_adapter", "predict", "step_logs"]


def _report_scaling(model: Any, steps: Any, verbose: int, seconds: float, wait_seconds: float) -> None:
    """The end-of-fit scaling line (issue 41): on several replicas, the chief prints the measured
    throughput against one replica's and, when it was slower, why and what would help; a verbose
    1-replica fit of a second or more records its throughput as that reference
    (``keras/utils/scaling.py``). Every replica's sample count is gathered, which is also the
    wait for the chief's files at the end of training."""
    comm = model.distribute_strategy.extended.communicator
    rows = getattr(steps, "rows", None)
    if rows is None:  # steps scheduled onto parameter-server workers: not this loop's to measure
        _wait_for_chief_files(comm, "fit.train_end")
        return
    counts = [(rows, steps.global_batch)]
    if comm.is_distributed:
        counts = comm.all_gather_object(counts[0], name="fit.train_end")
    samples, global_batch = sum(c[0] for c in counts), max(c[1] for c in counts)
    if comm.rank != 0 or verbose == 0 or samples == 0 or (comm.world_size == 1 and seconds < MIN_REFERENCE_S):
        return
    figures = scaling.fit_figures(model, comm.world_size, samples, seconds, global_batch, wait_seconds)
    line = scaling.end_of_fit(figures)
    if line is not None:
        print(line, flush=True)


def _wait_for_chief_files(comm: Any, name: str) -> None:
    """Every replica waits here until the chief's callbacks (ModelCheckpoint, CSVLogger, ...)
    finished writing: a replica that reads those files next (``load_weights`` of the newest
    checkpoint) must find them complete, as it would in TF's single process."""
    if comm.is_distributed:
        comm.barrier(name=name)
