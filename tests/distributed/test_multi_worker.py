"""MultiWorkerMirroredStrategy with real worker processes, each started with its own TF_CONFIG.

The equivalence contract (docs/semantics.md#equivalence) across workers: 2 workers x 1 replica (TF_CONFIG from
`unison launch --tf-config`, and plain torchrun) and 2 workers x 2 replicas (TF_CONFIG by hand)
end where one process ends on the global batch (parameters within 1e-5), for Keras fit, a custom
loop and distribute_datasets_from_function. Then the failures users
meet: a port in use, a chief that never answers, a worker that dies.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from multi_worker_fns import (
    HERE,
    Zygote,
    keras_and_custom_loops,
    shared_zygote,
    start_worker,
)

from unison.testing.multi_worker import clean_env, free_ports, log_of, tf_config, wait_all


def _close(a: np.ndarray, b: np.ndarray, tol: float = 1e-5) -> bool:
    return np.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0.0))))


@pytest.fixture(scope="module")
def one_process() -> dict:
    return keras_and_custom_loops(single=True)


@pytest.fixture
def zygote() -> Zygote:
    return shared_zygote()


def check_equal(results: list[dict], ref: dict, replicas: int) -> None:
    """Every replica's parameters and history equal the one-process reference."""
    for res in results:
        assert res["replicas"] == replicas
        for key in [k for k in ("keras", "custom", "from_function") if k in res]:
            assert len(res[key]) == len(ref[key])
            for got, want in zip(res[key], ref[key]):
                assert _close(got, want), (key, float(np.abs(got - want).max()))
        for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
            assert abs(res["history"][key][0] - ref["history"][key][0]) <= 1e-6, key
    assert [r["chief"] for r in results] == [True] + [False] * (len(results) - 1)


@pytest.mark.slow
def test_two_workers_with_two_replicas_each_match_one_process(tmp_path, one_process) -> None:
    # TF_CONFIG set by hand; each worker starts its second local replica by re-running itself
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    workers = [
        start_worker(
            "keras_and_custom_loops",
            str(tmp_path),
            i,
            tf_config(addresses, i),
            {"replicas_per_worker": 2, "keras_only": True},
        )
        for i in range(2)
    ]
    wait_all(workers, str(tmp_path), timeout=240)
    # worker 0 holds ranks 0-1, worker 1 ranks 2-3; the extra local replicas wrote "<file>.replica1"
    results = [
        workers[0].result(),
        _replica(workers[0].result_file),
        workers[1].result(),
        _replica(workers[1].result_file),
    ]
    check_equal(results, one_process, replicas=4)


def _replica(result_file: str) -> dict:
    import pickle

    with open(result_file + ".replica1", "rb") as fh:
        return pickle.load(fh)


@pytest.mark.parametrize(
    "launcher,keras_only",
    [
        (["-m", "unison.cli", "launch", "--tf-config", "--nproc-per-node", "2"], False),
        (["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"], True),
    ],
    ids=["2-workers-tf-config", "plain-torchrun"],
)
@pytest.mark.slow
def test_two_workers_match_one_process(tmp_path, one_process, launcher, keras_only) -> None:
    # `MultiWorkerMirroredStrategy()` as users write it: each process gets its own TF_CONFIG from
    # `unison launch --tf-config` (or torchrun's variables); Keras fit, a custom loop and
    # distribute_datasets_from_function all end where one process ends on the global batch.
    result = tmp_path / "result"
    cmd = [
        sys.executable,
        *launcher,
        os.path.join(HERE, "multi_worker_fns.py"),
        "keras_and_custom_loops",
        str(result),
        json.dumps({"default": True, "keras_only": keras_only}),
    ]
    proc = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    results = []
    for rank in range(2):
        with open(f"{result}.{rank}", "rb") as fh:
            results.append(pickle.load(fh))
    check_equal(results, one_process, replicas=2)
    assert ("custom" in results[0]) is not keras_only


def _strategy_for(config: str, timeout: float):
    import unison as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver(environ={"TF_CONFIG": config})
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout)
    return tf.distribute.MultiWorkerMirroredStrategy(resolver, options)


def test_port_in_use_names_the_chief_field(monkeypatch) -> None:
    # This process is the chief, but its port is taken: it fails before any process group exists.
    from torch.distributed import TCPStore

    from unison.launch.rendezvous import RendezvousError

    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")  # restored after the test (the strategy may set it)
    port = free_ports(1)[0]
    squatter = TCPStore("127.0.0.1", port, 1, is_master=True, wait_for_workers=False)
    addresses = [f"127.0.0.1:{port}", f"127.0.0.1:{free_ports(1)[0]}"]
    with pytest.raises(RendezvousError) as info:
        _strategy_for(tf_config(addresses, 0), timeout=10)
    message = str(info.value)
    assert f"cannot serve the rendezvous on port {port}" in message
    assert "already in use" in message and "TF_CONFIG cluster.worker[0]" in message
    assert "Fix: choose a free port for cluster.worker[0]" in message
    del squatter


def test_chief_that_never_answers_fails_within_the_timeout(monkeypatch) -> None:
    # Nothing listens on the chief's port: this worker's connection attempts go unanswered.
    from unison.launch.rendezvous import RendezvousError

    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")  # restored after the test (the strategy may set it)
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    start = time.monotonic()
    with pytest.raises(RendezvousError) as info:
        _strategy_for(tf_config(addresses, 1), timeout=2)
    elapsed = time.monotonic() - start
    message = str(info.value)
    assert f"worker:1 could not reach the chief at {addresses[0]}" in message
    assert "TF_CONFIG cluster.worker[0]" in message and "within 2s" in message
    assert "never answered" in message
    assert 2 <= elapsed < 2 + 10  # torch's connect retries stay within about the timeout


