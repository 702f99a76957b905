"""One home per public exception, errors that cross the PS wire by code, one ReduceOp, no import circles."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest
import torch

import unison as tf
from unison import errors
from unison.comm.reduce_op import ReduceOp
from unison.comm.rpc import RpcClient, RpcServer, generate_token
from unison.distribute.parameter_server import protocol
from unison.errors import RemoteError, WorkerRestartedError

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "unison"


def test_every_public_exception_class_is_defined_in_errors_py() -> None:
    elsewhere = []
    for path in SRC.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ClassDef)
                and not node.name.startswith("_")
                and any(
                    isinstance(b, ast.Name) and (b.id.endswith(("Error", "Exception")) or b.id == "UnisonError")
                    for b in node.bases
                )
            ):
                elsewhere.append(f"{path.relative_to(SRC)}:{node.name}")
    # RunFailed is the bench runner's internal signal; IdxFormatError is private to the IDX reader
    assert sorted(elsewhere) == ["bench/runner.py:RunFailed", "keras/datasets/_idx.py:IdxFormatError"], elsewhere


def test_errors_stay_importable_where_users_import_them() -> None:
    from unison.comm.rpc import TaskUnavailableError
    from unison.distribute.coordinator import FunctionError, ParameterServerUnavailableError
    from unison.distribute.experimental.coordinator import CancelledError
    from unison.optim.safety import NonFiniteGradientError
    from unison.train.checkpoint import CorruptCheckpointError as tf_train
    from unison.train.files import CorruptCheckpointError as internal

    assert internal is tf_train is errors.CorruptCheckpointError  # one type for both checkpoint kinds
    assert FunctionError is errors.FunctionError and CancelledError is errors.CancelledError
    assert ParameterServerUnavailableError is errors.ParameterServerUnavailableError
    assert TaskUnavailableError is errors.TaskUnavailableError
    assert NonFiniteGradientError is errors.NonFiniteGradientError


def test_protocol_names_every_operation_the_tasks_serve() -> None:
    from unison.distribute.parameter_server.store import ParameterStore
    from unison.distribute.parameter_server.worker import WorkerRuntime

    assert set(ParameterStore("ps:0").handlers()) == set(protocol.PS_OPS)
    runtime = WorkerRuntime(0, 1, [], token=None, tls=None)
    assert set(runtime.handlers()) == set(protocol.WORKER_OPS)
    assert len(set(protocol.PS_OPS + protocol.WORKER_OPS + (protocol.PING,))) == 17


class _Impostor(Exception):
    """An exception that is not unison's, whatever its class is called."""


def test_errors_cross_the_wire_as_codes_not_class_names() -> None:
    impostor = type("WorkerRestartedError", (_Impostor,), {})  # same class name, not our error

    def restarted(header: dict, tensors: list) -> tuple:
        raise WorkerRestartedError("worker:0 restarted since the coordinator last synchronised it.")

    def same_name(header: dict, tensors: list) -> tuple:
        raise impostor("a user's own exception")

    token = generate_token()
    server = RpcServer("127.0.0.1:0", {"restarted": restarted, "same_name": same_name}, token=token)
    client = RpcClient(f"127.0.0.1:{server.port}", task="worker:0", token=token)
    try:
        with pytest.raises(RemoteError) as ours:
            client.call("restarted")
        assert ours.value.remote_code == WorkerRestartedError.wire_code == "worker_restarted"
        assert protocol.is_remote(ours.value, WorkerRestartedError)
        with pytest.raises(RemoteError) as theirs:
            client.call("same_name")
        assert theirs.value.remote_type == "WorkerRestartedError"  # the name is still shown to people
        assert theirs.value.remote_code is None and not protocol.is_remote(theirs.value, WorkerRestartedError)
    finally:
        client.close()
        server.stop()


def test_one_reduce_op_in_tf_and_horovod_spellings() -> None:
    assert tf.distribute.ReduceOp is tf.optim.ReduceOp is ReduceOp
    assert tf.Average is tf.distribute.ReduceOp.MEAN and tf.Sum is tf.distribute.ReduceOp.SUM
    strategy = tf.distribute.get_strategy()
    value = torch.tensor([1.0, 3.0])
    assert strategy.reduce("mean", value, axis=0).item() == 2.0
    assert strategy.reduce(tf.Average, value, axis=0).item() == 2.0  # Horovod's spelling, TF's API
    tf.init()  # alone: one process
    assert tf.allreduce(value, op="sum").tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match=r"Unknown op 'adasum'.*ReduceOp.SUM or ReduceOp.MEAN"):
        strategy.reduce("adasum", value)
    with pytest.raises(ValueError, match=r"Unknown op 'max'.*unison.Average or unison.Sum"):
        tf.allreduce(value, op="max")


@pytest.mark.slow
@pytest.mark.parametrize("module", ["unison.cluster.elastic", "unison.cluster.slurm", "unison.cluster.resolvers"])
def test_each_cluster_resolver_module_imports_alone(module: str) -> None:
    # each imports cluster.base, never another resolver module half-initialised
    code = f"import {module}; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "ok", out.stderr


def test_no_private_name_crosses_the_cluster_modules() -> None:
    crossing = []
    for path in (SRC / "cluster").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("unison.cluster"):
                crossing += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert not crossing, crossing
