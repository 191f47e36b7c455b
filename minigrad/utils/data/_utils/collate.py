"""``minigrad.utils.data._utils.collate``: ``default_collate`` and ``default_convert`` (``utils/data/_collate.py``)."""
from .._collate import default_collate, default_convert  # noqa: F401
