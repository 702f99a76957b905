"""TF's TPU-only names: they exist (for ``isinstance`` checks and TF's probe-and-fall-back idiom)
and raise :class:`~unison.errors.TPUNotSupportedError` when used, saying what to use instead.

unison runs on PyTorch's CPU and CUDA devices; torch reaches TPUs only through ``torch_xla``, a
separate runtime unison does not drive. TF raises ``ValueError`` when it finds no TPU, and so does
unison (the error is a ``ValueError``), so the probe programs commonly carry still falls back:

Example:
    >>> import unison as tf
    >>> try:
    ...     resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
    ...     strategy = tf.distribute.TPUStrategy(resolver)
    ... except ValueError:
    ...     strategy = tf.distribute.get_strategy()
    >>> strategy.num_replicas_in_sync
    1
    >>> isinstance(strategy, tf.distribute.TPUStrategy)
    False
"""

from __future__ import annotations

from typing import Any, NoReturn

from unison.cluster import ClusterResolver
from unison.distribute.strategy import Strategy
from unison.errors import TPUNotSupportedError

__all__ = ["TPUClusterResolver", "TPUStrategy", "TPUStrategyV1", "tpu_not_supported"]

_INSTEAD = {
    "strategy": "On GPUs or CPUs use tf.distribute.MirroredStrategy (one host) or "
    "tf.distribute.MultiWorkerMirroredStrategy (several hosts); to train PyTorch models on TPUs use "
    "torch_xla (PyTorch/XLA) directly.",
    "resolver": "Resolve GPU/CPU clusters with tf.distribute.cluster_resolver.TFConfigClusterResolver, "
    "SlurmClusterResolver, KubernetesClusterResolver or SimpleClusterResolver, and train with "
    "MirroredStrategy or MultiWorkerMirroredStrategy; for TPUs from PyTorch use torch_xla (PyTorch/XLA).",
}


def tpu_not_supported(name: str, instead: str = "strategy") -> NoReturn:
    """Raise the error for a TPU-only ``name`` (``"tf.distribute.TPUStrategy"``).

    Example:
        >>> tpu_not_supported("tf.distribute.TPUStrategy")
        Traceback (most recent call last):
        ...
        unison.errors.TPUNotSupportedError: tf.distribute.TPUStrategy: TPUs are not supported on unison's PyTorch backend...
    """
    raise TPUNotSupportedError(
        f"{name}: TPUs are not supported on unison's PyTorch backend (it runs on torch's CPU and CUDA "
        f"devices). {_INSTEAD[instead]}"
    )


class TPUStrategy(Strategy):
    """``tf.distribute.TPUStrategy``: a class for ``isinstance`` checks; making one raises.

    Raises:
        TPUNotSupportedError: always (a ``ValueError``, as TF's when no TPU is found).

    Example:
        >>> import unison as tf
        >>> tf.distribute.TPUStrategy()
        Traceback (most recent call last):
        ...
        unison.errors.TPUNotSupportedError: tf.distribute.TPUStrategy: TPUs are not supported on unison's PyTorch backend...
    """

    _tpu_only = True  # the coverage report counts such names apart (tests/conformance/api_coverage.py)
    _public_name = "tf.distribute.TPUStrategy"

    def __init__(
        self,
        tpu_cluster_resolver: Any = None,
        experimental_device_assignment: Any = None,
        experimental_spmd_xla_partitioning: bool = False,
    ) -> None:
        tpu_not_supported(self._public_name)


class TPUStrategyV1(TPUStrategy):
    """``tf.distribute.experimental.TPUStrategy`` (TF's older spelling); making one raises likewise.

    Example:
        >>> import unison as tf
        >>> issubclass(tf.distribute.experimental.TPUStrategy, tf.distribute.Strategy)
        True
    """

    _public_name = "tf.distribute.experimental.TPUStrategy"

    def __init__(self, tpu_cluster_resolver: Any = None, device_assignment: Any = None) -> None:
        tpu_not_supported(self._public_name)


class TPUClusterResolver(ClusterResolver):
    """``tf.distribute.cluster_resolver.TPUClusterResolver``: making or connecting one raises.

    Raises:
        TPUNotSupportedError: always (a ``ValueError``, as TF's "Please provide a TPU Name").

    Example:
        >>> import unison as tf
        >>> tf.distribute.cluster_resolver.TPUClusterResolver.connect()
        Traceback (most recent call last):
        ...
        unison.errors.TPUNotSupportedError: tf.distribute.cluster_resolver.TPUClusterResolver.connect: TPUs are not supported...
    """

    _tpu_only = True

    def __init__(
        self,
        tpu: Any = None,
        zone: str | None = None,
        project: str | None = None,
        job_name: str = "worker",
        coordinator_name: str | None = None,
        coordinator_address: str | None = None,
        credentials: str = "default",
        service: Any = None,
        discovery_url: str | None = None,
    ) -> None:
        tpu_not_supported("tf.distribute.cluster_resolver.TPUClusterResolver", "resolver")

    @staticmethod
    def connect(tpu: Any = None, zone: str | None = None, project: str | None = None) -> NoReturn:
        """TF's one-call "resolve, connect, initialise the TPU system": raises here."""
        tpu_not_supported("tf.distribute.cluster_resolver.TPUClusterResolver.connect", "resolver")
