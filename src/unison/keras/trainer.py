"""``fit``, ``evaluate`` and ``predict``: the training loop, one screen of small named pieces.

The loop only talks to the model's strategy (never torch.distributed, docs/semantics.md#layers): the strategy's communicator
reduces metric states, its :class:`~unison.optim.DistributedOptimizer` synchronises gradients.
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

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.distribute.strategy import _STACK, Strategy
from unison.keras.callbacks import Callback, CallbackList, History, ProgbarLogger
from unison.keras.data_adapters import ArrayAdapter, Batch, IterableAdapter, make_adapter
from unison.keras.training_state import TrainingState, prepare

_BATCH_HOOKS = ("on_train_batch_begin", "on_train_batch_end", "on_batch_begin", "on_batch_end")


@contextlib.contextmanager
def _current(strategy: Strategy) -> Iterator[None]:
    """Make the model's strategy current while its layers run (sync BatchNorm reads it)."""
    _STACK.append(strategy)
    try:
        yield
    finally:
        _STACK.pop()


def _check_int(name: str, value: Any, low: int) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < low:
        raise ValueError(f"`{name}` must be an integer >= {low}. Received: {name}={value!r}")


def _verbose(verbose: Any) -> int:
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2):
        raise ValueError(f"`verbose` must be 'auto', 0, 1 or 2. Received: verbose={verbose!r}")
    return int(verbose)


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


def _validation_adapter(data: Any, batch_size: int, st: TrainingState) -> Any:
    if isinstance(data, (tuple, list)) and 2 <= len(data) <= 3 and isinstance(data[0], (np.ndarray, torch.Tensor)):
        x, y, *sw = data
        return st.adapter(x, y, sw[0] if sw else None, batch_size, shuffle=False)
    return st.adapter(data, None, None, batch_size, shuffle=False)


def _overrides_batch_hooks(cb: Callback) -> bool:
    return not isinstance(cb, (History, ProgbarLogger)) and any(
        getattr(type(cb), h) is not getattr(Callback, h) for h in _BATCH_HOOKS)


