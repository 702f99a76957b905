"""A second MirroredStrategy in the same process joins the job the first one joined.

keras.io's "Distributed training with TensorFlow" guide builds a strategy, trains, then builds
another and trains again. The second used to join the process group again and wait forever on
store keys the first join had consumed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from replica_fns import two_strategies_in_a_row

from unison.testing import run_distributed

_SCRIPT = """
import numpy as np
import unison as tf
from unison import keras

for attempt in range(2):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(np.ones((16, 4), "float32"), np.ones((16, 1), "float32"), batch_size=8, verbose=0)
    print(f"strategy {attempt}: {strategy.num_replicas_in_sync} replicas, loss {history.history['loss'][-1]:.4f}")
print("DONE")
"""


def test_two_strategies_in_one_replica_process() -> None:
    results = run_distributed(two_strategies_in_a_row, world_size=2, timeout=120)
    assert [r["sums"] for r in results] == [[3.0, 3.0], [3.0, 3.0]]


def test_a_script_that_builds_two_strategies_finishes(tmp_path) -> None:
    script = tmp_path / "two_strategies.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # a plain `python script.py`
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=150, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("strategy 0: 2 replicas") and lines[1].startswith("strategy 1: 2 replicas"), lines
    assert lines[-1] == "DONE"
