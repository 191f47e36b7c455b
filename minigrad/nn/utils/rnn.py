"""``torch.nn.utils.rnn``: variable-length sequences for the recurrent layers.

A batch of sequences of lengths l_0 >= l_1 >= ... (after sorting) is *packed* time step by time step:
``data`` holds step 0 of every sequence, then step 1 of those still running, and so on, and
``batch_sizes[t]`` says how many sequences run at step t. Packing and unpacking are gathers and scatters
of rows, so gradients flow through them. ``sorted_indices`` is the sort by decreasing length (None when the
batch came sorted), ``unsorted_indices`` its inverse.
"""
from typing import NamedTuple, Optional

import numpy as np

from ... import dtypes
from ...creation import full
from ...tensor import Tensor


class PackedSequence(NamedTuple):
    data: Tensor                          # (sum of lengths, *)
    batch_sizes: Tensor                   # (max length,) int64: sequences running at each step
    sorted_indices: Optional[Tensor] = None
    unsorted_indices: Optional[Tensor] = None

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._replace(data=data)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def cuda(self, *args, **kwargs):
        """Raises, as ``Tensor.cuda``: minigrad runs on the CPU only."""
        self.data.cuda(*args, **kwargs)

    def pin_memory(self):
        """Raises, as ``Tensor.pin_memory`` does without an accelerator."""
        return self._replace(data=self.data.pin_memory())

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _cast(method, dtype):
    def cast(self):
        return self.to(dtype=getattr(dtypes, dtype))
    cast.__name__, cast.__doc__ = method, f"The sequences' data as {dtype} (the indices unchanged)."
    return cast


for _method, _dtype in (("double", "float64"), ("float", "float32"), ("half", "float16"), ("long", "int64"),
                        ("int", "int32"), ("short", "int16"), ("char", "int8"), ("byte", "uint8")):
    setattr(PackedSequence, _method, _cast(_method, _dtype))
del _method, _dtype


def _packed_positions(batch_sizes, sorted_indices):
    """(t, b) of each row of a packed ``data``, b in the original batch order: (rows,) int arrays."""
    sizes = np.asarray(batch_sizes, dtype=np.int64)
    t = np.repeat(np.arange(len(sizes)), sizes)                   # step of each row
    j = np.concatenate([np.arange(n) for n in sizes]) if len(sizes) else np.zeros(0, np.int64)  # rank in sort
    order = np.arange(sizes[0] if len(sizes) else 0) if sorted_indices is None else sorted_indices._data
    return t, np.asarray(order)[j]


def _lengths_array(lengths):
    array = np.asarray(lengths._data if isinstance(lengths, Tensor) else lengths)
    if array.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {array.ndim}D "
                           f"{array.dtype} tensor")
    if array.dtype.kind not in "iu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got 1D {array.dtype} tensor")
    return array.astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack ``input`` (T, B, *) ((B, T, *) with ``batch_first``) whose sequence b has ``lengths[b]`` steps."""
    lengths = _lengths_array(lengths)
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = Tensor(order.astype(np.int64))
    if batch_first:
        input = input.transpose(0, 1)                             # (T, B, *)
    if lengths.size != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} "
                           f"(batch_size={input.shape[1]})")
    if lengths.size == 0 or lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lengths.max() > input.shape[0]:
        raise RuntimeError(f"Expected the sequences to be at most {input.shape[0]} steps long (the padded input's "
                           f"length), but a length is {int(lengths.max())}")
    batch_sizes = (lengths[None, :] > np.arange(lengths.max())[:, None]).sum(1)   # (max length,)
    t, b = _packed_positions(batch_sizes, sorted_indices)
    unsorted = None if sorted_indices is None else Tensor(np.argsort(sorted_indices._data).astype(np.int64))
    return PackedSequence(input[Tensor(t), Tensor(b)], Tensor(batch_sizes.astype(np.int64)), sorted_indices,
                          unsorted)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded tensor (T, B, *) ((B, T, *) with ``batch_first``) and the lengths (B,) int64 of a
    ``PackedSequence``, in the batch's original order."""
    data, batch_sizes = sequence.data, np.asarray(sequence.batch_sizes._data)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    t, b = _packed_positions(batch_sizes, sequence.sorted_indices)
    batch = int(batch_sizes[0]) if len(batch_sizes) else 0
    padded = full((steps, batch) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    padded = padded.index_put((Tensor(t), Tensor(b)), data)       # (T, B, *)
    lengths = np.bincount(b, minlength=batch).astype(np.int64)    # steps each sequence ran
    return (padded.transpose(0, 1) if batch_first else padded), Tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors (L_i, *) into (T, B, *) ((B, T, *) with ``batch_first``), T = max L_i, filling the rest of
    each with ``padding_value`` after it (``padding_side='left'``: before it)."""
    from ...ops.shape import cat, stack
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    steps = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        fill = full((steps - s.shape[0],) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
        padded.append(cat([s, fill] if padding_side == "right" else [fill, s], 0))
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """``pack_padded_sequence(pad_sequence(sequences), their lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences ``padded_sequences[:lengths[b], b]`` (or ``[b, :lengths[b]]`` with ``batch_first``)."""
    lengths = _lengths_array(lengths)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :int(n)] for b, n in enumerate(lengths)]


def unpack_sequence(packed_sequences):
    """The list of the sequences a ``PackedSequence`` holds, in the batch's original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def run_packed(module, packed, hx):
    """A recurrent layer over a ``PackedSequence``: the sequences of each distinct length run together on
    their own steps (so a sequence's final state is taken at its last step), and the outputs are packed as
    the input was. Returns (PackedSequence output, h_n) (for an LSTM, (h_n, c_n)), in the original order."""
    from ...ops.shape import cat
    padded, lengths = pad_packed_sequence(packed)                 # (T, B, H_in), original order
    lengths = lengths._data
    steps = padded.shape[0]
    is_lstm = module.mode == "LSTM"
    states = None if hx is None else (tuple(hx) if is_lstm else (hx,))
    outputs, finals, order = [], [], []
    for length in np.unique(lengths):
        idx = Tensor(np.flatnonzero(lengths == length))
        run_in = padded[:int(length)].index_select(1, idx)        # (length, n, H_in)
        run_hx = None if states is None else tuple(s.index_select(1, idx) for s in states)
        if module.batch_first:
            run_in = run_in.transpose(0, 1)
        out, final = module(run_in, run_hx if is_lstm or run_hx is None else run_hx[0])
        out = out.transpose(0, 1) if module.batch_first else out  # (length, n, D*H)
        tail = full((steps - out.shape[0],) + tuple(out.shape[1:]), 0.0, dtype=out.dtype)
        outputs.append(cat([out, tail], 0))                      # (T, n, D*H): zeros after the sequence ends
        finals.append(final if is_lstm else (final,))
        order.extend(idx._data.tolist())
    restore = Tensor(np.argsort(np.asarray(order)).astype(np.int64))   # the groups' batch order -> original
    out = cat(outputs, 1).index_select(1, restore)                # (T, B, D*H), original order
    t, b = _packed_positions(packed.batch_sizes._data, packed.sorted_indices)
    h = tuple(cat([f[k] for f in finals], 1).index_select(1, restore) for k in range(len(finals[0])))
    return packed._replace(data=out[Tensor(t), Tensor(b)]), (h if is_lstm else h[0])


__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence"]
