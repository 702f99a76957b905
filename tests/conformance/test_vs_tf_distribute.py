"""``tf.distribute`` against TensorFlow 2.21 (see tf_oracle.py for the rules).

Strategies run here with one replica on the CPU (the oracle has one CPU device): what is compared
is what a program observes — results of ``run``/``reduce``, the batches a replica gets, class
relations for ``isinstance`` checks, and the error classes of bad arguments. Several replicas are
unison's own distributed tests' business.
"""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf


# --- strategies, contexts ------------------------------------------------------------------------
@same_as_tf(
    "distribute.MirroredStrategy",
    "distribute.Strategy",
    "distribute.StrategyExtended",
    "distribute.ReduceOp",
    "distribute.ReplicaContext",
    "distribute.get_replica_context",
    "distribute.in_cross_replica_context",
)
def test_mirrored_strategy_run_and_reduce(tf):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])

    def step(x):
        ctx = tf.distribute.get_replica_context()
        total = ctx.all_reduce(tf.distribute.ReduceOp.SUM, x)
        return (
            x * 2.0,
            total,
            ctx.num_replicas_in_sync,
            ctx.replica_id_in_sync_group,
            isinstance(ctx, tf.distribute.ReplicaContext),
        )

    with strategy.scope():
        cross = tf.distribute.in_cross_replica_context()
        doubled, total, n, rid, is_ctx = strategy.run(step, args=(tf.constant([1.0, 2.0]),))
    return (
        doubled,
        total,
        n,
        rid,
        is_ctx,
        cross,
        strategy.reduce(tf.distribute.ReduceOp.SUM, doubled, axis=None),
        strategy.reduce("MEAN", tf.constant([[1.0, 3.0]]), axis=1),
        strategy.num_replicas_in_sync,
        isinstance(strategy, tf.distribute.Strategy),
        isinstance(strategy.extended, tf.distribute.StrategyExtended),
        [type(v).__name__ == type(doubled).__name__ for v in strategy.experimental_local_results(doubled)],
    )


@same_as_tf("distribute.MirroredStrategy", edge=True)
def test_mirrored_strategy_devices_as_a_string(tf):
    return tf.distribute.MirroredStrategy("/cpu:0")


@same_as_tf("distribute.ReduceOp", edge=True)
def test_reduce_op_by_name(tf):
    return tf.distribute.ReduceOp("SUM") is tf.distribute.ReduceOp.SUM, tf.distribute.ReduceOp.MEAN.value


@same_as_tf("distribute.ReduceOp", edge=True)
def test_reduce_op_unknown(tf):
    return tf.distribute.ReduceOp("MAX")


