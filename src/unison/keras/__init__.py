"""unison.keras (being built)."""
