"""Cluster specs, resolvers (TF_CONFIG, torchrun, SLURM, explicit), job plans and their errors.

Every bad TF_CONFIG must name the field and the fix before any process connects
(docs/semantics.md#errors); these run in one process, without a network.
"""

from __future__ import annotations

import json
import types

import pytest

import unison as tf
from unison.cluster import (
    ClusterSpec,
    SimpleClusterResolver,
    SlurmClusterResolver,
    TaskSpec,
    TFConfigClusterResolver,
    TorchElasticClusterResolver,
    UnisonLauncherClusterResolver,
    default_cluster_resolver,
    parse_address,
)
from unison.cluster.slurm import expand_hostlist, expand_tasks_per_node


def _tf(config: object) -> TFConfigClusterResolver:
    raw = config if isinstance(config, str) else json.dumps(config)
    return TFConfigClusterResolver(environ={"TF_CONFIG": raw})


TWO_WORKERS = {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}


# --- ClusterSpec and TaskSpec ---------------------------------------------------------------------
def test_cluster_spec_accessors_and_tf_rules() -> None:
    spec = ClusterSpec({"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p:1"], "evaluator": ["e:1"]})
    assert spec.jobs == ["chief", "worker", "ps", "evaluator"]
    assert spec.num_tasks("worker") == 2 and spec.task_address("worker", 1) == "w1:1"
    assert spec.task_indices("ps") == [0] and spec.job_tasks("worker") == ["w0:1", "w1:1"]
    assert str(spec.chief_task()) == "chief:0"
    assert [str(t) for t in spec.training_tasks()] == ["chief:0", "worker:0", "worker:1"]
    assert str(ClusterSpec(TWO_WORKERS).chief_task()) == "worker:0"  # no chief job: worker 0
    assert ClusterSpec(spec) == spec and hash(ClusterSpec(spec)) == hash(spec)
    assert spec.as_dict()["worker"] == ["w0:1", "w1:1"]
    sparse = ClusterSpec({"worker": {1: "w1:1"}})
    assert sparse.as_dict() == {"worker": {1: "w1:1"}} and sparse.job_tasks("worker") == [None, "w1:1"]
    assert not ClusterSpec({}) and ClusterSpec({}).chief_task() is None
    with pytest.raises(ValueError, match="No such job in the cluster: 'ps'"):
        ClusterSpec(TWO_WORKERS).num_tasks("ps")


@pytest.mark.parametrize(
    "address,expected",
    [
        ("host:2222", ("host", 2222)),
        ("10.0.0.1:1", ("10.0.0.1", 1)),
        ("[::1]:8888", ("::1", 8888)),
        ("worker-1.svc.cluster.local:2222", ("worker-1.svc.cluster.local", 2222)),
    ],
)
def test_addresses_parse(address: str, expected: tuple) -> None:
    assert parse_address(address) == expected


