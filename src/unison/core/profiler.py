"""``tf.profiler.experimental``: TF's profiler calls on ``torch.profiler``.

``start(logdir)`` starts a ``torch.profiler`` session over CPU (and CUDA, when there is a GPU)
activity; ``stop()`` ends it and writes a trace under ``logdir`` that TensorBoard's profiler
plugin (``torch-tb-profiler``) and ``chrome://tracing`` read, via
``torch.profiler.tensorboard_trace_handler``. ``Profile(logdir)`` is the same as a ``with`` block;
``Trace(name)`` labels a region (``torch.profiler.record_function``). The trace is torch's, not
TF's ``.xplane.pb``: TF's profile plugin does not read it.

Example:
    >>> import tempfile, unison as tf
    >>> logdir = tempfile.mkdtemp()
    >>> with tf.profiler.experimental.Profile(logdir):
    ...     with tf.profiler.experimental.Trace("step", step_num=1):
    ...         _ = tf.ones([2]) * 2
    >>> import os
    >>> len(os.listdir(logdir)) > 0
    True
"""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass
from typing import Any

import torch

from unison.errors import UnavailableError

__all__ = ["experimental"]

_lock = threading.Lock()
_session: dict[str, Any] = {}


@dataclass(frozen=True)
class ProfilerOptions:
    """TF's ``ProfilerOptions``: accepted; torch's profiler records host and device activity."""

    host_tracer_level: int = 2
    python_tracer_level: int = 0
    device_tracer_level: int = 1
    delay_ms: int | None = None


def _activities() -> list[Any]:
    acts = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts


def start(logdir: str | os.PathLike[str], options: ProfilerOptions | None = None) -> None:
    """Start profiling; the trace goes to ``logdir`` when :func:`stop` is called."""
    with _lock:
        if _session:
            raise RuntimeError(
                "A profiler session is already running (tf.profiler.experimental.start was called twice). "
                "Call tf.profiler.experimental.stop() first."
            )
        path = os.fspath(logdir)
        os.makedirs(path, exist_ok=True)
        prof = torch.profiler.profile(
            activities=_activities(),
            with_stack=bool(options and options.python_tracer_level),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(path),
        )
        prof.__enter__()
        _session.update(profiler=prof, logdir=path)
        # A program that exits (or fails) with the session still open would crash in torch's
        # profiler teardown (a segfault at interpreter exit): close it first, trace discarded
        # as TF discards an unstopped session's.
        atexit.register(_stop_at_exit)


def _stop_at_exit() -> None:
    if _session:
        stop(save=False)


def stop(save: bool = True) -> None:
    """Stop profiling and (``save=True``) write the trace."""
    with _lock:
        if not _session:
            raise UnavailableError(
                "Cannot export profiling results. No profiler session is running: call "
                "tf.profiler.experimental.start(logdir) first."
            )
        prof = _session.pop("profiler")
        _session.clear()
        if not save:
            prof.on_trace_ready = None
        prof.__exit__(None, None, None)


def is_running() -> bool:
    """Whether a session started by :func:`start` is running."""
    return bool(_session)


class Profile:
    """``with tf.profiler.experimental.Profile(logdir):``: profile the block."""

    def __init__(self, logdir: str | os.PathLike[str], options: ProfilerOptions | None = None) -> None:
        self.logdir, self.options = logdir, options

    def __enter__(self) -> Profile:
        start(self.logdir, self.options)
        return self

    def __exit__(self, *exc: object) -> None:
        stop()


class Trace:
    """``with tf.profiler.experimental.Trace(name, step_num=..., **kwargs):``: a labelled region."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        label = name if "step_num" not in kwargs else f"{name}#step_num={kwargs['step_num']}"
        self._region = torch.profiler.record_function(label)

    def __enter__(self) -> Trace:
        self._region.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._region.__exit__(None, None, None)


class experimental:  # noqa: N801 - TF's namespace tf.profiler.experimental
    """``tf.profiler.experimental``: ``start``, ``stop``, ``Profile``, ``Trace``, ``ProfilerOptions``."""

    start = staticmethod(start)
    stop = staticmethod(stop)
    Profile = Profile
    Trace = Trace
    ProfilerOptions = ProfilerOptions
