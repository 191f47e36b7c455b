"""``minigrad.multiprocessing``: Python's ``multiprocessing``, re-exported as ``torch.multiprocessing`` does.

minigrad tensors are NumPy arrays, which ``multiprocessing`` already pickles between processes; there is no
shared-memory tensor reduction to register. PyTorch's additions kept here: the sharing-strategy functions
(the strategy is recorded only) and ``spawn``/``start_processes``, which run ``fn(i, *args)`` in ``nprocs``
processes and raise ``ProcessExitedException`` if one of them fails.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403 - the re-export is the point of this module

__all__ = list(multiprocessing.__all__) + ["ProcessExitedException", "ProcessRaisedException",
                                           "get_all_sharing_strategies", "get_sharing_strategy",
                                           "set_sharing_strategy", "spawn", "start_processes"]

_strategies = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies():
    return set(_strategies)


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    global _strategy
    if new_strategy not in _strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy = new_strategy


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised (its exit code was 1)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name


class ProcessContext:
    def __init__(self, processes):
        self.processes = processes

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for every process; True when all exited with code 0, an exception for the first that did not."""
        for p in self.processes:
            p.join(timeout)
        for i, p in enumerate(self.processes):
            if p.exitcode not in (0, None):
                cls = ProcessRaisedException if p.exitcode == 1 else ProcessExitedException
                message = f"process {i} terminated with exit code {p.exitcode}"
                if cls is ProcessRaisedException:
                    raise cls(message, i, p.pid)
                raise cls(message, i, p.pid, p.exitcode)
        return all(p.exitcode == 0 for p in self.processes)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for i in range(nprocs), each in its own process started by ``start_method``."""
    context = multiprocessing.get_context(start_method)
    processes = [context.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    for p in processes:
        p.start()
    processes_context = ProcessContext(processes)
    if not join:
        return processes_context
    processes_context.join()


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    return start_processes(fn, args, nprocs, join, daemon, start_method)
