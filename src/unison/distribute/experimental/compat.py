"""TF's older ``tf.distribute.experimental`` spellings and the public ``PreemptionWatcher``.

* ``MultiWorkerMirroredStrategy(communication=..., cluster_resolver=None)``: TF 2.0-2.3's
  signature, still in many programs; it is :class:`tf.distribute.MultiWorkerMirroredStrategy`
  with ``CommunicationOptions(implementation=communication)``.
* ``CollectiveHints(bytes_per_pack, timeout_seconds)``: deprecated in TF, where it builds a
  ``CommunicationOptions``; so does it here.
* ``PreemptionWatcher()``: remembers this worker's termination notice (``SIGTERM``) in
  ``preemption_message``. TF watches its coordination service for the notice, which only TF's
  internal TPU environment sends; elsewhere TF's watcher never sees one.
"""

from __future__ import annotations

from typing import Any

from unison.distribute.multi_worker import CommunicationImplementation, CommunicationOptions
from unison.distribute.multi_worker import MultiWorkerMirroredStrategy as _MultiWorkerMirroredStrategy
from unison.distribute.preemption import PreemptionWatcher as _Watcher
from unison.distribute.preemption import TerminationConfig


class MultiWorkerMirroredStrategy(_MultiWorkerMirroredStrategy):
    """TF's ``tf.distribute.experimental.MultiWorkerMirroredStrategy`` (deprecated spelling).

    Args:
        communication: a ``CommunicationImplementation`` (``AUTO``, ``RING``, ``NCCL``).
        cluster_resolver: as for ``tf.distribute.MultiWorkerMirroredStrategy``.
    """

    def __init__(
        self,
        communication: CommunicationImplementation | str = CommunicationImplementation.AUTO,
        cluster_resolver: Any = None,
    ) -> None:
        super().__init__(
            cluster_resolver=cluster_resolver,
            communication_options=CommunicationOptions(implementation=communication),
        )


def CollectiveHints(bytes_per_pack: int = 0, timeout_seconds: float | None = None) -> CommunicationOptions:  # noqa: N802 - TF's name
    """``tf.distribute.experimental.CollectiveHints``: a ``CommunicationOptions`` (TF builds one too).

    Example:
        >>> CollectiveHints(bytes_per_pack=1024).bytes_per_pack
        1024
    """
    return CommunicationOptions(bytes_per_pack=bytes_per_pack, timeout_seconds=timeout_seconds)


class PreemptionWatcher:
    """Watch for this worker's preemption notice and keep it (TF's ``PreemptionWatcher``).

    ``preemption_message`` is ``None`` until the process receives ``SIGTERM`` (the notice cloud
    schedulers and Kubernetes send), then a message saying so. Build it in the main thread.

    Example:
        >>> watcher = PreemptionWatcher()
        >>> watcher.preemption_message is None
        True
        >>> watcher.close()
    """

    def __init__(self) -> None:
        self._watcher = _Watcher(TerminationConfig())

    @property
    def preemption_message(self) -> str | None:
        """``None``, or the notice once this worker was told it will be preempted."""
        if self._watcher.notice_at is None:
            return None
        return "Preemption notice received: SIGTERM (this worker will be stopped)."

    def close(self) -> None:
        """Stop watching (the previous ``SIGTERM`` handler is back)."""
        self._watcher.close()


__all__ = ["CollectiveHints", "MultiWorkerMirroredStrategy", "PreemptionWatcher"]
