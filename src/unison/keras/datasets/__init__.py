"""unison.keras.datasets (being built)."""
