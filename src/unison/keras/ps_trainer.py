"""``fit``/``evaluate`` under ParameterServerStrategy: steps scheduled onto workers (TF's path).

As in TF, ``fit`` needs ``steps_per_epoch`` and data every worker can build on its own: a
``keras.utils.experimental.DatasetCreator(dataset_fn)``, a ``dataset_fn(input_context)``, or
numpy arrays/tensors (each worker then reads its own shard, reshuffled on every pass). Each
epoch schedules ``steps_per_epoch`` training steps onto whichever worker is free, joins, and
reads the loss and metrics summed over every step that ran (each worker sends its metric sums
back with each step's result, so every sample counts once, even when a step ran twice because
its worker died). ``batch_size`` is the batch of one step on one worker. Validation runs on the
coordinator with the weights the parameter servers hold after the epoch (or on the workers when
``validation_data`` is a ``DatasetCreator``, with ``validation_steps``).

Before callbacks see an epoch's end, the coordinator's weights and optimizer state are refreshed
from the servers, so ``ModelCheckpoint`` and ``BackupAndRestore`` save what the servers hold; a
restored backup is written back to the servers before the first step.

Example::

    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(10, input_shape=(784,))])
        model.compile("sgd", loss="mse")
    model.fit(keras.utils.experimental.DatasetCreator(dataset_fn), epochs=5, steps_per_epoch=20)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.data import Dataset as TfDataset
from unison.distribute.input import DatasetCopy, InputContext
from unison.distribute.parameter_server import (
    ClusterCoordinator,
    ParameterServerStrategy,
)
from unison.distribute.parameter_server.strategy import DatasetFromFunction
from unison.keras.callbacks import BackupAndRestore, Callback, CallbackList
from unison.keras.data_adapters import IterableAdapter, as_batch
from unison.keras.training_state import TrainingState, prepare
from unison.keras.utils.experimental import DatasetCreator


class ArrayShards:
    """A dataset function over arrays: worker ``i`` of ``n`` reads rows ``i::n`` in endless passes."""

    def __init__(self, x: Any, y: Any, sample_weight: Any, batch_size: int, shuffle: bool) -> None:
        self.arrays = [np.asarray(a) if not isinstance(a, torch.Tensor) else a.numpy()
                       for a in (x, y, sample_weight) if a is not None]
        n = len(self.arrays[0])
        if any(len(a) != n for a in self.arrays):
            raise ValueError(f"x, y and sample_weight must have the same number of rows. Received: "
                             f"{[len(a) for a in self.arrays]}")
        self.batch_size, self.shuffle = batch_size, shuffle

    def __call__(self, ctx: InputContext) -> Iterator[tuple[np.ndarray, ...]]:
        rows = np.arange(ctx.input_pipeline_id, len(self.arrays[0]), ctx.num_input_pipelines)
        if len(rows) == 0:
            raise ValueError(f"Worker {ctx.input_pipeline_id} has no rows: the data has fewer rows "
                             f"({len(self.arrays[0])}) than there are workers ({ctx.num_input_pipelines}).")
        rng = np.random.default_rng(ctx.input_pipeline_id)
        while True:
            order = rng.permutation(rows) if self.shuffle else rows
            for i in range(0, len(order), self.batch_size):
                take = order[i: i + self.batch_size]
                yield tuple(a[take] for a in self.arrays)


def dataset_function(x: Any, y: Any, sample_weight: Any, batch_size: int, shuffle: bool, what: str) -> Any:
    """What each worker calls with its InputContext to build its dataset."""
    if isinstance(x, DatasetCreator):
        return x.dataset_fn
    if isinstance(x, DatasetFromFunction):
        return x.dataset_fn
    if isinstance(x, TfDataset):
        if y is not None:
            raise ValueError(f"`y` must not be given when `x` is a tf.data Dataset (its elements carry the "
                             f"labels). Received: y of type {type(y).__name__}.")
        return DatasetCopy(x)  # every worker iterates its own copy: repeat() it, bound steps_per_epoch
    if isinstance(x, (np.ndarray, torch.Tensor)):
        return ArrayShards(x, y, sample_weight, batch_size, shuffle)
    if callable(x) and not isinstance(x, torch.utils.data.Dataset):
        return x
    raise TypeError(
        f"Under ParameterServerStrategy, {what} takes data every worker can build on its own: "
        "keras.utils.experimental.DatasetCreator(dataset_fn), a dataset_fn(input_context), a tf.data "
        "Dataset (each worker iterates a copy) or numpy arrays. "
        f"Received: {type(x).__name__}. Wrap the code that makes your dataset in a dataset_fn.")


def _train_step(st: TrainingState, iterator: Any) -> None:
    st.train_step(as_batch(next(iterator)))


def _eval_step(st: TrainingState, iterator: Any) -> None:
    with torch.no_grad():
        st.eval_step(as_batch(next(iterator)))


class _NoPosition:
    """Steps read from per-worker datasets have no position a backup could record."""

    position = None
    epoch_origin = None


def _setup(model: Any, strategy: ParameterServerStrategy, dataset_fn: Any) -> TrainingState:
    st = prepare(model, strategy, shuffle=False)
    sample = dataset_fn(InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1))
    st.setup_model(IterableAdapter(sample, 1, 0, torch.device("cpu"), per_replica=True))
    return st


def _pull_optimizer_state(strategy: ParameterServerStrategy, opt: torch.optim.Optimizer) -> None:
    params = [p for g in opt.param_groups for p in g["params"]]
    for p, state in zip(params, strategy.optimizer_state(opt)):
        if state:
            opt.state[p] = state


def _push_optimizer_state(strategy: ParameterServerStrategy, opt: torch.optim.Optimizer) -> None:
    params = [p for g in opt.param_groups for p in g["params"]]
    if any(opt.state.get(p) for p in params):
        strategy.load_optimizer_state(opt, [dict(opt.state.get(p, {})) for p in params])


def fit(model: Any, x: Any, y: Any, batch_size: int, epochs: int, verbose: int, callbacks: list[Callback] | None,
        validation_data: Any, shuffle: bool, sample_weight: Any, initial_epoch: int, steps_per_epoch: int | None,
        validation_steps: int | None, validation_batch_size: int | None, validation_freq: int,
        evaluate_locally: Any) -> Any:
    """``Model.fit`` under ParameterServerStrategy (arguments validated by the caller)."""
    if steps_per_epoch is None:
        raise ValueError("Under ParameterServerStrategy, fit() needs steps_per_epoch: each worker reads an endless "
                         "dataset, so an epoch is a number of scheduled steps. Pass e.g. steps_per_epoch=100.")
    for cb in callbacks or []:
        if isinstance(cb, BackupAndRestore) and cb.save_freq != "epoch":
            raise ValueError("Under ParameterServerStrategy, BackupAndRestore backs up at the end of each epoch: "
                             f"use save_freq='epoch'. Received: save_freq={cb.save_freq!r}")
    strategy: ParameterServerStrategy = model.distribute_strategy
    coordinator = ClusterCoordinator(strategy)
    dataset_fn = dataset_function(x, y, sample_weight, batch_size, shuffle, "fit")
    st = _setup(model, strategy, dataset_fn)
    iterator = iter(coordinator.create_per_worker_dataset(strategy.distribute_datasets_from_function(dataset_fn)))
    step = functools.partial(_train_step, st)
    cbs = CallbackList(callbacks, add_history=True, add_progbar=verbose != 0, model=model, verbose=verbose,
                       epochs=epochs, steps=steps_per_epoch)
    model.stop_training = False
    st.train_data = _NoPosition()
    cbs.on_train_begin()
    resume, st.resume = st.resume, None
    _push_optimizer_state(strategy, st.torch_opt)  # a restored backup's moments go to the servers
    start, done_steps = (resume.epoch, resume.step) if resume is not None else (initial_epoch, 0)
    logs: dict[str, float] = {}
    for epoch in range(start, epochs):
        model.train()
        st.reset_metrics()
        cbs.on_epoch_begin(epoch)
        for _ in range(steps_per_epoch - done_steps):
            coordinator.schedule(step, args=(iterator,))
        done_steps = 0
        coordinator.join()  # also refreshes the coordinator's weights from the servers
        _pull_optimizer_state(strategy, st.torch_opt)
        logs = st.read_metrics()
        if validation_data is not None and (epoch + 1) % validation_freq == 0:
            val_logs = evaluate(model, validation_data, None, validation_batch_size or batch_size, validation_steps,
                                evaluate_locally, steps_name="validation_steps")
            logs.update({f"val_{k}": v for k, v in val_logs.items()})
        cbs.on_epoch_end(epoch, logs)
        if model.stop_training:
            break
    cbs.on_train_end(logs)
    st.train_data = None
    return model.history


def evaluate(model: Any, x: Any, y: Any, batch_size: int, steps: int | None, evaluate_locally: Any,
             sample_weight: Any = None, verbose: int = 0, callbacks: list[Callback] | None = None,
             steps_name: str = "steps") -> dict[str, float]:
    """Evaluation under ParameterServerStrategy: on the workers for a dataset function, else here."""
    if not isinstance(x, DatasetCreator) and not isinstance(x, DatasetFromFunction) and not (
            callable(x) and not isinstance(x, (torch.utils.data.Dataset, np.ndarray, torch.Tensor, tuple, list))):
        if isinstance(x, (tuple, list)) and 2 <= len(x) <= 3 and y is None:
            x, y, sample_weight = x[0], x[1], (x[2] if len(x) == 3 else sample_weight)
        return evaluate_locally(model, x, y, batch_size, steps, sample_weight, verbose, callbacks)
    if steps is None:
        raise ValueError(f"Under ParameterServerStrategy, evaluating a dataset function needs {steps_name}= (the "
                         "number of batches to schedule onto the workers).")
    strategy: ParameterServerStrategy = model.distribute_strategy
    coordinator = ClusterCoordinator(strategy)
    dataset_fn = dataset_function(x, y, None, batch_size, False, "evaluate")
    st = _setup(model, strategy, dataset_fn)
    iterator = iter(coordinator.create_per_worker_dataset(strategy.distribute_datasets_from_function(dataset_fn)))
    st.reset_metrics()
    step = functools.partial(_eval_step, st)
    was_training = model.training
    model.eval()  # the step (and the model in it) is sent with the first schedule: in inference mode
    try:
        for _ in range(steps):
            coordinator.schedule(step, args=(iterator,))
    finally:
        model.train(was_training)
    coordinator.join()
    return st.read_metrics()


__all__ = ["ArrayShards", "DatasetCreator", "dataset_function", "evaluate", "fit"]
