"""``unison bench``: one device against several, side by side, beside DDP and TensorFlow.

The exercise that comes with the seed program, as a command: train a model on 1, 2, ...
replicas, each run a fresh set of processes started as a user starts them, and compare the
time per epoch (start-up reported apart), samples/s, speedup and scaling efficiency, peak
memory per process and final validation accuracy, with the same model, data and global batch
on ``torchrun`` + ``DistributedDataParallel`` and on TensorFlow's ``MirroredStrategy``.

Modules: :mod:`~unison.bench.cli` (options), :mod:`~unison.bench.config` (checks),
:mod:`~unison.bench.models` (the models, Keras and plain PyTorch; reusable),
:mod:`~unison.bench.data` (data sets, ``synthetic``), :mod:`~unison.bench.runner` (processes),
:mod:`~unison.bench.report` (table, JSON, CSV, plot), and the children's programs
``_worker`` (unison, DDP) and ``tf_worker`` (TensorFlow).

Example::

    unison bench --model mlp --dataset synthetic --replicas 1,2 --epochs 1 --baseline ddp
    python -m unison.bench --model cnn --dataset mnist --replicas 1,2 --baseline ddp,tensorflow
"""

from unison.bench.cli import add_arguments, main, run

__all__ = ["add_arguments", "main", "run"]
