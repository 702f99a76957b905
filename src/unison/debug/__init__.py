"""Distributed training that explains itself: hang reports, stragglers, a timeline.

- :func:`dump` prints this replica's flight recorder, the last collectives it issued
  (``UNISON_FLIGHT_RECORDER=N`` keeps N of them; 0 turns the recorder off).
- A collective that fails or times out (``UNISON_COLLECTIVE_TIMEOUT`` shortens every timeout)
  raises on every replica with the same report: each replica's recent collectives, the first
  sequence number at which they differ, the ranks that did not arrive and each replica's stack
  (:mod:`unison.debug.hang`).
- :func:`straggler_report` compares how long each replica computed and waited in collectives
  (:mod:`unison.debug.straggler`).
- ``UNISON_TIMELINE=path.json`` writes a Chrome/Perfetto trace of every replica
  (:mod:`unison.debug.timeline`).

This package sits below :mod:`unison.comm`: the communicator records into it, it never imports
the communicator (the job's store reaches it through :func:`attach`).

Example:
    >>> import unison
    >>> unison.debug.dump()
    rank 0: no collective recorded yet
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from unison.debug.flight import FlightRecorder, capacity_from_env, format_record
from unison.debug.hang import HangExplainer
from unison.debug.state import _JOB
from unison.debug.straggler import StepTimings, StragglerReport, straggler_report
from unison.debug.timeline import timeline

__all__ = [
    "FlightRecorder",
    "HangExplainer",
    "StepTimings",
    "StragglerReport",
    "attach",
    "detach",
    "dump",
    "recorder",
    "straggler_report",
    "timeline",
]

# Process-wide, like torch's process group: a collective anywhere in the process records here,
# and dump() finds it without arguments.
_RECORDER: list[FlightRecorder] = []


def recorder() -> FlightRecorder:
    """This process's flight recorder (made on first use)."""
    if not _RECORDER:
        _RECORDER.append(FlightRecorder(capacity_from_env()))
    return _RECORDER[0]


def attach(store: Any, rank: int, world_size: int, timeout_s: float) -> HangExplainer | None:
    """Join this process's debugging to its job: start the hang watchdog on ``store``.

    Called once per process group by :func:`unison.comm.connect`; ``None`` when there is
    nothing to watch (one replica, no store). A second call returns the first watchdog.
    """
    existing: HangExplainer | None = _JOB.get("explainer")
    if existing is not None:
        return existing
    _JOB.update(store=store, rank=rank, world_size=world_size, timeout_s=timeout_s)
    if store is None or world_size < 2:
        return None
    explainer = HangExplainer(store, rank, world_size, recorder(), timeout_s)
    explainer.start()
    _JOB["explainer"] = explainer
    return explainer


def detach() -> None:
    """Stop the hang watchdog: its process group is being torn down (``shutdown()``).

    A later :func:`attach` (a new group) starts a new one.
    """
    explainer: HangExplainer | None = _JOB.pop("explainer", None)
    if explainer is not None:
        explainer.stop()


def dump(file: TextIO | None = None) -> None:
    """Print this replica's recorded collectives, oldest first (one line each)."""
    out = file if file is not None else sys.stdout
    rank = _JOB.get("rank", 0)
    records = recorder().records()
    if not records:
        print(f"rank {rank}: no collective recorded yet", file=out)
        return
    print(f"rank {rank}: last {len(records)} collectives (oldest first)", file=out)
    for r in records:
        print(f"  {format_record(r)}", file=out)
