"""Switching a model between torch's training and inference modes on unison's behalf.

Keras layers called without ``training=`` run in inference mode (layers/base.py), unless their
user put them in a torch mode with ``model.train()``/``model.eval()``. unison's own switches (fit,
predict, a symbolic build) go through ``set_torch_mode`` so that they do not count as the user's.
"""

from __future__ import annotations

import contextvars

import torch

# Set while unison itself switches a model's torch mode (fit, predict, a symbolic build): such a
# switch is not the user's `model.train()`/`model.eval()`, after which calls follow torch's mode.
INTERNAL_MODE_SWITCH: contextvars.ContextVar[bool] = contextvars.ContextVar("unison_internal_mode", default=False)


def set_torch_mode(module: torch.nn.Module, training: bool) -> None:
    """Put ``module`` and everything in it in torch's training or inference mode, for unison's own use.

    Unlike a user's ``module.train()``/``module.eval()``, this leaves Keras's rule in place for later
    calls without ``training=``: they run in inference mode.

    Example:
        >>> from unison.keras.layers import Dropout
        >>> d = Dropout(0.5)
        >>> set_torch_mode(d, True); d.training
        True
    """
    token = INTERNAL_MODE_SWITCH.set(True)
    try:
        module.train(training)
    finally:
        INTERNAL_MODE_SWITCH.reset(token)