@pytest.mark.parametrize(
    "bad", ["host", "host:", ":2222", "host:0", "host:65536", "host:22x", "a b:1", "[::1]2222", 2222]
)
def test_malformed_addresses_name_the_value_and_the_form(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        parse_address(bad, "cluster.worker[0]")
    assert "cluster.worker[0]" in str(info.value) and "host:port" in str(info.value)
    assert repr(bad) in str(info.value)


def test_cluster_spec_validation() -> None:
    with pytest.raises(ValueError, match=r"Duplicate address 'a:1': cluster.worker\[0\] and cluster.ps\[0\]"):
        ClusterSpec({"worker": ["a:1"], "ps": ["a:1"]})
    with pytest.raises(ValueError, match="at most one chief"):
        ClusterSpec({"chief": ["a:1", "b:1"]})
    with pytest.raises(ValueError, match="invalid job name"):
        ClusterSpec({"bad job": ["a:1"]})
    with pytest.raises(TypeError, match="must be a list"):  # TF's error class
        ClusterSpec({"worker": "a:1"})
    with pytest.raises(ValueError, match="task type"):
        TaskSpec("", 0)
    with pytest.raises(ValueError, match="task index"):
        TaskSpec("worker", -1)
    assert str(TaskSpec("worker", 3)) == "worker:3"


# --- TF_CONFIG: one test per mistake ------------------------------------------------------------------
def test_tf_config_not_json() -> None:
    with pytest.raises(ValueError) as info:
        _tf("{'cluster': {}}")
    text = str(info.value)
    assert text.startswith("TF_CONFIG: it is not valid JSON")
    assert "line 1 column 2" in text and "Fix:" in text and "single quotes" in text
    assert "Received: TF_CONFIG=\"{'cluster': {}}\"" in text


def test_tf_config_missing_task() -> None:
    resolver = _tf({"cluster": TWO_WORKERS})  # a resolver may exist without a task ...
    with pytest.raises(ValueError) as info:  # ... but a worker cannot join without one
        tf.distribute.MultiWorkerMirroredStrategy(resolver)
    text = str(info.value)
    assert "TF_CONFIG: it has no 'task' field" in text
    assert 'Fix: add "task": {"type": "worker", "index": i}' in text


def test_tf_config_index_out_of_range() -> None:
    with pytest.raises(ValueError) as info:
        _tf({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": 2}})
    text = str(info.value)
    assert "task.index=2 is out of range: cluster.worker has 2 task(s) (indices 0..1)" in text
    assert "Fix: give each worker process its own index from 0 to 1" in text


def test_tf_config_type_not_in_cluster() -> None:
    with pytest.raises(ValueError) as info:
        _tf({"cluster": TWO_WORKERS, "task": {"type": "chief", "index": 0}})
    text = str(info.value)
    assert "task.type='chief' is not a job of 'cluster' (jobs: 'worker')" in text
    assert "Fix: use one of those job names in task.type" in text


def test_tf_config_duplicate_addresses() -> None:
    with pytest.raises(ValueError) as info:
        _tf({"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.1:2222"]}, "task": {"type": "worker", "index": 0}})
    text = str(info.value)
    assert text.startswith("TF_CONFIG: Duplicate address '10.0.0.1:2222'")
    assert "cluster.worker[0] and cluster.worker[1]" in text and "Fix: give cluster.worker[1] another port" in text


def test_tf_config_malformed_host_port() -> None:
    with pytest.raises(ValueError) as info:
        _tf({"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2"]}, "task": {"type": "worker", "index": 0}})
    text = str(info.value)
    assert "Malformed address at cluster.worker[1]" in text and "Received: cluster.worker[1]='10.0.0.2'" in text
    assert 'Expected "host:port"' in text


@pytest.mark.parametrize(
    "config,fragment",
    [
        ([1, 2], "must be a JSON object, not list"),
        ({"task": {"type": "worker", "index": 0}}, "no 'cluster' field"),
        ({"cluster": {"worker": "a:1"}, "task": {"type": "worker", "index": 0}}, "'cluster' must map job names"),
        ({"cluster": TWO_WORKERS, "task": "worker:0"}, "'task' must be an object"),
        ({"cluster": TWO_WORKERS, "task": {"type": "worker"}}, "task has a 'type' but no 'index'"),
        ({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": "0"}}, "task.index must be an integer"),
        ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}}, "at most one chief"),
    ],
)
def test_tf_config_other_mistakes(config: object, fragment: str) -> None:
    with pytest.raises(ValueError, match="TF_CONFIG") as info:
        _tf(config)
    assert fragment in str(info.value)


