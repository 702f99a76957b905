"""What ``compile()`` attaches that a custom ``train_step`` uses: the compiled loss and metrics.

Keras 2 programs call ``self.compiled_loss(y, y_pred)`` and ``self.compiled_metrics.update_state(
y, y_pred)``; Keras 3 programs call ``self.compute_loss(...)`` and iterate ``self.metrics``,
whose second entry is the container of the compiled metrics (named ``compile_metrics``). Both
reach the model's training state, so the loop reads (and reduces across replicas) the same
metric states whichever style the step was written in.

Example:
    >>> from unison.keras.metrics import Mean
    >>> [m.name for m in leaf_metrics([Mean("loss"), Mean("mae")])]
    ['loss', 'mae']
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

import torch

from unison.keras import losses as losses_mod
from unison.keras import metrics as metrics_mod
from unison.keras.metrics import Mean, Metric


class CompileMetrics:
    """The metrics given to ``compile(metrics=...)``, as one entry of ``model.metrics``.

    ``update_state(y, y_pred, sample_weight)`` updates each; ``result()`` is a dict of their
    values (Keras flattens it into the logs). Empty until the first step resolves the metrics
    against the data's shapes (as in Keras, where they are built on the first batch).
    """

    name = "compile_metrics"

    def __init__(self, model: Any) -> None:
        self._model = model  # None before fit/evaluate set the compiled metrics up

    @property
    def metrics(self) -> list[Metric]:
        """Each output's loss tracker (several outputs), then the compiled metrics."""
        model = self._model
        return [*model._output_trackers, *model._compiled_metric_list] if model is not None else []

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self._model is not None:
            self._model._update_compiled_metrics(y_true, y_pred, sample_weight)

    def result(self) -> dict[str, torch.Tensor]:
        return {m.name: m.result() for m in self.metrics}

    def reset_state(self) -> None:
        for m in self.metrics:
            m.reset_state()

    reset_states = reset_state

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)


class CompiledLoss:
    """Keras 2's ``model.compiled_loss(y_true, y_pred, sample_weight, regularization_losses)``.

    Returns the loss scaled as the built-in step scales it (by the global batch) and records it
    in the ``"loss"`` metric, as Keras 2's loss container does.
    """

    def __init__(self, model: Any) -> None:
        self._model = model

    def __call__(
        self, y_true: Any, y_pred: Any, sample_weight: Any = None, regularization_losses: Any = None
    ) -> torch.Tensor:
        model = self._model
        regularization = regularization_losses is not None
        loss = model._scaled_loss("compiled_loss", y_true, y_pred, sample_weight, regularization=regularization)
        model._loss_tracker.update_state(loss)
        return loss


def leaf_metrics(metrics: Iterable[Any]) -> list[Metric]:
    """``model.metrics`` with the compiled-metrics container replaced by its metrics."""
    leaves: list[Metric] = []
    for m in metrics:
        if isinstance(m, CompileMetrics):
            leaves.extend(m.metrics)
        elif isinstance(m, Metric):
            leaves.append(m)
        else:
            raise TypeError(
                f"model.metrics must hold keras.metrics.Metric objects. Received: {m!r} of type "
                f"{type(m).__name__}. Return only metrics from your `metrics` property."
            )
    return leaves


def flat_logs(values: Any, prefix: str = "") -> dict[str, Any]:
    """A step's returned dict with nested dicts (``compile_metrics``) flattened, as Keras logs it."""
    out: dict[str, Any] = {}
    for k, v in (values or {}).items():
        if isinstance(v, dict):
            out.update(flat_logs(v))
        else:
            out[f"{prefix}{k}"] = v
    return out


def output_names(model: Any) -> list[str] | None:
    """The names of a multi-output model's outputs (dict keys, or the producing layers' names)."""
    struct = getattr(model, "_output_struct", None)
    if isinstance(struct, dict):
        return list(struct)
    if not isinstance(struct, (list, tuple)):
        return None
    names = []
    for i, kt in enumerate(struct):
        node = getattr(kt, "_node", None)
        names.append(str(getattr(getattr(node, "op", None), "name", None) or f"output_{i + 1}"))
    return names


