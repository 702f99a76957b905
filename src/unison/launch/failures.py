"""What ``unison launch`` prints when the job fails: one short paragraph per failed rank.

torchrun ends a failure with a ``Failures:``/``Root Cause`` block whose ``[0]``/``[1]`` labels are
list positions, not ranks. This module says instead, for each rank that failed: the rank (and
local rank, pid), how it ended (exit code, or the signal that killed it), the last lines it wrote
to stderr and the path of its full log.

Example::

    >>> print(describe_exit(-9))
    killed by signal SIGKILL (9)
    >>> print(describe_exit(3))
    exited with code 3
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass

from unison.launch.rank_entry import log_path

TAIL_LINES = 12


@dataclass(frozen=True)
class RankFailure:
    """One failed process: what torchrun knows about it."""

    rank: int
    local_rank: int
    pid: int
    exitcode: int
    timestamp: float = 0.0


def describe_exit(exitcode: int) -> str:
    """``exited with code 3`` or ``killed by signal SIGKILL (9)`` (negative codes are signals)."""
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "signal"
        return f"killed by signal {name} ({-exitcode})"
    return f"exited with code {exitcode}"


def tail(path: str, lines: int = TAIL_LINES) -> list[str]:
    """The last ``lines`` lines of the file at ``path`` (of its last attempt), or ``[]`` if unreadable."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    attempt = text.rfind("--- attempt ")
    if attempt >= 0:
        text = text[text.find("\n", attempt) + 1 :]
    return [line for line in text.splitlines() if line.strip()][-lines:]


def summary(failures: Mapping[int, RankFailure], log_dir: str | None, world_size: int) -> str:
    """The text printed after a failed launch: a headline naming the rank that failed first, then
    one paragraph per rank (the first failure first; ranks the launcher stopped after it say so)."""
    # torchrun SIGTERMs the others after the first failure, and its timestamps are whole seconds
    first = min(failures.values(), key=lambda f: (f.exitcode == -signal.SIGTERM, f.timestamp, f.rank))
    stopped = {r for r, f in failures.items() if r != first.rank and f.exitcode == -signal.SIGTERM}
    out = [
        f"unison launch: the job failed: rank {first.rank} of {world_size} {describe_exit(first.exitcode)}"
        + (" and the launcher stopped the others." if world_size > 1 else ".")
    ]
    for rank in [first.rank] + sorted(r for r in failures if r != first.rank):
        f = failures[rank]
        how = describe_exit(f.exitcode)
        if rank in stopped:
            how += f" (stopped by the launcher after rank {first.rank} failed)"
        out.append(f"- rank {rank} (local rank {f.local_rank}, pid {f.pid}): {how}")
        if log_dir is None:
            continue
        path = log_path(log_dir, rank)
        last = tail(path)
        if last:
            out.append(f"  last lines of its stderr ({path}):")
            out.extend(f"    {line}" for line in last)
        else:
            out.append(f"  it wrote nothing to stderr (log: {path})")
    if log_dir is not None:
        out.append(f"Logs kept in {log_dir} (remove the folder when done).")
    return "\n".join(out)


def from_child_failed_error(exc: BaseException) -> dict[int, RankFailure]:
    """The failures recorded in torch's ``ChildFailedError``, keyed by global rank."""
    found: dict[int, RankFailure] = {}
    for rank, failure in getattr(exc, "failures", {}).items():
        found[int(rank)] = RankFailure(
            rank=int(rank),
            local_rank=int(getattr(failure, "local_rank", rank)),
            pid=int(getattr(failure, "pid", -1)),
            exitcode=int(getattr(failure, "exitcode", 1)),
            timestamp=float(getattr(failure, "timestamp", 0) or 0),
        )
    return found
