"""The tutorial programs of examples/keras_io and examples/tf_tutorials: unison's final metric vs TensorFlow's.

Each program runs twice on the same generated data (examples/program_data.py, ``--scale bench``):
as committed (``import unison as tf``) under this Python, and with its import lines turned back into
TensorFlow's under ``--tf-python`` (a venv with ``tensorflow-cpu``). Both runs seed Python's and
numpy's generators (and torch's / TF's) before the program starts; the final metric each program
prints is parsed and put side by side in a Markdown table.

Where TF cannot read the generated files through its own loader, the TF run's loader is replaced
by one that reads the same files (said in the table's notes): TF's ``cifar10.load_data`` checks the
archive's sha256 and expects 10,000 images per batch; ``fashion_mnist`` reads Debian's files copied
into a private ``KERAS_HOME``.

DCGAN prints no metric: the same few lines are appended to both copies, scoring the trained
discriminator on 1,024 training images and 1,024 images from its generator with the tutorial's own
loss functions (the compared figure is the discriminator loss; the generator loss and the accuracy
of telling the two apart are printed beside it: that accuracy flips with logits near 0, so it is
not compared).

``--set PROGRAM:KEY=VALUE`` changes a program's settings (epochs, samples), ``--seed`` seeds every
generator with another value (noise check), ``--no-tf-global-seed`` leaves out TF's
``tf.random.set_seed`` (see below), ``--tf-pythonpath`` adds packages the TF venv lacks
(matplotlib, pandas, pydot: ``pip install --target DIR``), and MNIST for DCGAN comes from
``$UNISON_DATA_DIR/mnist`` (idx files) for both.

TF's global seed changes more than the draws: with it set, Keras 3's ``fit`` on arrays feeds every
epoch in the SAME shuffled order (its array adapter draws the permutation with ``tf.random.shuffle``
inside a ``tf.data`` map, and a seeded stateful op restarts with each epoch's new iterator; TF issue
35682), where unison, Keras's other backends and TF without a global seed reshuffle each epoch, as
``fit(shuffle=True)`` is documented to. Programs whose result depends on that (keras.io's collaborative
filtering sums its dot product over the whole batch) are compared with ``--no-tf-global-seed``: Keras's
initializers and dropout still draw from Python's seeded generator, only the shuffle is unseeded.

Run: ``OMP_NUM_THREADS=1 UNISON_DATA_DIR=../shared/data python benchmarks/tutorial_programs_vs_tf.py
--tf-python /work/tfvenv/bin/python --tf-pythonpath /work/tfextras --work /tmp/tpv``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_SEED = (
    "import random, runpy, sys, numpy; random.seed({seed}); numpy.random.seed({seed})\n"
    "try:\n import torch; torch.manual_seed({seed})\nexcept ImportError:\n pass\n"
)
_TF_SEED = "import tensorflow as _tf; _tf.random.set_seed({seed})\n"
# TF's run of the DCGAN tutorial: keras.datasets.mnist.load_data reads the idx files unison reads
# ($UNISON_DATA_DIR/mnist/*-idx?-ubyte.gz) instead of downloading mnist.npz.
_TF_MNIST = """
import gzip, os, numpy as np, keras
def _load(path=None):
    root = os.path.join(os.environ["UNISON_DATA_DIR"], "mnist")
    def idx(name, offset):
        with gzip.open(os.path.join(root, name), "rb") as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)
    x = lambda p: idx(f"{p}-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)
    y = lambda p: idx(f"{p}-labels-idx1-ubyte.gz", 8)
    return (x("train"), y("train")), (x("t10k"), y("t10k"))
keras.datasets.mnist.load_data = _load
"""
# After the DCGAN tutorial (which prints no metric): its own discriminator and loss functions scored on
# 1,024 training images and 1,024 images its generator makes from fresh noise (the same code in both runs).
_DCGAN_SCORE = """
_n = 1024
_fake = generator(tf.random.normal([_n, noise_dim]), training=False)
_real_out = discriminator(train_images[:_n], training=False)
_fake_out = discriminator(_fake, training=False)
_acc = (np.mean(np.asarray(_real_out) > 0) + np.mean(np.asarray(_fake_out) < 0)) / 2
print("DCGAN discriminator accuracy (real vs generated):", float(_acc))
print("DCGAN generator loss:", float(generator_loss(_fake_out)))
print("DCGAN discriminator loss:", float(discriminator_loss(_real_out, _fake_out)))
"""
# TF's run of the CNN tutorial: keras.datasets.cifar10.load_data reads the generated pickle batches.
_TF_CIFAR = """
import os, pickle, numpy as np, keras
def _load():
    root = os.path.join(os.environ["UNISON_DATA_DIR"], "cifar10", "cifar-10-batches-py")
    def one(name):
        with open(os.path.join(root, name), "rb") as f:
            d = pickle.load(f, encoding="bytes")
        x = d[b"data"].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return x, np.asarray(d[b"labels"], "uint8").reshape(-1, 1)
    parts = [one(f"data_batch_{i}") for i in range(1, 6)]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])), one("test_batch")
