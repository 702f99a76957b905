"""Two replicas from a real Jupyter kernel (issue 41): cells sent through ``jupyter_client`` to an
``ipykernel`` kernel define the data, the model and a training function, run it on two replicas
with ``notebook_launcher``, then create ``MirroredStrategy(["/cpu:0", "/cpu:1"])`` straight in a
cell and fit/evaluate/predict/run from the next cells (mirrored cells); both get what the same
program gets as a script on two replicas. Then the kernel restarts, and nothing is left behind: no
replica or helper process of the old kernel, no ``/dev/shm`` entry of any of its processes, and
the new kernel trains again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from typing import Any

import numpy as np
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
jupyter_client = pytest.importorskip("jupyter_client", reason="the test extra installs jupyter_client")
pytest.importorskip("ipykernel", reason="the test extra installs ipykernel")

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))

SETUP = """
import json, os
import numpy as np
import unison as tf
from unison.launch.notebook import notebook_launcher

rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int64")

def make_model():
    return tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                tf.keras.layers.Dense(2)])

def train(devices, pid_dir):
    with open(os.path.join(pid_dir, f"replica.{os.getpid()}"), "w"):
        pass  # the test looks for what each replica process might leave behind
    tf.keras.utils.set_random_seed(0)
    strategy = tf.distribute.MirroredStrategy(devices)
    with strategy.scope():
        model = make_model()
        model.compile(optimizer="adam", metrics=["accuracy"],
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=2)
    loss, acc = model.evaluate(x, y, batch_size=64, verbose=0)
    preds = model.predict(x[:4], verbose=0)
    return {"loss": history.history["loss"], "eval": [float(loss), float(acc)],
            "pred": np.asarray(preds).tolist(), "replicas": strategy.num_replicas_in_sync}
"""


DIRECT = [
    "open(os.path.join(PID_DIR, f'replica.{os.getpid()}'), 'w').close()",
    "tf.keras.utils.set_random_seed(0)\nstrategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])",
    """
with strategy.scope():
    model = make_model()
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
""",
    "history = model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=2)",
    """
loss, acc = model.evaluate(x, y, batch_size=64, verbose=0)
preds = model.predict(x[:4], verbose=0)
ranks = strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
print("RESULT " + json.dumps({"loss": history.history["loss"], "eval": [float(loss), float(acc)],
                              "pred": np.asarray(preds).tolist(), "replicas": strategy.num_replicas_in_sync,
                              "run_sum": float(ranks)}))
