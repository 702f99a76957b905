"""The timeline: a Chrome/Perfetto trace (JSON trace-event format) of every replica of a job.

``UNISON_TIMELINE=path.json`` (or ``unison launch --timeline path.json``) turns it on. Each
replica keeps its events in memory, appends the new ones every ``UNISON_TIMELINE_FLUSH_S``
seconds (default 2) to ``path.rank<R>.partial.jsonl`` (one event per line), and writes
``path.rank<R>.json`` when it exits; rank 0 (or ``unison launch``, once every replica has
exited) merges them into ``path.json``, one process per rank (``pid`` = rank), taking a
replica's partial file when it never wrote its own: a replica killed (``kill -9``, a launcher
tearing the job down) loses at most its last seconds. Open it at https://ui.perfetto.dev or
``chrome://tracing``.

Tracks of a replica: ``steps`` (forward, backward and optimizer phases as the
DistributedOptimizer sees them), ``collectives`` (every collective; a bucket's all-reduce shows
as ``queued`` from its launch during backward until the step waits for it, then its wait), ``data``
(waits for the next batch) and ``checkpoint`` (saves). Times are microseconds of the wall clock,
so replicas of one host line up exactly and hosts within their clocks' skew.

Example:
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> tl = Timeline(path, rank=0, world_size=1)
    >>> with tl.span("checkpoint", "save"):
    ...     pass
    >>> tl.write_own(); merge(path, 1, wait_s=0)
    [0]
    >>> sorted({e["name"] for e in json.load(open(path))["traceEvents"]})
    ['process_name', 'save', 'thread_name']
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from multiprocessing.util import Finalize
from typing import Any

ENV_TIMELINE = "UNISON_TIMELINE"
ENV_FLUSH = "UNISON_TIMELINE_FLUSH_S"
DEFAULT_FLUSH_S = 2.0
TRACKS = {"steps": 1, "collectives": 2, "data": 3, "checkpoint": 4}


class Timeline:
    """The events of one replica (complete ``X`` events on named tracks).

    Args:
        path: the merged trace's path; this replica writes ``<path>.rank<R>.json``.
        rank: this replica's rank.
        world_size: replicas in the job (rank 0 merges that many files).
    """

    def __init__(self, path: str, rank: int, world_size: int) -> None:
        self.path = path
        self.rank = rank
        self.world_size = world_size
        self.events: list[tuple[str, int, float, float, dict[str, Any] | None]] = []
        # perf_counter is monotonic and fine-grained; one offset maps it onto the wall clock
        self._offset_us = time.time() * 1e6 - time.perf_counter() * 1e6
        self._written = False
        self._flushed = 0  # events already appended to the partial file
        self._flush_lock = threading.Lock()
        self._stop = threading.Event()

    def now(self) -> float:
        """The current time in this timeline's clock (``time.perf_counter`` seconds)."""
        return time.perf_counter()

    def add(self, track: str, name: str, start: float, end: float, args: dict[str, Any] | None = None) -> None:
        """One event on ``track`` from ``start`` to ``end`` (``perf_counter`` seconds)."""
        self.events.append((name, TRACKS[track], start, end, args))

    @contextlib.contextmanager
    def span(self, track: str, name: str, args: dict[str, Any] | None = None) -> Iterator[None]:
        """Record the ``with`` block as one event."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(track, name, start, time.perf_counter(), args)

    def own_path(self, rank: int | None = None) -> str:
        return f"{self.path}.rank{self.rank if rank is None else rank}.json"

    def partial_path(self) -> str:
        return partial_path(self.path, self.rank)

    def _metadata(self) -> list[dict[str, Any]]:
        pid = self.rank
        out: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": f"rank {pid} ({socket.gethostname()})"}}
        ]
        out += [
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": track}}
            for track, tid in TRACKS.items()
        ]
        return out

    def trace_events(self) -> list[dict[str, Any]]:
        """This replica's events in the trace-event format (with process and track names)."""
        return self._metadata() + self._format(self.events)

    def _format(self, events: list[tuple[str, int, float, float, dict[str, Any] | None]]) -> list[dict[str, Any]]:
        pid, off = self.rank, self._offset_us
        out: list[dict[str, Any]] = []
        for name, tid, start, end, args in events:
            event = {
                "name": name,
                "ph": "X",
                "pid": pid,
                "tid": tid,
                "ts": start * 1e6 + off,
                "dur": (end - start) * 1e6,
            }
            if args:
                event["args"] = args
            out.append(event)
        return out

    def flush(self) -> None:
        """Append the events recorded since the last flush to this replica's partial file.

        Appending costs what the new events cost to format (not the whole history); a kill
        loses only the events since the last flush, and a torn last line is skipped on reading.
        """
        with self._flush_lock:
            if self._written:
                return
            count = len(self.events)  # appends from other threads land after this index
            if count == self._flushed:
                return
            new = self._format(self.events[self._flushed : count])
            if self._flushed == 0:
                new = self._metadata() + new
            with open(self.partial_path(), "a") as fh:
                fh.write("".join(json.dumps(e) + "\n" for e in new))
            self._flushed = count

    def start_flushing(self, every_s: float) -> None:
        """Flush every ``every_s`` seconds from a daemon thread until :meth:`close`."""

        def loop() -> None:
            while not self._stop.wait(every_s):
                try:
                    self.flush()
                except OSError:
                    return  # the folder went away: nothing to write into

        threading.Thread(target=loop, name="unison-timeline-flush", daemon=True).start()

    def write_own(self) -> None:
        """Write this replica's file (atomically: a reader never sees half of it)."""
        with self._flush_lock:
            if self._written:
                return
            self._written = True
            tmp = self.own_path() + ".tmp"
            with open(tmp, "w") as fh:
                json.dump({"traceEvents": self.trace_events(), "displayTimeUnit": "ms"}, fh)
            os.replace(tmp, self.own_path())
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.partial_path())  # the whole file supersedes it

    def close(self) -> None:
        """At exit: write this replica's file; rank 0 then merges every replica's."""
        self._stop.set()
        try:
            self.write_own()
            if self.rank == 0:
                merge(self.path, self.world_size)
        except OSError:
            pass  # the folder went away: nothing to write into


