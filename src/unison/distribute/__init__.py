"""unison.distribute (being built)."""
