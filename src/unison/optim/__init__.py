"""unison.optim (being built)."""