def partial_path(path: str, rank: int) -> str:
    """The file a replica appends its events to while it runs."""
    return f"{path}.rank{rank}.partial.jsonl"


def _read_partial(name: str) -> list[Any]:
    events = []
    with open(name) as fh:
        for line in fh:
            try:
                events.append(json.loads(line))
            except ValueError:
                break  # the line a kill cut short
    return events


def merge(path: str, world_size: int, wait_s: float = 10.0) -> list[int]:
    """Merge ``<path>.rank<R>.json`` of every rank into ``path``; returns the ranks merged.

    Waits up to ``wait_s`` for ranks that have not written their file yet; a rank whose file
    never comes is merged from its partial file (its events up to its last flush), or left
    out when it has none (the others' still load).
    """
    deadline = time.monotonic() + wait_s
    files = {r: f"{path}.rank{r}.json" for r in range(world_size)}
    while not all(os.path.exists(f) for f in files.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    events: list[Any] = []
    merged = []
    for r, name in files.items():
        try:
            with open(name) as fh:
                events += json.load(fh)["traceEvents"]
            merged.append(r)
            continue
        except (OSError, ValueError, KeyError):
            pass
        try:
            partial = _read_partial(partial_path(path, r))
        except OSError:
            continue
        if partial:
            events += partial
            merged.append(r)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"ranks": merged}}, fh)
    os.replace(tmp, path)
    return merged


_TIMELINE: list[Timeline | None] = []
_LOCK = threading.Lock()


def timeline() -> Timeline | None:
    """This process's timeline, or ``None`` when ``UNISON_TIMELINE`` is not set (the usual case)."""
    if _TIMELINE:
        return _TIMELINE[0]
    return None


def span(track: str, name: str) -> contextlib.AbstractContextManager[None]:
    """The ``with`` block as one event on ``track`` when a timeline is on; else it costs nothing."""
    tl = timeline()
    return tl.span(track, name) if tl is not None else contextlib.nullcontext()


def traced(batches: Iterable[Any], name: str = "next batch") -> Iterable[Any]:
    """``batches``, with each wait for the next one on the ``data`` track when a timeline is on."""
    tl = timeline()
    return batches if tl is None else _traced(tl, batches, name)


def _traced(tl: Timeline, batches: Iterable[Any], name: str) -> Iterator[Any]:
    it = iter(batches)
    while True:
        start = time.perf_counter()
        try:
            item = next(it)
        except StopIteration:
            return
        tl.add("data", name, start, time.perf_counter())
        yield item


def start_timeline(rank: int, world_size: int) -> Timeline | None:
    """Start this process's timeline if ``UNISON_TIMELINE`` asks for one (once per process)."""
    with _LOCK:
        if _TIMELINE:
            return _TIMELINE[0]
        path = os.environ.get(ENV_TIMELINE, "").strip()
        tl = Timeline(os.path.abspath(path), rank, world_size) if path else None
        _TIMELINE.append(tl)
    if tl is not None:
        atexit.register(tl.close)
        Finalize(None, tl.close, exitpriority=90)  # multiprocessing's children skip atexit
        tl.start_flushing(_flush_interval())
    return tl


def _flush_interval() -> float:
    raw = os.environ.get(ENV_FLUSH, "").strip()
    if not raw:
        return DEFAULT_FLUSH_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(
            f"{ENV_FLUSH} must be a number of seconds > 0. Received: {ENV_FLUSH}={raw!r}. Fix: unset it "
            f"(default {DEFAULT_FLUSH_S:g}s) or set e.g. {ENV_FLUSH}=1."
        )
    return value


def flush_active() -> None:
    """Flush this process's timeline now (before an exit that skips ``atexit``)."""
    tl = timeline()
    if tl is not None:
        tl.flush()