@same_as_tf("distribute.OneDeviceStrategy")
def test_one_device_strategy(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        v = tf.Variable(2.0)
    out = strategy.run(lambda x: x * v, args=(tf.constant(3.0),))
    return out, strategy.num_replicas_in_sync, strategy.reduce("SUM", out, axis=None)


@same_as_tf("distribute.OneDeviceStrategy", edge=True)
def test_one_device_strategy_bad_device(tf):
    return tf.distribute.OneDeviceStrategy("/bogus:0")


@same_as_tf("distribute.Strategy", "distribute.StrategyExtended", edge=True)
def test_default_strategy(tf):
    strategy = tf.distribute.get_strategy()
    return (
        strategy.num_replicas_in_sync,
        strategy.extended.should_checkpoint,
        strategy.extended.should_save_summary,
        strategy.run(lambda: tf.constant(1.0) + 1.0),
    )


@same_as_tf("distribute.get_strategy", "distribute.has_strategy", "distribute.in_cross_replica_context")
def test_current_strategy(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    outside = tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context()
    with strategy.scope():
        inside = (
            tf.distribute.get_strategy() is strategy,
            tf.distribute.has_strategy(),
            tf.distribute.in_cross_replica_context(),
        )
    return outside, inside, tf.distribute.get_strategy().num_replicas_in_sync


@same_as_tf(
    "distribute.get_strategy",
    "distribute.has_strategy",
    "distribute.in_cross_replica_context",
    "distribute.get_replica_context",
    "distribute.ReplicaContext",
    edge=True,
)
def test_contexts_inside_run(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")

    def fn():
        return (
            tf.distribute.get_strategy() is strategy,
            tf.distribute.has_strategy(),
            tf.distribute.in_cross_replica_context(),
            tf.distribute.get_replica_context() is not None,
        )

    with strategy.scope():
        in_scope = tf.distribute.get_replica_context() is None
        inside = strategy.run(fn)
    default = tf.distribute.get_replica_context()
    return in_scope, inside, default.num_replicas_in_sync


@same_as_tf("distribute.experimental_set_strategy")
def test_set_strategy(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    tf.distribute.experimental_set_strategy(strategy)
    try:
        current = tf.distribute.get_strategy() is strategy, tf.distribute.has_strategy()
        other = tf.distribute.OneDeviceStrategy("/cpu:0")
        tf.distribute.experimental_set_strategy(other)
        replaced = tf.distribute.get_strategy() is other
    finally:
        tf.distribute.experimental_set_strategy(None)
    return current, replaced, tf.distribute.has_strategy()


@same_as_tf("distribute.experimental_set_strategy", edge=True)
def test_set_strategy_inside_a_scope(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        tf.distribute.experimental_set_strategy(strategy)


@same_as_tf("distribute.RunOptions")
def test_run_options(tf):
    options = tf.distribute.RunOptions(experimental_enable_dynamic_batch_size=False)
    out = tf.distribute.OneDeviceStrategy("/cpu:0").run(lambda: tf.constant(2), options=options)
    return tuple(tf.distribute.RunOptions()), tuple(options), out


@same_as_tf("distribute.RunOptions", edge=True)
def test_run_options_unknown_field(tf):
    return tf.distribute.RunOptions(bogus=True)


# --- cross-device ops -------------------------------------------------------------------------------
@same_as_tf(
    "distribute.CrossDeviceOps",
    "distribute.ReductionToOneDevice",
    "distribute.HierarchicalCopyAllReduce",
    "distribute.NcclAllReduce",
)
def test_cross_device_ops(tf):
    ops = [tf.distribute.ReductionToOneDevice(), tf.distribute.HierarchicalCopyAllReduce(num_packs=2)]
    ops.append(tf.distribute.NcclAllReduce(num_packs=1))
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"], cross_device_ops=ops[0])
    return [isinstance(o, tf.distribute.CrossDeviceOps) for o in ops], strategy.num_replicas_in_sync


@pytest.mark.parametrize("name", ["HierarchicalCopyAllReduce", "NcclAllReduce"])
@same_as_tf(
    "distribute.HierarchicalCopyAllReduce",
    "distribute.NcclAllReduce",
    "distribute.CrossDeviceOps",
    "distribute.ReductionToOneDevice",
    edge=True,
)
def test_cross_device_ops_negative_packs(tf, name):
    return getattr(tf.distribute, name)(num_packs=-1)


# --- input ------------------------------------------------------------------------------------------
@same_as_tf(
    "distribute.DistributedDataset",
    "distribute.DistributedIterator",
    "distribute.DistributedValues",
    "distribute.InputOptions",
)
def test_distributed_dataset(tf):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    ds = tf.data.Dataset.range(6).batch(4)
    dist = strategy.experimental_distribute_dataset(ds, options=tf.distribute.InputOptions())
    it = iter(dist)
    first = next(it)
    return (
        isinstance(dist, tf.distribute.DistributedDataset),
        isinstance(it, tf.distribute.DistributedIterator),
        isinstance(first, tf.distribute.DistributedValues),
        first,
        it.get_next(),
        [b for b in dist],
    )


@same_as_tf(
    "distribute.DistributedDataset",
    "distribute.DistributedIterator",
    "distribute.DistributedValues",
    "distribute.InputContext",
    edge=True,
)
def test_datasets_from_function(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    seen = []

    def dataset_fn(ctx):
        seen.append((ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync))
        return tf.data.Dataset.range(3).batch(ctx.get_per_replica_batch_size(2))

    dist = strategy.distribute_datasets_from_function(dataset_fn)
    it = iter(dist)
    batches = [it.get_next(), it.get_next()]
    try:
        it.get_next()
        end = "no error"
    except tf.errors.OutOfRangeError:
        end = "OutOfRangeError"
    return (
        seen,
        batches,
        end,
        isinstance(dist, tf.distribute.DistributedDataset),
        isinstance(batches[0], tf.distribute.DistributedValues),
        isinstance([1], tf.distribute.DistributedValues),
    )


@same_as_tf("distribute.InputContext")
def test_input_context(tf):
    ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    return ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync, ctx.get_per_replica_batch_size(8)


@same_as_tf("distribute.InputContext", edge=True)
def test_input_context_indivisible_batch(tf):
    return tf.distribute.InputContext(2, 1, 4).get_per_replica_batch_size(7)


@same_as_tf("distribute.InputOptions", "distribute.InputReplicationMode")
def test_input_options(tf):
    o = tf.distribute.InputOptions(
        experimental_fetch_to_device=False, experimental_replication_mode=tf.distribute.InputReplicationMode.PER_REPLICA
    )
    return (
        o.experimental_fetch_to_device,
        o.experimental_replication_mode.value,
        tf.distribute.InputReplicationMode.PER_WORKER.value,
        tf.distribute.InputOptions().experimental_per_replica_buffer_size,
    )


@same_as_tf("distribute.InputOptions", "distribute.InputReplicationMode", edge=True)
def test_input_replication_mode_unknown(tf):
    return tf.distribute.InputReplicationMode("PER_HOST")


@same_as_tf("distribute.experimental.ValueContext")
def test_value_context(tf):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    value = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(ctx.replica_id_in_sync_group + 10 * ctx.num_replicas_in_sync)
    )
    ctx = tf.distribute.experimental.ValueContext(1, 4)
    return value, ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync


@same_as_tf("distribute.experimental.ValueContext", edge=True)
def test_value_context_defaults(tf):
    ctx = tf.distribute.experimental.ValueContext()
    return ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync


# --- multi-worker -----------------------------------------------------------------------------------
@same_as_tf(
    "distribute.MultiWorkerMirroredStrategy",
    "distribute.experimental.MultiWorkerMirroredStrategy",
    "distribute.experimental.CommunicationOptions",
    "distribute.experimental.CommunicationImplementation",
    "distribute.experimental.CollectiveCommunication",
)
def test_multi_worker_strategy_on_one_worker(tf):
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING
    )
    new = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    old = tf.distribute.experimental.MultiWorkerMirroredStrategy(
        communication=tf.distribute.experimental.CollectiveCommunication.RING
    )
    return (
        new.num_replicas_in_sync,
        old.num_replicas_in_sync,
        isinstance(old, tf.distribute.MultiWorkerMirroredStrategy),
        new.run(lambda: tf.constant(3.0)),
        tf.distribute.experimental.CollectiveCommunication.NCCL.value,
        sorted(tf.distribute.experimental.CommunicationImplementation.__members__),
    )


@same_as_tf(
    "distribute.MultiWorkerMirroredStrategy",
    "distribute.experimental.CommunicationOptions",
    "distribute.experimental.CollectiveCommunication",
    edge=True,
)
def test_multi_worker_strategy_bad_options(tf):
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=5)


@same_as_tf("distribute.experimental.MultiWorkerMirroredStrategy", edge=True)
def test_old_multi_worker_strategy_bad_communication(tf):
    return tf.distribute.experimental.MultiWorkerMirroredStrategy(communication="X")


@same_as_tf(
    "distribute.experimental.CommunicationImplementation", "distribute.experimental.CommunicationOptions", edge=True
)
def test_communication_options_negative_pack(tf):
    return tf.distribute.experimental.CommunicationOptions(bytes_per_pack=-1)


@same_as_tf("distribute.experimental.CollectiveHints")
def test_collective_hints(tf):
    h = tf.distribute.experimental.CollectiveHints(bytes_per_pack=1024, timeout_seconds=30)
    return h.bytes_per_pack, h.timeout_seconds, tf.distribute.experimental.CollectiveHints().bytes_per_pack


@same_as_tf("distribute.experimental.CollectiveHints", edge=True)
def test_collective_hints_negative_pack(tf):
    return tf.distribute.experimental.CollectiveHints(bytes_per_pack=-1)


@same_as_tf("distribute.experimental.CentralStorageStrategy")
def test_central_storage_strategy(tf):
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    with strategy.scope():
        v = tf.Variable([1.0, 2.0])
    return strategy.num_replicas_in_sync, strategy.run(lambda: v * 2.0)


@same_as_tf("distribute.experimental.CentralStorageStrategy", edge=True)
def test_central_storage_strategy_reduce_along_axis(tf):
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    return strategy.reduce("SUM", tf.zeros([0, 2]), axis=0)


# --- preemption ---------------------------------------------------------------------------------------
@same_as_tf("distribute.experimental.TerminationConfig")
def test_termination_config(tf):
    config = tf.distribute.experimental.TerminationConfig(grace_period=5, exit_fn=lambda: None)
    return config.grace_period


@same_as_tf(
    "distribute.experimental.TerminationConfig", "distribute.experimental.PreemptionCheckpointHandler", edge=True
)
def test_preemption_handler_without_a_checkpoint(tf):
    return tf.distribute.experimental.PreemptionCheckpointHandler(None, None)


@same_as_tf("distribute.experimental.PreemptionCheckpointHandler")
def test_preemption_handler_runs_steps(tf):
    import os
    import tempfile

    os.environ.pop("TF_CONFIG", None)
    checkpoint = tf.train.Checkpoint(step=tf.Variable(0))
    manager = tf.train.CheckpointManager(checkpoint, tempfile.mkdtemp(), max_to_keep=1)
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        tf.distribute.cluster_resolver.TFConfigClusterResolver(), manager
    )
    out = [int(handler.run(lambda i: tf.constant(i) * 2, i)) for i in range(3)]
    return out, int(handler.total_run_calls)


@same_as_tf("distribute.experimental.PreemptionWatcher")
def test_preemption_watcher_without_a_notice(tf):
    watcher = tf.distribute.experimental.PreemptionWatcher()
    message = watcher.preemption_message
    getattr(watcher, "close", lambda: None)()  # unison's watcher hands SIGTERM back
    return message


@same_as_tf("distribute.experimental.PreemptionWatcher", edge=True)
def test_preemption_watcher_takes_no_arguments(tf):
    return tf.distribute.experimental.PreemptionWatcher(5)


# --- cluster resolvers ------------------------------------------------------------------------------
@same_as_tf("distribute.cluster_resolver.SimpleClusterResolver", "distribute.cluster_resolver.ClusterResolver")
def test_simple_cluster_resolver(tf):
    spec = tf.train.ClusterSpec({"worker": ["h0:2222", "h1:2222"], "ps": ["p0:2222"]})
    r = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="worker", task_id=1, rpc_layer="grpc")
    return (
        r.cluster_spec().as_dict(),
        r.master(),
        r.master("ps", 0),
        r.task_type,
        r.task_id,
        isinstance(r, tf.distribute.cluster_resolver.ClusterResolver),
    )


@same_as_tf(
    "distribute.cluster_resolver.SimpleClusterResolver", "distribute.cluster_resolver.ClusterResolver", edge=True
)
def test_simple_cluster_resolver_empty(tf):
    r = tf.distribute.cluster_resolver.SimpleClusterResolver(tf.train.ClusterSpec({}))
    return r.cluster_spec().as_dict(), r.master(), r.task_type


@same_as_tf("distribute.cluster_resolver.TFConfigClusterResolver")
def test_tf_config_resolver(tf):
    import json
    import os

    old = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = json.dumps(
        {"cluster": {"chief": ["c:2222"], "worker": ["w0:2222", "w1:2222"]}, "task": {"type": "worker", "index": 1}}
    )
    try:
        r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        return r.cluster_spec().as_dict(), r.task_type, r.task_id, r.master()
    finally:
        if old is None:
            del os.environ["TF_CONFIG"]
        else:
            os.environ["TF_CONFIG"] = old


@same_as_tf("distribute.cluster_resolver.TFConfigClusterResolver", edge=True)
def test_tf_config_resolver_without_tf_config(tf):
    import os

    old = os.environ.pop("TF_CONFIG", None)
    try:
        r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        return r.cluster_spec().as_dict(), r.task_type, r.task_id
    finally:
        if old is not None:
            os.environ["TF_CONFIG"] = old


@same_as_tf("distribute.cluster_resolver.SlurmClusterResolver", edge=True)
def test_slurm_resolver_outside_slurm(tf):
    import os

    for key in [k for k in os.environ if k.startswith("SLURM_")]:
        del os.environ[key]
    return tf.distribute.cluster_resolver.SlurmClusterResolver()


@same_as_tf("distribute.cluster_resolver.SlurmClusterResolver")
def test_slurm_resolver_in_a_step(tf):
    import os

    env = {
        "SLURM_PROCID": "1",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_STEP_NODELIST": "node[1-2]",
        "SLURM_STEP_TASKS_PER_NODE": "1(x2)",
        "CUDA_VISIBLE_DEVICES": "",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        r = tf.distribute.cluster_resolver.SlurmClusterResolver(
            jobs={"worker": 2}, port_base=8888, gpus_per_node=1, auto_set_gpu=False
        )
        return r.cluster_spec().as_dict(), r.task_type, r.task_id
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@same_as_tf("distribute.cluster_resolver.UnionResolver")
def test_union_resolver_merges(tf):
    cr = tf.distribute.cluster_resolver
    a = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["h1:1", "h2:1"]}), task_type="worker", task_id=0)
    b = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["h3:1"], "ps": ["p:1"]}))
    c = cr.SimpleClusterResolver(tf.train.ClusterSpec({"evaluator": {0: "e:1"}}))
    u = cr.UnionResolver(a, b, c, rpc_layer="grpc")
    return u.cluster_spec().as_dict(), u.task_type, u.task_id, u.master("ps", 0), u.rpc_layer


