"""``minigrad.utils.data._utils``: where older code imports the collate functions from
(``from torch.utils.data._utils.collate import default_collate``)."""
from . import collate  # noqa: F401
