"""Parameter initialization (to be written)."""
