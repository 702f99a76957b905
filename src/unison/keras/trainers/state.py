"""Per-model training state: what the built-in step owns.

Built once per ``compile()`` (and strategy): the model's placement on the replica's device and
its weights broadcast from replica 0 (placement, broadcast), the torch optimizer and the
strategy's :class:`~unison.optim.DistributedOptimizer` for it (``Strategy.gradient_synchronizer``),
the dtype policy and loss scaling, and the additive metric states (the loss tracker and the
compiled metrics) that are reduced across replicas when read. The loop itself is in
:mod:`unison.keras.trainers.loop`; how a step runs (here or on parameter-server workers) in
:mod:`unison.keras.trainers.local_steps`.

Callbacks reach it as ``model._training_state`` (the trainer mixin owns the attribute) while
``fit`` runs: ``BackupAndRestore`` reads ``comm``, ``torch_opt``, ``seed``, ``train_data`` and
:meth:`TrainingState.summed_metric_states`, sets ``seed`` and calls :meth:`TrainingState.resume_at`
when it restores.

Example::

    st = prepare(model, strategy, shuffle=True)
    data = st.adapter(x, y, None, batch_size=32, shuffle=True)
    st.setup_model(data)
    for batch in data.epoch(0):
        st.train_step(batch)
    logs = st.read_metrics()          # {'loss': ..., 'accuracy': ...}, whole global batch
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch

from unison.distribute.input import map_structure
from unison.distribute.strategy import Strategy
from unison.keras import distribution, mixed_precision
from unison.keras import metrics as metrics_mod
from unison.keras.backend.keras_tensor import flatten_values
from unison.keras.layers.base import has_added_losses
from unison.keras.mixed_precision.loss_scale import LossScaleOptimizer, UnderflowWatch
from unison.keras.trainers.compile_utils import OutputLosses, resolve_metrics
from unison.keras.trainers.data_adapters import ArrayAdapter, Batch, make_adapter
from unison.keras.trainers.trainer import _STATE_ATTRIBUTE, overrides
from unison.optim.distributed import DistributedOptimizer, Sum


class TrainingState:
    """Everything the training loop needs for one compiled model under one strategy."""

    def __init__(self, model: Any, strategy: Strategy) -> None:
        self.model = model
        self.strategy = strategy
        self.comm = strategy.extended.communicator
        self.device = strategy.extended.device
        self.key = _key(model, strategy)
        self.loss = model.loss
        self.metrics: list[metrics_mod.Metric] = []
        self.dist_opt: DistributedOptimizer | None = None
        self.sharded = False  # keras.distribution.ModelParallel split the parameters (FSDP2)
        self.torch_opt: torch.optim.Optimizer | None = None
        self.params: list[torch.nn.Parameter] = []
        # The gradients dropped without Optimizer.zero_grad's per-step bookkeeping (_zero_grads).
        self._zero_list: Any = None  # the torch optimizer's one parameter list, when it is self.params
        # Keras 3's gradient_accumulation_steps: k batches' gradients, one update (and one
        # synchronisation, through the synchroniser's backward_passes_per_step) every k-th.
        self.accumulate = int(getattr(model.optimizer, "gradient_accumulation_steps", None) or 1)
        self._pending = 0
        # The reported loss: [sum of per-example losses, number of examples], additive like the
        # metrics' states (a Mean over examples, weighted by the loss's sample weights).
        self.loss_tracker = LossTracker(self)
        # Several outputs: one "<output>_loss" tracker each (their per-example sums of the step).
        self.output_trackers = self.loss.trackers() if isinstance(self.loss, OutputLosses) else []
        self._output_sums: list[torch.Tensor] = []
        # The batch of the step now running (its global size scales compute_loss exactly).
        self.current: Batch | None = None
        self._last_loss: tuple[torch.Tensor, torch.Tensor, Any] | None = None
        self.seed = 0
        self.ready = False
        self.placed = False
        self.has_regularizers = False
        self.out_shape: tuple[int, ...] = ()
        self.out_shapes: Any = ()
        self.train_data: Any = None  # the adapter fit() trains on (backups record its position)
        self.resume: ResumePoint | None = None  # set when BackupAndRestore restored a backup
        self._epoch_metrics: torch.Tensor | None = None
        # Mixed precision: the global policy when training starts sets the forward's autocast;
        # a LossScaleOptimizer scales the loss and skips overflowing steps on every replica.
        self.policy = mixed_precision.global_policy()
        self.loss_scale = model.optimizer if isinstance(model.optimizer, LossScaleOptimizer) else None
        self.underflow = UnderflowWatch() if self.policy.name == "mixed_float16" and self.loss_scale is None else None

    # --- data -------------------------------------------------------------------------------
    def resume_at(self, epoch: int, step: int, epoch_origin: int | None, metrics: torch.Tensor | None) -> None:
        """Continue from a restored backup: ``step`` batches of ``epoch`` are already done
        (``BackupAndRestore`` calls it through ``model._training_state``)."""
        self.resume = ResumePoint(epoch, step, epoch_origin, metrics)

    def adapter(self, x: Any, y: Any, sample_weight: Any, batch_size: int, shuffle: bool) -> Any:
        """This replica's view of ``x, y`` (global batches split across replicas)."""
        placement = getattr(self.strategy, "_input_placement", None)
        return make_adapter(
            x,
            y,
            sample_weight,
            batch_size,
            shuffle,
            self.seed,
            self.comm.world_size,
            self.comm.rank,
            self.device,
            placement() if placement is not None else None,
        )

    def share_seed(self) -> None:
        """Replica 0 draws the shuffling seed (from torch's RNG, so manual_seed governs it)."""
        local = int(torch.randint(0, 2**31 - 1, (1,)).item())
        self.seed = int(self.comm.broadcast_object(local, name="fit.shuffle_seed"))

    # --- model ------------------------------------------------------------------------------
    def setup_model(self, data: Any, need_labels: bool = True, where: str = "labels (y) given to fit/evaluate") -> None:
        """Build, place and synchronise the model the first time; check ``data`` fits it."""
        model = self.model
        if need_labels:
            _check_data(data, self.loss is not None)
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
                f"{(None, *example)}. Reshape the data or change the model's input_shape."
            )
        if not self.placed:
            model.to(self.device)
            if self.policy.variable_dtype != "float32":  # pure 'bfloat16'/'float16' policies
                model.to(self.policy.torch_variable_dtype)
            if _has_no_forward(model):
                # a train_step override on a model without call() (Keras's GAN guide): the step
                # calls the sub-models itself; there is no forward pass to build or shape
                self.out_shapes, self.out_shape = (), ()
                self.strategy.broadcast_tensors(list(model.parameters()) + list(model.buffers()))
                self.placed = True
            elif isinstance(sample, np.ndarray) and sample.dtype.kind in "SUO":
                # string inputs (a model that starts with TextVectorization/StringLookup): zeros are
                # no text, so the first real row builds and shapes the model
                zeros: Any = sample
            elif multi_input:
                # string inputs among them (a dict of features with a StringLookup column) keep the
                # real example, as a single text input does; numeric ones are zeros
                zeros = map_structure(_zeros_or_text(self.device), sample)
            elif isinstance(sample, np.ndarray) and sample.dtype.kind in "OUS":
                zeros = np.asarray(sample).reshape((-1, *example))[:1]  # text: built on a real example
            else:
                model.build((1, *example))
                zeros = torch.zeros((1, *example), device=self.device)
        if not self.placed:
            with torch.no_grad():
                was = model.training
                model.eval()
                out = model(zeros)
                model.train(was)
            if hasattr(model, "reset_states"):
                model.reset_states()  # stateful RNNs start the first batch from zeros, not the example
            # One output: its shape; several (a list/dict): the structure of their shapes.
            self.out_shapes = map_structure(lambda t: tuple(t.shape[1:]), out)
            self.out_shape = self.out_shapes if isinstance(out, torch.Tensor) else ()
            # Mirrored variables: every replica starts from replica 0's weights.
            self.strategy.broadcast_tensors(list(model.parameters()) + list(model.buffers()))
            self.placed = True
        if need_labels and not self.ready:
            self._build_optimizer()
            self.metrics = resolve_metrics(model._metric_specs, self.loss, data.y_shape, self.out_shapes)
            self.ready = True
        if need_labels:
            self.check_labels(data, where)

    def check_labels(self, data: Any, where: str) -> None:
        """Check array labels against the loss and the model's outputs before any step runs.

        A label the loss cannot take (a class index beyond the model's outputs) would otherwise
        surface as torch's ``IndexError`` in the middle of an epoch, without saying which data.
        """
        if not (isinstance(data, ArrayAdapter) and isinstance(data.y, torch.Tensor) and self.loss is not None):
            return
        if not hasattr(self.loss, "check_targets"):  # one label array for several outputs: checked per step
            return
        n_out = self.out_shape[-1] if self.out_shape else None
        try:
            self.loss.check_targets(data.y.numpy() if data.y.device.type == "cpu" else data.y.cpu().numpy(), n_out)
        except ValueError as exc:
            raise ValueError(f"In the {where}: {exc}") from None

    def _build_optimizer(self) -> None:
        if self.comm.is_distributed and isinstance(distribution.distribution(), distribution.ModelParallel):
            # keras.distribution.ModelParallel: each replica keeps 1/N of every parameter (FSDP2);
            # backward reduce-scatters the gradients, so no DistributedOptimizer all-reduces them.
            # Replica 0's values were broadcast when the model was placed.
            mp = cast(distribution.ModelParallel, distribution.distribution())
            mp.distribute_model(self.model, op=Sum, communicator=self.comm, sync_initial_values=False)
            self.sharded = True
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.has_regularizers = bool(self.model.losses)
        if not self.params:
            # nothing to train (every layer frozen, or weightless): fit still runs the forward
            # pass and reports the loss, as Keras does
            return
        self.torch_opt = self.model.optimizer.build(self.params)
        groups = self.torch_opt.param_groups
        if (
            type(self.torch_opt).zero_grad is torch.optim.Optimizer.zero_grad
            and len(groups) == 1
            and [id(p) for p in groups[0]["params"]] == [id(p) for p in self.params]
        ):
            self._zero_list = groups[0]["params"]
        # The strategy's one synchroniser for this optimizer, on one replica too (a one-process
        # communicator, no gradient hooks) and under FSDP2 (the non-finite verdict only): every
        # update takes the same step(), and a user's train_step that calls apply_gradients()
        # reaches the same object.
        self.dist_opt = self.strategy.gradient_synchronizer(
            self.torch_opt,
            named_parameters=[(n, p) for n, p in self.model.named_parameters() if p.requires_grad],
            gradient_transform=self.model.optimizer.clip_gradients,
            nonfinite="skip" if self.loss_scale is not None else "raise",
            backward_passes_per_step=self.accumulate,
            hooks=self.comm.is_distributed,
        )

    def empty_output(self, data: Any) -> torch.Tensor:
        return torch.empty((0, *self.out_shape), device=self.device)

    def release(self) -> None:
        """Detach gradient hooks (a new compile() replaces this state)."""
        if self.torch_opt is not None:
            self.strategy.forget_synchronizer(self.torch_opt)

    # --- steps -------------------------------------------------------------------------------
    def forward(self, x: Any) -> Any:
        """The model's forward pass under the dtype policy (``torch.autocast`` when mixed)."""
        with mixed_precision.policy_scope(self.policy, self.device.type):
            # training= as Keras's fit and predict pass it: a subclass's call(x, training=...) and
            # its inner layers get the flag (the loop has already set the torch mode to match).
            return self.model(self.policy.cast_inputs(x), training=self.model.training)

    def predict_forward(self, x: Any) -> torch.Tensor:
        """``forward`` for ``predict``: bfloat16 outputs become float32 (numpy has no bfloat16)."""
        out = self.forward(x)
        return out.float() if isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16 else out

    def _loss_sum(self, batch: Batch, y_pred: torch.Tensor) -> tuple[torch.Tensor, Any]:
        if self.loss is None:
            # compile() without a loss: the model's add_loss losses are the whole loss (Keras 3)
            if not (self.has_regularizers or has_added_losses(self.model)):
                raise ValueError(
                    "fit()/evaluate() needs a loss: compile() was given none and the model added none "
                    "with add_loss(). Pass compile(loss=...), e.g. loss='sparse_categorical_crossentropy'."
                )
            rows = flatten_values(y_pred)[0].shape[0]
            return torch.zeros((), device=self.device), rows
        if self.output_trackers:
            return self._outputs_loss_sum(batch, y_pred)
        per_example = self.loss.per_example(batch.y, y_pred)
        if batch.sample_weight is not None:
            per_example = per_example * batch.sample_weight.reshape(per_example.shape)
        # A loss that ignores some positions (ignore_class) counts each example by the fraction
        # of its positions that count, so the mean is over those positions of the global batch.
        weights = getattr(self.loss, "example_weights", None)
        counted = weights(batch.y, y_pred) if weights is not None else None
        return per_example.sum(), per_example.shape[0] if counted is None else counted.sum().detach()

    def _outputs_loss_sum(self, batch: Batch, y_pred: Any) -> tuple[torch.Tensor, Any]:
        """Several outputs: ``sum_i weight_i * loss_i`` per example; each output's sum kept for its tracker."""
        total: torch.Tensor | None = None
        sums = []
        for i, part in self.loss.per_output(batch.y, y_pred):
            part = part.reshape(-1)
            if batch.sample_weight is not None:
                weight = batch.sample_weight
                if isinstance(weight, (dict, list, tuple)):
                    weight = weight[self.loss.names[i]] if isinstance(weight, dict) else weight[i]
                part = part * weight.reshape(part.shape)
            sums.append(part.sum())
            weighted = self.loss.weights[i] * part
            total = weighted if total is None else total + weighted
        self._output_sums = [s.detach() for s in sums]
        if total is None:  # from_compile refuses this; a hand-made OutputLosses could still do it
            raise ValueError("compile(loss=...) gave no output a loss: give at least one output a loss.")
        return total.sum(), total.shape[0]

    def _global_size(self, batch: Batch, local: Any) -> float:
        if batch.global_size is not None and not isinstance(local, torch.Tensor):
            return batch.global_size
        count = torch.as_tensor(local, dtype=torch.float32, device=self.device).reshape(1).clone()
        total = float(self.comm.all_reduce(count, name="fit.global_batch_size").item())
        return total if isinstance(local, torch.Tensor) and total > 0 else max(1, int(total))

    def _regularization(self) -> torch.Tensor | None:
        # weight penalties (known at set-up) and the add_loss losses of this step's forward pass;
        # a model with neither costs no walk over its layers
        if not (self.has_regularizers or has_added_losses(self.model)):
            return None
        losses = self.model.losses
        if not losses:
            return None
        return torch.stack([loss.reshape(()).to(self.device) for loss in losses]).sum()

    def train_step(self, batch: Batch) -> None:
        """One step on this replica's rows: forward, exact loss scaling, backward, synced update."""
        y_pred = self.forward(batch.x)
        loss_sum, local = self._loss_sum(batch, y_pred)
        loss = loss_sum / self._global_size(batch, local)
        reg = self._regularization()
        if reg is not None:
            # Added on every replica, so each adds its 1/N share of the one-device penalty.
            loss = loss + reg / self.comm.world_size
        if self.torch_opt is None:  # no trainable weights: nothing to update
            self.model.optimizer._counter.after_step()
            self._update_metrics(batch, y_pred, loss_sum, local, reg)
            return
        scaler = self.loss_scale
        scaled = loss if self.accumulate == 1 else loss / self.accumulate  # the mean of k batches' gradients
        if self.sharded and self.accumulate > 1:
            # FSDP2 keeps the micro-steps' gradients unsharded here and reduce-scatters their sum
            # once, on the k-th backward (as DistributedOptimizer's backward_passes_per_step does).
            self.model.set_requires_gradient_sync(self._pending + 1 >= self.accumulate)
        (scaled if scaler is None else scaler.scale_loss(scaled)).backward()
        if self.underflow is not None:
            self.underflow.check([(n, p) for n, p in self.model.named_parameters() if p.requires_grad], loss)
        counter = self.model.optimizer._counter  # Keras's iterations and learning-rate schedule
        if self.accumulate > 1:
            self._pending += 1
            if self._pending < self.accumulate:  # gradients add up in .grad; no update, no collective
                counter.after_step()
                self._update_metrics(batch, y_pred, loss_sum, local, reg)
                return
            self._pending = 0
        counter.before_step()
        sync = self.dist_opt  # built with the torch optimizer (None returned above)
        assert sync is not None and self.torch_opt is not None
        skipped = sync.skipped_steps
        sync.step()  # synchronise (reduce, or only the non-finite verdict), (unscale,) clip, update
        if scaler is not None:
            scaler.update_scale(sync.skipped_steps == skipped)  # one verdict on every replica
        counter.after_step()
        self._zero_grads(self.torch_opt)
        self._update_metrics(batch, y_pred, loss_sum, local, reg)

    def _zero_grads(self, torch_opt: torch.optim.Optimizer) -> None:
        """``zero_grad(set_to_none=True)``, without its profiler record and dynamo guard when the
        optimizer's one parameter list is the model's trainable parameters (a few us a step)."""
        groups = torch_opt.param_groups
        if self._zero_list is None or len(groups) != 1 or groups[0]["params"] is not self._zero_list:
            torch_opt.zero_grad(set_to_none=True)
            return
        for p in self.params:
            p.grad = None

    def compute_loss(self, y: Any, y_pred: Any, sample_weight: Any, regularization: bool = True) -> torch.Tensor:
        """The loss a step differentiates, scaled as the built-in step scales it.

        ``sum(per-example losses) / global batch size`` (plus ``1/N`` of the regularisation on
        each of N replicas), so gradients SUM-reduced across replicas equal one device's on the
        global batch. Inside ``fit`` the global size is the running step's; elsewhere it is this
        replica's rows times the replicas in sync (TF's ``compute_average_loss``).
        """
        if self.loss is None:
            raise ValueError(
                "compute_loss() needs a compiled loss: call model.compile(loss=...) first, or "
                "override compute_loss()/train_step() to compute the loss yourself."
            )
        loss_sum, local = self._loss_sum(Batch(None, y, sample_weight, None), y_pred)
        current = self.current
        if current is not None:
            size: Any = self._global_size(Batch(None, None, None, current.global_size), local)
        else:
            size = local * self.comm.world_size
        loss = loss_sum / size
        reg = self._regularization() if regularization else None
        if reg is not None:
            loss = loss + reg / self.comm.world_size
        tracked = loss_sum.detach() if reg is None else loss_sum.detach() + reg.detach() * local
        self._last_loss = (loss, tracked, local)
        return loss

    def eval_step(self, batch: Batch) -> None:
        """Forward only; accumulate loss and metric states."""
        y_pred = self.forward(batch.x)
        loss_sum, local = self._loss_sum(batch, y_pred)
        self._update_metrics(batch, y_pred, loss_sum, local, self._regularization())

    def _update_metrics(
        self, batch: Batch, y_pred: torch.Tensor, loss_sum: torch.Tensor, local: int, reg: torch.Tensor | None
    ) -> None:
        with torch.no_grad():
            tracked = loss_sum.detach()
            if reg is not None:
                tracked = tracked + reg.detach() * local
            self.loss_tracker.add(tracked, local)
            self.add_output_losses(local)
            self.update_compiled_metrics(batch.y, y_pred, batch.sample_weight)

    def add_output_losses(self, local: Any) -> None:
        for tracker, total in zip(self.output_trackers, self._output_sums):
            tracker.add(total, local)

    def update_compiled_metrics(self, y: Any, y_pred: Any, sample_weight: Any) -> None:
        with torch.no_grad():
            for m in self.metrics:
                m.update_state(y, y_pred, sample_weight)

    # --- metrics --------------------------------------------------------------------------------
    def trackers(self) -> list[metrics_mod.Metric]:
        """The metrics whose states the loop resets and reads: ``model.metrics``, flattened."""
        from unison.keras.trainers.compile_utils import leaf_metrics

        return leaf_metrics(self.model.metrics)

    def reset_metrics(self) -> None:
        for m in self.trackers():
            m.reset_state()

    def summed_metric_states(self, name: str = "metrics.reduce") -> torch.Tensor:
        """Loss and metric states summed over every replica (one collective)."""
        trackers = self.trackers()
        if not trackers:
            return torch.zeros(0, dtype=torch.float64)
        state = torch.cat([m.state().to(self.device, torch.float64) for m in trackers])
        return self.comm.all_reduce(state, name=name)  # cat made a fresh tensor: reduce it in place

    def read_metrics(self) -> dict[str, float]:
        """Every metric over everything all replicas saw since the last reset (one collective)."""
        state = self.summed_metric_states().cpu()
        logs: dict[str, float] = {}
        offset = 0
        for m in self.trackers():  # "loss" first, as Keras logs it
            value = m.result_from_state(state[offset : offset + m.num_state])
            # a per-class metric (F1Score(average=None)) logs its vector, as Keras 3 does; a scalar is
            # a float32 value as a Python float (TF's metrics are float32 variables)
            logs[m.name] = value if isinstance(value, np.ndarray) else float(np.float32(value))
            offset += m.num_state
        return logs

    # --- resuming from a backup (BackupAndRestore) --------------------------------------------
    def resume_point(self, initial_epoch: int, train: Any) -> tuple[int, int]:
        """Where ``fit`` starts: a restored backup's epoch and step, else ``(initial_epoch, 0)``."""
        resume, self.resume = self.resume, None
        if resume is None:
            return initial_epoch, 0
        if isinstance(train, ArrayAdapter):
            train.seed = self.seed  # the backup's shuffling seed: the same data order
        train.seek(resume.epoch_origin)
        self._epoch_metrics = resume.metrics
        return resume.epoch, resume.step

    def restore_epoch_metrics(self) -> None:
        """Continue the interrupted epoch's metric sums; replica 0 holds them, so each counts once."""
        state, self._epoch_metrics = self._epoch_metrics, None
        if state is None or self.comm.rank != 0:
            return
        trackers = self.trackers()
        if len(state) != sum(m.num_state for m in trackers):
            return  # compiled with other metrics than the backup: the epoch's logs restart
        offset = 0
        for m in trackers:
            m.load_state(state[offset : offset + m.num_state].to(self.device))  # additive state
            offset += m.num_state


