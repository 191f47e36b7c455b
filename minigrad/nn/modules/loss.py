"""``torch.nn.modules.loss``: the loss modules and their bases ``_Loss`` (``reduction``, with the legacy
``size_average``/``reduce`` flags converted) and ``_WeightedLoss`` (a ``weight`` buffer)."""
from ..distance import CosineEmbeddingLoss, TripletMarginLoss
from ..loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
                    SmoothL1Loss, _Loss, _WeightedLoss)  # noqa: F401
from ..loss_more import (CTCLoss, GaussianNLLLoss, HingeEmbeddingLoss, LinearCrossEntropyLoss, MarginRankingLoss,
                         MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss2d, PoissonNLLLoss,
                         SoftMarginLoss, TripletMarginWithDistanceLoss)

__all__ = ["L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
           "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
           "SoftMarginLoss", "CrossEntropyLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
           "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "CTCLoss"]
