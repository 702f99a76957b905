"""``tf.distribute.cluster_resolver``: who is who in a multi-worker job.

Example:
    >>> import unison as tf
    >>> spec = tf.distribute.cluster_resolver.ClusterSpec({"worker": ["127.0.0.1:2222"]})
    >>> r = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker", task_id=0)
    >>> r.cluster_spec().num_tasks("worker")
    1
"""

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
from unison.distribute.tpu import TPUClusterResolver

__all__ = [
    "ClusterResolver",
    "ClusterSpec",
    "GCEClusterResolver",
    "KubernetesClusterResolver",
    "KubernetesExecutableLocation",
    "SimpleClusterResolver",
    "SlurmClusterResolver",
    "TFConfigClusterResolver",
    "TPUClusterResolver",
    "TaskSpec",
    "TorchElasticClusterResolver",
    "UnionResolver",
]
