"""How a step of ``fit``/``evaluate`` runs: the strategy's part of the one loop.

The loop in :mod:`unison.keras.trainers.loop` is the same for every strategy; it asks the model's
strategy for a *step executor* (``Strategy.step_executor`` picks one of the executors the loop
offers, where Keras 3's ``make_train_function`` decides) and drives it:

* :class:`LocalSteps` runs each step here, on this process's replica, inside the strategy's
  replica context (default, Mirrored and MultiWorkerMirrored strategies); the loop and its
  callbacks stay in cross-replica context, as in TF;
* ``CoordinatedSteps`` (:mod:`unison.keras.trainers.coordinated_steps`, loaded only when used, as it
  brings the parameter-server stack) schedules each step onto parameter-server workers through a
  ``ClusterCoordinator``, joins at the end of the epoch and pulls the optimizer state.

A step is ``model.train_step(data)``: the built-in one (run straight from the training state,
without packing ``data``) or the user's override.

Example::

    steps = LocalSteps(model)  # or what Strategy.step_executor picks (trainers/loop.py)
    with steps.context():
        train = steps.open_train(x, y, None, 32, True, None)
        for run in steps.train_steps(train, epoch=0, steps=None, skip=0):
            run()                      # one step here, or one step scheduled onto a worker
        steps.finish_epoch()
        logs = model._read_metrics()
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

from unison.debug.timeline import traced
from unison.distribute.input import first_leaf
from unison.keras import mixed_precision
from unison.keras.trainers.compile_utils import OutputLosses
from unison.keras.trainers.data_adapters import ArrayAdapter, Batch
from unison.keras.trainers.epoch_iterator import EpochIterator, adapter, share_seed
from unison.keras.trainers.model_setup import setup_model
from unison.keras.trainers.trainer import overrides
from unison.optim.agreement import describe, note

Step = Callable[[], Any]


def _data(batch: Batch) -> Any:
    # Keras's pack_x_y_sample_weight: inputs alone are passed as they are (a GAN's train_step
    # gets the batch of images), a tuple or list of inputs as a 1-tuple.
    if batch.sample_weight is not None:
        return (batch.x, batch.y, batch.sample_weight)
    if batch.y is None:
        return (batch.x,) if isinstance(batch.x, (tuple, list)) else batch.x
    return (batch.x, batch.y)


def run_train_step(model: Any, batch: Batch) -> Any:
    """One training step on this replica's ``batch``; a user's ``train_step`` gets ``(x, y[, sw])``."""
    if not overrides(model, "train_step"):
        model._train_on(batch)  # the built-in step, without the round trip through a tuple
        return None
    return _user_step(model, model.train_step, batch)


def _user_step(model: Any, step: Callable[[Any], Any], batch: Batch) -> Any:
    object.__setattr__(model, "_current", batch)  # compute_loss scales by this batch's global size
    try:
        with mixed_precision.policy_scope(model._policy, model._step_device.type):
            return step(_data(batch))
    finally:
        object.__setattr__(model, "_current", None)


def run_test_step(model: Any, batch: Batch) -> Any:
    """One evaluation step (no gradients)."""
    with torch.no_grad():
        if not overrides(model, "test_step"):
            model._test_on(batch)
            return None
        return _user_step(model, model.test_step, batch)


def run_predict_step(model: Any, batch: Batch) -> Any:
    with torch.no_grad():
        if not overrides(model, "predict_step"):
            return model._predict_on(batch.x)
        with mixed_precision.policy_scope(model._policy, model._step_device.type):
            return model.predict_step((batch.x,))


def _loss_fact(loss: Any) -> Any:
    """What replicas compare of compile()'s loss: each loss's class and config (or function name)."""
    if isinstance(loss, OutputLosses):
        return {"outputs": list(loss.names), "losses": [_loss_fact(v) for v in loss.losses], "weights": loss.weights}
    if loss is None or isinstance(loss, str):
        return loss
    if callable(getattr(loss, "get_config", None)):
        return describe(loss)
    return getattr(loss, "__qualname__", type(loss).__name__)


def note_fit_facts(model: Any, train: Any, batch_size: int) -> None:
    """Facts every replica of a multi-replica ``fit`` must share, compared with the parameters
    before the first gradient leaves (:mod:`unison.optim.agreement`): the compiled loss, and for
    arrays the global batch and the number of samples (datasets batch themselves; a replica
    with other data or another batch_size would step a different number of times, or apart)."""
    comm = model._comm
    if not comm.is_distributed:
        return
    note("loss (fit's compiled loss)", _loss_fact(model.loss), comm)
    if isinstance(train, ArrayAdapter):
        note("global batch (fit's batch_size)", int(batch_size), comm)
        note("training data (the number of samples in fit's x)", int(train.n), comm)


class LocalSteps:
    """Steps that run here, on this process's replica of the model's strategy."""

    coordinated = False

    def __init__(self, model: Any) -> None:
        self.model = model
        self.strategy = model.distribute_strategy
        self.last_result: Any = None  # what a user's train_step/test_step returned last
        # what fit's end-of-training scaling line counts: this replica's training rows, and the
        # largest global batch a step took (the batch size a dataset chose, not fit's argument)
        self.rows = 0
        self.global_batch = 0

    def context(self) -> contextlib.AbstractContextManager[Any]:
        """Where the loop itself runs: cross-replica, as TF's callbacks do (each step enters the replica context)."""
        return contextlib.nullcontext()

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
        model = self.model
        model._prepare_training()
        seed = share_seed(model._comm)  # replica 0 draws it, as every fit does (even unshuffled)
        train = adapter(model, x, y, sample_weight, batch_size, shuffle, seed)
        note_fit_facts(model, train, batch_size)
        model._start_epoch_iterator(EpochIterator(train, seed))
        with self.strategy.replica_context():  # the model is built as this replica's
            setup_model(model, train)
        return train

    def steps_per_epoch(self, train: Any, steps_per_epoch: int | None) -> int | None:
        return steps_per_epoch or train.steps_per_epoch

    def resume(self, train: Any, initial_epoch: int) -> tuple[int, int]:
        """Where training starts: a restored backup's epoch and step, else ``initial_epoch``."""
        return self.model._epoch_iterator.start(initial_epoch)

    def train_steps(
        self, train: Any, epoch: int, steps: int | None, skip: int, callbacks_between: bool = True
    ) -> Iterator[Step]:
        """One callable per step of the epoch.

        ``callbacks_between``: batch callbacks run between the steps, in cross-replica context,
        so each step enters the replica context itself; without them the epoch's steps run in
        one replica context (entering it costs a few microseconds a step).
        """
        if skip:
            it = self.model._epoch_iterator
            state, it.epoch_metrics = it.epoch_metrics, None
            self.model._restore_epoch_metrics(state)
        if callbacks_between:
            for batch in traced(train.epoch(epoch, steps, skip=skip)):  # waits on the timeline's data track
                yield functools.partial(self._train_in_context, batch)
            return
        with self.strategy.replica_context():  # only the steps run until this generator ends
            for batch in traced(train.epoch(epoch, steps, skip=skip)):
                yield functools.partial(self._train, batch)

    def _train_in_context(self, batch: Batch) -> None:
        with self.strategy.replica_context():
            self._train(batch)

    def _train(self, batch: Batch) -> None:
        rows = len(first_leaf(batch.x))
        self.rows += rows
        size = batch.global_size if batch.global_size is not None else rows * self.strategy.num_replicas_in_sync
        self.global_batch = max(self.global_batch, size)
        result = run_train_step(self.model, batch)
        if result is not None:
            self.last_result = result

    def finish_epoch(self) -> None:
        """Nothing to collect: every step ran here."""

    # --- evaluation ----------------------------------------------------------------------------
    def evaluator(self, x: Any) -> LocalSteps:
        return self

    def open_eval(
        self,
        x: Any,
        y: Any,
        sample_weight: Any,
        batch_size: int,
        steps: int | None,
        where: str = "labels (y) given to evaluate",
    ) -> tuple[Any, int | None]:
        model = self.model
        model._prepare_training()
        data = adapter(model, x, y, sample_weight, batch_size, shuffle=False)
        with self.strategy.replica_context():
            setup_model(model, data, where=where)
        return data, steps or data.eval_steps(batch_size)

    def eval_steps(self, data: Any, batch_size: int, steps: int | None) -> Iterator[Step]:
        blocks = data.blocks(batch_size) if steps is None else data.epoch(0, steps)
        for batch in blocks:
            yield functools.partial(self._test, batch)

    def _test(self, batch: Batch) -> None:
        with self.strategy.replica_context():
            result = run_test_step(self.model, batch)
        if result is not None:
            self.last_result = result

    def finish_eval(self) -> None:
        """Nothing to collect: every step ran here."""


__all__ = ["LocalSteps", "run_predict_step", "run_test_step", "run_train_step"]