@dataclass(frozen=True)
class ResumePoint:
    """Where a restored backup continues: ``step`` batches of ``epoch`` are already done.

    ``epoch_origin`` is the data position where that epoch began (with ``steps_per_epoch``,
    epochs do not start at the beginning of the data); ``metrics`` the epoch's summed states.
    """

    epoch: int
    step: int
    epoch_origin: Any  # a batch index (arrays), a pipeline position dict (tf.data), or None
    metrics: torch.Tensor | None


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
        and overrides(model, "train_step")
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


class LossTracker(metrics_mod.Mean):
    """The model's ``"loss"`` metric (Keras 3's ``model.metrics[0]``).

    ``update_state(loss)`` with the tensor :meth:`TrainingState.compute_loss` just returned
    records that step's exact sum and example count (the returned loss is scaled by the global
    batch for the gradients), so a custom ``train_step`` written as Keras documents it reports
    the same loss on N replicas as on one; any other value is averaged as ``Mean`` does.
    """

    def __init__(self, state: TrainingState) -> None:
        super().__init__("loss")
        self._owner = state

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        last = self._owner._last_loss
        if last is not None and values is last[0] and sample_weight is None:
            self.add(last[1], last[2])
            self._owner.add_output_losses(last[2])
            return
        super().update_state(values, sample_weight)


def _key(model: Any, strategy: Strategy) -> tuple[Any, ...]:
    return (id(strategy), id(model.optimizer), id(model.loss), tuple(map(id, model._metric_specs)))


_ATTRIBUTE = _STATE_ATTRIBUTE


def training_state_of(model: Any) -> TrainingState | None:
    """The model's training state, or ``None`` before its first ``fit``/``evaluate``/``predict``.

    This is the internal API between the loop and Keras's callbacks (``BackupAndRestore``
    restores the optimizer, seed and data position through it); the state lives on the model
    because Keras's callbacks only receive the model.
    """
    return getattr(model, _ATTRIBUTE, None)


def prepare(model: Any, strategy: Strategy, shuffle: bool) -> TrainingState:
    """The model's training state for its current compile() and strategy (created on demand)."""
    st = training_state_of(model)
    if st is None or st.key != _key(model, strategy):
        if st is not None:
            st.release()
        st = TrainingState(model, strategy)
        object.__setattr__(model, _ATTRIBUTE, st)  # not a torch submodule: a plain attribute
    if shuffle:
        st.share_seed()
    return st


__all__ = ["LossTracker", "ResumePoint", "TrainingState", "prepare", "training_state_of"]


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
