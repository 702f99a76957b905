"""One ``fit``'s pass over its training data: the data, its shuffling seed, its position and
where a restored backup resumes (Keras 3's ``trainers/epoch_iterator.py``).

The model keeps the running fit's iterator (``Trainer.fit_state_dict`` records its seed and
position; ``load_fit_state_dict`` sets the resume point), so a backup restores the exact data
order and step.

Example::

    it = EpochIterator(model, x, y, None, batch_size=32, shuffle=True)
    epoch, step = it.start(initial_epoch=0)
    for batch in it.data.epoch(epoch, None, skip=step):
        ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from unison.keras.trainers.data_adapters import ArrayAdapter, make_adapter


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


def share_seed(comm: Any) -> int:
    """Replica 0 draws a shuffling seed (from torch's RNG, so manual_seed governs it); all get it."""
    local = int(torch.randint(0, 2**31 - 1, (1,)).item())
    return int(comm.broadcast_object(local, name="fit.shuffle_seed"))


def adapter(model: Any, x: Any, y: Any, sample_weight: Any, batch_size: int, shuffle: bool, seed: int = 0) -> Any:
    """This replica's view of ``x, y`` (global batches split across the model's replicas)."""
    strategy = model.distribute_strategy
    comm = strategy.extended.communicator
    placement = getattr(strategy, "_input_placement", None)
    return make_adapter(
        x,
        y,
        sample_weight,
        batch_size,
        shuffle,
        seed,
        comm.world_size,
        comm.rank,
        strategy.extended.device,
        placement() if placement is not None else None,
    )


class EpochIterator:
    """The training data of one ``fit``, with its seed, data position and resume point."""

    def __init__(self, data: Any, seed: int) -> None:
        self.data = data
        self.seed = seed
        self.resume: ResumePoint | None = None  # set when a backup was restored (load_fit_state_dict)
        self.epoch_metrics: torch.Tensor | None = None  # the interrupted epoch's summed metric states

    @property
    def position(self) -> Any:
        """Where the next epoch starts reading (a backup taken at an epoch's end records it)."""
        return self.data.position

    @property
    def epoch_origin(self) -> Any:
        """Where the running epoch began reading (a backup taken mid-epoch records it)."""
        return self.data.epoch_origin

    def resume_at(self, seed: int, epoch: int, step: int, epoch_origin: Any, metrics: torch.Tensor | None) -> None:
        """Continue from a restored backup: ``step`` batches of ``epoch`` are already done."""
        self.seed = seed
        self.resume = ResumePoint(epoch, step, epoch_origin, metrics)

    def start(self, initial_epoch: int) -> tuple[int, int]:
        """Where ``fit`` starts: a restored backup's epoch and step, else ``(initial_epoch, 0)``."""
        resume, self.resume = self.resume, None
        if resume is None:
            return initial_epoch, 0
        if isinstance(self.data, ArrayAdapter):
            self.data.seed = self.seed  # the backup's shuffling seed: the same data order
        self.data.seek(resume.epoch_origin)
        self.epoch_metrics = resume.metrics
        return resume.epoch, resume.step


class NoPosition:
    """Steps read from per-worker datasets (parameter-server workers) have no position a backup
    could record; a restored backup still gives its epoch and step."""

    position = None
    epoch_origin = None

    def __init__(self) -> None:
        self.seed = 0
        self.resume: ResumePoint | None = None
        self.epoch_metrics: torch.Tensor | None = None

    resume_at = EpochIterator.resume_at

    def start(self, initial_epoch: int) -> tuple[int, int]:
        resume, self.resume = self.resume, None
        return (resume.epoch, resume.step) if resume is not None else (initial_epoch, 0)


__all__ = ["EpochIterator", "NoPosition", "ResumePoint", "adapter", "share_seed"]
