"""clip_grad_norm_ (to be written)."""
