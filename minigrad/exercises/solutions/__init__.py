"""Worked solutions of the exercises, one file per exercise, each defining ``backward``.

Kept apart from the stubs (``minigrad/exercises/stubs/``): try the stub first. Each solution is written
for reading: plain NumPy, the forward recomputed, then the backward term by term.
"""