def _select(value: Any, index: int, name: str) -> Any:
    """Output ``index`` (named ``name``) of ``y_true``/``y_pred``/``sample_weight`` (lists or dicts)."""
    if isinstance(value, dict):
        if name not in value:
            raise ValueError(
                f"The data has no entry for output {name!r}: the dict passed has keys "
                f"{sorted(value)}. Key targets by the model's output names."
            )
        return value[name]
    if isinstance(value, (list, tuple)):
        return value[index]
    return value  # one array for every output (a shared sample_weight)


def _per_output(spec: Any, names: list[str], what: str) -> list[Any]:
    """A compile() argument given per output (a list in output order or a dict by name)."""
    if isinstance(spec, dict):
        unknown = sorted(set(spec) - set(names))
        if unknown:
            raise ValueError(
                f"compile({what}=...) names outputs {unknown} that the model does not have. The "
                f"model's outputs are {names}. Received: {what}={spec!r:.200}"
            )
        return [spec.get(n) for n in names]
    if isinstance(spec, (list, tuple)):
        if len(spec) != len(names):
            raise ValueError(
                f"compile({what}=...) got a list of {len(spec)} entries for a model with "
                f"{len(names)} outputs {names}: give one per output, or a dict keyed by output "
                f"name. Received: {what}={spec!r:.200}"
            )
        return list(spec)
    return [spec] * len(names)  # one loss (or weight) for every output


class OutputLosses:
    """``compile(loss=[...] or {...}, loss_weights=...)`` over a model's outputs.

    The model's loss is ``sum_i weight_i * loss_i`` per example, so the built-in step scales it
    by the global batch as it does one loss; ``<output>_loss`` metrics track each part.
    """

    name = "loss"

    def __init__(self, names: list[str], losses: list[Any], weights: list[float]) -> None:
        self.names, self.losses, self.weights = names, losses, weights

    @classmethod
    def from_compile(cls, model: Any, loss: Any, loss_weights: Any) -> OutputLosses | Any:
        names = output_names(model)
        if names is None or len(names) < 2:
            if isinstance(loss, (list, tuple)) and len(loss) == 1:
                return losses_mod.resolve(loss[0])
            if isinstance(loss, (list, tuple, dict)):
                raise ValueError(
                    f"compile(loss=...) got a {type(loss).__name__} of losses, but the model has one "
                    f"output. Pass one loss. Received: loss={loss!r:.200}"
                )
            return losses_mod.resolve(loss)
        resolved = [losses_mod.resolve(item) for item in _per_output(loss, names, "loss")]
        if all(item is None for item in resolved):
            raise ValueError(
                f"compile(loss=...) gives none of the outputs {names} a loss. Received: loss={loss!r:.200}"
            )
        weights = [1.0 if w is None else float(w) for w in _per_output(loss_weights, names, "loss_weights")]
        return cls(names, resolved, weights)

    def per_output(self, y_true: Any, y_pred: Any) -> list[tuple[int, torch.Tensor]]:
        """``(output index, per-example loss)`` of every output that has a loss."""
        parts = []
        for i, (name, loss) in enumerate(zip(self.names, self.losses)):
            if loss is None:
                continue
            parts.append((i, loss.per_example(_select(y_true, i, name), _select(y_pred, i, name))))
        return parts

    def per_example(self, y_true: Any, y_pred: Any) -> torch.Tensor:
        parts = self.per_output(y_true, y_pred)
        return torch.stack([self.weights[i] * part.reshape(-1) for i, part in parts]).sum(0)

    def trackers(self) -> list[Mean]:
        named = [Mean(f"{name}_loss") for name, loss in zip(self.names, self.losses) if loss is not None]
        # Keras 3 logs `<output>_loss` only beside other output losses: with one loss (keras.io's
        # miniature GPT compiles `loss=[loss_fn, None]`) the total `loss` is that loss
        return named if len(named) > 1 else []


