"""``nn.DataParallel`` as PyTorch's is on a machine without GPUs: a pass-through wrapper.

PyTorch's ``DataParallel`` finds no accelerator, keeps ``module`` and ``device_ids = []``, and its forward
calls the module on the inputs as given (``device_ids`` and ``output_device`` passed in are ignored). The
wrapped module is the child ``module``, so the state dict's keys carry the ``module.`` prefix, as there.
"""
from ..module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """Raises, as PyTorch's functional form does without an accelerator."""
    raise RuntimeError("device type could not be determined")
