"""``minigrad.autograd.anomaly_mode`` (``torch.autograd.anomaly_mode``): where PyTorch defines anomaly detection;
the functions live in ``grad_mode.py``."""
from .grad_mode import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