class OutputMetric(Metric):
    """A compiled metric of one output of a multi-output model, logged as ``<output>_<metric>``."""

    def __init__(self, inner: Metric, index: int, output: str) -> None:
        self.inner, self.index, self.output = inner, index, output
        self.name = f"{output}_{inner.name}"
        self._strategy = inner._strategy

    @property
    def num_state(self) -> int:
        """The inner metric's: R2Score and F1Score size their state on the first data they see."""
        return int(self.inner.num_state)

    @num_state.setter
    def num_state(self, value: int) -> None:
        self.inner.num_state = value

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        self.inner.update_state(
            _select(y_true, self.index, self.output),
            _select(y_pred, self.index, self.output),
            _select(sample_weight, self.index, self.output),
        )

    def result_from_state(self, state: torch.Tensor) -> float:
        return self.inner.result_from_state(state)

    def state(self) -> torch.Tensor:
        return self.inner.state()

    def load_state(self, state: torch.Tensor) -> None:
        self.inner.load_state(state)

    def reset_state(self) -> None:
        self.inner.reset_state()


def resolve_metrics(specs: list[Any], loss: Any, y_shape: Any, out_shapes: Any) -> list[Metric]:
    """The compiled metrics, resolved against the labels' and outputs' shapes (Keras's ``"accuracy"``)."""
    if not isinstance(loss, OutputLosses):
        if isinstance(specs, dict):
            raise ValueError(
                f"compile(metrics=dict) needs a model with several outputs; this one has one. Pass a "
                f"list. Received: metrics={specs!r:.200}"
            )
        return [metrics_mod.get(m, (None, *y_shape), (None, *out_shapes), loss) for m in specs]
    names = loss.names
    if isinstance(specs, dict) or (specs and all(isinstance(m, (list, tuple)) or m is None for m in specs)):
        per = _per_output(specs, names, "metrics")  # one list per output
    else:
        per = [specs] * len(names)  # a flat list: every metric for every output (Keras 2)
    # one label array for a model with several outputs (Keras 3: it is the target of every output
    # that has a loss, as keras.io's miniature GPT compiles `loss=[loss_fn, None]`): one shape for all
    one_label = isinstance(y_shape, tuple) and all(isinstance(d, int) for d in y_shape)
    resolved: list[Metric] = []
    for i, name in enumerate(names):
        items = per[i] if isinstance(per[i], (list, tuple)) else ([] if per[i] is None else [per[i]])
        y_i, out_i = y_shape if one_label else _select(y_shape, i, name), _select(out_shapes, i, name)
        for m in items:
            if isinstance(m, Metric) and per[i] is specs:
                m = copy.deepcopy(m)  # one instance given for every output: each output gets its own
            metric = metrics_mod.get(
                m, (None, *y_i) if isinstance(y_i, tuple) else None, (None, *out_i), loss.losses[i]
            )
            resolved.append(OutputMetric(metric, i, name))
    return resolved


__all__ = [
    "CompileMetrics",
    "CompiledLoss",
    "OutputLosses",
    "OutputMetric",
    "flat_logs",
    "leaf_metrics",
    "output_names",
    "resolve_metrics",
]


# Keras 2 (tf.keras) compile() keywords TF 2 programs still pass, that change nothing in TF 2:
# `experimental_run_tf_function` and `cloning` (always on / unused), `sample_weight_mode` (the
# v2 loop reads the weights' shape instead), `experimental_steps_per_execution` and
# `pss_evaluation_shards` (performance knobs), `auto_scale_loss` (Keras 3, mixed precision).
_IGNORED_COMPILE_KWARGS = frozenset(
    {
        "experimental_run_tf_function",
        "cloning",
        "sample_weight_mode",
        "experimental_steps_per_execution",
        "pss_evaluation_shards",
        "auto_scale_loss",
    }
)


def check_legacy_compile_kwargs(kwargs: dict[str, Any]) -> None:
    """Accept Keras 2's no-op compile() keywords; refuse those whose meaning cannot be honoured, as TF 2 does."""
    if kwargs.pop("distribute", None) is not None:
        raise ValueError(
            "compile(distribute=...) is not available in TF 2: create and compile the model "
            "inside `with strategy.scope():` instead."
        )
    if kwargs.pop("target_tensors", None) is not None:
        raise ValueError(
            "compile(target_tensors=...) is not supported when executing eagerly (TF 2): pass "
            "the labels to fit(x, y) instead."
        )
    unknown = sorted(set(kwargs) - _IGNORED_COMPILE_KWARGS)
    if unknown:
        raise TypeError(
            f"compile() got unexpected keyword arguments: {unknown}. Expected optimizer, loss, "
            "metrics, loss_weights, weighted_metrics, run_eagerly, steps_per_execution, jit_compile."
        )