def fit(model: Any, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
        verbose: Any = "auto", callbacks: list[Callback] | None = None, validation_split: float = 0.0,
        validation_data: Any = None, shuffle: bool = True, class_weight: Any = None,
        sample_weight: Any = None, initial_epoch: int = 0, steps_per_epoch: int | None = None,
        validation_steps: int | None = None, validation_batch_size: int | None = None,
        validation_freq: int = 1) -> History:
    """Train ``model`` on ``x, y`` for ``epochs`` (Keras's ``Model.fit``; ``batch_size`` is global)."""
    model._require_compiled("training")
    if x is None:
        raise ValueError("fit() needs training data: pass x (and y), a Dataset or a DataLoader.")
    batch_size = 32 if batch_size is None else batch_size
    _check_int("batch_size", batch_size, 1)
    _check_int("epochs", epochs, 0)
    _check_int("initial_epoch", initial_epoch, 0)
    _check_int("validation_freq", validation_freq, 1)
    if steps_per_epoch is not None:
        _check_int("steps_per_epoch", steps_per_epoch, 1)
    if class_weight is not None:
        raise NotImplementedError("class_weight is not supported yet; pass sample_weight instead.")
    verbose = _verbose(verbose)
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = _split_validation(x, y, sample_weight, validation_split)

    strategy: Strategy = model.distribute_strategy
    if strategy._should_use_with_coordinator:
        from unison.keras import ps_trainer  # the PS stack (grpc, cloudpickle) loads only when used

        return ps_trainer.fit(model, x, y, batch_size, epochs, verbose, callbacks, validation_data, shuffle,
                              sample_weight, initial_epoch, steps_per_epoch, validation_steps, validation_batch_size,
                              validation_freq, _evaluate_here)
    with _current(strategy):
        st = prepare(model, strategy, shuffle=True)
        train = st.adapter(x, y, sample_weight, batch_size, shuffle=shuffle)
        st.setup_model(train)
        val = None if validation_data is None else _validation_adapter(
            validation_data, validation_batch_size or batch_size, st)
        if val is not None:
            st.check_labels(val, "validation data (validation_data or validation_split)")
        steps = steps_per_epoch or train.steps_per_epoch
        cbs = CallbackList(callbacks, add_history=True, add_progbar=verbose != 0, model=model,
                           verbose=verbose, epochs=epochs, steps=steps)
        dynamic_bar = verbose == 1 and st.comm.broadcast_object(sys.stdout.isatty())
        hooks = dynamic_bar or any(_overrides_batch_hooks(cb) for cb in cbs)
        logs_every = 1 if cbs.needs_batch_logs() else (max(1, (steps or 50) // 50) if dynamic_bar else 0)

        model.stop_training = False
        st.train_data = train
        cbs.on_train_begin()
        # BackupAndRestore may have restored a backup: continue at its exact epoch and step.
        start_epoch, first_step = st.resume_point(initial_epoch, train)
        logs: dict[str, float] = {}
        for epoch in range(start_epoch, epochs):
            model.train()
            st.reset_metrics()
            cbs.on_epoch_begin(epoch)
            if first_step:
                st.restore_epoch_metrics()
            for step, batch in enumerate(train.epoch(epoch, steps_per_epoch, skip=first_step), first_step):
                if hooks:
                    cbs.on_train_batch_begin(step)
                st.train_step(batch)
                if hooks:
                    want = logs_every and (step + 1) % logs_every == 0
                    cbs.on_train_batch_end(step, st.read_metrics() if want else None)
            first_step = 0
            logs = st.read_metrics()
            if val is not None and (epoch + 1) % validation_freq == 0:
                val_logs = _run_evaluation(model, st, val, validation_batch_size or batch_size,
                                           validation_steps, None)
                logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, logs)
            _wait_for_chief_files(st, "fit.epoch_end")
            if model.stop_training:
                break
        cbs.on_train_end(logs)
        _wait_for_chief_files(st, "fit.train_end")
        st.train_data = None  # do not keep the training data alive through the model
    return model.history


def _run_evaluation(model: Any, st: TrainingState, adapter: Any, batch_size: int,
                    steps: int | None, cbs: CallbackList | None) -> dict[str, float]:
    model.eval()
    st.reset_metrics()
    blocks = adapter.blocks(batch_size) if steps is None else adapter.epoch(0, steps)
    with torch.no_grad():
        for step, batch in enumerate(blocks):
            if cbs is not None:
                cbs.on_test_batch_begin(step)
            st.eval_step(batch)
            if cbs is not None:
                cbs.on_test_batch_end(step)
    return st.read_metrics()


def evaluate(model: Any, x: Any = None, y: Any = None, batch_size: int | None = None,
             verbose: Any = "auto", sample_weight: Any = None, steps: int | None = None,
             callbacks: list[Callback] | None = None, return_dict: bool = False) -> Any:
    """Loss and metrics over ``x, y``; every sample counted once across replicas."""
    model._require_compiled("evaluation")
    batch_size = 32 if batch_size is None else batch_size
    _check_int("batch_size", batch_size, 1)
    verbose = _verbose(verbose)
    strategy: Strategy = model.distribute_strategy
    if strategy._should_use_with_coordinator:
        from unison.keras import ps_trainer

        logs = ps_trainer.evaluate(model, x, y, batch_size, steps, _evaluate_here, sample_weight, verbose, callbacks)
    else:
        logs = _evaluate_here(model, x, y, batch_size, steps, sample_weight, verbose, callbacks)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _evaluate_here(model: Any, x: Any, y: Any, batch_size: int, steps: int | None, sample_weight: Any = None,
                   verbose: int = 0, callbacks: list[Callback] | None = None) -> dict[str, float]:
    """Evaluate with this process's replicas (every replica of the strategy, or the coordinator)."""
    strategy: Strategy = model.distribute_strategy
    with _current(strategy):
        st = prepare(model, strategy, False)
        data = st.adapter(x, y, sample_weight, batch_size, shuffle=False)
        st.setup_model(data)
        n_steps = steps or data.eval_steps(batch_size)
        cbs = CallbackList(callbacks, add_progbar=verbose != 0, model=model, verbose=verbose,
                           epochs=1, steps=n_steps)
        cbs.on_test_begin()
        logs = _run_evaluation(model, st, data, batch_size, steps, cbs)
        cbs.on_test_end(logs)
    return logs


def predict(model: Any, x: Any, batch_size: int | None = None, verbose: Any = "auto",
            steps: int | None = None, callbacks: list[Callback] | None = None) -> np.ndarray:
    """Model outputs for ``x``, in input order, gathered from every replica."""
    batch_size = 32 if batch_size is None else batch_size
    _check_int("batch_size", batch_size, 1)
    strategy: Strategy = model.distribute_strategy
    with _current(strategy):
        st = prepare(model, strategy, False)
        data = st.adapter(x, None, None, batch_size, shuffle=False)
        st.setup_model(data, need_labels=False)
        model.eval()
        with torch.no_grad():
            if isinstance(data, ArrayAdapter) and steps is None:
                # Each replica predicts one contiguous block; rank order is input order.
                outputs = [st.predict_forward(b.x) for b in data.blocks(batch_size)]
                local = torch.cat(outputs) if outputs else st.empty_output(data)
                parts = st.comm.all_gather(local, name="predict.gather")
            else:
                # Each batch is split across replicas: gather batch by batch to keep the order.
                parts = [torch.cat(st.comm.all_gather(st.predict_forward(b.x), name="predict.gather"))
                         for b in data.epoch(0, steps)]
        return torch.cat(parts).cpu().numpy()


__all__ = ["ArrayAdapter", "Batch", "IterableAdapter", "evaluate", "fit", "make_adapter", "predict"]


def _wait_for_chief_files(st: TrainingState, name: str) -> None:
    """Every replica waits here until the chief's callbacks (ModelCheckpoint, CSVLogger, ...)
    finished writing: a replica that reads those files next (``load_weights`` of the newest
    checkpoint) must find them complete, as it would in TF's single process."""
    if st.comm.is_distributed:
        st.comm.barrier(name=name)