@same_as_tf("distribute.cluster_resolver.UnionResolver", edge=True)
def test_union_resolver_index_clash(tf):
    cr = tf.distribute.cluster_resolver
    a = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": {0: "h1:1"}}))
    b = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["h2:1"]}))
    return cr.UnionResolver(a, b).cluster_spec()


@pytest.mark.parametrize("args", [(), (5,)])
@same_as_tf("distribute.cluster_resolver.UnionResolver", edge=True)
def test_union_resolver_bad_arguments(tf, args):
    return tf.distribute.cluster_resolver.UnionResolver(*args)


class _Meta:
    def __init__(self, name):
        self.name = name


class _Status:
    def __init__(self, phase, host_ip):
        self.phase, self.host_ip = phase, host_ip


class _Pod:
    def __init__(self, name, phase, ip):
        self.metadata, self.status = _Meta(name), _Status(phase, ip)


class _PodList:
    def __init__(self, items):
        self.items = items


class _KubeClient:
    """What KubernetesClusterResolver asks of the Kubernetes API (a CoreV1Api's one call)."""

    def __init__(self, pods):
        self.pods = pods

    def list_pod_for_all_namespaces(self, label_selector):
        return _PodList([p for selector, p in self.pods if selector == label_selector])


@same_as_tf(
    "distribute.cluster_resolver.KubernetesClusterResolver", "distribute.cluster_resolver.KubernetesExecutableLocation"
)
def test_kubernetes_resolver(tf):
    client = _KubeClient(
        [
            ("job-name=worker", _Pod("w-1", "Running", "10.0.0.2")),
            ("job-name=worker", _Pod("w-0", "Running", "10.0.0.1")),
            ("job-name=ps", _Pod("ps-0", "Running", "10.0.1.1")),
        ]
    )
    cr = tf.distribute.cluster_resolver
    r = cr.KubernetesClusterResolver(
        {"worker": ["job-name=worker"], "ps": ["job-name=ps"]},
        tf_server_port=2222,
        override_client=client,
        executable_location=cr.KubernetesExecutableLocation.OFF_CLUSTER,
    )
    r.task_type, r.task_id = "worker", 1
    return r.cluster_spec().as_dict(), r.master(), cr.KubernetesExecutableLocation.WITHIN_CLUSTER.value


