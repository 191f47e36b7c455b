"""BatchNorm1d/2d, InstanceNorm1d/2d, GroupNorm modules (to be written)."""
