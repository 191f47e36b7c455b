"""Linear, Embedding, Dropout, activations, containers (to be written)."""
