"""unison.bench (being built)."""
