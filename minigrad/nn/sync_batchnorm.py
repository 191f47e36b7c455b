"""``nn.SyncBatchNorm``: BatchNorm whose training statistics span every rank's shard of the batch.

PyTorch's semantics: any input of at least 2 dims (N, C, *spatial); statistics reduced across the ranks of
``process_group`` (None: the world) only in training with an initialized process group of more than one
rank, otherwise exactly ``BatchNorm`` (the same code path). Parameters, buffers and ``state_dict`` keys are
BatchNorm's. The op and its backward: minigrad/ops/norm/syncbatchnorm.py; on CPUs (PyTorch's needs a GPU).
"""
from ..ops.norm.syncbatchnorm import sync_batch_norm
from .channel_norms import _BatchNorm, check_module_input

__all__ = ["SyncBatchNorm"]


def _needs_sync(process_group):
    """Whether there is anything to synchronize with: MPI available, a process group initialized, and more
    than one rank in ``process_group`` (None: the world). Otherwise the module is plain BatchNorm."""
    from .. import distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return False
    return dist.get_world_size(dist.group.WORLD if process_group is None else process_group) > 1


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over the batch concatenated across ranks (docs/derivations/batchnorm.md, last section).

    Gradients as PyTorch's: the input's is the gradient of the sum over ranks of the losses; weight's and
    bias's are this rank's contributions (DistributedDataParallel averages them across ranks).
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        check_module_input(input)
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        if not (self.training and _needs_sync(self.process_group)):
            return super().forward(input)
        tracked = self.track_running_stats
        if self.momentum is not None:
            factor = self.momentum
        else:
            factor = 1.0 / (int(self.num_batches_tracked.item()) + 1) if tracked else 0.0
        out = sync_batch_norm(input, self.running_mean if tracked else None, self.running_var if tracked else None,
                              self.weight, self.bias, factor, self.eps, self.process_group)
        if tracked:
            self.num_batches_tracked.add_(1)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d (any ``_BatchNorm``) replaced by a SyncBatchNorm that shares its
        Parameters and buffers and keeps its training mode (PyTorch's rule); returns the new root module."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
            if module.affine:
                converted.weight, converted.bias = module.weight, module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
