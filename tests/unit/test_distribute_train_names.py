"""tf.distribute / tf.train names whose semantics need a worker, a signal or threads (real objects)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

import unison as tf
from unison.distribute.parameter_server.worker import WorkerStrategy


def test_worker_index_inside_a_scheduled_function_is_the_workers():
    # A worker runs scheduled functions and dataset functions under its WorkerStrategy.
    with WorkerStrategy(2, 3).as_current():
        assert tf.distribute.coordinator.experimental_get_current_worker_index() == 2
    with pytest.raises(RuntimeError, match="only on a worker"):
        tf.distribute.coordinator.experimental_get_current_worker_index()


def test_set_strategy_is_a_scope_without_a_block():
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    tf.distribute.experimental_set_strategy(strategy)
    try:
        with strategy.scope():
            with pytest.raises(RuntimeError, match="inside a `tf.distribute.Strategy` scope"):
                tf.distribute.experimental_set_strategy(None)
        assert tf.distribute.get_strategy() is strategy
    finally:
        tf.distribute.experimental_set_strategy(None)
    assert not tf.distribute.has_strategy()


def test_user_containers_can_be_distributed_values():
    class PerReplica(tf.distribute.DistributedValues):
        def __init__(self, values):
            self.values = values

    assert isinstance(PerReplica((1, 2)), tf.distribute.DistributedValues)
    assert not isinstance(tf.constant(1.0), tf.distribute.DistributedValues)


def test_union_resolver_merges_dict_jobs_and_keeps_the_first_resolvers_task():
    cr = tf.distribute.cluster_resolver
    a = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["h1:1"]}), task_type="worker", task_id=0)
    b = cr.SimpleClusterResolver(tf.train.ClusterSpec({"worker": {3: "h3:1"}}))
    u = cr.UnionResolver(a, b)
    assert u.cluster_spec().as_dict() == {"worker": {0: "h1:1", 3: "h3:1"}}
    assert (u.task_type, u.task_id) == ("worker", 0)
    with pytest.raises(ValueError, match="Unexpected kwargs"):
        cr.UnionResolver(a, bogus=1)


def test_kubernetes_resolver_joins_the_selectors_of_a_job():
    class Pod:
        def __init__(self, name, ip):
            self.metadata = type("M", (), {"name": name})()
            self.status = type("S", (), {"phase": "Running", "host_ip": ip})()

    class Client:
        def list_pod_for_all_namespaces(self, label_selector):
            pods = {"app=a": [Pod("b", "10.0.0.2"), Pod("a", "10.0.0.1")], "app=b": [Pod("c", "10.0.0.3")]}
            return type("L", (), {"items": pods[label_selector]})()

    r = tf.distribute.cluster_resolver.KubernetesClusterResolver(
        {"worker": ["app=a", "app=b"]}, tf_server_port=5000, override_client=Client()
    )
    assert r.cluster_spec().as_dict() == {"worker": ["10.0.0.1:5000", "10.0.0.2:5000", "10.0.0.3:5000"]}
    assert r.master("worker", 2) == "grpc://10.0.0.3:5000"


def test_preemption_watcher_keeps_the_sigterm_notice():
    watcher = tf.distribute.experimental.PreemptionWatcher()
    try:
        assert watcher.preemption_message is None
        os.kill(os.getpid(), signal.SIGTERM)  # handled by the watcher: the process goes on
        assert "SIGTERM" in watcher.preemption_message
    finally:
        watcher.close()


def test_coordinator_loop_and_stragglers():
    coord = tf.train.Coordinator()
    calls = []
    coord.loop(0.01, lambda: calls.append(1) or (len(calls) >= 3 and coord.request_stop()))
    coord.join(stop_grace_period_secs=5)
    assert len(calls) >= 3
    coord.clear_stop()
    release = threading.Event()
    stuck = threading.Thread(target=release.wait, name="stuck-thread", daemon=True)
    stuck.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stuck-thread"):
        coord.join([stuck], stop_grace_period_secs=0.05)
    release.set()


def test_coordinator_keeps_the_first_exception_only():
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("first"))
    coord.request_stop(KeyError("second"))
    with pytest.raises(ValueError, match="first"):
        coord.raise_requested_exception()


def test_ema_shadow_follows_the_variable_on_its_device_and_dtype():
    v = tf.Variable([0.0, 10.0])
    ema = tf.train.ExponentialMovingAverage(0.5)
    ema.apply([v])
    v.assign([2.0, 0.0])
    ema.apply([v])
    assert ema.average(v).numpy().tolist() == [1.0, 5.0]
    assert ema.average(v).name == "Variable/ExponentialMovingAverage:0"


def test_op_determinism_turns_torchs_deterministic_algorithms_on():
    import torch

    from unison.ops import determinism

    before = torch.are_deterministic_algorithms_enabled()
    was_on = determinism.is_op_determinism_enabled()
    try:
        tf.config.experimental.enable_op_determinism()
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        # both switches back: left on, every later unseeded shuffle in this process raises
        if not was_on:
            determinism.disable_op_determinism()
        torch.use_deterministic_algorithms(before)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_memory_info_details_and_tf32():
    import torch

    gpu = tf.config.list_physical_devices("GPU")[0]
    details = tf.config.experimental.get_device_details(gpu)
    assert details["compute_capability"] == torch.cuda.get_device_capability(0)
    tf.config.experimental.reset_memory_stats("GPU:0")
    before = tf.config.experimental.get_memory_info("GPU:0")
    block = torch.empty(64 << 20, dtype=torch.uint8, device="cuda:0")
    during = tf.config.experimental.get_memory_info("/device:GPU:0")
    assert during["current"] >= before["current"] + block.numel() and during["peak"] >= during["current"]
    del block
    tf.config.experimental.reset_memory_stats("GPU:0")
    assert tf.config.experimental.get_memory_info("GPU:0")["peak"] == tf.config.experimental.get_memory_usage("GPU:0")
    was = tf.config.experimental.tensor_float_32_execution_enabled()
    try:
        tf.config.experimental.enable_tensor_float_32_execution(True)
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(was)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_check_numerics_mode_on_gpu_tensors():
    import torch

    x = torch.tensor([0.0], device="cuda:0")
    tf.debugging.enable_check_numerics()
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity or NaN"):
            tf.math.log(x)
    finally:
        tf.debugging.disable_check_numerics()
