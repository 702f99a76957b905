"""Steps scheduled onto parameter-server workers: the ParameterServerStrategy side of the one loop.

As in TF, ``fit`` needs ``steps_per_epoch`` and data every worker can build on its own: a
``keras.utils.experimental.DatasetCreator(dataset_fn)``, a ``dataset_fn(input_context)``, a
``tf.data`` Dataset (each worker iterates a copy), or numpy arrays/tensors (worker ``i`` of ``n``
reads its contiguous block, cut by the same function that cuts global batches for replicas,
reshuffled on every pass). Each epoch schedules ``steps_per_epoch`` steps
(``model.train_step``, built-in or overridden) onto whichever worker is free, joins, and reads the
loss and metrics summed over every step that ran (each worker sends its metric sums back with
each step's result, so every sample counts once, even when a step ran twice because its worker
died). ``batch_size`` is the batch of one step on one worker. Validation runs on the coordinator
with the weights the servers hold after the epoch, or on the workers when ``validation_data`` is
a dataset function (with ``validation_steps``).

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

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.data import Dataset as TfDataset
from unison.distribute.input import DatasetCopy, InputContext, shard_bounds
from unison.distribute.parameter_server import ClusterCoordinator
from unison.distribute.parameter_server.strategy import DatasetFromFunction
from unison.keras import distribution
from unison.keras.backend.torch_mode import set_torch_mode
from unison.keras.callbacks import BackupAndRestore
from unison.keras.trainers.data_adapters import IterableAdapter, as_batch
from unison.keras.trainers.epoch_iterator import NoPosition
from unison.keras.trainers.local_steps import LocalSteps, Step, run_test_step, run_train_step
from unison.keras.trainers.model_setup import setup_model
from unison.keras.utils.experimental import DatasetCreator


class ArrayShards:
    """A dataset function over arrays: worker ``i`` of ``n`` reads its contiguous block, in endless passes."""

    def __init__(self, x: Any, y: Any, sample_weight: Any, batch_size: int, shuffle: bool) -> None:
        self.arrays = [
            np.asarray(a) if not isinstance(a, torch.Tensor) else a.numpy()
            for a in (x, y, sample_weight)
            if a is not None
        ]
        n = len(self.arrays[0])
        if any(len(a) != n for a in self.arrays):
            raise ValueError(
                f"x, y and sample_weight must have the same number of rows. Received: {[len(a) for a in self.arrays]}"
            )
        self.batch_size, self.shuffle = batch_size, shuffle

    def __call__(self, ctx: InputContext) -> Iterator[tuple[np.ndarray, ...]]:
        start, stop = shard_bounds(len(self.arrays[0]), ctx.num_input_pipelines, ctx.input_pipeline_id)
        rows = np.arange(start, stop)
        if len(rows) == 0:
            raise ValueError(
                f"Worker {ctx.input_pipeline_id} has no rows: the data has fewer rows "
                f"({len(self.arrays[0])}) than there are workers ({ctx.num_input_pipelines})."
            )
        rng = np.random.default_rng(ctx.input_pipeline_id)
        while True:
            order = rng.permutation(rows) if self.shuffle else rows
            for i in range(0, len(order), self.batch_size):
                take = order[i : i + self.batch_size]
                yield tuple(a[take] for a in self.arrays)


def is_dataset_function(x: Any) -> bool:
    """Data the workers build themselves (as opposed to arrays the coordinator evaluates)."""
    if isinstance(x, (DatasetCreator, DatasetFromFunction)):
        return True
    return callable(x) and not isinstance(
        x, (torch.utils.data.Dataset, np.ndarray, torch.Tensor, tuple, list, TfDataset)
    )


def dataset_function(x: Any, y: Any, sample_weight: Any, batch_size: int, shuffle: bool, what: str) -> Any:
    """What each worker calls with its InputContext to build its dataset."""
    if isinstance(x, (DatasetCreator, DatasetFromFunction)):
        return x.dataset_fn
    if isinstance(x, TfDataset):
        if y is not None:
            raise ValueError(
                f"`y` must not be given when `x` is a tf.data Dataset (its elements carry the "
                f"labels). Received: y of type {type(y).__name__}."
            )
        return DatasetCopy(x)  # every worker iterates its own copy: repeat() it, bound steps_per_epoch
    if isinstance(x, (np.ndarray, torch.Tensor)):
        return ArrayShards(x, y, sample_weight, batch_size, shuffle)
    if callable(x) and not isinstance(x, torch.utils.data.Dataset):
        return x
    raise TypeError(
        f"Under ParameterServerStrategy, {what} takes data every worker can build on its own: "
        "keras.utils.experimental.DatasetCreator(dataset_fn), a dataset_fn(input_context), a tf.data "
        "Dataset (each worker iterates a copy) or numpy arrays. "
        f"Received: {type(x).__name__}. Wrap the code that makes your dataset in a dataset_fn."
    )


def _scheduled_train_step(model: Any, iterator: Any) -> None:
    """What a worker runs for one training step (sent once, with the model and what it trains with)."""
    run_train_step(model, as_batch(next(iterator)))


def _scheduled_test_step(model: Any, iterator: Any) -> None:
    run_test_step(model, as_batch(next(iterator)))


class CoordinatedSteps:
    """Steps scheduled onto the workers of a ParameterServerStrategy by a ``ClusterCoordinator``."""

    coordinated = True

    def __init__(self, model: Any) -> None:
        self.model = model
        self.strategy = model.distribute_strategy
        self.last_result: Any = None  # a worker's step returns nothing the loop reads

    @functools.cached_property
    def coordinator(self) -> ClusterCoordinator:
        # Made on first use: arguments are checked before the cluster is contacted.
        return ClusterCoordinator(self.strategy)

    def context(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()  # the steps run on the workers, under their own context

    def _open(self, dataset_fn: Any) -> Any:
        self.model._prepare_training()
        sample = dataset_fn(InputContext(num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1))
        setup_model(self.model, IterableAdapter(sample, 1, 0, torch.device("cpu"), per_replica=True))
        per_worker = self.coordinator.create_per_worker_dataset(
            self.strategy.distribute_datasets_from_function(dataset_fn)
        )
        return iter(per_worker)

    # --- training ------------------------------------------------------------------------------
    def open_train(
        self,
        x: Any,
        y: Any,
        sample_weight: Any,
        batch_size: int,
        shuffle: bool,
        steps_per_epoch: int | None,
        callbacks: Any = None,
    ) -> Any:
        if isinstance(distribution.distribution(), distribution.ModelParallel):
            # Ignoring it would train unsharded while the user believes otherwise.
            raise ValueError(
                "keras.distribution.ModelParallel shards a model across the replicas of a "
                "MirroredStrategy or MultiWorkerMirroredStrategy; under ParameterServerStrategy the "
                "variables live on the parameter servers. Split large variables there with "
                "ParameterServerStrategy(variable_partitioner=...), and call "
                "keras.distribution.set_distribution(None) before fit()."
            )
        if steps_per_epoch is None:
            raise ValueError(
                "Under ParameterServerStrategy, fit() needs steps_per_epoch: each worker reads an "
                "endless dataset, so an epoch is a number of scheduled steps. Pass e.g. "
                "steps_per_epoch=100."
            )
        for cb in callbacks or []:
            if isinstance(cb, BackupAndRestore) and cb.save_freq != "epoch":
                raise ValueError(
                    "Under ParameterServerStrategy, BackupAndRestore backs up at the end of each "
                    f"epoch: use save_freq='epoch'. Received: save_freq={cb.save_freq!r}"
                )
        iterator = self._open(dataset_function(x, y, sample_weight, batch_size, shuffle, "fit"))
        self.model._start_epoch_iterator(NoPosition())
        # One function for the whole fit: the model (and what it trains with) travels to each worker once.
        self._train_fn = functools.partial(_scheduled_train_step, self.model)
        return iterator

    def steps_per_epoch(self, train: Any, steps_per_epoch: int | None) -> int | None:
        return steps_per_epoch

    def resume(self, train: Any, initial_epoch: int) -> tuple[int, int]:
        self._push_optimizer_state(self._torch_optimizer())  # a restored backup's moments go to the servers
        return self.model._epoch_iterator.start(initial_epoch)

    def _torch_optimizer(self) -> torch.optim.Optimizer | None:
        sync = self.model._synchronizer
        return None if sync is None else sync.optimizer

    def train_steps(
        self, iterator: Any, epoch: int, steps: int | None, skip: int, callbacks_between: bool = True
    ) -> Iterator[Step]:
        for _ in range((steps or 0) - skip):
            yield functools.partial(self.coordinator.schedule, self._train_fn, args=(iterator,))

    def finish_epoch(self) -> None:
        """Wait for every scheduled step (also refreshes the weights), then pull the optimizer state."""
        self.coordinator.join()
        self._pull_optimizer_state(self._torch_optimizer())

    def _pull_optimizer_state(self, opt: torch.optim.Optimizer | None) -> None:
        if opt is None:
            return
        params = [p for g in opt.param_groups for p in g["params"]]
        for p, state in zip(params, self.strategy.optimizer_state(opt)):
            if state:
                opt.state[p] = state

    def _push_optimizer_state(self, opt: torch.optim.Optimizer | None) -> None:
        if opt is None:
            return
        params = [p for g in opt.param_groups for p in g["params"]]
        if any(opt.state.get(p) for p in params):
            self.strategy.load_optimizer_state(opt, [dict(opt.state.get(p, {})) for p in params])

    # --- evaluation ----------------------------------------------------------------------------
    def evaluator(self, x: Any) -> Any:
        """Workers evaluate a dataset function; arrays and datasets are evaluated here, on the coordinator."""
        return self if is_dataset_function(x) else LocalSteps(self.model)

    def open_eval(
        self,
        x: Any,
        y: Any,
        sample_weight: Any,
        batch_size: int,
        steps: int | None,
        where: str = "labels (y) given to evaluate",
    ) -> tuple[Any, int | None]:
        if steps is None:
            raise ValueError(
                "Under ParameterServerStrategy, evaluating a dataset function needs steps= (or "
                "validation_steps= in fit): the number of batches to schedule onto the workers."
            )
        return self._open(dataset_function(x, y, None, batch_size, False, "evaluate")), steps

    def eval_steps(self, iterator: Any, batch_size: int, steps: int | None) -> Iterator[Step]:
        fn = functools.partial(_scheduled_test_step, self.model)
        was_training = self.model.training
        set_torch_mode(
            self.model, False
        )  # the step (and the model in it) is sent with the first schedule: in inference mode
        try:
            for _ in range(steps or 0):
                yield functools.partial(self.coordinator.schedule, fn, args=(iterator,))
        finally:
            set_torch_mode(self.model, was_training)

    def finish_eval(self) -> None:
        self.coordinator.join()


__all__ = ["ArrayShards", "CoordinatedSteps", "DatasetCreator", "dataset_function", "is_dataset_function"]
