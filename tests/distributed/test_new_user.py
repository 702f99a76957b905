"""The README's "First five minutes", run as a new user types it, in the README's order.

The commands are read from the README itself (the first ``bash`` block under "## First five
minutes"), so the README cannot drift from what works. Each command runs as its own process from
the repository root, in a scratch copy of nothing: the outputs (TensorBoard logs) go to a
temporary folder.

Environment: by default the test **reuses the installed environment** (this Python, where
``pip install torch==2.13.0 -e ".[test]"`` already ran): a fresh virtual environment costs about
two minutes of installs on CI's loaded 2-core machine, more than this test's budget. The ``pip
install`` lines are then checked, not run: each names packages this Python must already import.
With ``UNISON_NEW_USER_FRESH_VENV=1`` the test creates a fresh venv and runs every ``pip install``
line in it (``python -m venv`` then the README's lines, offline from the project's wheel index).

``tensorboard --logdir logs`` (a server that never exits) is replaced by reading the event files
it would serve; the README's pytest line runs on one small test file instead of the whole unit
suite (already running here).
"""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EPOCH_LINE = re.compile(
    # the progress bar's last state (verbose=1, "auto" here) or the one-line form (verbose=2)
    r"^1875/1875 (?:\S+ |- )\d+s (?:- )?\d+(?:s|ms|us)/step - accuracy: (0\.\d+) - loss: [\d.]+ - val_accuracy: (0\.\d+) "
    r"- val_loss: [\d.]+$",
    re.MULTILINE,
)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


def readme_commands() -> list[str]:
    """The command lines of the README's first-five-minutes block, comments and blanks left out."""
    text = (REPO / "README.md").read_text()
    section = text.split("## First five minutes", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_readme_block_is_what_this_test_expects() -> None:
    commands = readme_commands()
    assert commands[0] == "export UNISON_DATA_DIR=../shared/data"
    assert "pip install torch==2.13.0 -e ." in commands
    assert any(c.startswith("unison launch --nproc-per-node 2 ") for c in commands)
    assert any("--devices /cpu:0,/cpu:1" in c for c in commands)
    assert any(c.startswith("tensorboard --logdir") for c in commands)


def _python(tmp_path: pathlib.Path) -> str:
    if os.environ.get("UNISON_NEW_USER_FRESH_VENV") != "1":
        return sys.executable
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    return str(venv / "bin" / "python")


def _env(data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_RANK", "TORCHELASTIC"))}
    env["UNISON_DATA_DIR"] = data_dir
    return env


def test_first_five_minutes(tmp_path, mnist_dir) -> None:
    python = _python(tmp_path)
    fresh = python != sys.executable
    env = _env(str(mnist_dir))
    logs = tmp_path / "logs"
    transcript = []
    for command in readme_commands():
        argv = shlex.split(command)
        if argv[0] == "export":
            continue  # UNISON_DATA_DIR: the test's copy of the data is set in env above
        if argv[:2] == ["pip", "install"]:
            if fresh:
                argv = [python, "-m", *argv]
            else:
                extra = re.search(r"\[(\w+)\]", command)
                mods = {"tensorboard": "tensorboard", "test": "pytest"}.get(extra.group(1) if extra else "", "torch")
                argv = [python, "-c", f"import {mods}, unison"]
        elif argv[0] == "tensorboard":
            _check_event_files(python, logs, env)
            transcript.append((command, "(event files checked instead of serving them)"))
            continue
        elif argv[0] == "python" and argv[1:3] == ["-m", "pytest"]:
            argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_launch_spellings.py"]
        elif argv[0] == "python":
            argv = [python, *argv[1:]]
        elif argv[0] == "unison":
            argv = [python, "-m", "unison.cli", *argv[1:]]
        argv = [str(logs) if a == "logs" else a for a in argv]
        proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, f"$ {command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        transcript.append((command, proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else ""))
        if "examples/mnist_seed.py" in command:
            lines = EPOCH_LINE.findall(proc.stdout)
            # one epoch, one line: with two replicas only the chief prints
            assert len(lines) == 1, f"$ {command}\n{proc.stdout}"
            assert float(lines[0][1]) > 0.94, lines
            assert "Traceback" not in proc.stderr, proc.stderr
    print("\n".join(f"$ {c}\n{o}" for c, o in transcript))


def _check_event_files(python: str, logs: pathlib.Path, env: dict[str, str]) -> None:
    """What `tensorboard --logdir logs` would show: the epoch scalars of training and validation."""
    code = (
        "import sys\n"
        "from tensorboard.backend.event_processing.event_accumulator import EventAccumulator\n"
        "for run in ('train', 'validation'):\n"
        "    acc = EventAccumulator(sys.argv[1] + '/' + run); acc.Reload()\n"
        "    print(run, sorted(acc.Tags()['scalars']))\n"
    )
    proc = subprocess.run([python, "-c", code, str(logs)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "train ['epoch_accuracy', 'epoch_learning_rate', 'epoch_loss']" in proc.stdout or (
        "train [" in proc.stdout and "'epoch_loss'" in proc.stdout
    ), proc.stdout
    assert "validation [" in proc.stdout and "'epoch_loss'" in proc.stdout.split("validation", 1)[1], proc.stdout
