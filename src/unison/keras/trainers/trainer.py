"""``Trainer``: the training half of ``keras.Model`` (Keras 3's ``trainers/trainer.py``).

``fit`` calls ``model.train_step(data)`` once per batch with ``data`` = ``(x, y)`` or
``(x, y, sample_weight)`` (this replica's rows of the global batch); ``evaluate`` calls
``test_step`` and ``predict`` ``predict_step``. Override them as in Keras::

    class MyModel(keras.Model):
        def train_step(self, data):                       # Keras 3, torch style
            x, y, sw = keras.utils.unpack_x_y_sample_weight(data)
            self.zero_grad()
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw)
            loss.backward()
            self.optimizer.apply([v.grad for v in self.trainable_weights], self.trainable_weights)
            return self.compute_metrics(x, y, y_pred, sw)

What a compiled model trains with is the model's: its compiled loss and metrics, loss tracker,
optimizer, the strategy's synchroniser for that optimizer and the loss scale. Every update goes
through the synchroniser's ``step()`` (``Strategy.gradient_synchronizer``): on N replicas it
SUM-reduces the gradients, on one it is the same code over a one-process communicator, under
FSDP2 it shares only the non-finite verdict. ``compute_loss`` scales the loss by the global
batch, so N replicas take the step one device takes on the global batch. Metrics are read (and
summed across replicas) by the loop; callbacks save and restore a running fit through
:meth:`Trainer.fit_state_dict` and :meth:`Trainer.load_fit_state_dict`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch

from unison.distribute import sharding
from unison.keras import distribution, mixed_precision
from unison.keras.metrics import Metric
from unison.keras.mixed_precision.loss_scale import LossScaleOptimizer, UnderflowWatch
from unison.keras.trainers import step_loss
from unison.keras.trainers.compile_utils import CompiledLoss, CompileMetrics, OutputLosses, leaf_metrics
from unison.keras.trainers.data_adapters import Batch
from unison.keras.trainers.epoch_iterator import EpochIterator
from unison.keras.utils.data_adapter_utils import unpack_x_y_sample_weight
from unison.optim.distributed import Sum

_set = object.__setattr__  # the trainer's attributes are plain values, never torch submodules
_Module: Any = torch.nn.Module if TYPE_CHECKING else object  # a Trainer is always a Model's base


class Trainer(_Module):
    """The step methods and the training state of ``keras.Model`` (its first base)."""

    # compile() sets these; Model's constructor gives them their defaults
    optimizer: Any
    loss: Any
    distribute_strategy: Any
    _metric_specs: Any
    # what a compiled model trains with, per compile() and strategy (_prepare_training)
    _comm: Any  # the strategy's communicator
    _step_device: torch.device
    _synchronizer: Any  # the strategy's DistributedOptimizer for the torch optimizer (None: nothing to train)
    _loss_scale: Any  # the LossScaleOptimizer, if compile() was given one
    _loss_tracker: step_loss.LossTracker
    _compiled_metric_list: list[Metric]
    _output_trackers: list[Any]
    _output_sums: list[torch.Tensor]
    _trainable_params: list[torch.nn.Parameter]
    _zero_list: Any
    _accumulate: int
    _pending: int
    _sharded: bool
    _policy: Any
    _underflow: Any
    _has_regularizers: bool
    _last_loss: Any
    _out_shape: Any

    # --- the steps (Keras 3's contract) ------------------------------------------------------------
    def train_step(self, data: Any) -> dict[str, Any]:
        """One training step on ``data`` (this replica's rows); returns the metrics' values."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        self._train_on(Batch(x, y, sample_weight, self._running_global_size()))
        return self.get_metrics_result()

    def _train_on(self, batch: Batch) -> None:
        """The built-in step (``fit`` calls it straight: no tuple to pack, no results to read)."""
        y_pred = self._forward(batch.x)
        loss_sum, rows = step_loss.loss_sum(self, batch, y_pred)
        loss = loss_sum / step_loss.global_size(self, batch, rows)
        reg = step_loss.regularization(self)
        if reg is not None:
            loss = loss + reg / self._comm.world_size  # each of N replicas adds 1/N of the penalty
        if self._synchronizer is None:  # no trainable weights: nothing to update
            self.optimizer._counter.after_step()
        elif self._backward(loss):  # the k-th batch of gradient accumulation (k=1: every batch)
            self._apply_update()
        self._track(batch, y_pred, loss_sum, rows, reg)

    def test_step(self, data: Any) -> dict[str, Any]:
        """One evaluation step on ``data``: forward, loss and compiled metrics updated."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with torch.no_grad():
            self._test_on(Batch(x, y, sample_weight, self._running_global_size()))
        return self.get_metrics_result()

    def _test_on(self, batch: Batch) -> None:
        y_pred = self._forward(batch.x)
        loss_sum, rows = step_loss.loss_sum(self, batch, y_pred)
        self._track(batch, y_pred, loss_sum, rows, step_loss.regularization(self))

    def predict_step(self, data: Any) -> Any:
        """The model's outputs for ``data`` (``x`` or a tuple whose first entry is ``x``)."""
        x, _, _ = unpack_x_y_sample_weight(data)
        return self._predict_on(x)

    def _predict_on(self, x: Any) -> Any:
        """The forward pass ``predict`` takes; bfloat16 outputs become float32 (numpy has no bfloat16)."""
        if "_policy" not in self.__dict__:
            return self(x, training=False)
        out = self._forward(x)
        return out.float() if isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16 else out

    def _forward(self, x: Any) -> Any:
        return step_loss.forward(self, x)

    def _backward(self, loss: torch.Tensor) -> bool:
        """Backpropagate the step's loss; whether this batch completes an update."""
        k = self._accumulate
        scaled = loss if k == 1 else loss / k  # the mean of k batches' gradients
        if self._sharded and k > 1:
            # FSDP2 keeps the micro-steps' gradients unsharded and reduce-scatters their sum once,
            # on the k-th backward (as the synchroniser's backward_passes_per_step does).
            self.set_requires_gradient_sync(self._pending + 1 >= k)
        (scaled if self._loss_scale is None else self._loss_scale.scale_loss(scaled)).backward()
        if self._underflow is not None:
            named = [(n, p) for n, p in self.named_parameters() if p.requires_grad]
            self._underflow.check(named, loss)
        if k > 1:
            _set(self, "_pending", self._pending + 1)
            if self._pending < k:  # gradients add up in .grad; no update, no collective
                self.optimizer._counter.after_step()
                return False
            _set(self, "_pending", 0)
        return True

    def _apply_update(self) -> None:
        """The one update: the synchroniser's ``step()`` on any number of replicas."""
        counter = self.optimizer._counter  # Keras's iterations and learning-rate schedule
        counter.before_step()
        sync = self._synchronizer
        skipped = sync.skipped_steps
        sync.step()  # synchronise (reduce, or the non-finite verdict), (unscale,) clip, update
        if self._loss_scale is not None:
            self._loss_scale.update_scale(sync.skipped_steps == skipped)  # one verdict everywhere
        counter.after_step()
        groups = sync.param_groups
        if self._zero_list is not None and len(groups) == 1 and groups[0]["params"] is self._zero_list:
            for p in self._trainable_params:  # zero_grad(set_to_none) without its per-step bookkeeping
                p.grad = None
        else:
            sync.zero_grad(set_to_none=True)

    def _track(self, batch: Batch, y_pred: Any, loss_sum: torch.Tensor, rows: Any, reg: Any) -> None:
        with torch.no_grad():
            tracked = loss_sum.detach() if reg is None else loss_sum.detach() + reg.detach() * rows
            self._loss_tracker.add(tracked, rows)
            step_loss.add_output_losses(self, rows)
            self._update_compiled_metrics(batch.y, y_pred, batch.sample_weight)

    def _running_global_size(self) -> int | None:
        current = self.__dict__.get("_current")
        return current.global_size if current is not None else None

    @classmethod
    def _step_overridden(cls, name: str) -> bool:
        """Whether this class replaces the built-in ``train_step``/``test_step``/``predict_step``."""
        return getattr(cls, name) is not getattr(Trainer, name)

    # --- what a custom step calls ----------------------------------------------------------------
    def compute_loss(
        self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None, training: bool = True
    ) -> torch.Tensor:
        """The compiled loss plus the layers' penalties, scaled by the global batch (Keras 3).

        Differentiate it as it is: gradients summed over N replicas equal one device's on the
        global batch. ``self.metrics[0].update_state(loss)`` records its unscaled value.
        """
        if y_pred is None:
            raise ValueError("compute_loss() needs y_pred (the model's outputs). Received: y_pred=None.")
        return self._scaled_loss("compute_loss", y, y_pred, sample_weight)

    def _scaled_loss(self, what: str, y: Any, y_pred: Any, sample_weight: Any, regularization: bool = True) -> Any:
        """``sum(per-example losses) / global batch`` (+ 1/N of the penalties), as the built-in step."""
        self._require_ready(what)
        if self.loss is None:
            raise ValueError(
                "compute_loss() needs a compiled loss: call model.compile(loss=...) first, or "
                "override compute_loss()/train_step() to compute the loss yourself."
            )
        loss_sum, rows = step_loss.loss_sum(self, Batch(None, y, sample_weight, None), y_pred)
        current = self.__dict__.get("_current")
        if current is not None:  # inside fit: the running step's global batch
            size: Any = step_loss.global_size(self, Batch(None, None, None, current.global_size), rows)
        else:  # elsewhere: TF's compute_average_loss
            size = rows * self._comm.world_size
        loss = loss_sum / size
        reg = step_loss.regularization(self) if regularization else None
        if reg is not None:
            loss = loss + reg / self._comm.world_size
        tracked = loss_sum.detach() if reg is None else loss_sum.detach() + reg.detach() * rows
        _set(self, "_last_loss", (loss, tracked, rows))
        return loss

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None) -> dict[str, Any]:
        """Update the compiled metrics with this batch; return every metric's value (Keras 3)."""
        self._require_ready("compute_metrics")
        self._update_compiled_metrics(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _update_compiled_metrics(self, y: Any, y_pred: Any, sample_weight: Any) -> None:
        with torch.no_grad():
            for m in self._compiled_metric_list:
                m.update_state(y, y_pred, sample_weight)

    def _require_ready(self, what: str) -> None:
        if not self.__dict__.get("_compiled_ready"):
            raise RuntimeError(
                f"{what}() uses the compiled loss and metrics, which fit()/evaluate() set up. Call "
                f"it from train_step/test_step (run by fit/evaluate), after model.compile()."
            )

    def get_metrics_result(self) -> dict[str, Any]:
        """``{name: value}`` of every metric in ``self.metrics`` (this replica's value inside a step)."""
        return {m.name: m.result() for m in leaf_metrics(self.metrics)}

    @property
    def compiled_loss(self) -> CompiledLoss:
        """Keras 2's ``compiled_loss(y, y_pred, sample_weight, regularization_losses)``."""
        return CompiledLoss(self)

    @property
    def compiled_metrics(self) -> CompileMetrics:
        """Keras 2's ``compiled_metrics`` (``update_state(y, y_pred, sample_weight)``)."""
        return CompileMetrics(self if self.__dict__.get("_compiled_ready") else None)

    @property
    def metrics(self) -> list[Any]:
        """The loss tracker, the compiled metrics, metrics set as attributes, then those set as
        attributes of the layers inside (Keras 3's order; a nested model's own are its own).

        Override it to list your own trackers: the loop resets them at each epoch and reports
        them, summed over every replica.
        """
        own = self.__dict__
        found: list[Any] = []
        if own.get("_compiled_ready"):
            compiled = CompileMetrics(self)
            # Keras 3 lists compile_metrics only for a compile() given metrics (here also for the
            # per-output loss trackers it holds); model.metrics of compile("sgd", "mse") is [loss]
            found += [own["_loss_tracker"]] + ([compiled] if len(compiled) or own.get("_metric_specs") else [])
        mine = {id(m) for m in found[:1]} | {id(m) for m in own.get("_output_trackers", ())}
        found += [v for v in own.values() if isinstance(v, Metric) and id(v) not in mine]
        return found + _sublayer_metrics(self, {id(m) for m in found})

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in leaf_metrics(self.metrics)]

    def reset_metrics(self) -> None:
        """Zero every metric in ``self.metrics``."""
        for m in leaf_metrics(self.metrics):
            m.reset_state()

    def _summed_metric_states(self, name: str = "metrics.reduce") -> torch.Tensor:
        """Loss and metric states summed over every replica (one collective)."""
        trackers = leaf_metrics(self.metrics)
        if not trackers:
            return torch.zeros(0, dtype=torch.float64)
        state = torch.cat([m.state().to(self._step_device, torch.float64) for m in trackers])
        return self._comm.all_reduce(state, name=name)  # cat made a fresh tensor: reduce it in place

    def _read_metrics(self) -> dict[str, float]:
        """Every metric over everything all replicas saw since the last reset (one collective)."""
        state = self._summed_metric_states().cpu()
        logs: dict[str, float] = {}
        offset = 0
        for m in leaf_metrics(self.metrics):  # "loss" first, as Keras logs it
            value = m.result_from_state(state[offset : offset + m.num_state])
            # a per-class metric logs its vector, as Keras 3 does; a scalar is a float32 value as a
            # Python float (TF's metrics are float32 variables)
            logs[m.name] = value if isinstance(value, np.ndarray) else float(np.float32(value))
            offset += m.num_state
        return logs

    def _restore_epoch_metrics(self, state: torch.Tensor | None) -> None:
        """Continue an interrupted epoch's metric sums; replica 0 holds them, so each counts once."""
        if state is None or self._comm.rank != 0:
            return
        trackers = leaf_metrics(self.metrics)
        if len(state) != sum(m.num_state for m in trackers):
            return  # compiled with other metrics than the backup: the epoch's logs restart
        offset = 0
        for m in trackers:
            m.load_state(state[offset : offset + m.num_state].to(self._step_device))  # additive state
            offset += m.num_state

    # --- a running fit's state (BackupAndRestore) ------------------------------------------------
    def fit_state_dict(self, step: int = 0) -> dict[str, Any]:
        """What resumes the running ``fit`` exactly after ``step`` batches of the current epoch.

        The weights and optimizer state (whole, gathered from a sharded model's replicas), Keras's
        ``iterations``, the shuffling seed, the data position, the epoch's metric sums (``step`` >
        0) and torch's RNG. A collective: every replica calls it (the chief writes the result).
        """
        it, opt = self._running_fit()
        metrics = self._summed_metric_states(name="backup_and_restore.metrics") if step else None
        if self._sharded:  # the shards are gathered on every replica (a collective)
            model_state, opt_state = sharding.full_state(self), sharding.full_optimizer_state(self, opt)
        else:
            model_state, opt_state = self.state_dict(), opt.state_dict()
        return {
            "seed": it.seed,
            "epoch_origin": it.epoch_origin if step else it.position,
            "model": model_state,
            "optimizer": opt_state,
            "iterations": int(self.optimizer.iterations),
            "metrics": None if metrics is None else metrics.cpu(),
            "rng": torch.get_rng_state(),
            "replicas": self._comm.world_size,
        }

    def load_fit_state_dict(self, state: dict[str, Any], epoch: int, step: int) -> None:
        """Continue the running ``fit`` from ``state`` (:meth:`fit_state_dict`) at ``step`` of ``epoch``.

        Weights and optimizer state are loaded (a sharded model keeps its shard); the seed, data
        position and metric sums take effect as the loop starts that epoch at that step.
        """
        it, opt = self._running_fit()
        sharding.load_full_state(self, state["model"])
        sharding.load_full_optimizer_state(self, opt, state["optimizer"])
        # Keras's optimizer.iterations: learning-rate schedules and Adam's epsilon follow it (a backup
        # written before it was kept: torch's own step count of the first parameter, the same number)
        iterations = state.get("iterations")
        if iterations is None:
            steps = [s["step"] for s in state["optimizer"].get("state", {}).values() if "step" in s]
            iterations = int(steps[0]) if steps else None
        if iterations is not None:
            self.optimizer.iterations.fill_(int(iterations))
        if "rng" in state:
            torch.set_rng_state(state["rng"])
        it.resume_at(int(state["seed"]), epoch, step, state["epoch_origin"], state["metrics"])

    def _running_fit(self) -> tuple[Any, torch.optim.Optimizer]:
        """The running fit's epoch iterator and the torch optimizer its synchroniser steps."""
        it, sync = self.__dict__.get("_epoch_iterator"), self.__dict__.get("_synchronizer")
        if it is None or sync is None:
            raise RuntimeError("BackupAndRestore works inside model.fit(); pass it in callbacks=[...].")
        return it, sync.optimizer

    # --- per compile: what the steps train with ------------------------------------------------
    def _prepare_training(self) -> None:
        """The training attributes for the current ``compile()`` and strategy (made on demand)."""
        strategy = self.distribute_strategy
        key = (id(strategy), id(self.optimizer), id(self.loss), tuple(map(id, self._metric_specs)))
        if self.__dict__.get("_compile_key") == key:
            return
        self._release_training()
        loss_scale = self.optimizer if isinstance(self.optimizer, LossScaleOptimizer) else None
        policy = mixed_precision.global_policy()
        values: dict[str, Any] = {
            "_compile_key": key,
            "_comm": strategy.extended.communicator,
            "_step_device": strategy.extended.device,
            "_compiled_metric_list": [],
            "_synchronizer": None,
            "_sharded": False,  # keras.distribution.ModelParallel split the parameters (FSDP2)
            "_trainable_params": [],
            "_zero_list": None,  # the torch optimizer's one parameter list, when it is _trainable_params
            # Keras 3's gradient_accumulation_steps: k batches' gradients, one update every k-th
            "_accumulate": int(getattr(self.optimizer, "gradient_accumulation_steps", None) or 1),
            "_pending": 0,
            "_loss_tracker": step_loss.LossTracker(self),
            # several outputs: one "<output>_loss" tracker each (their per-example sums of the step)
            "_output_trackers": self.loss.trackers() if isinstance(self.loss, OutputLosses) else [],
            "_output_sums": [],
            "_current": None,  # the batch of the user's step now running (its global size)
            "_last_loss": None,
            "_compiled_ready": False,
            "_placed": False,
            "_has_regularizers": False,
            "_out_shape": (),
            "_out_shapes": (),
            "_epoch_iterator": None,
            # the global policy when training starts sets the forward's autocast; a
            # LossScaleOptimizer scales the loss and skips overflowing steps on every replica
            "_policy": policy,
            "_loss_scale": loss_scale,
            "_underflow": UnderflowWatch() if policy.name == "mixed_float16" and loss_scale is None else None,
        }
        for name, value in values.items():
            _set(self, name, value)

    def _build_update(self) -> None:
        """The optimizer and the strategy's one synchroniser for it (FSDP2 first, if asked)."""
        strategy = self.distribute_strategy
        if self._comm.is_distributed and isinstance(distribution.distribution(), distribution.ModelParallel):
            # keras.distribution.ModelParallel: each replica keeps 1/N of every parameter (FSDP2);
            # backward reduce-scatters the gradients. Replica 0's values were broadcast already.
            mp = cast(distribution.ModelParallel, distribution.distribution())
            mp.distribute_model(self, op=Sum, communicator=self._comm, sync_initial_values=False)
            _set(self, "_sharded", True)
        named = [(n, p) for n, p in self.named_parameters() if p.requires_grad]
        _set(self, "_trainable_params", [p for _, p in named])
        _set(self, "_has_regularizers", bool(self.losses))
        if not named:
            return  # nothing to train: fit still runs the forward pass and reports the loss, as Keras does
        torch_opt = self.optimizer.build(self._trainable_params)
        groups = torch_opt.param_groups
        if (
            type(torch_opt).zero_grad is torch.optim.Optimizer.zero_grad
            and len(groups) == 1
            and [id(p) for p in groups[0]["params"]] == [id(p) for p in self._trainable_params]
        ):
            _set(self, "_zero_list", groups[0]["params"])
        # The strategy's one synchroniser for this optimizer, on one replica too (a one-process
        # communicator, no gradient hooks) and under FSDP2 (the non-finite verdict only); a user's
        # train_step that calls apply_gradients() reaches the same object.
        sync = strategy.gradient_synchronizer(
            torch_opt,
            named_parameters=named,
            gradient_transform=self.optimizer.clip_gradients,
            nonfinite="skip" if self._loss_scale is not None else "raise",
            backward_passes_per_step=self._accumulate,
            hooks=self._comm.is_distributed,
        )
        _set(self, "_synchronizer", sync)

    def _release_training(self) -> None:
        """Detach the synchroniser's gradient hooks (a new compile() replaces it)."""
        sync = self.__dict__.get("_synchronizer")
        if sync is not None:
            self.__dict__["_compile_key"] = None
            cast(Any, self).distribute_strategy.forget_synchronizer(sync.optimizer)

    def _start_epoch_iterator(self, iterator: EpochIterator | Any) -> None:
        _set(self, "_epoch_iterator", iterator)


def overrides(model: Any, name: str) -> bool:
    """Whether the model's class replaces the built-in ``train_step``/``test_step``/``predict_step``."""
    return getattr(type(model), name) is not getattr(Trainer, name)


__all__ = ["Trainer", "overrides", "unpack_x_y_sample_weight"]


def _sublayer_metrics(model: Any, seen: set[int]) -> list[Any]:
    """Metrics kept as attributes of the layers inside ``model``, as Keras 3's ``Model.metrics`` lists
    them (keras.io's endpoint layer updates its own ``BinaryAccuracy``; fit then logs "accuracy").
    A nested model's own metrics are left out, as Keras leaves out a sub-Trainer's; its layers' count.
    Breadth-first: a layer's metrics before those of the layers inside it."""
    found: list[Any] = []
    stack = list(model.children())
    while stack:
        layer = stack.pop(0)
        stack.extend(layer.children())
        if isinstance(layer, Trainer):  # its loss tracker and compiled metrics are its own fit's
            continue
        for value in layer.__dict__.values():
            if isinstance(value, Metric) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
    return found
