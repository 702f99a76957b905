"""``tf.train.get_checkpoint_state``, ``tf.train.checkpoints_iterator`` and ``tf.train.CheckpointOptions``.

``get_checkpoint_state`` parses a directory's ``checkpoint`` file (TF's ``CheckpointState`` text
format, which :class:`tf.train.Checkpoint` and :class:`tf.train.CheckpointManager` write) into a
``CheckpointState`` protobuf message with absolute paths, as TF returns it. ``checkpoints_iterator``
is TF's evaluator loop: it yields each new latest checkpoint of a directory as it appears.

Example:
    >>> import tempfile, unison as tf
    >>> d = tempfile.mkdtemp()
    >>> tf.train.get_checkpoint_state(d) is None
    True
    >>> path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(d + "/ckpt")
    >>> tf.train.get_checkpoint_state(d).model_checkpoint_path == path
    True
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from unison.train.checkpoint import latest_checkpoint

_POLL_S = 1.0  # how often checkpoints_iterator looks at the directory (TF's seconds_to_sleep)


def get_checkpoint_state(checkpoint_dir: str | os.PathLike[str], latest_filename: str | None = None) -> Any:
    """The ``CheckpointState`` recorded in ``checkpoint_dir`` (None when it has no ``checkpoint`` file).

    Relative paths in the file are returned joined to ``checkpoint_dir``, as TF does.

    Raises:
        ValueError: the file exists but names no checkpoint.
    """
    from google.protobuf import text_format

    from unison.ops.train_protos import CheckpointState

    directory = os.fspath(checkpoint_dir)
    path = os.path.join(directory, latest_filename or "checkpoint")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    state = CheckpointState()
    try:
        text_format.Merge(text, state)
    except text_format.ParseError as exc:
        raise ValueError(f"Invalid checkpoint state loaded from {path!r}: {exc}") from None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {path!r}: it names no model_checkpoint_path.")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(directory, state.model_checkpoint_path)
    for i, p in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            state.all_model_checkpoint_paths[i] = os.path.join(directory, p)
    return state


def _wait_for_new_checkpoint(directory: str, last: str | None, timeout: float | None) -> str | None:
    stop_at = None if timeout is None else time.monotonic() + timeout
    while True:
        path = latest_checkpoint(directory)
        if path is not None and path != last:
            return path
        if stop_at is not None and time.monotonic() + _POLL_S > stop_at:
            return None
        time.sleep(_POLL_S)  # polling the file system: nothing to wait on but the directory


def checkpoints_iterator(
    checkpoint_dir: str | os.PathLike[str],
    min_interval_secs: float = 0,
    timeout: float | None = None,
    timeout_fn: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Yield each new latest checkpoint of ``checkpoint_dir`` (TF's continuous-evaluation loop).

    Args:
        checkpoint_dir: the directory ``tf.train.Checkpoint``/``CheckpointManager`` saves into.
        min_interval_secs: at least this long between two yields.
        timeout: give up waiting for a new checkpoint after this many seconds (None: wait forever).
        timeout_fn: called on a timeout; the iteration ends when it returns True, else waits again.
    """
    directory = os.fspath(checkpoint_dir)
    last: str | None = None
    while True:
        path = _wait_for_new_checkpoint(directory, last, timeout)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        started = time.monotonic()
        last = path
        yield path
        rest = started + min_interval_secs - time.monotonic()
        if rest > 0:
            time.sleep(rest)  # TF's rate limit between evaluations


class CheckpointOptions:
    """``tf.train.CheckpointOptions``: options for ``Checkpoint.save``/``write``/``restore``.

    unison writes every checkpoint on the calling thread, so ``enable_async`` gives the same
    files as a synchronous save; ``experimental_write_callbacks`` run after each write with the
    path written (those that take one argument); ``experimental_sharding_callback`` (a
    ``tf.train.experimental.ShardingCallback``) spreads the values over shard files.
    """

    __slots__ = (
        "experimental_io_device",
        "enable_async",
        "experimental_enable_async_checkpoint",
        "experimental_write_callbacks",
        "experimental_sharding_callback",
        "experimental_skip_slot_variables",
    )

    def __init__(
        self,
        experimental_io_device: str | None = None,
        experimental_enable_async_checkpoint: bool = False,
        experimental_write_callbacks: list[Callable[..., Any]] | None = None,
        enable_async: bool = False,
        experimental_skip_slot_variables: bool = False,
        experimental_sharding_callback: Any = None,
    ) -> None:
        self.experimental_io_device = experimental_io_device
        self.enable_async = bool(experimental_enable_async_checkpoint or enable_async)
        self.experimental_enable_async_checkpoint = self.enable_async
        for callback in experimental_write_callbacks or ():
            if len(inspect.signature(callback).parameters) > 1:
                raise ValueError(
                    "experimental_write_callbacks take at most one argument (the path written). "
                    f"Received: {callback!r} with parameters {list(inspect.signature(callback).parameters)}"
                )
        self.experimental_write_callbacks = experimental_write_callbacks
        from unison.train.sharding import ShardingCallback

        if experimental_sharding_callback is not None and not isinstance(
            experimental_sharding_callback, ShardingCallback
        ):
            raise ValueError(
                "The experimental_sharding_callback checkpoint option must be of type ShardingCallback "
                "(tf.train.experimental.ShardByTaskPolicy(), MaxShardSizePolicy(max_shard_size) or a subclass). "
                f"Received: {experimental_sharding_callback!r:.80} of type {type(experimental_sharding_callback)}"
            )
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


__all__ = ["CheckpointOptions", "checkpoints_iterator", "get_checkpoint_state"]