def test_tf_config_plans_follow_tfs_rank_order() -> None:
    cluster = {"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p:1"], "evaluator": ["e:1"]}
    plans = {
        t: _tf({"cluster": cluster, "task": {"type": t.split(":")[0], "index": int(t.split(":")[1])}}).job_plan(2)
        for t in ("chief:0", "worker:0", "worker:1")
    }
    assert {t: (p.rank, p.world_size, p.store_mode) for t, p in plans.items()} == {
        "chief:0": (0, 6, "serve"),
        "worker:0": (2, 6, "join"),
        "worker:1": (4, 6, "join"),
    }
    for p in plans.values():
        assert p.store_address == "c:1" and p.chief_field == "cluster.chief[0]"
        assert p.task_of_rank(3) == "worker:0 (w0:1) replica 1"
    evaluator = _tf({"cluster": cluster, "task": {"type": "evaluator", "index": 0}}).job_plan(1)
    assert evaluator.world_size == 1  # TF: the evaluator runs on its own
    with pytest.raises(ValueError, match="parameter server"):
        _tf({"cluster": cluster, "task": {"type": "ps", "index": 0}}).job_plan(1)


def test_tf_config_resolver_answers_tfs_questions() -> None:
    r = _tf({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"})
    assert (r.task_type, r.task_id, r.rpc_layer) == ("worker", 1, "grpc")
    assert r.master() == "grpc://10.0.0.2:2222" and r.master("worker", 0, rpc_layer="") == "grpc://10.0.0.1:2222"
    assert r.cluster_spec() == ClusterSpec(TWO_WORKERS)
    assert (
        TFConfigClusterResolver(
            task_type="worker", task_id=0, environ={"TF_CONFIG": json.dumps({"cluster": TWO_WORKERS})}
        ).task_id
        == 0
    )
    assert TFConfigClusterResolver(environ={}).cluster_spec() == ClusterSpec({})
    assert TFConfigClusterResolver(environ={}, num_accelerators={"CPU": 2}).num_accelerators() == {"CPU": 2}
    with pytest.raises(ValueError, match="num_accelerators"):
        TFConfigClusterResolver(environ={}, num_accelerators={"TPU": 1})


def test_colocated_workers_share_the_cores() -> None:
    cluster = {"worker": ["127.0.0.1:1", "127.0.0.1:2", "10.0.0.9:3"]}
    plan = _tf({"cluster": cluster, "task": {"type": "worker", "index": 1}}).job_plan(1)
    assert plan.colocated_workers == 2 and plan.placement().local_world_size == 2
    assert plan.local_host == "127.0.0.1"


def test_launched_replica_must_agree_on_replicas_per_worker() -> None:
    env = {
        "TF_CONFIG": json.dumps({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": 1}}),
        "UNISON_WORKER_REPLICA": "1",
        "UNISON_WORKER_REPLICAS": "2",
    }
    plan = TFConfigClusterResolver(environ=env).job_plan(2)
    assert (plan.rank, plan.local_rank, plan.launched) == (3, 1, True)
    with pytest.raises(ValueError, match="one of 2 replicas of worker:1"):
        TFConfigClusterResolver(environ=env).job_plan(3)


# --- torchrun, SLURM, explicit, default ----------------------------------------------------------------
TORCHRUN = {
    "RANK": "3",
    "WORLD_SIZE": "4",
    "LOCAL_RANK": "1",
    "LOCAL_WORLD_SIZE": "2",
    "GROUP_WORLD_SIZE": "2",
    "MASTER_ADDR": "node0",
    "MASTER_PORT": "29500",
    "TORCHELASTIC_RUN_ID": "job",
    "TORCHELASTIC_RESTART_COUNT": "2",
}


def test_torchrun_resolver() -> None:
    r = TorchElasticClusterResolver(TORCHRUN)
    plan = r.job_plan(1)
    assert (plan.rank, plan.world_size, plan.local_rank, plan.store_mode) == (3, 4, 1, "env")
    assert plan.store_address == "node0:29500" and plan.run_key == "unison/job/2"
    assert plan.local_host is None and plan.placement().local_world_size == 2  # two nodes
    assert (r.task_type, r.task_id) == ("worker", 3)
    assert r.cluster_spec().as_dict() == {"worker": ["node0:29500"]}
    single_node = TorchElasticClusterResolver({**TORCHRUN, "GROUP_WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "4"})
    assert single_node.job_plan(1).local_host == "127.0.0.1"
    with pytest.raises(ValueError, match="--nproc-per-node"):
        r.job_plan(2)
    with pytest.raises(ValueError, match="MASTER_PORT must be an integer"):
        TorchElasticClusterResolver({**TORCHRUN, "MASTER_PORT": "x"})


def test_slurm_resolver() -> None:
    assert expand_hostlist("n[01-02],gpu[7,9-10]x,solo") == ["n01", "n02", "gpu7x", "gpu9x", "gpu10x", "solo"]
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    env = {
        "SLURM_PROCID": "2",
        "SLURM_STEP_NODELIST": "n[1-2]",
        "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
        "SLURM_JOB_ID": "7",
        "SLURM_STEP_ID": "0",
    }
    r = SlurmClusterResolver(environ=env, port_base=9000)
    assert r.cluster_spec().as_dict() == {"worker": ["n1:9000", "n1:9001", "n2:9000", "n2:9001"]}
    plan = r.job_plan(1)
    assert (plan.rank, plan.world_size, plan.store_address) == (2, 4, "n1:9000")
    with_chief = SlurmClusterResolver(jobs={"chief": 1, "worker": 3}, environ=env)
    assert (with_chief.task_type, with_chief.task_id) == ("worker", 1)
    assert with_chief.job_plan(1).chief_field == "SLURM cluster.chief[0]"
    with pytest.raises(ValueError, match="add up to 4"):
        SlurmClusterResolver(jobs={"worker": 3}, environ=env)
    with pytest.raises(ValueError, match="srun"):
        SlurmClusterResolver(environ={"SLURM_PROCID": "0"})
    with pytest.raises(ValueError, match="Malformed SLURM host list"):
        expand_hostlist("n[1-")


def test_simple_resolver_and_default_order() -> None:
    spec = ClusterSpec(TWO_WORKERS)
    r = SimpleClusterResolver(spec, task_type="worker", task_id=1, num_accelerators={"CPU": 2})
    assert (
        r.job_plan(2).rank == 2 and r.master("worker", 1) == "10.0.0.2:2222" and r.master() == ""
    )  # TF: master= of the constructor
    with pytest.raises(ValueError, match="task_id=5 is not a task"):
        SimpleClusterResolver(spec, task_type="worker", task_id=5)
    tf_env = {"TF_CONFIG": json.dumps({"cluster": TWO_WORKERS, "task": {"type": "worker", "index": 0}})}
    assert isinstance(default_cluster_resolver({**tf_env, **TORCHRUN}), TFConfigClusterResolver)
    assert isinstance(default_cluster_resolver(TORCHRUN), TorchElasticClusterResolver)
    launcher = {"UNISON_RANK": "1", "UNISON_WORLD_SIZE": "2", "UNISON_MASTER_PORT": "1234"}
    assert isinstance(default_cluster_resolver(launcher), UnisonLauncherClusterResolver)
    slurm = {"SLURM_PROCID": "0", "SLURM_JOB_NODELIST": "n1"}
    assert isinstance(default_cluster_resolver(slurm), SlurmClusterResolver)
    alone = default_cluster_resolver({})
    assert alone.job_plan(1).world_size == 1


# --- the strategy's arguments ---------------------------------------------------------------------------
def test_single_worker_strategy_and_options() -> None:
    strategy = tf.distribute.MultiWorkerMirroredStrategy(TFConfigClusterResolver(environ={}))
    assert strategy.num_replicas_in_sync == 1 and strategy.num_workers == 1
    assert strategy.extended.should_checkpoint and strategy.extended.task_type == "worker"
    assert isinstance(strategy.cluster_resolver, TFConfigClusterResolver)
    options = tf.distribute.experimental.CommunicationOptions(
        bytes_per_pack=1 << 20,
        timeout_seconds=30,
        implementation=tf.distribute.experimental.CommunicationImplementation.RING,
    )
    assert options.implementation.value == "RING"
    assert tf.distribute.experimental.CollectiveCommunication is tf.distribute.experimental.CommunicationImplementation
    with pytest.raises(ValueError, match="timeout_seconds must be a number > 0"):
        tf.distribute.experimental.CommunicationOptions(timeout_seconds=0)
    with pytest.raises(ValueError, match="implementation must be a CommunicationImplementation"):
        tf.distribute.experimental.CommunicationOptions(implementation="mpi")
    with pytest.raises(ValueError, match="bytes_per_pack"):
        tf.distribute.experimental.CommunicationOptions(bytes_per_pack=-1)
    with pytest.raises(TypeError, match="cluster_resolver must be"):
        tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver={"worker": []})
    with pytest.raises(ValueError, match="communication_options must be"):
        tf.distribute.MultiWorkerMirroredStrategy(communication_options={"timeout_seconds": 1})
    if not __import__("torch").cuda.is_available():
        with pytest.warns(UserWarning, match="NCCL needs GPU replicas"):
            tf.distribute.MultiWorkerMirroredStrategy(
                TFConfigClusterResolver(environ={}),
                tf.distribute.experimental.CommunicationOptions(implementation="NCCL"),
            )
    with pytest.raises(ValueError, match="use tf.distribute.MirroredStrategy for one host"):
        tf.distribute.MultiWorkerMirroredStrategy(TFConfigClusterResolver(environ={}, num_accelerators={"CPU": 2}))


# --- unison launch ------------------------------------------------------------------------------------------
def _launch_args(**overrides: object) -> types.SimpleNamespace:
    args = dict(
        nproc_per_node=2,
        nnodes=1,
        node_rank=0,
        master=None,
        max_restarts=0,
        tf_config=False,
        module=False,
        script=__file__,
        script_args=["--epochs", "1"],
    )
    args.update(overrides)
    return types.SimpleNamespace(**args)


def test_launch_builds_torchrun_arguments() -> None:
    from unison.launch.cli import torchrun_argv

    argv, env = torchrun_argv(_launch_args(max_restarts=3))
    assert argv[:4] == ["--nproc-per-node", "2", "--max-restarts", "3"] and "--standalone" in argv
    assert argv[-3:] == [__file__, "--epochs", "1"] and env == {}
    argv, _ = torchrun_argv(_launch_args(nnodes=2, node_rank=1, master="10.0.0.1:29500"))
    assert argv[argv.index("--master-addr") + 1] == "10.0.0.1" and argv[argv.index("--master-port") + 1] == "29500"
    assert argv[argv.index("--node-rank") + 1] == "1" and "--standalone" not in argv
    argv, env = torchrun_argv(_launch_args(tf_config=True), free_ports=[4001, 4002])
    assert argv[-5:-3] == ["-m", "unison.launch.tf_config_entry"]
    assert json.loads(env["UNISON_TF_CONFIG_CLUSTER"]) == {"worker": ["127.0.0.1:4001", "127.0.0.1:4002"]}


@pytest.mark.parametrize(
    "overrides,fragment",
    [
        ({"nproc_per_node": 0}, "--nproc-per-node must be >= 1"),
        ({"nnodes": 2}, "--nnodes > 1 needs --master"),
        ({"nnodes": 2, "node_rank": 2, "master": "a:1"}, "--node-rank must be in [0, --nnodes)"),
        ({"master": "nohost"}, "Malformed address at --master"),
        ({"tf_config": True, "nnodes": 2, "master": "a:1"}, "--tf-config starts workers on this machine only"),
        ({"script": "missing.py"}, "No such script: 'missing.py'"),
    ],
)
def test_launch_rejects_bad_arguments(capsys, overrides: dict, fragment: str) -> None:
    from unison.launch.cli import run

    assert run(_launch_args(**overrides)) == 2
    assert fragment in capsys.readouterr().err


def test_tf_config_entry_gives_each_process_its_task() -> None:
    from unison.launch.tf_config_entry import tf_config_for

    config = json.loads(tf_config_for({"worker": ["127.0.0.1:1", "127.0.0.1:2"]}, 1))
    assert config["task"] == {"type": "worker", "index": 1}
    assert _tf(config).job_plan(1).rank == 1
