"""``keras.callbacks.experimental`` (Keras 2, ``tf_keras``): the deprecated path of ``BackupAndRestore``.

Example:
    >>> from unison.keras.callbacks import experimental
    >>> experimental.BackupAndRestore("/tmp/backup").save_freq
    'epoch'
"""

from __future__ import annotations

import warnings
from typing import Any

from unison.keras.callbacks import backup_and_restore

__all__ = ["BackupAndRestore"]


class BackupAndRestore(backup_and_restore.BackupAndRestore):
    """``keras.callbacks.BackupAndRestore`` under Keras 2's experimental name (warns, as Keras 2 does).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     BackupAndRestore("/tmp/backup").delete_checkpoint
        True
    """

    def __init__(self, backup_dir: Any, **kwargs: Any) -> None:
        warnings.warn(
            "`tf.keras.callbacks.experimental.BackupAndRestore` endpoint is deprecated and will be removed "
            "in a future release. Please use `tf.keras.callbacks.BackupAndRestore`.",
            stacklevel=2,
        )
        super().__init__(backup_dir=backup_dir, **kwargs)
