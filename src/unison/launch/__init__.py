"""unison.launch (being built)."""
