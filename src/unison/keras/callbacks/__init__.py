"""Keras 3-compatible callbacks: ``unison.keras.callbacks``.

Same names, arguments and behaviour as ``keras.callbacks``, plus the multi-replica rule
of unison: every replica runs the callbacks with identical, already-reduced logs (so
decisions agree), and only the chief replica prints or writes files.

Callbacks depend on ``self.model`` and its public methods only (``BackupAndRestore`` saves and
restores a running fit through ``model.fit_state_dict()`` / ``model.load_fit_state_dict()``):
they import no trainer, model or saving module.

Example:
    >>> from unison.keras import callbacks
    >>> cbs = callbacks.CallbackList([callbacks.EarlyStopping(patience=2)], add_history=True)
    >>> cbs.needs_batch_logs()
    False
"""

from __future__ import annotations

from unison.keras.callbacks import experimental
from unison.keras.callbacks.backup_and_restore import BackupAndRestore
from unison.keras.callbacks.base_logger import BaseLogger
from unison.keras.callbacks.callback import Callback
from unison.keras.callbacks.callback_list import CallbackList
from unison.keras.callbacks.csv_logger import CSVLogger
from unison.keras.callbacks.early_stopping import EarlyStopping
from unison.keras.callbacks.history import History
from unison.keras.callbacks.lambda_callback import LambdaCallback
from unison.keras.callbacks.learning_rate import (
    LearningRateScheduler,
    ReduceLROnPlateau,
)
from unison.keras.callbacks.model_checkpoint import ModelCheckpoint
from unison.keras.callbacks.progbar_logger import ProgbarLogger
from unison.keras.callbacks.remote_monitor import RemoteMonitor
from unison.keras.callbacks.sidecar_export import SidecarEvaluatorModelExport
from unison.keras.callbacks.swap_ema_weights import SwapEMAWeights
from unison.keras.callbacks.tensorboard import TensorBoard
from unison.keras.callbacks.terminate_on_nan import TerminateOnNaN

__all__ = [
    "BackupAndRestore",
    "BaseLogger",
    "experimental",
    "CSVLogger",
    "Callback",
    "CallbackList",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "ProgbarLogger",
    "ReduceLROnPlateau",
    "RemoteMonitor",
    "SidecarEvaluatorModelExport",
    "SwapEMAWeights",
    "TensorBoard",
    "TerminateOnNaN",
]
