"""Two replicas from notebook cells: `notebook_launcher` driven through a real IPython shell.

The cells run in an IPython ``InteractiveShell`` in a child process, as a notebook's kernel runs
them (the kernel executes cells with this same shell class; test_notebook_kernel.py drives a real
ipykernel kernel through jupyter_client). The training function is defined in a cell, so it exists only in the shell's
namespace: it reaches the replicas by value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from unison.cluster.placement import ENV_RANK
from unison.errors import ReplicaFailedError
from unison.launch.notebook import notebook_launcher

pytestmark = pytest.mark.timeout(600)

CELLS = [
    """
    import numpy as np
    import unison as tf
    from unison.launch.notebook import notebook_launcher

    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int64")
    """,
    """
    def make_model():
        return tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                    tf.keras.layers.Dense(2)])

    def train(devices):
        tf.keras.utils.set_random_seed(0)
        strategy = tf.distribute.MirroredStrategy(devices)
        with strategy.scope():
            model = make_model()
            model.compile(optimizer="adam", metrics=["accuracy"],
                          loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=2)
        loss, acc = model.evaluate(x, y, batch_size=64, verbose=0)
        preds = model.predict(x[:4], verbose=0)
        ranks = strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
        return {"loss": history.history["loss"], "eval": [float(loss), float(acc)],
                "pred": np.asarray(preds).tolist(), "replicas": strategy.num_replicas_in_sync,
                "run_sum": float(ranks)}
    """,
    "two = notebook_launcher(train, args=(['/cpu:0', '/cpu:1'],), num_replicas=2, timeout=400)",
    "one = train(['/cpu:0'])",
    """
    import glob, json, multiprocessing
    kids = [open(f'/proc/{c}/cmdline').read().replace(chr(0), ' ').strip()
            for f in glob.glob('/proc/self/task/*/children') for c in open(f).read().split()]
    # multiprocessing's resource tracker stays for the kernel's life, as it does in any notebook using spawn
    kids = [k for k in kids if 'resource_tracker' not in k]
    left = {'active_children': len(multiprocessing.active_children()), 'os_children': kids}
    print('RESULT ' + json.dumps({'two': two, 'one': one, 'left': left}))
    """,
]

DRIVER = """
import sys
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
for cell in CELLS:
    result = shell.run_cell(cell, store_history=True)
    if not result.success:
        result.raise_error()
"""


@pytest.mark.slow
def test_fit_evaluate_predict_and_run_from_notebook_cells_match_one_replica(tmp_path) -> None:
    script = tmp_path / "kernel.py"
    cells = [textwrap.dedent(c) for c in CELLS]
    script.write_text(f"CELLS = {cells!r}\nif __name__ == '__main__':\n" + textwrap.indent(DRIVER, "    "))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_RANK"))}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=550, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    got = json.loads(line[len("RESULT ") :])
    two, one = got["two"], got["one"]
    assert two["replicas"] == 2 and one["replicas"] == 1 and two["run_sum"] == 2.0
    # N replicas step as one device on the global batch (the semantics contract)
    assert two["loss"] == pytest.approx(one["loss"], abs=1e-4)
    assert two["eval"] == pytest.approx(one["eval"], abs=1e-4)
    np.testing.assert_allclose(two["pred"], one["pred"], atol=1e-4)
    # replica 0's epoch lines reach the cell's output, once per epoch
    assert proc.stdout.count("Epoch 2/2") == 2, proc.stdout  # one from the launcher, one from the 1-replica run
    # nothing left behind: the replica processes were joined before the launcher returned
    assert got["left"] == {"active_children": 0, "os_children": []}, got["left"]


def _rank_one_fails(message: str) -> str:
    if os.environ[ENV_RANK] == "1":
        raise ValueError(message)
    print("replica 0 says hello")
    return "done"


def test_a_failing_replica_is_named_with_its_traceback(capsys) -> None:
    with pytest.raises(ReplicaFailedError) as caught:
        notebook_launcher(_rank_one_fails, args=("bad shard",), num_replicas=2, timeout=120)
    text = str(caught.value)
    assert text.startswith("Replica 1 of 2 failed: ValueError: bad shard")
    assert "--- traceback of replica 1 ---" in text and "_rank_one_fails" in text


def test_replica_zero_returns_and_prints_in_the_cell(capsys) -> None:
    assert notebook_launcher(_rank_one_fails, args=("unused",), num_replicas=1, timeout=120) == "done"
    assert "replica 0 says hello" in capsys.readouterr().out


def test_bad_arguments_and_missing_cloudpickle(monkeypatch) -> None:
    with pytest.raises(ValueError, match="num_replicas must be an integer >= 1. Received: num_replicas=0"):
        notebook_launcher(_rank_one_fails, num_replicas=0)
    monkeypatch.setitem(sys.modules, "cloudpickle", None)
    with pytest.raises(ImportError, match="needs cloudpickle .*: pip install cloudpickle"):
        notebook_launcher(_rank_one_fails, num_replicas=2)