@same_as_tf("distribute.cluster_resolver.KubernetesClusterResolver", edge=True)
def test_kubernetes_resolver_pod_not_running(tf):
    client = _KubeClient([("job-name=tensorflow", _Pod("w-0", "Pending", "10.0.0.1"))])
    return tf.distribute.cluster_resolver.KubernetesClusterResolver(override_client=client).cluster_spec()


@same_as_tf(
    "distribute.cluster_resolver.KubernetesClusterResolver",
    "distribute.cluster_resolver.KubernetesExecutableLocation",
    edge=True,
)
def test_kubernetes_resolver_without_the_client(tf):
    return tf.distribute.cluster_resolver.KubernetesClusterResolver()


class _Request:
    def __init__(self, value):
        self.value = value

    def execute(self):
        return self.value


class _Groups:
    def listInstances(self, project, zone, body, orderBy, **group):  # noqa: N802,N803 - Google's names
        # the API names the group `instanceGroup`; TF's resolver passes `instanceGroups`
        assert body == {"instanceState": "RUNNING"} and list(group.values()) == ["group"]
        return _Request({"items": [{"instance": "zones/z/instances/b"}, {"instance": "zones/z/instances/a"}]})

    def listInstances_next(self, previous_request, previous_response):  # noqa: N802 - Google's names
        return None


