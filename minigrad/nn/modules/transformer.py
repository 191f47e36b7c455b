"""``torch.nn.modules.transformer``, and the private helpers programs import from here: ``_get_clones`` (a
ModuleList of deep copies), ``_get_activation_fn`` (``'relu'``/``'gelu'`` to the function; minigrad's also
passes a callable through) and ``_generate_square_subsequent_mask``."""
from ..transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                           TransformerEncoderLayer)
from ..transformer import _clones as _get_clones  # noqa: F401
from ..transformer import _get_activation as _get_activation_fn  # noqa: F401
from ..transformer import generate_square_subsequent_mask as _generate_square_subsequent_mask  # noqa: F401

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]