keras.datasets.cifar10.load_data = _load
"""


@dataclass
class Program:
    path: str  # under examples/
    metric: str  # what is compared
    pattern: str  # regex whose last match's group 1 is the metric
    env: dict[str, str] = field(default_factory=dict)
    cwd_is_data: bool = False  # the program reads aclImdb/ relative to the working directory
    tf_prelude: str = ""
    epilogue: str = ""  # appended to both copies of the program (a metric the program does not print)


PROGRAMS = {
    "text_classification": Program(
        "keras_io/text_classification_from_scratch.py",
        "val_accuracy, last epoch",
        r"val_accuracy: ([\d.]+) - val_loss: [\d.]+$",
        {"EPOCHS": "3"},
    ),
    "miniature_gpt": Program(
        "keras_io/text_generation_with_miniature_gpt.py",
        "training loss, last epoch",
        r"^\d+/\d+ - .* - loss: ([\d.]+)$",
        {"EPOCHS": "1"},
        cwd_is_data=True,
    ),
    "movielens": Program(
        "keras_io/collaborative_filtering_movielens.py",
        "val_loss, last epoch",
        r"val_loss: ([\d.]+)$",
        {"EPOCHS": "2"},
    ),
    "feature_space": Program(
        "keras_io/structured_data_classification_with_feature_space.py",
        "val_accuracy, last epoch",
        r"val_accuracy: ([\d.]+) - val_loss: [\d.]+$",
        {"EPOCHS": "20"},
    ),
    "timeseries": Program(
        "keras_io/timeseries_classification_from_scratch.py",
        "test accuracy (best checkpoint)",
        r"^Test accuracy ([\d.]+)$",
        {"EPOCHS": "40"},
    ),
    "basic_classification": Program(
        "tf_tutorials/classification.py",
        "test accuracy",
        r"^Test accuracy: ([\d.]+)$",
        {"EPOCHS": "3", "TRAIN_SAMPLES": "10000"},
    ),
    "regression": Program(
        "tf_tutorials/regression.py", "dnn_model test MAE [MPG]", r"^dnn_model\s+([\d.]+)$", {"EPOCHS": "100"}
    ),
    "cnn": Program("tf_tutorials/cnn.py", "test accuracy", r"^([\d.]+)$", {"EPOCHS": "2"}, tf_prelude=_TF_CIFAR),
    "dcgan": Program(
        "tf_tutorials/dcgan.py",
        "discriminator loss, 1,024 real + 1,024 generated images",
        r"^DCGAN discriminator loss: ([\d.]+)$",
        {"EPOCHS": "2", "TRAIN_SAMPLES": "2560"},
        tf_prelude=_TF_MNIST,
        epilogue=_DCGAN_SCORE,
    ),
}


def tf_variant(source: str) -> str:
    """The program with its unison imports turned back into TensorFlow's (the lines its header lists)."""
    source = re.sub(r"^import unison as tf$", "import tensorflow as tf", source, flags=re.M)
    source = re.sub(r"^from unison import keras$", "from tensorflow import keras", source, flags=re.M)
    return re.sub(r"^from unison\.keras(\S*) import", r"from tensorflow.keras\1 import", source, flags=re.M)


