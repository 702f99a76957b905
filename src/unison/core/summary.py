"""``tf.summary``: TensorBoard event files through ``torch.utils.tensorboard.SummaryWriter``.

``create_file_writer(logdir)`` returns a writer; inside ``with writer.as_default():``
``scalar``/``histogram``/``text`` record to it at ``step`` (or at the step set with
``experimental.set_step``), as in TF 2. The files are ordinary TensorBoard event files
(``tensorboard --logdir`` and ``EventAccumulator`` read them). Needs the ``tensorboard`` package
(``pip install unison[tensorboard]``). Unlike the Keras ``TensorBoard`` callback, these functions
write on every process that calls them: give each worker its own ``logdir`` (as TF's
multi-worker tutorial does) or write on the chief only.

Example:
    >>> import tempfile
    >>> import unison as tf
    >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
    >>> with writer.as_default():
    ...     tf.summary.scalar("loss", 0.5, step=1)
    True
    >>> writer.close()
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

_state = threading.local()  # per thread, as TF's default writer: the stack of as_default() writers


def summary_writer_class() -> Any:
    """``torch.utils.tensorboard.SummaryWriter``, or an ImportError that says how to install it."""
    # TensorBoard's compat layer imports TensorFlow when it is installed (10 s, and TF's thread pools
    # in this process); its documented "no TensorFlow" switch makes it use its own stub instead
    if "tensorboard.compat.tf" not in sys.modules:
        sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as exc:  # torch imports the tensorboard package lazily here
        raise ImportError(
            "Writing TensorBoard summaries needs the 'tensorboard' package, which is not installed "
            f"({exc}). Install it with `pip install unison[tensorboard]`, `pip install unison[tf]` (TF "
            "programs' usual packages) or `pip install tensorboard`."
        ) from None
    return SummaryWriter


def _stack() -> list[SummaryWriter]:
    if not hasattr(_state, "writers"):
        _state.writers = []
        _state.step = None
    return _state.writers


class SummaryWriter:
    """A TensorBoard event-file writer for one ``logdir`` (``tf.summary.SummaryWriter``)."""

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        max_queue: int | None = None,
        flush_millis: int | None = None,
        filename_suffix: str | None = None,
    ) -> None:
        if not isinstance(logdir, (str, os.PathLike)) or not os.fspath(logdir):
            raise ValueError(f"create_file_writer needs a directory path. Received: logdir={logdir!r}")
        writer_cls = summary_writer_class()
        self.logdir = os.fspath(logdir)
        secs = 120 if flush_millis is None else max(flush_millis / 1000.0, 0.001)
        self._writer = writer_cls(
            self.logdir, max_queue=max_queue or 10, flush_secs=secs, filename_suffix=filename_suffix or ""
        )
        self._closed = False

    @contextlib.contextmanager
    def as_default(self, step: int | None = None) -> Iterator[SummaryWriter]:
        """Make this the writer that ``tf.summary.scalar`` etc. record to, inside the ``with`` block."""
        stack = _stack()
        stack.append(self)
        old_step = _state.step
        if step is not None:
            _state.step = int(step)
        try:
            yield self
        finally:
            stack.pop()
            _state.step = old_step
            self.flush()

    def set_as_default(self, step: int | None = None) -> None:
        """Make this the default writer until another one is set (TF's ``set_as_default``)."""
        stack = _stack()
        stack[:] = [self]
        if step is not None:
            _state.step = int(step)

    def _live(self) -> Any:
        if self._closed:
            raise RuntimeError(f"The summary writer for {self.logdir!r} is closed; create a new one.")
        return self._writer

    def flush(self) -> None:
        """Write pending events to disk."""
        if not self._closed:
            self._writer.flush()

    def close(self) -> None:
        """Flush and close the event file (later writes raise)."""
        if not self._closed:
            self._writer.close()
            self._closed = True
        stack = _stack()
        stack[:] = [w for w in stack if w is not self]

    def init(self) -> None:
        """Nothing to do: the event file opens when the writer is created (TF 1 compatibility)."""


def create_file_writer(
    logdir: str | os.PathLike[str],
    max_queue: int | None = None,
    flush_millis: int | None = None,
    filename_suffix: str | None = None,
    name: str | None = None,
    experimental_trackable: bool = False,
    experimental_mesh: Any = None,
) -> SummaryWriter:
    """A writer of TensorBoard event files under ``logdir`` (created if needed)."""
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer() -> _NoopWriter:
    """A writer that records nothing (TF's ``create_noop_writer``)."""
    return _NoopWriter()


class _NoopWriter:
    @contextlib.contextmanager
    def as_default(self, step: int | None = None) -> Iterator[_NoopWriter]:
        stack = _stack()
        stack.append(self)  # type: ignore[arg-type]
        try:
            yield self
        finally:
            stack.pop()

    def set_as_default(self, step: int | None = None) -> None:
        _stack()[:] = [self]  # type: ignore[list-item]

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _recording() -> bool:
    condition = getattr(_state, "record_if", True)
    value = condition() if callable(condition) else condition
    return bool(value.item() if isinstance(value, (torch.Tensor, np.ndarray)) else value)


def _resolve(step: Any) -> tuple[Any, int] | None:
    stack = _stack()
    if not stack or isinstance(stack[-1], _NoopWriter) or not _recording():
        return None  # TF: without a default writer (or under record_if(False)) a summary op records nothing
    if step is None:
        step = _state.step
    if step is None:
        raise ValueError(
            "No step set. Pass step= to the summary call, or set one with "
            "tf.summary.experimental.set_step(step) or writer.as_default(step=...)."
        )
    return stack[-1]._live(), int(step.item() if isinstance(step, (torch.Tensor, np.ndarray)) else step)


def _scalar_value(name: str, data: Any) -> float:
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu()
    arr = np.asarray(data)
    if arr.size != 1:
        raise ValueError(f"tf.summary.scalar({name!r}) needs a single number. Received data of shape {arr.shape}.")
    return float(arr.reshape(()))


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Record one number at ``step``; ``False`` when no default writer is set (as TF)."""
    value = _scalar_value(name, data)
    target = _resolve(step)
    if target is None:
        return False
    writer, at = target
    writer.add_scalar(name, value, global_step=at)
    return True


def histogram(
    name: str, data: Any, step: Any = None, buckets: int | None = None, description: str | None = None
) -> bool:
    """Record the distribution of ``data``'s values at ``step`` (``buckets`` bins, default 30 as TF)."""
    values = np.asarray(data.detach().cpu() if isinstance(data, torch.Tensor) else data, dtype=np.float64)
    target = _resolve(step)
    if target is None:
        return False
    writer, at = target
    writer.add_histogram(name, values.reshape(-1), global_step=at, bins=int(buckets or 30) if values.size else "auto")
    return True


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Record a string at ``step``."""
    target = _resolve(step)
    if target is None:
        return False
    writer, at = target
    writer.add_text(name, data if isinstance(data, str) else str(data), global_step=at)
    return True


@contextlib.contextmanager
def record_if(condition: Any) -> Iterator[None]:
    """``tf.summary.record_if``: summaries inside record only while ``condition`` (a bool, a boolean
    tensor or a function returning one, read at each summary call) holds."""
    _stack()
    previous = getattr(_state, "record_if", True)
    _state.record_if = condition
    try:
        yield
    finally:
        _state.record_if = previous


def should_record_summaries() -> torch.Tensor:
    """``tf.summary.should_record_summaries``: whether a summary call here would write (a boolean tensor)."""
    stack = _stack()
    return torch.tensor(bool(stack) and not isinstance(stack[-1], _NoopWriter) and _recording())


def flush(writer: Any = None, name: str | None = None) -> None:
    """``tf.summary.flush``: write ``writer``'s (default: the default writer's) pending events to disk."""
    target = writer if writer is not None else (_stack()[-1] if _stack() else None)
    if target is not None:
        target.flush()


def _numpy(data: Any) -> np.ndarray:
    return np.asarray(data.detach().cpu() if isinstance(data, torch.Tensor) else data)


def write(tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: str | None = None) -> bool:
    """``tf.summary.write``: record ``tensor`` (any value) under ``tag`` at ``step``, as a tensor summary."""
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.util import tensor_util

    value = tensor() if callable(tensor) else tensor
    target = _resolve(step)
    if target is None:
        return False
    writer, at = target
    meta = metadata if isinstance(metadata, SummaryMetadata) else SummaryMetadata()
    if isinstance(metadata, bytes):
        meta = SummaryMetadata.FromString(metadata)
    proto = tensor_util.make_tensor_proto(_numpy(value))
    writer._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)]), at)
    return True


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3, description: str | None = None) -> bool:
    """``tf.summary.image``: record up to ``max_outputs`` images of ``data`` ``[k, h, w, c]`` (floats in [0, 1] or uint8)."""
    images = _numpy(data)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise ValueError(
            f"tf.summary.image({name!r}) needs [k, height, width, 1|3|4] images. Received shape {images.shape}."
        )
    target = _resolve(step)
    if target is None:
        return False
    writer, at = target
    writer.add_images(name, images[: int(max_outputs)], global_step=at, dataformats="NHWC")
    return True


def audio(
    name: str, data: Any, sample_rate: Any, step: Any = None, max_outputs: int = 3, encoding: str | None = None,
    description: str | None = None,
) -> bool:  # fmt: skip
    """``tf.summary.audio``: record up to ``max_outputs`` clips of ``data`` ``[k, samples, channels]`` in [-1, 1].

    torch's writer records mono WAV: the channels of a clip are averaged (TF keeps them).
    """
    clips = _numpy(data)
    if clips.ndim != 3:
        raise ValueError(
            f"tf.summary.audio({name!r}) needs [k, samples, channels] audio. Received shape {clips.shape}."
        )
    target = _resolve(step)
    if target is None:
        return False
    writer, at = target
    rate = int(_numpy(sample_rate))
    for clip in clips[: int(max_outputs)]:
        writer.add_audio(
            name, torch.from_numpy(np.ascontiguousarray(clip.mean(axis=-1))), global_step=at, sample_rate=rate
        )
    return True


_trace: dict[str, Any] = {}


def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: str | None = None) -> None:
    """``tf.summary.trace_on``: with ``profiler=True`` start profiling (torch's profiler).

    There is no graph to record (unison runs eagerly), so ``graph=True`` records nothing and
    :func:`trace_export` writes no graph; a profile goes to ``profiler_outdir``.
    """
    from unison.core import profiler as profiler_mod

    _trace["on"] = True
    if profiler:
        if profiler_outdir is None:
            raise ValueError("tf.summary.trace_on(profiler=True) needs profiler_outdir= (where the trace goes).")
        profiler_mod.start(profiler_outdir)
        _trace["profiling"] = True


def trace_off() -> None:
    """``tf.summary.trace_off``: stop tracing (and profiling started by :func:`trace_on`) without export."""
    from unison.core import profiler as profiler_mod

    if _trace.pop("profiling", False) and profiler_mod.is_running():
        profiler_mod.stop(save=False)
    _trace.clear()


def trace_export(name: str, step: Any = None, profiler_outdir: str | None = None) -> None:
    """``tf.summary.trace_export``: end the trace; a profile started by :func:`trace_on` is written.

    No graph is written: unison has none (TF writes the traced ``tf.function`` graph here).
    """
    from unison.core import profiler as profiler_mod

    if _trace.pop("profiling", False) and profiler_mod.is_running():
        profiler_mod.stop(save=True)
    _trace.clear()


class experimental:  # noqa: N801 - TF's namespace tf.summary.experimental
    """``tf.summary.experimental.set_step`` / ``get_step`` / ``summary_scope`` / ``write_raw_pb``."""

    @staticmethod
    def write_raw_pb(tensor: Any, step: Any = None, name: str | None = None) -> bool:
        """Writes serialized ``Summary`` protos (a string or strings) at ``step``; False without a writer."""
        from tensorboard.compat.proto.summary_pb2 import Summary

        target = _resolve(step)
        if target is None:
            return False
        writer, at = target
        raw = tensor.numpy() if hasattr(tensor, "numpy") else tensor
        for item in np.asarray(raw, dtype=object).reshape(-1).tolist():
            writer._get_file_writer().add_summary(
                Summary.FromString(item if isinstance(item, bytes) else bytes(item)), at
            )
        return True

    @staticmethod
    @contextlib.contextmanager
    def summary_scope(
        name: str | None, default_name: str | None = None, values: Any = None
    ) -> Iterator[tuple[str, str]]:
        """``(tag, scope)`` for a summary named ``name`` under the current ``tf.name_scope`` (TF's rule)."""
        import re

        from unison.ops.control_more import get_current_name_scope, name_scope

        base = name or default_name
        if not base:
            raise ValueError("summary_scope needs a name or a default_name.")
        prefix = get_current_name_scope()
        tag = f"{prefix}/{base}" if prefix else base
        clean = re.sub(r"[^A-Za-z0-9_.\-/>]", "", base).lstrip("_-/>") or default_name or "summary"
        with name_scope(clean) as scope:
            yield tag, scope if scope.endswith("/") else scope + "/"

    @staticmethod
    def set_step(step: Any) -> None:
        _stack()
        _state.step = None if step is None else int(step)

    @staticmethod
    def get_step() -> int | None:
        _stack()
        return _state.step


__all__ = [
    "SummaryWriter",
    "audio",
    "flush",
    "image",
    "record_if",
    "should_record_summaries",
    "write",
    "create_file_writer",
    "create_noop_writer",
    "experimental",
    "histogram",
    "scalar",
    "summary_writer_class",
    "text",
    "trace_export",
    "trace_off",
    "trace_on",
]
