"""Who am I: process placement and cluster resolution (reads the environment so strategies don't)."""

from unison.cluster.placement import ProcessPlacement, resolve_placement

__all__ = ["ProcessPlacement", "resolve_placement"]
