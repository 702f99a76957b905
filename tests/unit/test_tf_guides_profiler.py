"""tf.profiler.experimental on torch.profiler, and tf.summary.trace_on/trace_export (the modules guide)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import unison as tf

pytestmark = pytest.mark.timeout(60)


def test_start_stop_writes_a_trace_and_refuses_double_start(tmp_path):
    tf.profiler.experimental.start(str(tmp_path / "a"))
    try:
        with pytest.raises(RuntimeError, match="already running"):
            tf.profiler.experimental.start(str(tmp_path / "b"))
        with tf.profiler.experimental.Trace("train", step_num=3):
            _ = tf.ones([4]) * 3
    finally:
        tf.profiler.experimental.stop()
    traces = os.listdir(tmp_path / "a")
    assert traces and all(name.endswith(".pt.trace.json") for name in traces)
    assert "train#step_num=3" in (tmp_path / "a" / traces[0]).read_text()
    with pytest.raises(RuntimeError, match="No profiler session is running"):
        tf.profiler.experimental.stop()


def test_summary_trace_with_profiler_writes_on_export_and_not_on_off(tmp_path):
    tf.summary.trace_on(graph=True, profiler=True, profiler_outdir=str(tmp_path / "p"))
    _ = tf.ones([2]) + 1
    tf.summary.trace_export(name="my_func_trace", step=0)
    assert os.listdir(tmp_path / "p")
    tf.summary.trace_on(graph=True, profiler=True, profiler_outdir=str(tmp_path / "q"))
    tf.summary.trace_off()
    assert os.listdir(tmp_path / "q") == []
    tf.summary.trace_on(graph=True)  # no graph to record: nothing starts, nothing is written
    tf.summary.trace_export(name="graph_only", step=0)
    with pytest.raises(ValueError, match="needs profiler_outdir"):
        tf.summary.trace_on(profiler=True)


def test_a_program_that_exits_with_the_session_open_exits_cleanly(tmp_path):
    # torch's profiler torn down at interpreter exit with a session open segfaulted (rc 139)
    program = (
        "import sys, unison as tf\n"
        f"tf.profiler.experimental.start({str(tmp_path / 'logs')!r})\n"
        "_ = tf.ones((3, 3)) @ tf.ones((3, 3))\n"
        "sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 3, done.stderr[-2000:]
