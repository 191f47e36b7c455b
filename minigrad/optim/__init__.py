"""Optimizers (SGD, Adam, AdamW) and learning-rate schedulers."""
