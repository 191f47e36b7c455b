"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al., "Efficient softmax approximation for
GPUs" (2017). The classes, sorted by frequency, are split by ``cutoffs`` into a shortlist of frequent classes
and clusters of rarer ones. The head scores the shortlist classes plus one token per cluster; each cluster has a
tail, a low-rank projection (its hidden size shrinks by ``div_value`` per cluster) that scores the classes
inside it, so that log p(c) = log p_head(cluster of c) + log p_tail(c | cluster) for a class outside the
shortlist. Parameters, attributes and ``state_dict`` keys are PyTorch's."""
from collections import namedtuple
from itertools import pairwise

from ..ops.shape import cat
from . import functional as F
from .layers import Linear, ModuleList, Sequential
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])
_ASMoutput.__doc__ = """``AdaptiveLogSoftmaxWithLoss.forward``'s result: ``output``, the log-probability of each
row's target (N,) (or a scalar for unbatched input), and ``loss``, their negated mean."""

_BAD_CUTOFFS = ("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where "
                "each value is between 1 and n_classes-1")


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax: ``head`` (Linear in_features -> shortlist_size + n_clusters) and ``tail``, one
    ``Sequential(Linear(in_features, in_features // div_value**(i+1)), Linear(that, cluster size))`` per
    cluster, both without bias. ``forward(input, target)`` gives ``(output, loss)``; ``log_prob`` the full
    (N, n_classes) log-probabilities; ``predict`` the most probable class of each row."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(_BAD_CUTOFFS)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]        # the end of the shortlist, then of each cluster
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i, (start, stop) in enumerate(pairwise(self.cutoffs)):
            hidden = int(in_features // div_value ** (i + 1))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, stop - start, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        """Re-draw the head and every tail projection as a fresh ``Linear`` is drawn."""
        self.head.reset_parameters()
        for projection in self.tail:
            for linear in projection:
                linear.reset_parameters()

    def _check_shapes(self, input, target):
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input, target):
        """``_ASMoutput(output, loss)``: ``output`` the log-probability of each target under the adaptive softmax
        (N,) (a scalar for an unbatched (in_features,) input with a 0-d target), ``loss`` the mean of -output."""
        self._check_shapes(input, target)
        batched = target.dim() == 1
        if not batched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        if target.numel() and (bool((target < 0).any()) or bool((target >= self.n_classes).any())):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")

        # head_class: each row's class in the head, its target in the shortlist, else its cluster's token;
        # output starts as log p_tail(target | cluster) (0 in the shortlist), then gets log p_head(head_class).
        head_class = target
        output = input.new_zeros(target.size(0))
        for i, (start, stop) in enumerate(pairwise(self.cutoffs)):
            rows = ((target >= start) & (target < stop)).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            cluster_logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            within_cluster = (target.index_select(0, rows) - start).unsqueeze(1)
            output = output.index_copy(0, rows, cluster_logprob.gather(1, within_cluster).squeeze(1))
            head_class = head_class.index_fill(0, rows, self.shortlist_size + i)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_class.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        """(N, n_classes) log-probabilities from the input and the head's scores for it."""
        head_logprob = F.log_softmax(head_output, dim=1)
        columns = [head_logprob[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster_logprob = F.log_softmax(projection(input), dim=1)
            columns.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(columns, dim=1)

    def log_prob(self, input):
        """The log-probability of every class for each row of an (N, in_features) input: (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row of an (N, in_features) input, ``log_prob(input).argmax(1)``: the
        head's argmax where it is a shortlist class (no tail then scores higher), else the full argmax."""
        head_output = self.head(input)
        best = head_output.argmax(dim=1)
        outside = (best >= self.shortlist_size).nonzero().squeeze(1)
        if outside.numel() == 0:
            return best
        full = self._full_log_prob(input.index_select(0, outside), head_output.index_select(0, outside))
        return best.index_copy(0, outside, full.argmax(dim=1))