class _Instances:
    def get(self, project, zone, instance):
        return _Request({"networkInterfaces": [{"networkIP": {"a": "10.1.0.1", "b": "10.1.0.2"}[instance]}]})


class _Compute:
    """What GCEClusterResolver asks of the Compute Engine API."""

    def instanceGroups(self):  # noqa: N802 - Google's names
        return _Groups()

    def instances(self):
        return _Instances()


@same_as_tf("distribute.cluster_resolver.GCEClusterResolver")
def test_gce_resolver(tf):
    r = tf.distribute.cluster_resolver.GCEClusterResolver(
        "project", "z", "group", 8470, task_type="worker", task_id=1, service=_Compute()
    )
    return r.cluster_spec().as_dict(), r.master(), r.task_type, r.task_id


@same_as_tf("distribute.cluster_resolver.GCEClusterResolver", edge=True)
def test_gce_resolver_without_the_client(tf):
    return tf.distribute.cluster_resolver.GCEClusterResolver("p", "z", "g", 8470)


# --- parameter servers ------------------------------------------------------------------------------
@same_as_tf("distribute.ParameterServerStrategy", "distribute.experimental.ParameterServerStrategy", edge=True)
def test_parameter_server_strategy_needs_a_ps(tf):
    spec = tf.train.ClusterSpec({"worker": ["localhost:1111"], "chief": ["localhost:1112"]})
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type="chief", task_id=0)
    return tf.distribute.ParameterServerStrategy(resolver)


