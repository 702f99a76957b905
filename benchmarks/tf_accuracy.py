"""Full-epoch accuracy of the programs in ``examples/tf`` (and Horovod's example) on unison and on TF.

Each program runs twice, one run at a time (running both at once on 2 cores slows each several
times): as it is in ``examples/`` (``import unison as tf``), and as TensorFlow runs it, with the
import turned back (``import tensorflow as tf``, ``from tensorflow import keras``). The TF copy is
made here, in ``--work``, by these edits and nothing else:

* MNIST comes from the same files unison reads (TF's Keras would download them; this machine has
  no network): ``keras.datasets.mnist.load_data()`` -> a helper that returns unison's arrays.
  Fashion-MNIST is linked into ``~/.keras/datasets/fashion-mnist`` (``HOME`` set to a folder of
  ``--work`` for the TF runs) from unison's data folder.
* The parameter-server tutorial gets back TF's own ``create_in_process_cluster`` (in-process
  ``tf.distribute.Server``s; unison's example uses its documented local-cluster equivalent).
* Horovod's ``pytorch_mnist.py`` has no TF version: its reference is the same file at one
  process with an identity ``hvd`` module (plain PyTorch, no unison code), against unison at 2
  processes under ``unison launch`` (Horovod's recipe scales the learning rate by the size).

Programs written for Keras 2 (``reset_states()``, ``keras.optimizers.legacy``) run on TF with
``TF_USE_LEGACY_KERAS=1`` (tf_keras); keras.io's convnet and the Keras tutorial on TF's default
Keras 3. The table prints each program's final figure (the regex in ``PROGRAMS``) for both.

    UNISON_DATA_DIR=../shared/data python benchmarks/tf_accuracy.py --tf-python <venv>/bin/python
    (the venv: tensorflow-cpu, tf_keras and tensorboard installed)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EXAMPLES = os.path.join(REPO, "examples")


@dataclass(frozen=True)
class Program:
    path: str  # under examples/
    metric: str  # regex over the output; group 1 is the figure
    keras2: bool  # TF needs tf_keras (TF_USE_LEGACY_KERAS=1)
    which: str = "last"  # which match to report: "last", "first" or "all"


PROGRAMS = {
    "custom_training": Program("tf/custom_training.py", r"Test Accuracy: ([\d.]+)\n", keras2=True),
    "mnist_convnet": Program("tf/mnist_convnet.py", r"Test accuracy: ([\d.]+)", keras2=False),
    "keras_distributed": Program("tf/keras_distributed.py", r"Eval accuracy: ([\d.]+)", keras2=False, which="first"),
    # training accuracy at each epoch's end (2 fits of 3 epochs: main.py, then the BackupAndRestore cell)
    "multi_worker": Program(
        "tf/multi_worker/main.py", r"(\d+)/\1 [^\n]*?\dms/step[^\n]*?accuracy: ([\d.]+)", True, "all"
    ),
    "parameter_server_training": Program(
        "tf/parameter_server_training.py", r"Evaluation accuracy: ([\d.]+)", keras2=True, which="all"
    ),
    "distributed_training_guide": Program("tf/distributed_training_guide.py", r"loss: ([\d.]+)", keras2=True),
    "horovod_pytorch_mnist": Program("horovod/pytorch_mnist.py", r"Accuracy: ([\d.]+)%", keras2=False),
}

MNIST_HELPER = '''"""MNIST as unison reads it, for the TF copies (written by benchmarks/tf_accuracy.py)."""
import numpy as np

def load_mnist():
    d = np.load({npz!r})
    return (d["x_train"], d["y_train"]), (d["x_test"], d["y_test"])
'''

TF_CLUSTER = '''import socket
import portpicker_stand_in as portpicker


def create_in_process_cluster(num_workers, num_ps):
  """Creates and starts local servers and returns the cluster_resolver (TF's tutorial version)."""
  worker_ports = [portpicker.pick_unused_port() for _ in range(num_workers)]
  ps_ports = [portpicker.pick_unused_port() for _ in range(num_ps)]
  cluster_dict = {}
  cluster_dict["worker"] = ["localhost:%s" % port for port in worker_ports]
  if num_ps > 0:
    cluster_dict["ps"] = ["localhost:%s" % port for port in ps_ports]
  cluster_spec = tf.train.ClusterSpec(cluster_dict)
  worker_config = tf.compat.v1.ConfigProto()
  if multiprocessing.cpu_count() < num_workers + 1:
    worker_config.inter_op_parallelism_threads = num_workers + 1
  for i in range(num_workers):
    tf.distribute.Server(cluster_spec, job_name="worker", task_index=i, config=worker_config, protocol="grpc")
  for i in range(num_ps):
    tf.distribute.Server(cluster_spec, job_name="ps", task_index=i, protocol="grpc")
  return tf.distribute.cluster_resolver.SimpleClusterResolver(cluster_spec, rpc_layer="grpc")

'''

PORTPICKER = """import socket

def pick_unused_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]
"""

HVD_ONE_PROCESS = '''"""Horovod at one process: every collective is the identity (plain PyTorch, no unison code)."""
import types
from tf_accuracy_mnist import load_mnist

Average, Sum, Adasum = "average", "sum", "adasum"
Compression = types.SimpleNamespace(none=None, fp16=None)
def init(): pass
def size(): return 1
def rank(): return 0
def local_rank(): return 0
def local_size(): return 1
def nccl_built(): return False
def allreduce(tensor, name=None): return tensor
def broadcast_parameters(params, root_rank=0): pass
def broadcast_optimizer_state(optimizer, root_rank=0): pass
def DistributedOptimizer(optimizer, **kwargs): return optimizer
keras = types.SimpleNamespace(datasets=types.SimpleNamespace(mnist=types.SimpleNamespace(load_data=load_mnist)))
'''


def to_tensorflow(source: str) -> str:
    """The TF version of an example: the imports turned back, MNIST read from unison's files."""
    out = re.sub(
        r"^import unison as tf$",
        "import tensorflow as tf\nfrom tf_accuracy_mnist import load_mnist",
        source,
        flags=re.M,
    )
    out = re.sub(r"^from unison import keras$", "from tensorflow import keras", out, flags=re.M)
    out = re.sub(r"^from unison.keras import layers$", "from tensorflow.keras import layers", out, flags=re.M)
    out = re.sub(r"(tf\.)?keras\.datasets\.mnist\.load_data\(\)", "load_mnist()", out)
    if "create_in_process_cluster" in out:
        start, end = out.index("import atexit"), out.index("# Set the environment variable")
        out = out[:start] + TF_CLUSTER + out[end:]
    if "unison" in re.sub(r"#.*", "", out):
        raise SystemExit("the TF copy still names unison outside comments: extend to_tensorflow()")
    return out


def prepare(work: str) -> None:
    """Write the TF copies, the helpers and the Fashion-MNIST link into ``work``."""
    sys.path.insert(0, os.path.join(REPO, "src"))
    import numpy as np

    from unison.keras.datasets import fashion_mnist, mnist

    os.makedirs(os.path.join(work, "tf", "multi_worker"), exist_ok=True)
    os.makedirs(os.path.join(work, "plain"), exist_ok=True)
    npz = os.path.join(work, "mnist.npz")
    (xt, yt), (xv, yv) = mnist.load_data()
    np.savez(npz, x_train=xt, y_train=yt, x_test=xv, y_test=yv)
    for folder in ("tf", "plain"):
        with open(os.path.join(work, folder, "tf_accuracy_mnist.py"), "w") as f:
            f.write(MNIST_HELPER.format(npz=npz))
    with open(os.path.join(work, "tf", "portpicker_stand_in.py"), "w") as f:
        f.write(PORTPICKER)
    with open(os.path.join(work, "plain", "hvd_one_process.py"), "w") as f:
        f.write(HVD_ONE_PROCESS)
    for name, prog in PROGRAMS.items():
        with open(os.path.join(EXAMPLES, prog.path)) as f:
            source = f.read()
        if name == "horovod_pytorch_mnist":
            with open(os.path.join(work, "plain", "pytorch_mnist.py"), "w") as f:
                f.write(source.replace("import unison as hvd", "import hvd_one_process as hvd"))
            continue
        with open(os.path.join(work, "tf", prog.path[len("tf/") :]), "w") as f:
            f.write(to_tensorflow(source))
    with open(os.path.join(EXAMPLES, "tf", "multi_worker", "mnist_setup.py")) as f:
        with open(os.path.join(work, "tf", "multi_worker", "mnist_setup.py"), "w") as g:
            g.write(to_tensorflow(f.read()))
    # Fashion-MNIST: TF's loader reads ~/.keras/datasets/fashion-mnist/*.gz
    from unison.keras.datasets import _fetch

    src = str(_fetch.locate(fashion_mnist._SPEC))  # the folder unison reads (fails with its message)
    link = os.path.join(work, "home", ".keras", "datasets", "fashion-mnist")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.exists(link):
        os.symlink(src, link)


def run(cmd: list[str], env: dict[str, str], cwd: str, log: str, timeout: float) -> int:
    with open(log, "w") as f:
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    return proc.returncode


def run_program(name: str, system: str, args: argparse.Namespace) -> tuple[int, str, float]:
    """Run ``name`` on ``system`` ("unison" or "tf"/"plain"); return (exit code, output, seconds)."""
    prog = PROGRAMS[name]
    work = os.path.abspath(args.work)
    cwd = os.path.join(work, f"run_{system}_{name}")
    os.makedirs(cwd, exist_ok=True)
    env = {**os.environ, "WORK_DIR": cwd, "CHECKPOINT_DIR": os.path.join(cwd, "ckpt"), "PYTHONUNBUFFERED": "1"}
    env["BACKUP_DIR"] = os.path.join(cwd, "backup")
    if system == "unison":
        python, script = sys.executable, os.path.join(EXAMPLES, prog.path)
        env["PYTHONPATH"] = os.path.join(REPO, "src")
    elif system == "plain":
        python, script = sys.executable, os.path.join(work, "plain", "pytorch_mnist.py")
        env["PYTHONPATH"] = os.path.join(work, "plain")
    else:
        python, script = args.tf_python, os.path.join(work, "tf", prog.path[len("tf/") :])
        env.update(
            PYTHONPATH=os.path.join(work, "tf"),
            # tf_keras reads ~/.keras, Keras 3 $KERAS_HOME: both point at the linked data
            HOME=os.path.join(work, "home"),
            KERAS_HOME=os.path.join(work, "home", ".keras"),
            TF_USE_LEGACY_KERAS="1" if prog.keras2 else "0",
            TF_CPP_MIN_LOG_LEVEL="2",
            CUDA_VISIBLE_DEVICES="",
        )
    log = os.path.join(work, f"{system}_{name}.log")
    begin = time.monotonic()
    if name == "multi_worker":  # the tutorial's two processes, each with its TF_CONFIG
        port = random.randint(20000, 29000)
        cluster = {"worker": [f"localhost:{port}", f"localhost:{port + 1}"]}
        env1 = {**env, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}})}
        with open(log + ".worker1", "w") as f1:
            other = subprocess.Popen([python, script], env=env1, cwd=cwd, stdout=f1, stderr=subprocess.STDOUT)
            env0 = {**env, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}})}
            rc = run([python, script], env0, cwd, log, args.timeout)
            rc = rc or other.wait(timeout=args.timeout)
    elif name == "horovod_pytorch_mnist" and system == "unison":
        launch = [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", "2", script]
        rc = run(launch, env, cwd, log, args.timeout)
    else:
        rc = run([python, script], env, cwd, log, args.timeout)
    with open(log, errors="replace") as f:
        text = re.sub(r"\x1b\[[0-9;]*m", "", f.read()).replace("\r", "\n")
    return rc, text, time.monotonic() - begin


def figure(name: str, rc: int, text: str) -> str:
    if rc != 0:
        tail = [line for line in text.splitlines() if line.strip()][-1:] or [""]
        return f"exit {rc}: {tail[0][:120]}"
    prog = PROGRAMS[name]
    found = [m[-1] if isinstance(m, tuple) else m for m in re.findall(prog.metric, text)]
    if not found:
        return "no figure printed"
    if prog.which == "all":
        return ", ".join(found)
    return found[0] if prog.which == "first" else found[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tf-python", required=True, help="a Python with tensorflow-cpu, tf_keras and tensorboard")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated, from: " + ", ".join(PROGRAMS))
    parser.add_argument("--work", default="/tmp/unison_tf_accuracy")
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    names = [n for n in args.programs.split(",") if n]
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        raise SystemExit(f"unknown program(s) {unknown}; choose from {list(PROGRAMS)}")
    prepare(args.work)
    rows = []
    for name in names:
        other = "plain" if name == "horovod_pytorch_mnist" else "tf"
        got = {}
        for system in ("unison", other):
            rc, text, seconds = run_program(name, system, args)
            got[system] = (figure(name, rc, text), seconds)
            print(f"{name} on {system}: {got[system][0]} ({seconds:.0f} s)", flush=True)
        rows.append((name, got["unison"], got[other], other))
    command = "python benchmarks/tf_accuracy.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(f"\nCommand: `{command}`\n")
    print("| program | unison | reference | reference is |")
    print("| --- | --- | --- | --- |")
    for name, (u, us), (r, rs), other in rows:
        ref = "TensorFlow" if other == "tf" else "plain PyTorch, 1 process"
        print(f"| {name} | {u} ({us:.0f} s) | {r} ({rs:.0f} s) | {ref} |")


if __name__ == "__main__":
    main()