""",
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_RANK"))}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(client: Any, code: str, timeout: float = 500.0) -> str:
    """Execute one cell; its printed output (an error fails the test with the kernel's traceback)."""
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["header"]["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            out.append("\n".join(content["traceback"]))

    reply = client.execute_interactive(code, timeout=timeout, output_hook=hook)
    assert reply["content"]["status"] == "ok", "".join(out)
    return "".join(out)


def _result(text: str) -> Any:
    return json.loads([ln for ln in text.splitlines() if ln.startswith("RESULT ")][-1][len("RESULT ") :])


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return kids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _shm_of(pids: set[int]) -> list[str]:
    """/dev/shm entries named after one of ``pids`` (unison's segments: unison-<pid>-..., torch's: torch_<pid>_...)."""
    found = []
    for name in os.listdir("/dev/shm"):
        numbers = {int(part) for part in name.replace("_", "-").split("-") if part.isdigit()}
        if numbers & pids:
            found.append(name)
    return found


def _script_result(tmp_path: Any) -> dict[str, Any]:
    """The same program as a script on two replicas (MirroredStrategy re-runs the script)."""
    script = tmp_path / "train_script.py"
    script.write_text(
        SETUP.replace("from unison.launch.notebook import notebook_launcher\n", "")
        + textwrap.dedent(
            f"""
            result = train(['/cpu:0', '/cpu:1'], {str(tmp_path / "script_pids")!r})
            print('RESULT ' + json.dumps(result), flush=True)  # replica 0's output is the terminal's
            """
        )
    )
    (tmp_path / "script_pids").mkdir()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=500, env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return _result(proc.stdout)


def test_two_replicas_from_a_jupyter_kernel_match_the_script_and_leave_nothing_after_a_restart(tmp_path) -> None:
    from jupyter_client.manager import KernelManager

    want = _script_result(tmp_path)
    pid_dir = tmp_path / "kernel_pids"
    pid_dir.mkdir()
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env=_env(), cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        kernel = int(_result(_run(client, "import os; print('RESULT', os.getpid())")))
        _run(client, SETUP)
        printed = _run(
            client,
            f"two = notebook_launcher(train, args=(['/cpu:0', '/cpu:1'], {str(pid_dir)!r}), num_replicas=2, "
            "timeout=400)\nprint('RESULT ' + json.dumps(two))",
        )
        got = _result(printed)
        assert "Epoch 2/2" in printed  # replica 0's epoch lines reach the cell
        assert got["replicas"] == 2 == want["replicas"]
        # the kernel's two replicas train exactly as the script's two
        assert got["loss"] == pytest.approx(want["loss"], abs=1e-5)
        assert got["eval"] == pytest.approx(want["eval"], abs=1e-5)
        np.testing.assert_allclose(got["pred"], want["pred"], atol=1e-5)

        replicas = {int(name.split(".")[1]) for name in os.listdir(pid_dir)}
        assert len(replicas) == 2 and kernel not in replicas
        assert not [p for p in replicas if _alive(p)]  # joined before the cell ended
        assert len(_children(kernel)) <= 1  # at most multiprocessing's resource tracker
        assert _shm_of(replicas | {kernel}) == []

        # MirroredStrategy typed straight into the cells, as in TF's notebooks: the kernel is replica 0
        # and replica 1 runs the same cells (mirrored), so fit/evaluate/predict/run work from cells
        for cell in DIRECT:
            printed = _run(client, cell.replace("PID_DIR", repr(str(pid_dir))))
        direct = _result(printed)
        assert direct["replicas"] == 2 and direct["run_sum"] == 2.0
        assert direct["loss"] == pytest.approx(want["loss"], abs=1e-5)
        assert direct["eval"] == pytest.approx(want["eval"], abs=1e-5)
        np.testing.assert_allclose(direct["pred"], want["pred"], atol=1e-5)
        shell_replicas = {int(name.split(".")[1]) for name in os.listdir(pid_dir)} - replicas - {kernel}
        assert len(shell_replicas) == 1 and all(map(_alive, shell_replicas))  # kept by the kernel for the next cells
        replicas |= shell_replicas
        helpers = _children(kernel)  # the mirrored replica and multiprocessing's resource tracker
        assert shell_replicas <= set(helpers) and len(helpers) <= 2, helpers

        manager.restart_kernel(now=True)
        client.wait_for_ready(timeout=120)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and [p for p in [kernel, *helpers] if _alive(p)]:
            time.sleep(0.2)
        assert [p for p in [kernel, *helpers] if _alive(p)] == []  # the old kernel and its helper are gone
        assert _shm_of(replicas | {kernel, *helpers}) == []
        # the restarted kernel is a working one: it trains again
        new_kernel = int(_result(_run(client, "import os; print('RESULT', os.getpid())")))
        assert new_kernel != kernel
        _run(client, SETUP)
        again = _result(
            _run(
                client,
                f"print('RESULT ' + json.dumps(notebook_launcher(train, args=(['/cpu:0', '/cpu:1'], "
                f"{str(pid_dir)!r}), num_replicas=2, timeout=400)))",
            )
        )
        assert again["loss"] == pytest.approx(want["loss"], abs=1e-5)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert not _alive(new_kernel)
    everything = {int(name.split(".")[1]) for name in os.listdir(pid_dir)} | {kernel, new_kernel}
    assert [p for p in everything if _alive(p)] == []
    assert _shm_of(everything) == []
