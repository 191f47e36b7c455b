"""``minigrad.utils.model_zoo``: PyTorch's older home of ``load_url`` (``hub.load_state_dict_from_url``)."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401
