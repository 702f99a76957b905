"""More of TF's distributed-training programs, run as a user runs them (see test_tf_examples.py).

The parameter-server tutorial, the distributed-training guide's code cells, keras.io's "Simple
MNIST convnet" inside MirroredStrategy, and Horovod's pytorch_mnist.py with `import unison as hvd`
under `unison launch`. Each is a file under examples/ whose header lists every changed line; each
runs here shortened through the environment variables or flags its header names, must exit 0 and
print what the original prints.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

TIMEOUT = 600


def _env(mnist_dir, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(UNISON_DATA_DIR=str(mnist_dir), PYTHONUNBUFFERED="1", **extra)
    return env


def _run(cmd: list[str], env: dict[str, str], cwd) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=cwd)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_parameter_server_tutorial(repo, tmp_path):
    env = _env(tmp_path, NUM_WORKERS="2", FIT_EPOCHS="2", EPOCHS="4", WORK_DIR=str(tmp_path / "work"))
    out = _run([sys.executable, str(repo / "examples" / "tf" / "parameter_server_training.py")], env, tmp_path)
    assert len(re.findall(r"^20/20 .* - loss: [\d.]+", out, re.M)) == 2, out  # Model.fit, 2 epochs
    assert "ckpt" in os.listdir(tmp_path / "work"), os.listdir(tmp_path / "work")  # ModelCheckpoint
    # the embedding table of 8 x 16384 floats is split by MinSizePartitioner over both servers
    devices = re.findall(r"^/job:ps/replica:0/task:(\d)/device:CPU:0$", out, re.M)
    assert sorted(devices) == ["0", "1"], out
    accuracies = re.findall(r"^Finished epoch (\d), accuracy is ([\d.]+)\.$", out, re.M)
    assert [e for e, _ in accuracies] == ["0", "1", "2", "3"], out
    # apply_gradients on the workers reaches the servers: the model learns the "avenger" rule
    # (unison: 1.0 from the third epoch; a model that did not train stays near 0.5)
    assert float(accuracies[-1][1]) >= 0.8, out
    assert re.search(r"^Final loss is [\d.]+$", out, re.M), out
    evaluations = re.findall(r"^Evaluation accuracy: ([\d.]+)$", out, re.M)
    assert len(evaluations) == 2 and all(0 <= float(a) <= 1 for a in evaluations), out


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_distributed_training_guide(repo, tmp_path):
    out = _run(
        [sys.executable, str(repo / "examples" / "tf" / "distributed_training_guide.py")], _env(tmp_path), tmp_path
    )
    # MirroredStrategy(["/gpu:0", "/gpu:1"]) on a host without them: one warning naming them, runs
    if "0 visible GPU" in out:
        assert out.count("devices ['/gpu:0', '/gpu:1'] are not available") == 1, out
    assert "<tf.Variable 'Variable:0' shape=()" in out, out
    assert len(re.findall(r"^Epoch [12]/2$", out, re.M)) == 4, out  # two fits of two epochs
    losses = [float(v) for v in re.findall(r"^tf\.Tensor\(([\d.]+), shape=\(\)", out, re.M)]
    assert len(losses) == 210, out  # 1000 / 5 steps of the first loop, then 10 more
    assert losses[-1] < losses[0], losses  # the custom loop trains


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
@pytest.mark.parametrize("devices", ["", "/cpu:0,/cpu:1"], ids=["one-replica", "two-replicas"])
def test_keras_io_mnist_convnet(repo, mnist_dir, tmp_path, devices):
    env = _env(mnist_dir, EPOCHS="1", TRAIN_SAMPLES="3072", TEST_SAMPLES="1000", UNISON_EXAMPLE_DEVICES=devices)
    out = _run([sys.executable, str(repo / "examples" / "tf" / "mnist_convnet.py")], env, tmp_path)
    assert "x_train shape: (3072, 28, 28, 1)" in out, out
    assert f"Number of devices: {2 if devices else 1}" in out, out
    assert "Total params: 34,826" in out, out  # the example's model, as Keras counts it
    assert re.search(r"accuracy: [\d.]+ - loss: [\d.]+ - val_accuracy: [\d.]+ - val_loss: [\d.]+", out), out
    accuracy = re.search(r"^Test accuracy: ([\d.]+)$", out, re.M)
    assert accuracy and float(accuracy.group(1)) > 0.5, out


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
@pytest.mark.parametrize("processes", [1, 2])
def test_horovod_pytorch_mnist(repo, mnist_dir, tmp_path, processes):
    script = str(repo / "examples" / "horovod" / "pytorch_mnist.py")
    flags = ["--epochs", "2", "--log-interval", "4", "--lr", "0.05"]
    if processes == 1:
        cmd = [sys.executable, script, *flags]
    else:  # unison launch, with Horovod's fp16 compression and predivide factor
        cmd = [
            sys.executable,
            "-m",
            "unison.cli",
            "launch",
            "--nproc-per-node",
            "2",
            script,
            *flags,
            "--fp16-allreduce",
            "--gradient-predivide-factor",
            "2.0",
        ]
    env = _env(mnist_dir, TRAIN_SAMPLES="2048", TEST_SAMPLES="1000", HOME=str(tmp_path))
    out = _run(cmd, env, tmp_path)
    per_rank = 2048 // processes
    # every rank prints its training lines (as under horovodrun); two ranks' lines may interleave
    assert re.search(rf"Train Epoch: 1 \[0/{per_rank} \(0%\)\]\tLoss: [\d.]+", out), out
    tests = re.findall(r"Test set: Average loss: ([\d.]+), Accuracy: ([\d.]+)%", out)
    assert len(tests) == 2, out  # printed by rank 0 only, once per epoch
    assert float(tests[1][0]) < float(tests[0][0]) and float(tests[1][1]) > 50.0, tests


@pytest.mark.slow
def test_horovod_mnist_num_proc_points_to_the_launcher(repo, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(repo / "examples" / "horovod" / "pytorch_mnist.py"), "--num-proc", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path),
        cwd=tmp_path,
    )
    assert proc.returncode != 0 and "unison launch --nproc-per-node 2" in proc.stderr, proc.stderr