def run_one(
    python: str,
    program: Path,
    prog: Program,
    data: Path,
    work: Path,
    tf: bool,
    seed: int,
    tf_path: str,
    tf_global_seed: bool = True,
) -> tuple[str, float]:
    cwd = data if prog.cwd_is_data else work
    if not prog.cwd_is_data and work.exists():  # a fresh folder: DCGAN restores the latest checkpoint it finds
        shutil.rmtree(work)
    cwd.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(MPLBACKEND="Agg", PYTHONUNBUFFERED="1", PROGRAM_DATA=str(data), UNISON_DATA_DIR=str(data), **prog.env)
    env["PYTHONPATH"] = str(REPO / "src") if not tf else tf_path
    if tf:
        keras_home = work / "keras_home"
        fashion = keras_home / "datasets" / "fashion-mnist"
        if not fashion.exists() and Path("/usr/share/datasets/fashion-mnist").is_dir():
            shutil.copytree("/usr/share/datasets/fashion-mnist", fashion)
        env.update(KERAS_HOME=str(keras_home), TF_CPP_MIN_LOG_LEVEL="2")
    code = (
        _SEED.format(seed=seed)
        + ((_TF_SEED.format(seed=seed) if tf_global_seed else "") + prog.tf_prelude if tf else "")
        + f"runpy.run_path({str(program)!r}, run_name='__main__')\n"
    )
    start = time.time()
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=3600)
    out = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr).replace("\r", "\n")
    if proc.returncode != 0:
        raise RuntimeError(f"{program} ({'TF' if tf else 'unison'}) exit {proc.returncode}:\n{out[-3000:]}")
    return out, time.time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tf-python", required=True, help="a Python with tensorflow-cpu")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--only", nargs="*", choices=sorted(PROGRAMS), default=sorted(PROGRAMS))
    parser.add_argument(
        "--patch", action="append", default=[], help="OLD=>NEW applied to both copies (said in the table)"
    )
    parser.add_argument("--unison-patch", action="append", default=[], help="OLD=>NEW applied to unison's copy")
    parser.add_argument("--seed", type=int, default=0, help="seeds Python's, numpy's, torch's and TF's generators")
    parser.add_argument(
        "--no-tf-global-seed",
        dest="tf_global_seed",
        action="store_false",
        help="no tf.random.set_seed in TF's runs (with it, TF's fit repeats one shuffle order every epoch)",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="PROGRAM:KEY=VALUE", help="overrides a program's settings"
    )
    parser.add_argument(
        "--tf-pythonpath", default="", help="PYTHONPATH of the TF runs (e.g. matplotlib/pandas installed with --target)"
    )
    parser.add_argument(
        "--mnist",
        type=Path,
        default=None,
        help="a folder with MNIST's idx .gz files (DCGAN); default $UNISON_DATA_DIR/mnist",
    )
    args = parser.parse_args()
    for item in args.set:
        name, _, assignment = item.partition(":")
        key, _, value = assignment.partition("=")
        if name not in PROGRAMS or not key or not value:
            parser.error(f"--set {item!r}: expected PROGRAM:KEY=VALUE with PROGRAM one of {sorted(PROGRAMS)}")
        PROGRAMS[name].env[key] = value
    spec = importlib.util.spec_from_file_location("program_data", REPO / "examples" / "program_data.py")
    assert spec is not None and spec.loader is not None
    program_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program_data)
    data = args.work / "data"
    if not data.exists():
        program_data.write_all(data, "bench")
    mnist = args.mnist or Path(os.environ.get("UNISON_DATA_DIR", "/nonexistent")) / "mnist"
    if not (data / "mnist").exists() and mnist.is_dir():
        (data / "mnist").symlink_to(mnist.resolve())
    rows = []
    for name in args.only:
        prog = PROGRAMS[name]
        source = (REPO / "examples" / prog.path).read_text() + prog.epilogue
        for patch in args.patch:
            old, new = patch.split("=>", 1)
            source = source.replace(old, new)
        unison_src = source
        for patch in args.unison_patch:
            old, new = patch.split("=>", 1)
            unison_src = unison_src.replace(old, new)
        copies = {}
        for label, text in (("unison", unison_src), ("tf", tf_variant(source))):
            copies[label] = args.work / "programs" / label / Path(prog.path).name
            copies[label].parent.mkdir(parents=True, exist_ok=True)
            copies[label].write_text(text)
        result = {
            "program": name,
            "metric": prog.metric,
            "env": prog.env,
            "seed": args.seed,
            "tf_global_seed": args.tf_global_seed,
        }
        for label, python in (("unison", sys.executable), ("tf", args.tf_python)):
            try:
                out, seconds = run_one(
                    python,
                    copies[label],
                    prog,
                    data,
                    args.work / label / name,
                    label == "tf",
                    args.seed,
                    args.tf_pythonpath,
                    args.tf_global_seed,
                )
                found = re.findall(prog.pattern, out, re.M)
                result[label] = float(found[-1]) if found else None
                result[f"{label}_s"] = round(seconds, 1)
                (args.work / f"{name}.{label}.seed{args.seed}.log").write_text(out)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                result[label] = None
                result[f"{label}_error"] = str(exc)[-400:]
        rows.append(result)
        print(json.dumps(result), flush=True)
    print("\n| program | metric | unison | TF | settings |\n| --- | --- | --- | --- | --- |")
    for r in rows:
        settings = " ".join(f"{k}={v}" for k, v in r["env"].items())
        print(f"| {r['program']} | {r['metric']} | {r.get('unison')} | {r.get('tf')} | {settings} seed={r['seed']} |")


if __name__ == "__main__":
    main()
