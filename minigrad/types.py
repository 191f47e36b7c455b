"""PyTorch's typing aliases (``torch.types``), for annotations in ported code: ``Number``, ``Device``, ``_size``,
``_TensorOrTensors`` and the ``_int``/``_float``/``_dtype``... shorthands."""
import os
from collections.abc import Sequence
from typing import IO, Union

import numpy as np

from .device import device as _device
from .size import Size
from .tensor import Tensor

_bool = bool
_complex = complex
_float = float
_int = int
_str = str
_bytes = bytes
_dtype = np.dtype
_device = _device
_size = Union[Size, list[int], tuple[int, ...]]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
