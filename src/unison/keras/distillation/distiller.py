"""Keras 3's ``keras.distillation.Distiller``: a ``Model`` that trains a student against a frozen teacher.

The loss of a batch is ``student_loss_weight * student_loss + (1 - student_loss_weight) *
sum(weight_i * distillation_loss_i)``: ``student_loss`` the compiled loss of the labels (the
mean over the batch), each distillation loss a ``DistillationLoss`` comparing the teacher's
outputs (or a named layer's) with the student's. ``fit`` trains the student only (the teacher is
frozen); ``predict`` and ``call`` are the student's.

Under a strategy each replica's loss is its rows' mean, scaled by ``rows / global batch`` before
``backward()``, so the SUM-reduced gradient is the one device's on the global batch.

Example:
    >>> from unison import keras
    >>> from unison.keras.distillation import LogitsDistillation
    >>> teacher = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> student = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> d = Distiller(teacher, student, LogitsDistillation(), student_loss_weight=0.3)
    >>> d.student_loss_weight, teacher.trainable
    (0.3, False)
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras import metrics as metrics_mod
from unison.keras import tree
from unison.keras.distillation.losses import DistillationLoss, _loss_function
from unison.keras.models.model import Model
from unison.keras.utils.data_adapter_utils import unpack_x_y_sample_weight

__all__ = ["Distiller"]


class Distiller(Model):
    """Keras ``Distiller(teacher, student, distillation_losses, distillation_loss_weights=None,
    student_loss_weight=0.5, name="distiller")``.

    Raises:
        ValueError: a teacher or student that is not a ``keras.Model``; input/output shapes that
            differ; ``student_loss_weight`` outside ``[0, 1]``; no distillation loss; as many
            weights as losses missing; a loss that cannot compare the two models.
    """

    # plain attributes (not torch submodules), set with object.__setattr__
    distillation_losses: list[DistillationLoss]
    _trackers: list[Any]
    _student_loss: Any

    def __init__(
        self,
        teacher: Any,
        student: Any,
        distillation_losses: Any,
        distillation_loss_weights: Any = None,
        student_loss_weight: float = 0.5,
        name: str = "distiller",
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        for role, model in (("Teacher", teacher), ("Student", student)):
            if not isinstance(model, Model):
                raise ValueError(f"{role} must be a keras.Model, got {type(model)}")
        _check_shapes(teacher, student)
        self.teacher = teacher
        self.student = student
        if not isinstance(student_loss_weight, (int, float)) or isinstance(student_loss_weight, bool):
            raise ValueError(f"student_loss_weight must be a number, got {type(student_loss_weight)}")
        if not 0.0 <= student_loss_weight <= 1.0:
            raise ValueError(f"student_loss_weight must be between 0.0 and 1.0, got {student_loss_weight}")
        self.student_loss_weight = student_loss_weight
        if distillation_losses is None:
            raise ValueError(
                "'distillation_losses' cannot be `None`. Provide a distillation loss (e.g., LogitsDistillation "
                "or FeatureDistillation) or a list of distillation losses."
            )
        if not isinstance(distillation_losses, (list, tuple)):
            losses, weights = [distillation_losses], [1.0]
        else:
            losses = list(distillation_losses)
            weights = [1.0] * len(losses) if distillation_loss_weights is None else list(distillation_loss_weights)
            if len(weights) != len(losses):
                raise ValueError(
                    f"Number of distillation_loss_weights ({len(weights)}) must match number of "
                    f"distillation_losses ({len(losses)})"
                )
        for loss in losses:
            if not isinstance(loss, DistillationLoss):
                raise ValueError(f"distillation_losses must be DistillationLoss instances. Received: {loss!r}")
            loss.validate_model_compatibility(teacher, student)
        object.__setattr__(self, "distillation_losses", losses)
        self.distillation_loss_weights = weights
        self.teacher.trainable = False
        object.__setattr__(self, "_student_loss", None)
        object.__setattr__(
            self,
            "_trackers",
            [metrics_mod.Mean(name=n) for n in ("student_loss", "distillation_loss", "total_loss")],
        )

    def call(self, inputs: Any, training: bool | None = None, **kwargs: Any) -> Any:
        return self.student(inputs, training=training, **kwargs)

    def compile(  # type: ignore[override]  # Keras's Distiller.compile takes these three (and **kwargs)
        self, optimizer: Any = "adam", loss: Any = None, metrics: Any = None, **kwargs: Any
    ) -> None:
        """Keras's ``Distiller.compile``: ``loss`` is the student's loss on the labels (required).

        Raises:
            ValueError: ``loss=None``; ``metrics`` not a list or tuple.
        """
        if loss is None:
            raise ValueError("'loss' cannot be `None`.")
        if metrics is not None and not isinstance(metrics, (list, tuple)):
            raise ValueError(f"metrics must be a list or tuple, got {type(metrics)}")
        object.__setattr__(self, "_student_loss", tree.map_structure(_loss_function, loss))
        super().compile(optimizer=optimizer, loss=None, metrics=metrics, **kwargs)

    def _features(self, model: Any, x: Any, name: str | None, training: bool, y_pred: Any) -> Any:
        if name is None:
            return y_pred if y_pred is not None else model(x, training=training)
        layer_model = Model(inputs=model.inputs, outputs=model.get_layer(name=name).output)
        return layer_model(x, training=training)

    def compute_loss(
        self, x: Any = None, y: Any = None, y_pred: Any = None, sample_weight: Any = None, training: bool = True
    ) -> torch.Tensor:
        """The weighted sum of the student's loss and the distillation losses (a scalar: batch means)."""
        if y_pred is None:
            y_pred = self(x, training=training)
        student_loss: Any = torch.zeros(())
        if self.student_loss_weight > 0.0 and y is not None:
            if self._student_loss is None:
                raise ValueError("Distiller.compute_loss() needs compile(loss=...) first.")
            values = tree.flatten(tree.map_structure(lambda fn, t, p: fn(t, p), self._student_loss, y, y_pred))
            student_loss = torch.stack([v.mean() for v in values]).sum() if len(values) > 1 else values[0].mean()
        distillation: Any = torch.zeros(())
        if self.student_loss_weight < 1.0:
            with torch.no_grad():
                teacher_final = self.teacher(x, training=False)
            for loss, weight in zip(self.distillation_losses, self.distillation_loss_weights, strict=True):
                t_name = getattr(loss, "teacher_layer_name", None)
                if t_name is not None:
                    with torch.no_grad():
                        teacher_out = self._features(self.teacher, x, t_name, False, None)
                    student_out = self._features(self.student, x, getattr(loss, "student_layer_name", None), True, None)
                else:
                    teacher_out, student_out = teacher_final, y_pred
                loss.validate_outputs(teacher_out, student_out)
                value = loss.compute_loss(teacher_out, student_out)
                if isinstance(value, torch.Tensor) and value.dim() > 0:
                    raise ValueError(
                        f"Distillation loss {type(loss).__name__} returned a non-scalar loss with shape "
                        f"{tuple(value.shape)}. The compute_loss method must return a scalar tensor."
                    )
                distillation = distillation + weight * value
        w = self.student_loss_weight
        total = w * student_loss + (1.0 - w) * distillation
        with torch.no_grad():
            for tracker, value in zip(self._trackers, (student_loss, distillation, total), strict=True):
                tracker.update_state(value.detach() if isinstance(value, torch.Tensor) else value)
        return total

    def train_step(self, data: Any) -> dict[str, Any]:
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=True)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        rows = int(tree.flatten(x)[0].shape[0])
        global_rows = self._running_global_size() or rows
        (loss * (rows / global_rows)).backward()  # a replica's share of the global batch's mean
        weights = list(self.trainable_weights)
        if self.optimizer is None:
            raise ValueError("Distiller.train_step() needs compile(optimizer=..., loss=...) first.")
        self.optimizer.apply([w.grad for w in weights], weights)
        tracker = self.__dict__.get("_loss_tracker")
        if tracker is not None:  # Keras's "loss": the total, weighted by the rows of each batch
            tracker.update_state(loss.detach(), sample_weight=torch.tensor(float(rows)))
        logs = {t.name: t.result() for t in self._trackers}
        if tracker is not None:
            logs["loss"] = tracker.result()
        return logs

    def reset_metrics(self) -> None:
        for tracker in self._trackers:
            tracker.reset_state()
        super().reset_metrics()


def _check_shapes(teacher: Any, student: Any) -> None:
    """Keras's checks: the two models' symbolic inputs and outputs have compatible shapes and dtypes."""
    for what in ("inputs", "outputs"):
        a, b = getattr(teacher, what, None), getattr(student, what, None)
        if a is None or b is None:
            continue
        for ta, sb in zip(tree.flatten(a), tree.flatten(b), strict=False):
            sa, ss = tuple(ta.shape), tuple(sb.shape)
            context = what[:-1]
            if len(sa) != len(ss) or any(p is not None and q is not None and p != q for p, q in zip(sa, ss)):
                raise ValueError(
                    f"Teacher and student {context} shapes are incompatible. Teacher: {sa}, Student: {ss}. "
                    "All dimensions must match."
                )
