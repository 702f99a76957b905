"""unison.cluster (being built)."""
