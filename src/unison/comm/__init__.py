"""unison.comm (being built)."""
