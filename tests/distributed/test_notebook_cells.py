"""Mirrored cells' failure paths, in an IPython shell as a kernel runs cells (the happy path runs in
a real Jupyter kernel in test_notebook_kernel.py): a cell that fails on a replica only is named in
the kernel's cell with the replica's traceback; a replica that dies is reported and the kernel
lives on; the earlier cells' notebook_launcher call is the kernel's alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

CELLS = [
    "import json, os\nimport unison as tf\nfrom unison.launch.notebook import notebook_launcher",
    "skipped = notebook_launcher(os.getpid, num_replicas=1, timeout=120)",
    "strategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])",
    # the replica's own view: the launcher cell did nothing there
    "mine = {'rank': os.environ.get('UNISON_RANK', '0'), 'skipped': skipped}\nopen(f'view.{mine[\"rank\"]}', 'w').write(json.dumps(mine))",
    "if os.environ.get('UNISON_RANK') == '1':\n    raise ValueError('only on the replica')",
    "after = 'the kernel still runs cells'",
    "import signal\nif os.environ.get('UNISON_RANK') == '1':\n    os.kill(os.getpid(), signal.SIGKILL)",
    "print('RESULT ' + json.dumps({'after': after, 'replicas': strategy.num_replicas_in_sync}))",
]

DRIVER = """
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
for cell in CELLS:
    result = shell.run_cell(cell, store_history=True)
    if not result.success:
        result.raise_error()
"""


def test_a_replica_that_fails_or_dies_is_named_and_the_kernel_goes_on(tmp_path) -> None:
    script = tmp_path / "kernel.py"
    script.write_text(f"CELLS = {CELLS!r}\nif __name__ == '__main__':\n" + textwrap.indent(DRIVER, "    "))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_RANK"))}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=350, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    assert result == {"after": "the kernel still runs cells", "replicas": 2}
    # the cell that raised on replica 1 alone: named in the kernel's cell, with its traceback
    assert "unison: this cell failed on replica 1 (it ran on replica 0, the kernel)" in proc.stderr, proc.stderr
    assert "--- traceback of replica 1 ---" in proc.stderr and "ValueError: only on the replica" in proc.stderr
    # the replica killed by a cell: reported, the kernel went on
    assert "unison: replica 1 of 2" in proc.stderr and "was killed by signal SIGKILL" in proc.stderr, proc.stderr
    views = {
        json.loads((tmp_path / f"view.{r}").read_text())["rank"]: json.loads((tmp_path / f"view.{r}").read_text())
        for r in "01"
    }
    assert isinstance(views["0"]["skipped"], int) and views["1"]["skipped"] is None