@same_as_tf("distribute.ParameterServerStrategy", "distribute.experimental.ParameterServerStrategy")
def test_parameter_server_strategy_classes(tf):
    return (
        issubclass(tf.distribute.ParameterServerStrategy, tf.distribute.Strategy),
        issubclass(tf.distribute.experimental.ParameterServerStrategy, tf.distribute.Strategy),
    )


@same_as_tf(
    "distribute.coordinator.ClusterCoordinator",
    "distribute.experimental.coordinator.ClusterCoordinator",
    "distribute.coordinator.RemoteValue",
    "distribute.experimental.coordinator.RemoteValue",
    "distribute.coordinator.PerWorkerValue",
    "distribute.experimental.coordinator.PerWorkerValues",
)
def test_coordinator_names(tf):
    c = tf.distribute.coordinator
    e = tf.distribute.experimental.coordinator
    return (
        c.ClusterCoordinator is e.ClusterCoordinator,
        c.RemoteValue is e.RemoteValue,
        c.PerWorkerValue is e.PerWorkerValues,
        [m for m in ("fetch", "get") if hasattr(c.RemoteValue, m)],
        [
            m
            for m in ("schedule", "join", "done", "fetch", "create_per_worker_dataset")
            if hasattr(c.ClusterCoordinator, m)
        ],
    )


@same_as_tf(
    "distribute.coordinator.ClusterCoordinator",
    "distribute.experimental.coordinator.ClusterCoordinator",
    "distribute.coordinator.RemoteValue",
    "distribute.experimental.coordinator.RemoteValue",
    "distribute.coordinator.PerWorkerValue",
    "distribute.experimental.coordinator.PerWorkerValues",
    edge=True,
    differs="unison raises TypeError naming ParameterServerStrategy; TF fails with an AttributeError "
    "('MirroredStrategy' object has no attribute '_cluster_coordinator')",
)
def test_coordinator_of_a_mirrored_strategy(tf):
    try:
        tf.distribute.coordinator.ClusterCoordinator(tf.distribute.MirroredStrategy(["/cpu:0"]))
    except (TypeError, AttributeError):
        return "refused"
    return "accepted"


@same_as_tf("distribute.coordinator.experimental_get_current_worker_index")
def test_worker_index_outside_a_worker(tf):
    try:
        tf.distribute.coordinator.experimental_get_current_worker_index()
    except RuntimeError:
        return "RuntimeError"
    return "no error"


