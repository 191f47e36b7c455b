"""RMSNorm and LayerNorm modules (to be written)."""
