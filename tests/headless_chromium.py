"""A small DevTools-protocol client for headless Chromium over ``--remote-debugging-pipe`` (no websocket, no
Selenium): commands go to the browser's fd 3 and answers come from its fd 4 as JSON messages ended by NUL.
Used by tests/test_viz_html.py to load a page, click, press keys, read the DOM and take a screenshot."""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--remote-debugging-pipe", "--window-size=1400,900",
         "--hide-scrollbars", "--mute-audio"]


def find_chromium():
    """The Chromium executable (Debian's package installs /usr/bin/chromium), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page attached (a flat session); a context manager that stops it."""

    def __init__(self, executable, timeout=30.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="minigrad-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the child wants the pipe ends as fds 3 and 4: move them above any fd dup2 could clobber first
        high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def into_place():
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.process = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, preexec_fn=into_place, pass_fds=(3, 4))
        os.close(high_r)
        os.close(high_w)
        self._buffer, self._next_id, self.events = b"", 0, []
        page = self._page_target()
        self.session = self.send("Target.attachToTarget", targetId=page, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    # ------------------------------------------------------------------ protocol
    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, session=None, **params):
        """Send one command and wait for its answer (events that arrive meanwhile are kept in ``events``)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def call(self, method, **params):
        """A command to the page's session."""
        return self.send(method, session=self.session, **params)

    def _page_target(self):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            pages = [t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            if pages:
                return pages[0]["targetId"]
            time.sleep(0.1)
        raise TimeoutError("Chromium opened no page")

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    # ------------------------------------------------------------------ what a test does
    def open(self, url):
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector):
        """A real mouse click (press and release) at the middle of the element ``selector``."""
        box = self.evaluate(f"(function () {{ var r = document.querySelector({json.dumps(selector)})"
                            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def press(self, key, code, key_code):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=key_code)

    def text(self, selector):
        return self.evaluate(f"(function () {{ var e = document.querySelector({json.dumps(selector)}); "
                             "return e ? e.innerText : null; })()")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:   # noqa: BLE001 - already gone
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_child)
        os.close(self._from_child)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
