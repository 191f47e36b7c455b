"""Recurrent layers: RNN, LSTM, GRU and their single-step cells, with PyTorch's parameters and outputs.

Every parameter is named as in PyTorch (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
``bias_hh_l{k}``, with ``_reverse`` for the backward direction), so state_dicts load both ways, and
initialized U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). The gates are stacked in PyTorch's order
along the first dimension of each weight. With gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh:

    RNN    h' = tanh(gi + gh)                     (or relu)
    LSTM   i, f, g, o = chunks of gi + gh         i, f, o = sigmoid(.), g = tanh(.)
           c' = f c + i g,   h' = o tanh(c')        (with proj_size P: h' = (o tanh(c')) W_hr^T, (N, P))
    GRU    r, z, n parts of gi and gh             r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z)
           n = tanh(gi_n + r gh_n)                (b_hn inside the product with r, as in PyTorch)
           h' = (1 - z) n + z h

Each layer and direction is one ``RecurrentLayer`` Function (``minigrad/ops/recurrent.py``): the input
projection of all time steps is one matrix product, the time loop and backpropagation through time run on
arrays with the cell gradients derived by hand, and the cells' backward passes are fused numba kernels. The
single-step cells compose the same step from differentiable ops (``cell_step``).
"""
import math
import numbers
import warnings

from .. import dtypes
from .._checks import as_index, check_tensor
from ..creation import empty, zeros
from ..ops.linalg import linear
from ..ops.recurrent import GATES as _GATES
from ..ops.recurrent import cell_step, check_cell, recurrent_layer
from ..ops.shape import cat, stack
from ..tensor import Tensor, check_device
from . import functional as F
from . import init
from .module import Module, Parameter

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_NONLINEARITY = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}


def _check_size(name, value, minimum=1):
    if not isinstance(value, int) or isinstance(value, bool):   # a Python int (not a bool, not a NumPy integer)
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be greater than zero")


def _uniform_init(module, hidden_size):
    """PyTorch's initialization of every recurrent weight and bias: U(-1/sqrt(H), 1/sqrt(H))."""
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


