"""Several replicas per worker: the worker's process re-runs its command for its other devices.

The pattern of the local launcher (:mod:`unison.launch.local`): a worker of a multi-worker job
with L local devices is replica 0 of its worker and starts replicas 1..L-1 by re-running the same
command with ``UNISON_WORKER_REPLICA=k``. They keep the worker's ``TF_CONFIG`` (so their
resolver computes the same cluster) and join the chief's store themselves. The watchdog of the
local launcher watches them: if one fails, the worker prints which one and why and stops.

Example (inside ``MultiWorkerMirroredStrategy`` on a worker with 2 CPU replicas)::

    job = start_worker_replicas(plan)     # this process keeps local replica 0
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import traceback
from typing import Any

from unison.cluster.base import (
    ENV_WORKER_ERROR_FILE,
    ENV_WORKER_REPLICA,
    ENV_WORKER_REPLICAS,
)
from unison.cluster.plan import JobPlan
from unison.launch.local import LocalJob, spawn_replicas, watch_replicas


def start_worker_replicas(plan: JobPlan) -> LocalJob:
    """Start local replicas 1..L-1 of this worker (this process is local replica 0)."""
    job = LocalJob(world_size=plan.world_size, store=None, workdir=tempfile.mkdtemp(prefix="unison-worker-replicas-"))

    def env_for(rank: int, error_file: str) -> dict[str, str]:
        return {
            ENV_WORKER_REPLICA: str(rank - plan.rank),
            ENV_WORKER_REPLICAS: str(plan.local_world_size),
            ENV_WORKER_ERROR_FILE: error_file,
        }

    spawn_replicas(job, range(plan.rank + 1, plan.rank + plan.local_world_size), env_for)
    watch_replicas(job, str(plan.task))
    return job


def install_elastic_error_hook() -> None:
    """Under torchrun: write an uncaught exception where the elastic agent reads failures from.

    The agent's failure summary then shows the traceback (torch's ``@record`` format), not
    just an exit code.
    """
    error_file = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not error_file:
        return
    previous_hook = sys.excepthook

    def elastic_excepthook(tp: type[BaseException], value: BaseException, tb: Any) -> None:
        data = {
            "message": {
                "message": f"{tp.__name__}: {value}",
                "extraInfo": {
                    "py_callstack": "".join(traceback.format_exception(tp, value, tb)),
                    "timestamp": str(int(time.time())),
                },
            }
        }
        try:
            with open(error_file, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
        except OSError:
            pass  # the agent still sees the exit code
        previous_hook(tp, value, tb)

    sys.excepthook = elastic_excepthook
