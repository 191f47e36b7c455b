"""Stubs to start each exercise from (no solution inside): ``python -m minigrad.exercises stub NAME``."""