# ---------------------------------------------------------------------- full layers
class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU: parameters per layer and direction, the time loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        check_device(device)
        super().__init__()
        _check_size("input_size", input_size)
        _check_size("hidden_size", hidden_size)
        if isinstance(num_layers, Tensor) and as_index(num_layers) is not None:
            num_layers = as_index(num_layers)   # a 0-d integer tensor, as PyTorch takes it
        if not isinstance(num_layers, numbers.Integral):
            raise TypeError(f"num_layers should be of type int, got: {type(num_layers).__name__}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if not isinstance(dropout, numbers.Number):
            dropout = float(dropout)   # as PyTorch: TypeError for None, ValueError for a non-numeric string
        if isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        for flag, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{flag} should be of type bool, got: {type(value).__name__}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size                    # the size of h (the output features)
        dtype = dtype or dtypes.get_default_dtype()
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else real_hidden * num_directions
            for suffix in ("", "_reverse")[:num_directions]:
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size:
                    shapes.update(weight_hr=(proj_size, hidden_size))
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    self.register_parameter(name, Parameter(empty(*shape, dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def flatten_parameters(self):
        """PyTorch compacts its weights into one buffer for cuDNN here; minigrad has nothing to do."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters grouped per layer and direction: [[w_ih, w_hh, b_ih, b_hh(, w_hr)], ...]."""
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        weights = self._flat_weights
        return [weights[i:i + per] for i in range(0, len(weights), per)]

    def _weights(self, layer, suffix):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction (biases None without ``bias``, w_hr None
        without ``proj_size``)."""
        return tuple(getattr(self, f"{kind}_l{layer}{suffix}", None)
                     for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    # ------------------------------------------------------------------ argument checks
    def _check_input(self, input):
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        check_tensor(input, name, "input", 1)
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D"
                             + (" tensor instead" if name == "RNN" else " instead"))
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, what):
        if hx.shape != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")

    # ------------------------------------------------------------------ PyTorch's helpers for subclasses
    def check_input(self, input, batch_sizes):
        """PyTorch's check of a (packed: 2-D, else 3-D) input's dtype, dims and feature size."""
        if input.dtype != self._flat_weights[0].dtype:
            raise ValueError(f"input must have the type {self._flat_weights[0].dtype}, got type {input.dtype}")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        """(num_layers * num_directions, batch, proj_size or hidden_size) for ``input``."""
        batch = int(batch_sizes[0]) if batch_sizes is not None else input.size(0 if self.batch_first else 1)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.proj_size or self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """``hx`` with its batch (dim 1) reordered by ``permutation`` (None: as it is)."""
        return hx if permutation is None else hx.index_select(1, permutation)

    # ------------------------------------------------------------------ forward
    def forward(self, input, hx=None):
        """``input`` (L, N, H_in) ((N, L, H_in) with batch_first, or (L, H_in) unbatched); ``hx`` the
        initial state (num_layers * num_directions, N, H) (for an LSTM a pair (h0, c0)), zeros if None.
        Returns (output, h_n), output (L, N, num_directions * H); for an LSTM (output, (h_n, c_n)). A
        ``PackedSequence`` input gives a ``PackedSequence`` output (``nn/utils/rnn.py``)."""
        from .utils.rnn import PackedSequence, run_packed
        if isinstance(input, PackedSequence):
            return run_packed(self, input, hx)
        self._check_input(input)
        is_lstm = self.mode == "LSTM"
        batched = input.ndim == 3
        states = None if hx is None else (tuple(hx) if is_lstm else (hx,))
        if states is not None and not batched:
            if any(s.ndim != 2 for s in states):
                dims = ", ".join(f"{s.ndim}-D" for s in states)
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got ({dims}) tensors"
                                   if is_lstm else f"For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{dims} tensor")
            states = tuple(s.unsqueeze(1) for s in states)
        if not batched:
            input = input.unsqueeze(1)                            # (L, 1, H_in)
        elif self.batch_first:
            input = input.transpose(0, 1)                         # (L, N, H_in)
        if input.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        num_directions = 2 if self.bidirectional else 1
        expected = [(self.num_layers * num_directions, input.shape[1], size)   # h (projected), then c
                    for size in (self.proj_size or self.hidden_size, self.hidden_size)[:2 if is_lstm else 1]]
        if states is None:
            states = tuple(zeros(*shape, dtype=input.dtype) for shape in expected)
        for k, (s, shape) in enumerate(zip(states, expected)):
            self._check_hidden(s, shape, f"hidden[{k}]" if is_lstm else "hidden")

        final = []                                                # per (layer, direction): h_n or (h_n, c_n)
        for layer in range(self.num_layers):
            outputs = []
            for direction, suffix in enumerate(("", "_reverse")[:num_directions]):
                k = layer * num_directions + direction
                state = tuple(s[k] for s in states) if is_lstm else states[0][k]    # (N, H)
                out, state = self._run_direction(input, state, self._weights(layer, suffix), reverse=direction == 1)
                outputs.append(out)
                final.append(state)
            input = outputs[0] if num_directions == 1 else cat(outputs, -1)      # (L, N, D*H)
            if self.dropout and self.training and layer < self.num_layers - 1:
                input = F.dropout(input, self.dropout, True)

        output = input
        if is_lstm:
            h_n, c_n = stack([s[0] for s in final]), stack([s[1] for s in final])
        else:
            h_n = stack(final)                                    # (num_layers * D, N, H)
        if not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if is_lstm else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return (output, (h_n, c_n)) if is_lstm else (output, h_n)

    def _run_direction(self, input, state, weights, reverse):
        """One layer in one direction over all time steps: (output (L, N, H), final state)."""
        h0, c0 = state if self.mode == "LSTM" else (state, None)
        output, h_n, c_n = recurrent_layer(self.mode, input, h0, c0, weights, reverse)
        return output, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


def _refuse_proj_size(kwargs):
    """RNN's and GRU's keywords beyond their own, as PyTorch's: proj_size (any value) is LSTM's only; others are
    unexpected."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"RNNBase.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity='relu'``: relu)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _refuse_proj_size(kwargs)
        if nonlinearity not in _NONLINEARITY:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(_NONLINEARITY[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, gates (i, f, g, o) as PyTorch; returns (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def get_expected_cell_size(self, input, batch_sizes):
        """(num_layers * num_directions, batch, hidden_size): c's size (never projected)."""
        return self.get_expected_hidden_size(input, batch_sizes)[:2] + (self.hidden_size,)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        return hx if permutation is None else (hx[0].index_select(1, permutation), hx[1].index_select(1, permutation))


class GRU(RNNBase):
    """Gated recurrent unit, gates (r, z, n) as PyTorch."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _refuse_proj_size(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


# ---------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """One step of a recurrent layer: parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, mode, input_size, hidden_size, bias, device=None, dtype=None):
        check_device(device)
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, hidden_size, bias
        gate_size = _GATES.get(mode, 1) * hidden_size
        dtype = dtype or dtypes.get_default_dtype()
        self.weight_ih = Parameter(empty(gate_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, dtype=dtype))
        self.bias_ih = Parameter(empty(gate_size, dtype=dtype)) if bias else None
        self.bias_hh = Parameter(empty(gate_size, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def _prepare(self, input, hx):
        """(batched input (N, H_in), the state as (N, H) tensors, whether the input was batched)."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        n_states = 2 if self.mode == "LSTM" else 1
        if hx is not None:
            given = tuple(hx) if n_states == 2 else (hx,)
            for k, s in enumerate(given):
                if s.ndim not in (1, 2):
                    label = f"hx[{k}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {s.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            states = tuple(zeros(input.shape[0], self.hidden_size, dtype=input.dtype) for _ in range(n_states))
        else:
            states = tuple(s.unsqueeze(0) for s in given) if not batched else given
        # PyTorch's checks of the operands (ATen's, as the functional cells make them)
        check_cell(input, states, self.weight_ih, self.weight_hh, _GATES.get(self.mode, 1))
        return input, states, batched

    def forward(self, input, hx=None):
        """``input`` (N, H_in) or (H_in,), ``hx`` the state (N, H) ((h, c) for LSTMCell), zeros if None."""
        input, states, batched = self._prepare(input, hx)
        gi = linear(input, self.weight_ih, self.bias_ih)
        new = cell_step(self.mode, gi, states if self.mode == "LSTM" else states[0], self.weight_hh, self.bias_hh)
        if self.mode == "LSTM":
            return tuple(s if batched else s.squeeze(0) for s in new)
        return new if batched else new.squeeze(0)

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            text += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (``nonlinearity='relu'``: relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(_NONLINEARITY.get(nonlinearity, nonlinearity), input_size, hidden_size, bias,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTMCell(RNNCellBase):
    """One LSTM step; ``forward(input, (h, c))`` returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias, device=device, dtype=dtype)


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias, device=device, dtype=dtype)
