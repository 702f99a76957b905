"""Resolvers that ask a cluster manager who is who: Kubernetes, Google Compute Engine, and a union.

TF's ``KubernetesClusterResolver``, ``GCEClusterResolver`` and ``UnionResolver``, with TF's
inputs and answers:

* :class:`KubernetesClusterResolver` lists the pods matching each job's label selectors through
  the Kubernetes API (the ``kubernetes`` client, or ``override_client``: any object with
  ``list_pod_for_all_namespaces(label_selector=...)``) and gives ``host_ip:tf_server_port`` of
  each running pod, sorted by pod name. A pod that is not ``Running`` is an error naming it.
* :class:`GCEClusterResolver` lists the running instances of a Compute Engine instance group
  (``googleapiclient``, or ``service``: a client with TF's ``instanceGroups()``/``instances()``
  calls) and gives ``networkIP:port`` of each.
* :class:`UnionResolver` merges the cluster specs of several resolvers (lists of one job are
  concatenated; if any is a dict, the indices are merged and a clash is a ``KeyError``).

Example:
    >>> from unison.cluster import SimpleClusterResolver, ClusterSpec
    >>> a = SimpleClusterResolver(ClusterSpec({"worker": ["h1:2222"]}))
    >>> b = SimpleClusterResolver(ClusterSpec({"worker": ["h2:2222"], "ps": ["h3:2222"]}))
    >>> UnionResolver(a, b).cluster_spec().as_dict()
    {'worker': ['h1:2222', 'h2:2222'], 'ps': ['h3:2222']}
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from typing import Any

from unison.cluster.base import ClusterResolver, plan_from_spec
from unison.cluster.plan import JobPlan
from unison.cluster.spec import ClusterSpec


class KubernetesExecutableLocation(enum.Enum):
    """Where the program runs relative to the Kubernetes cluster (TF's ``ExecutableLocation``)."""

    WITHIN_CLUSTER = 0
    OFF_CLUSTER = 1


_NEEDS_KUBERNETES = (
    "The Kubernetes Python client must be installed before using the Kubernetes Cluster Resolver "
    "(`pip install kubernetes`), or pass override_client= (an object with "
    "list_pod_for_all_namespaces(label_selector=...), e.g. kubernetes.client.CoreV1Api())."
)


class KubernetesClusterResolver(ClusterResolver):
    """The cluster from the Kubernetes pods of each job (TF's ``KubernetesClusterResolver``).

    Args:
        job_to_label_mapping: ``{job: [label selector, ...]}``; default
            ``{"worker": ["job-name=tensorflow"]}``.
        tf_server_port: the port each task listens on.
        rpc_layer: the RPC layer of ``master()`` URLs.
        override_client: a Kubernetes ``CoreV1Api``-like client (then no configuration is loaded).
        executable_location: ``WITHIN_CLUSTER`` (in-cluster service account) or ``OFF_CLUSTER``
            (``~/.kube/config``).

    Raises:
        ImportError: without the ``kubernetes`` package and without ``override_client``.
        ValueError: an ``executable_location`` that is not a :class:`KubernetesExecutableLocation`.
    """

    def __init__(
        self,
        job_to_label_mapping: Mapping[str, list[str]] | None = None,
        tf_server_port: int = 8470,
        rpc_layer: str = "grpc",
        override_client: Any = None,
        executable_location: KubernetesExecutableLocation = KubernetesExecutableLocation.WITHIN_CLUSTER,
    ) -> None:
        super().__init__(None, None, rpc_layer)
        if override_client is None:
            try:
                from kubernetes import config as k8sconfig
            except ImportError:
                raise ImportError(_NEEDS_KUBERNETES) from None
            if executable_location == KubernetesExecutableLocation.OFF_CLUSTER:
                k8sconfig.load_kube_config()
            elif executable_location == KubernetesExecutableLocation.WITHIN_CLUSTER:
                k8sconfig.load_incluster_config()
            else:
                raise ValueError(
                    "The executable location provided is invalid: expected "
                    "KubernetesExecutableLocation.WITHIN_CLUSTER or OFF_CLUSTER. "
                    f"Received: executable_location={executable_location!r}"
                )
        self._job_to_label_mapping = dict(job_to_label_mapping or {"worker": ["job-name=tensorflow"]})
        self._tf_server_port = tf_server_port
        self._override_client = override_client

    def _client(self) -> Any:
        if self._override_client is not None:
            return self._override_client
        from kubernetes import client as k8sclient

        return k8sclient.CoreV1Api()

    def cluster_spec(self) -> ClusterSpec:
        """The running pods of every job, asked of the Kubernetes API now.

        Raises:
            RuntimeError: a selected pod is not in the ``Running`` phase (naming it).
        """
        client = self._client()
        cluster: dict[str, list[str]] = {}
        for job, selectors in self._job_to_label_mapping.items():
            addresses: list[str] = []
            for selector in selectors:
                found = client.list_pod_for_all_namespaces(label_selector=selector)
                for pod in sorted(found.items, key=lambda p: p.metadata.name):
                    if pod.status.phase != "Running":
                        raise RuntimeError(
                            f'Pod "{pod.metadata.name}" is not running; phase: "{pod.status.phase}". Wait until '
                            "every pod of the job runs before resolving the cluster."
                        )
                    addresses.append(f"{pod.status.host_ip}:{self._tf_server_port}")
            cluster[job] = addresses
        return ClusterSpec(cluster)

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        return plan_from_spec(
            self, self.cluster_spec(), "Kubernetes", "cluster", replicas_per_worker, os.environ, "unison"
        )


class GCEClusterResolver(ClusterResolver):
    """The cluster from a Compute Engine instance group (TF's ``GCEClusterResolver``).

    Args:
        project, zone, instance_group: the group to list.
        port: the port each task listens on.
        task_type, task_id: this process's task (the whole group is one job, ``task_type``).
        rpc_layer: the RPC layer of ``master()`` URLs.
        credentials: ``"default"`` (application default credentials) or a credentials object.
        service: a Compute Engine API client (``googleapiclient.discovery.build("compute", "v1")``).

    Raises:
        ImportError: without ``googleapiclient`` and without ``service``.
    """

    def __init__(
        self,
        project: str,
        zone: str,
        instance_group: str,
        port: int,
        task_type: str = "worker",
        task_id: int = 0,
        rpc_layer: str = "grpc",
        credentials: Any = "default",
        service: Any = None,
    ) -> None:
        super().__init__(task_type, task_id, rpc_layer)
        self._project, self._zone, self._instance_group, self._port = project, zone, instance_group, port
        if service is None:
            try:
                from googleapiclient import discovery
            except ImportError:
                raise ImportError(
                    "googleapiclient and oauth2client must be installed before using the GCE cluster resolver "
                    "(`pip install google-api-python-client`), or pass service= (a Compute Engine API client)."
                ) from None
            if credentials == "default":
                from oauth2client.client import GoogleCredentials

                credentials = GoogleCredentials.get_application_default()
            service = discovery.build("compute", "v1", credentials=credentials)
        self._service = service

    def cluster_spec(self) -> ClusterSpec:
        """``{task_type: [networkIP:port of each running instance, sorted]}``, asked of the API now."""
        groups, instances = self._service.instanceGroups(), self._service.instances()
        request = groups.listInstances(
            project=self._project,
            zone=self._zone,
            instanceGroup=self._instance_group,  # the API's name (TF passes `instanceGroups`, which it rejects)
            body={"instanceState": "RUNNING"},
            orderBy="name",
        )
        workers: list[str] = []
        while request is not None:
            response = request.execute()
            for instance in response.get("items", []):
                name = instance["instance"].split("/")[-1]
                details = instances.get(project=self._project, zone=self._zone, instance=name).execute()
                workers.append(f"{details['networkInterfaces'][0]['networkIP']}:{self._port}")
            request = groups.listInstances_next(previous_request=request, previous_response=response)
        return ClusterSpec({str(self.task_type): sorted(workers)})

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        return plan_from_spec(self, self.cluster_spec(), "GCE", "cluster", replicas_per_worker, os.environ, "unison")


class UnionResolver(ClusterResolver):
    """The union of several resolvers' clusters (TF's ``UnionResolver``).

    The first resolver answers ``master()``, ``task_type``, ``task_id``, ``environment`` and
    ``num_accelerators`` unless overridden by the keyword arguments.

    Raises:
        ValueError: no resolver, or an unknown keyword argument.
        TypeError: an argument that is not a ``ClusterResolver``.
    """

    def __init__(self, *args: ClusterResolver, **kwargs: Any) -> None:
        if not args:
            raise ValueError("At least one ClusterResolver is required: UnionResolver(resolver1, resolver2, ...).")
        for arg in args:
            if not isinstance(arg, ClusterResolver):
                raise TypeError(
                    f"All arguments must be a sub-class of `ClusterResolver`. Received: {type(arg).__name__}"
                )
        unknown = sorted(set(kwargs) - {"task_type", "task_id", "rpc_layer"})
        if unknown:
            raise ValueError(f"Unexpected kwargs provided {unknown}; expected task_type, task_id or rpc_layer.")
        first = args[0]
        super().__init__(
            kwargs.get("task_type") or first.task_type,
            kwargs.get("task_id") or first.task_id,
            kwargs.get("rpc_layer") or first.rpc_layer,
            first.environment,
        )
        self._cluster_resolvers = list(args)

    def cluster_spec(self) -> ClusterSpec:
        """The merged cluster (TF's rules; a clash of task indices is a ``KeyError``)."""
        dicts = [r.cluster_spec().as_dict() for r in self._cluster_resolvers]
        as_dict = {job for d in dicts for job, tasks in d.items() if isinstance(tasks, dict)}
        merged: dict[str, Any] = {}
        for d in dicts:
            for job, tasks in d.items():
                if job not in as_dict:
                    merged.setdefault(job, []).extend(tasks)
                    continue
                items = dict(enumerate(tasks)) if isinstance(tasks, list) else dict(tasks)
                target = merged.setdefault(job, {})
                clash = set(items) & set(target)
                if clash:
                    raise KeyError(f"Duplicate keys detected when merging two ClusterSpecs: {clash!r}")
                target.update(items)
        return ClusterSpec(merged)

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return self._cluster_resolvers[0].master(rpc_layer=rpc_layer)

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        return self._cluster_resolvers[0].num_accelerators(task_type, task_id, config_proto)

    def job_plan(self, replicas_per_worker: int) -> JobPlan:
        return plan_from_spec(
            self, self.cluster_spec(), "UnionResolver", "cluster", replicas_per_worker, os.environ, "unison"
        )


__all__ = ["GCEClusterResolver", "KubernetesClusterResolver", "KubernetesExecutableLocation", "UnionResolver"]
