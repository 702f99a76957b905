"""Who am I: process placement, cluster specs and resolvers (reads the environment so strategies don't)."""

from unison.cluster.elastic import (
    TorchElasticClusterResolver,
    UnisonLauncherClusterResolver,
)
from unison.cluster.placement import ProcessPlacement, resolve_placement
from unison.cluster.plan import JobPlan
from unison.cluster.resolvers import (
    ClusterResolver,
    SimpleClusterResolver,
    TFConfigClusterResolver,
    default_cluster_resolver,
)
from unison.cluster.slurm import SlurmClusterResolver
from unison.cluster.spec import ClusterSpec, TaskSpec, parse_address

__all__ = [
    "ClusterResolver",
    "ClusterSpec",
    "JobPlan",
    "ProcessPlacement",
    "SimpleClusterResolver",
    "SlurmClusterResolver",
    "TFConfigClusterResolver",
    "TaskSpec",
    "TorchElasticClusterResolver",
    "UnisonLauncherClusterResolver",
    "default_cluster_resolver",
    "parse_address",
    "resolve_placement",
]
