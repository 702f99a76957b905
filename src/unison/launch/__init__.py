"""How processes start: the local re-exec launcher (and, later, `unison launch`)."""

from unison.launch.local import LaunchError, install_replica_hooks, rerun_command, start_local_job

__all__ = ["LaunchError", "install_replica_hooks", "rerun_command", "start_local_job"]
