"""``minigrad.device``: PyTorch's device object, for a library whose only device is the CPU.

Ported code names devices everywhere (``torch.device('cuda' if ... else 'cpu')``, ``x.to(device)``,
``zeros(..., device=device)``). A device object for any type PyTorch knows can be made, as in PyTorch;
*using* one other than the CPU raises ``DeviceUnavailableError``, which is both a ``RuntimeError`` and an
``AssertionError`` (PyTorch without CUDA raises the latter for 'cuda', the former for other types).
"""

# The device types PyTorch accepts in a device string.
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class DeviceUnavailableError(RuntimeError, AssertionError):
    """A device other than the CPU was asked for: minigrad runs on the CPU only."""


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor lives: ``device('cpu')``, ``device('cpu', 0)``, ``device('cuda:1')``, ``device(other)``.

    ``type`` is the device type, ``index`` its number or None; ``str`` gives ``'cpu'`` or ``'cuda:1'``.
    Equal to another device of the same type and index (not to a string, as in PyTorch)."""

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's argument name
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object cannot be combined with an index")
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type  # PyTorch reads a bare ordinal as a CUDA device
        elif not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' must be str, not {_type_name(type)}")
        elif ":" in type:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed "
                                   f"explicitly: {type}")
            type, _, number = type.partition(":")
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{number}'")
            index = int(number)
        if type not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                               f"{type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self._type, self._index = type, index

    @property
    def type(self):
        return self._type

    @property
    def index(self):
        return self._index

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self):
        index = "" if self._index is None else f", index={self._index}"
        return f"device(type='{self._type}'{index})"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return (self._type, self._index) == (other._type, other._index)

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return device, (self._type, self._index)

    def __enter__(self):
        """``with device('cpu'):`` (PyTorch's default-device context) passes; any other device raises."""
        check_device(self)
        return self

    def __exit__(self, *exc):
        return False


CPU = device("cpu")


def _type_name(value):
    return type(value).__name__


def check_device(requested):
    """The one check of a ``device=`` argument: ``None``, ``'cpu'``, ``'cpu:0'`` and ``device('cpu')`` pass;
    any other device raises ``DeviceUnavailableError`` (minigrad runs on the CPU only)."""
    if requested is None:
        return
    if not isinstance(requested, device):
        requested = device(requested)
    if requested.type != "cpu":
        raise DeviceUnavailableError(f"minigrad tensors live on the CPU only; cannot use device '{requested}'")


def cuda_device(index=None, kind="cuda"):
    """The device ``.cuda(index)`` (``.xpu``, ... with ``kind``) asks for: ``cuda`` for None, ``cuda:N`` for an
    int, else ``index`` itself (a device or its name), for ``check_device`` to refuse."""
    if index is None:
        return device(kind)
    return device(kind, index) if isinstance(index, int) else index


def get_default_device():
    return CPU


def set_default_device(requested):
    """Accepts the CPU (or None); any other device raises, as ``check_device``."""
    check_device(requested)
