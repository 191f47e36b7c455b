"""``DistributedDataParallel``: one model replica per process, gradients averaged across processes.

Each rank runs the forward and backward of its own shard of the batch. At construction rank 0's parameters
and buffers are broadcast, so every replica starts equal; after each backward every gradient is the mean
over the ranks of the ranks' gradients, so each optimizer step (the same on every rank) keeps them equal:
the replicas train exactly as one process on the concatenated batch would (for a loss that is a mean over
equal shards).

Communication overlaps the backward pass: the parameters are grouped in buckets of about ``bucket_cap_mb``
megabytes, in reverse order of ``module.parameters()`` (roughly the order in which backward produces their
gradients). A hook after each parameter's gradient accumulation (``Tensor.register_post_accumulate_grad_hook``)
marks it ready; when a bucket's parameters are all ready, their gradients are copied into one flat buffer,
divided by the world size and a non-blocking all-reduce (``MPI_Iallreduce``) is started while the backward goes
on. A callback queued on the engine (``autograd.engine.queue_callback``) waits for every bucket at the end of the
backward and copies the averaged values back into ``.grad``.

MPICH progresses a non-blocking collective only inside MPI calls, so each hook also tests the buckets in
flight (``MPI_Testall``), which moves them along between the backward's own computations.
"""
from contextlib import contextmanager

import numpy as np

from ... import distributed as dist
from ...autograd import engine, grad_mode
from ..module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """Parameters of one dtype whose gradients travel together: ``buffer`` holds them flat, ``slices[i]`` is
    where ``params[i]``'s gradient lives in it."""

    def __init__(self, params):
        self.params = params
        sizes = [p._data.size for p in params]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.slices = [slice(int(a), int(b)) for a, b in zip(offsets[:-1], offsets[1:])]
        self.buffer = np.empty(int(offsets[-1]), params[0]._data.dtype)
        self.ready = 0
        self.work = None

    def start(self, world):
        """Copy the gradients in (zeros for a parameter without one), divide, start the all-reduce."""
        for p, where in zip(self.params, self.slices):
            if p.grad is None:
                self.buffer[where] = 0
            else:
                np.divide(p.grad._data.reshape(-1), world, out=self.buffer[where])
        self.work = dist.all_reduce(_as_tensor(self.buffer), async_op=True)

    def finish(self, set_missing):
        """Wait for the all-reduce; write the averaged gradients back into ``.grad``."""
        self.work.wait()
        for p, where in zip(self.params, self.slices):
            average = self.buffer[where].reshape(p._data.shape)
            if p.grad is not None:
                p.grad._data[...] = average
            elif set_missing:
                p.grad = _as_tensor(average.copy())
        self.work, self.ready = None, 0


def _as_tensor(array):
    from ...tensor import Tensor
    return Tensor(array)


def _buckets(params, cap_bytes):
    """Consecutive parameters (in the given order) grouped until a bucket holds ``cap_bytes``; one dtype each."""
    buckets, current, size = [], [], 0
    for p in params:
        if current and (size >= cap_bytes or p._data.dtype != current[0]._data.dtype):
            buckets.append(_Bucket(current))
            current, size = [], 0
        current.append(p)
        size += p._data.nbytes
    if current:
        buckets.append(_Bucket(current))
    return buckets


class DistributedDataParallel(Module):
    """Wraps ``module`` for data-parallel training over the default process group (``minigrad.distributed``).

    ``forward`` is ``module``'s (after broadcasting rank 0's buffers when ``broadcast_buffers``); after
    ``loss.backward()`` every parameter's ``.grad`` is the mean of the ranks' gradients. Inside ``no_sync()``
    the gradients stay local and accumulate; the first backward after it averages the accumulated sums.
    ``state_dict`` keys carry the ``module.`` prefix, as PyTorch's do.

    CPU only: ``device_ids`` and ``output_device`` must be None. ``find_unused_parameters=True`` lets a
    parameter receive no gradient in some backward (it counts as zero in the average); without it that is a
    RuntimeError at the end of the backward. ``gradient_as_bucket_view``, ``static_graph`` and the other
    performance options are accepted and ignored."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel(): module must be a minigrad.nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids is not None or output_device is not None:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters "
                             "{device(type='cpu')}.")
        if dim != 0:
            raise ValueError(f"DistributedDataParallel(): dim must be 0 on the CPU, got {dim!r}")
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        if not isinstance(bucket_cap_mb, (int, float)) or isinstance(bucket_cap_mb, bool) or not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel(): bucket_cap_mb must be a positive number, got "
                             f"{bucket_cap_mb!r}")
        self.process_group = dist._default_group(process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.require_backward_grad_sync = True      # False inside no_sync()
        self.require_forward_param_sync = True
        self._world = self.process_group.size()
        self._buckets = _buckets(params[::-1], bucket_cap_mb * 1024 * 1024)
        self._sync_this_backward = False            # set by each forward (with grad enabled, outside no_sync)
        self._queued = False
        self._handles = []
        for bucket in self._buckets:
            for p in bucket.params:
                self._handles.append(p.register_post_accumulate_grad_hook(self._make_hook(bucket)))
        if init_sync:
            self._broadcast_from_rank0(list(module.parameters()) + list(module.buffers()))

    def _broadcast_from_rank0(self, tensors):
        works = [dist.broadcast(t, src=0, async_op=True) for t in tensors]
        for work in works:
            work.wait()

    def forward(self, *inputs, **kwargs):
        self._sync_this_backward = self.require_backward_grad_sync and grad_mode.is_grad_enabled()
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast_from_rank0(buffers)
        return self.module(*inputs, **kwargs)

    @contextmanager
    def no_sync(self):
        """Backwards run on the forwards made inside keep their gradients local (accumulating in ``.grad``)."""
        before = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = before

    # ------------------------------------------------------------------ during backward
    def _make_hook(self, bucket):
        def hook(param):
            if not self._sync_this_backward:
                return
            if not self._queued:
                engine.queue_callback(self._finish_backward)
                self._queued = True
            bucket.ready += 1
            if bucket.ready == len(bucket.params):
                bucket.start(self._world)
            self._progress()
        return hook

    def _progress(self):
        """Let MPI move the all-reduces in flight along (MPICH progresses them only inside MPI calls)."""
        for bucket in self._buckets:
            if bucket.work is not None:
                bucket.work.is_completed()

    def _finish_backward(self):
        """After the walk: start what never filled up (unused parameters), wait for every bucket, write back."""
        self._queued = False
        self._sync_this_backward = False            # one synchronised backward per forward
        incomplete = [b for b in self._buckets if b.work is None]
        if incomplete and not self.find_unused_parameters:
            for b in self._buckets:
                if b.work is not None:
                    b.work.wait()
                b.work, b.ready = None, 0
            raise RuntimeError(
                "DistributedDataParallel: some parameters received no gradient in this backward, so their "
                "gradients could not be averaged across ranks. Pass find_unused_parameters=True to "
                "DistributedDataParallel if your module has parameters that the loss does not use.")
        for bucket in incomplete:
            bucket.start(self._world)
        for bucket in self._buckets:
            bucket.finish(set_missing=self.find_unused_parameters)