@same_as_tf("distribute.coordinator.experimental_get_current_worker_index", edge=True)
def test_worker_index_takes_no_arguments(tf):
    return tf.distribute.coordinator.experimental_get_current_worker_index(0)


@same_as_tf("distribute.Server")
def test_server_not_started(tf):
    import os

    # unison's workers run the code they are sent, so they need the cluster's token (TF ignores it)
    import secrets

    old = os.environ.get("UNISON_CLUSTER_TOKEN")
    os.environ["UNISON_CLUSTER_TOKEN"] = secrets.token_hex(32)
    try:
        import socket

        with socket.socket() as probe:  # a free port: a fixed one may be taken on a busy machine
            probe.bind(("localhost", 0))
            port = probe.getsockname()[1]
        spec = tf.train.ClusterSpec({"worker": [f"localhost:{port}"]})
        target = tf.distribute.Server(spec, job_name="worker", task_index=0, start=False).target
        return target == f"grpc://localhost:{port}"
    finally:
        if old is None:
            del os.environ["UNISON_CLUSTER_TOKEN"]
        else:
            os.environ["UNISON_CLUSTER_TOKEN"] = old


@same_as_tf(
    "distribute.Server",
    edge=True,
    differs="unison validates the job name in the constructor (ValueError naming the jobs); TF's C++ "
    "server raises InternalError",
)
def test_server_for_an_unknown_job(tf):
    spec = tf.train.ClusterSpec({"worker": ["localhost:1111"]})
    try:
        tf.distribute.Server(spec, job_name="ps", task_index=0, start=False)
    except (ValueError, tf.errors.InternalError):
        return "refused"
    return "accepted"


@same_as_tf(
    "distribute.experimental.partitioners.FixedShardsPartitioner",
    "distribute.experimental.partitioners.MinSizePartitioner",
    "distribute.experimental.partitioners.MaxSizePartitioner",
    "distribute.experimental.partitioners.Partitioner",
)
def test_partitioners(tf):
    p = tf.distribute.experimental.partitioners
    shape = tf.TensorShape([10, 3])
    return (
        list(p.FixedShardsPartitioner(2)(shape, tf.float32)),
        list(p.MinSizePartitioner(min_shard_bytes=16, max_shards=4)(shape, tf.float32)),
        list(p.MaxSizePartitioner(max_shard_bytes=16)(shape, tf.float32)),
        list(p.MaxSizePartitioner(max_shard_bytes=1024, max_shards=2)(tf.TensorShape([100, 4]), tf.float64)),
        isinstance(p.FixedShardsPartitioner(1), p.Partitioner),
    )


@pytest.mark.parametrize("case", ["max0", "min0", "base"])
@same_as_tf(
    "distribute.experimental.partitioners.MaxSizePartitioner",
    "distribute.experimental.partitioners.MinSizePartitioner",
    "distribute.experimental.partitioners.Partitioner",
    "distribute.experimental.partitioners.FixedShardsPartitioner",
    edge=True,
)
def test_partitioners_bad_arguments(tf, case):
    p = tf.distribute.experimental.partitioners
    if case == "max0":
        return p.MaxSizePartitioner(max_shard_bytes=0)
    if case == "min0":
        return p.MinSizePartitioner(min_shard_bytes=0)
    return p.Partitioner()(tf.TensorShape([2]), tf.float32)


# --- rpc ----------------------------------------------------------------------------------------------
def _rpc_pair(tf):
    """A started server with `add` and `positive`, and a client of it (a fresh port each time)."""
    import os
    import secrets

    # unison authenticates every call with the cluster token (TF's RPC has no authentication); the
    # server and the client read it when they are made, so it is set only meanwhile
    old = os.environ.get("UNISON_CLUSTER_TOKEN")
    os.environ["UNISON_CLUSTER_TOKEN"] = secrets.token_hex(16)
    try:
        return _rpc_pair_with_token(tf)
    finally:
        if old is None:
            del os.environ["UNISON_CLUSTER_TOKEN"]
        else:
            os.environ["UNISON_CLUSTER_TOKEN"] = old