def test_worker_that_never_arrives_is_named_by_the_chief(monkeypatch) -> None:
    from unison.launch.rendezvous import RendezvousError

    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")  # restored after the test (the strategy may set it)
    addresses = [f"127.0.0.1:{p}" for p in free_ports(3)]
    start = time.monotonic()
    with pytest.raises(RendezvousError) as info:
        _strategy_for(tf_config(addresses, 0), timeout=2)
    message = str(info.value)
    assert f"worker:0 ({addresses[0]}) waited 2s at the rendezvous {addresses[0]}" in message
    assert f"these tasks never arrived: worker:1 ({addresses[1]}), worker:2 ({addresses[2]})" in message
    assert "Fix: start them with the same cluster in their TF_CONFIG" in message
    assert time.monotonic() - start < 2 + 10


@pytest.mark.slow
def test_killed_worker_is_named_by_the_survivor(tmp_path, zygote) -> None:
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    marker = tmp_path / "markers"
    marker.mkdir()
    kwargs = {"marker_dir": str(marker), "timeout": 20}
    workers = [zygote.start("collective_loop", str(tmp_path), i, tf_config(addresses, i), kwargs) for i in range(2)]
    try:
        deadline = time.monotonic() + 120
        while not (marker / "running.1").exists() and time.monotonic() < deadline:
            assert all(w.proc.poll() is None for w in workers), log_of(str(tmp_path), 0)
            time.sleep(0.05)
        workers[1].proc.kill()  # kill -9
        killed_at = time.monotonic()
        workers[0].proc.wait(timeout=60)
        elapsed = time.monotonic() - killed_at
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
    log = log_of(str(tmp_path), 0)
    assert workers[0].proc.returncode != 0
    m = re.search(
        r"Collective '([\w.]+)' \(#\d+\) failed on worker:0 .*Unreachable: worker:1 \("
        + re.escape(addresses[1])
        + r"\)",
        log,
    )
    assert m, log[-3000:]
    assert m.group(1).startswith("strategy.reduce")  # the operation is named
    assert elapsed < 20  # within the collective timeout


SEED_PROGRAM = """
import unison as tf

strategy = tf.distribute.MultiWorkerMirroredStrategy()

with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(128, activation='relu', input_shape=(784,)),
        tf.keras.layers.Dense(10, activation='softmax')
    ])
    model.compile(optimizer='adam',
                  loss='sparse_categorical_crossentropy',
                  metrics=['accuracy'])

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, 784).astype('float32') / 255
x_test = x_test.reshape(-1, 784).astype('float32') / 255

model.fit(x_train, y_train, epochs=5, validation_data=(x_test, y_test), verbose=2)
"""


@pytest.mark.slow  # 5 epochs of MNIST on 2 workers: about 2 minutes on 2 cores
def test_seed_program_on_two_workers_reaches_97_percent(tmp_path, mnist_dir) -> None:
    script = tmp_path / "seed.py"
    script.write_text(SEED_PROGRAM)
    cmd = [sys.executable, "-m", "unison.cli", "launch", "--tf-config", "--nproc-per-node", "2", str(script)]
    proc = subprocess.run(
        cmd, env=clean_env(UNISON_DATA_DIR=str(mnist_dir)), capture_output=True, text=True, timeout=900, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = re.findall(r"^1875/1875 - .* - val_accuracy: ([\d.]+) - val_loss: [\d.]+$", proc.stdout, re.MULTILINE)
    assert len(lines) == 5, proc.stdout  # one line per epoch, printed by the chief only
    assert float(lines[-1]) >= 0.97, proc.stdout


def test_run_multi_worker_returns_each_workers_result() -> None:
    # the public harness: three workers of a TF_CONFIG cluster each reduce once and report
    from unison.testing import run_multi_worker

    results = run_multi_worker(
        "multi_worker_fns:just_join", num_workers=3, kwargs={"timeout": 60.0}, timeout=180, sys_path=[HERE]
    )
    assert results == [{"sum": 3.0}] * 3


def test_run_multi_worker_names_the_failing_worker() -> None:
    from unison.errors import ReplicaFailedError
    from unison.testing import run_multi_worker

    with pytest.raises(ReplicaFailedError, match=r"(?s)workers \[0, 1\] of 2 failed.*ModuleNotFoundError"):
        run_multi_worker("no_such_module:fn", num_workers=2, timeout=60)
    with pytest.raises(ValueError, match="'module:function'"):
        run_multi_worker("just_join", num_workers=2)


def test_a_result_file_in_a_folder_others_can_write_is_not_unpickled(tmp_path) -> None:
    import pickle

    from unison.testing.multi_worker import Worker

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "result.0").write_bytes(pickle.dumps({"ok": True}))
    worker = Worker(0, None, str(shared / "result.0"))  # type: ignore[arg-type]
    assert worker.result() == {"ok": True}  # a private folder (pytest's tmp_path is 0700)
    shared.chmod(0o777)
    with pytest.raises(PermissionError, match="Refusing to unpickle"):
        worker.result()
