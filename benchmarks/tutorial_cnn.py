"""TF's custom-training tutorial CNN written in plain PyTorch: the baseline model of several benchmarks.

Conv2D(32, 3, relu) -> MaxPooling2D -> Conv2D(64, 3, relu) -> MaxPooling2D -> Flatten ->
Dense(64, relu) -> Dense(10), on 28x28x1 images (NCHW here), with PyTorch's default
initialisation. ``benchmarks/overlap.py``, ``custom_loop_programs/plain_torch_loop.py`` and
``cnn_step_programs/cnn_step.py`` import it (the programs add this folder to ``sys.path``).

Example:
    >>> import torch
    >>> tutorial_cnn()(torch.zeros(2, 1, 28, 28)).shape
    torch.Size([2, 10])
"""

from torch import nn


def tutorial_cnn() -> nn.Module:
    """A fresh, randomly initialised copy of the tutorial's CNN."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 5 * 5, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )
