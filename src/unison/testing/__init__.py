"""unison.testing (being built)."""
