"""``minigrad.futures``: PyTorch's ``torch.futures`` (``Future``, ``collect_all``, ``wait_all``).

A ``Future`` holds a result that arrives later: ``set_result`` / ``set_exception`` (from any thread) finish it,
``wait()`` blocks until then and returns the result (or raises the exception), ``then(callback)`` chains a new
Future on ``callback(self)``. ``minigrad.fork`` and ``minigrad.jit.fork`` return one, already finished (they run
the call at once: minigrad has no TorchScript interpreter to run it asynchronously). The ``devices`` argument
is accepted for the CPU only (minigrad has no CUDA streams to synchronise).
"""
import logging
import threading

__all__ = ["Future", "collect_all", "wait_all"]

_log = logging.getLogger(__name__)


class Future:
    """A result that ``wait()`` returns once ``set_result`` (or ``set_exception``) has been called."""

    def __init__(self, *, devices=None):
        for device in devices or ():
            if str(device) == "cpu" or getattr(device, "type", None) == "cpu":
                raise ValueError(f"Expected devices to have indices, got {device}")
            raise ValueError(f"minigrad.futures.Future: devices {device!r}: minigrad runs on the CPU only")
        self._done = threading.Event()
        self._result = self._exception = None
        self._callbacks = []
        self._lock = threading.Lock()

    def done(self):
        """Whether the result (or an exception) has been set."""
        return self._done.is_set()

    def set_result(self, result):
        """Finish the Future with ``result``: waiters wake up, callbacks run."""
        self._finish(result, None)

    def set_exception(self, result):
        """Finish the Future with an exception, which ``wait()`` and ``value()`` raise."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._finish(None, result)

    def _finish(self, result, exception):
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._result, self._exception = result, exception
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            self._run_callback(callback)

    def _run_callback(self, callback):
        try:
            callback(self)
        except Exception as error:  # noqa: BLE001 - PyTorch logs a failing done-callback and goes on
            _log.error("Got the following error when running the callback: %s: %s", type(error).__name__, error)

    def wait(self):
        """The result, once set (blocking until then); the exception given to ``set_exception`` is raised."""
        self._done.wait()
        if self._exception is not None:
            raise self._exception
        return self._result

    def value(self):
        """The result of a finished Future (an error if it has none yet)."""
        if not self.done():
            raise RuntimeError("Future.value() called on a Future that is not completed yet (call wait())")
        return self.wait()

    def then(self, callback):
        """A new Future that holds ``callback(self)`` once this one is finished; an exception the callback raises
        finishes the new Future with PyTorch's RuntimeError naming it."""
        chained = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as error:  # noqa: BLE001 - handed on to whoever waits on the chained Future
                chained.set_exception(RuntimeError("Got the following error when running the callback: "
                                                   f"{type(error).__name__}: {error}"))
            else:
                chained.set_result(result)
        self.add_done_callback(run)
        return chained

    def add_done_callback(self, callback):
        """Call ``callback(self)`` when finished (now if already finished); its exceptions are logged, not raised."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        self._run_callback(callback)

    def __repr__(self):
        return f"<minigrad.futures.Future object at {id(self):#x} ({'done' if self.done() else 'pending'})>"


def collect_all(futures):
    """A Future finished when all of ``futures`` are, holding the list of them (each finished)."""
    futures = list(futures)
    combined = Future()
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        combined.set_result([])
        return combined

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            combined.set_result(futures)
    for fut in futures:
        fut.add_done_callback(one_done)
    return combined


def wait_all(futures):
    """The results of ``futures`` (waiting for each); the first exception among them is raised."""
    return [fut.wait() for fut in collect_all(futures).wait()]


def fork(func, *args, **kwargs):
    """``torch.fork``: call ``func(*args, **kwargs)`` now and return a finished ``Future`` of its result (an exception
    ``func`` raises is raised here, as in eager PyTorch)."""
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future):
    """``torch.wait(future)``: ``future.wait()``."""
    return future.wait()
