"""One task of a local TF_CONFIG cluster: what ``unison launch --tf-config`` runs in each process.

torchrun starts ``python -m unison.launch.tf_config_entry script.py args...`` once per process;
this module gives the process ``TF_CONFIG`` for task ``worker:RANK`` of the cluster the launcher
generated (``UNISON_TF_CONFIG_CLUSTER``) and then runs the user's script as ``__main__``, so the
program sees exactly what it would see on a real multi-host cluster.

Example::

    UNISON_TF_CONFIG_CLUSTER='{"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]}' RANK=1 \\
        python -m unison.launch.tf_config_entry train.py --epochs 2
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from collections.abc import Sequence

ENV_TF_CONFIG_CLUSTER = "UNISON_TF_CONFIG_CLUSTER"


def tf_config_for(cluster: dict, index: int) -> str:
    """The ``TF_CONFIG`` of task ``worker:index`` of ``cluster``."""
    return json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})


def main(argv: Sequence[str] | None = None) -> None:
    """Set ``TF_CONFIG`` from the launcher's cluster and this process's ``RANK``; run the script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m unison.launch.tf_config_entry [-m module | script.py] args...")
    cluster = json.loads(os.environ[ENV_TF_CONFIG_CLUSTER])
    os.environ["TF_CONFIG"] = tf_config_for(cluster, int(os.environ["RANK"]))
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
