"""Normalization modules (to be written)."""
