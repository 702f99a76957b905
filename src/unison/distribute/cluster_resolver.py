"""``tf.distribute.cluster_resolver``: who is who in a multi-worker job.

Example:
    >>> import unison as tf
    >>> spec = tf.distribute.cluster_resolver.ClusterSpec({"worker": ["127.0.0.1:2222"]})
    >>> r = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker", task_id=0)
    >>> r.cluster_spec().num_tasks("worker")
    1
"""

from typing import Any

from unison.cluster import (
    ClusterResolver,
    ClusterSpec,
    SimpleClusterResolver,
    SlurmClusterResolver,
    TaskSpec,
    TFConfigClusterResolver,
    TorchElasticClusterResolver,
)
from unison.cluster.cloud import (
    GCEClusterResolver,
    KubernetesClusterResolver,
    KubernetesExecutableLocation,
    UnionResolver,
)

__all__ = [
    "ClusterResolver",
    "ClusterSpec",
    "GCEClusterResolver",
    "KubernetesClusterResolver",
    "KubernetesExecutableLocation",
    "SimpleClusterResolver",
    "SlurmClusterResolver",
    "TFConfigClusterResolver",
    "TaskSpec",
    "TorchElasticClusterResolver",
    "UnionResolver",
]


def __getattr__(name: str) -> Any:
    if name == "TPUClusterResolver":
        raise AttributeError(
            "unison does not implement tf.distribute.cluster_resolver.TPUClusterResolver: unison has no TPU. "
            "Resolve GPU/CPU clusters with TFConfigClusterResolver, SlurmClusterResolver, "
            "KubernetesClusterResolver or SimpleClusterResolver."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