def _rpc_pair_with_token(tf):
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    rpc = tf.distribute.experimental.rpc
    server = rpc.Server.create("grpc", f"localhost:{port}")

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.int32)])
    def add(a, b):
        return a + b

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def positive(x):
        tf.debugging.assert_positive(x)
        return x * 2.0

    server.register("add", add)
    server.register("positive", positive)
    server.start()
    return server, rpc.Client.create("grpc", f"localhost:{port}", name="client")


@same_as_tf("distribute.experimental.rpc.Server", "distribute.experimental.rpc.Client")
def test_rpc_calls(tf):
    server, client = _rpc_pair(tf)
    try:
        result = client.call("add", [tf.constant(2), tf.constant(3)], output_specs=tf.TensorSpec([], tf.int32))
        code, _ = result.get_error()
        return (
            result.is_ok(),
            result.get_value(),
            code,
            client.add(tf.constant(4), tf.constant(5)).get_value(),
            client.positive_blocking(tf.constant([1.0, 2.0])),
        )
    finally:
        _close(server, client)


def _close(server, client):
    # unison's server and client can be stopped (no gRPC threads left for the replica tests that
    # fork later); TF's have no such methods and live until the oracle exits
    getattr(client, "close", lambda: None)()
    getattr(server, "stop", lambda: None)()


@same_as_tf("distribute.experimental.rpc.Server", "distribute.experimental.rpc.Client", edge=True)
def test_rpc_errors_travel_back(tf):
    server, client = _rpc_pair(tf)
    try:
        failed = client.call("positive", [tf.constant([-1.0])], output_specs=tf.TensorSpec([None], tf.float32))
        code, _ = failed.get_error()
        outcome = []
        for result in (failed, client.call("nope", [], output_specs=None)):
            try:
                result.get_value()
                outcome.append("value")
            except tf.errors.InvalidArgumentError:
                outcome.append("InvalidArgumentError")
        return failed.is_ok(), code, outcome
    finally:
        _close(server, client)


@pytest.mark.parametrize("case", ["layer", "not_a_function"])
@same_as_tf("distribute.experimental.rpc.Server", "distribute.experimental.rpc.Client", edge=True)
def test_rpc_bad_arguments(tf, case):
    rpc = tf.distribute.experimental.rpc
    if case == "layer":
        return rpc.Server.create("http", "localhost:1")
    return rpc.Server.create("grpc", "localhost:1").register("f", lambda a: a)


# TPU-only names: they exist, and using them raises a ValueError (TF's class when no TPU is found)
# whose message, on unison, says TPUs are not supported and what to use instead
_NO_TPU = r"TPUs are not supported on unison's PyTorch backend.*MirroredStrategy.*torch_xla"


@same_as_tf("distribute.TPUStrategy", match=_NO_TPU)
def test_tpu_strategy_without_a_tpu(tf):
    return tf.distribute.TPUStrategy()


@same_as_tf("distribute.experimental.TPUStrategy", match=_NO_TPU)
def test_experimental_tpu_strategy_without_a_tpu(tf):
    return tf.distribute.experimental.TPUStrategy()


@same_as_tf(
    "distribute.cluster_resolver.TPUClusterResolver",
    match=r"TPUs are not supported on unison's PyTorch backend.*TFConfigClusterResolver.*torch_xla",
)
def test_tpu_cluster_resolver_without_a_tpu(tf):
    return tf.distribute.cluster_resolver.TPUClusterResolver()


@same_as_tf(
    "distribute.TPUStrategy",
    "distribute.experimental.TPUStrategy",
    "distribute.cluster_resolver.TPUClusterResolver",
    edge=True,
)
def test_tpu_probe_falls_back(tf):
    """The probe programs carry: try a TPU, fall back on ValueError; isinstance checks say no TPU."""
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
        strategy = tf.distribute.TPUStrategy(resolver)
    except ValueError:
        strategy = tf.distribute.get_strategy()
    subclass = issubclass(tf.distribute.TPUStrategy, tf.distribute.Strategy)
    is_tpu = isinstance(strategy, (tf.distribute.TPUStrategy, tf.distribute.experimental.TPUStrategy))
    return strategy.num_replicas_in_sync, is_tpu, subclass


@same_as_tf("distribute.cluster_resolver.TPUClusterResolver", edge=True)
def test_tpu_cluster_resolver_connect_without_a_tpu(tf):
    return tf.distribute.cluster_resolver.TPUClusterResolver.connect()
