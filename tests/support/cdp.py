"""A headless Debian Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

No WebDriver, no websocket library: Chromium reads commands from fd 3 and writes answers and
events to fd 4, each one JSON message ended by a NUL byte. Enough of the protocol for the page
tests: open a page, evaluate JavaScript, press keys (``Input.dispatchKeyEvent``, trusted events
like a person's), reload, take a screenshot, and collect console errors and uncaught exceptions.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: The flags every headless run in the tests starts with (no network of its own, no first-run UI).
HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

# key -> (code, windowsVirtualKeyCode)
_KEYS = {" ": ("Space", 32), "u": ("KeyU", 85), "w": ("KeyW", 87), **{str(d): (f"Digit{d}", 48 + d) for d in range(10)}}


class Browser:
    """One headless Chromium with one page attached (use as a context manager)."""

    def __init__(self, profile: Path, width: int = 1100, height: int = 800) -> None:
        assert CHROMIUM is not None
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()

        def fds() -> None:  # in the child, before exec: fd 3 = commands in, fd 4 = answers out
            os.dup2(cmd_r, 3)
            os.dup2(out_w, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *HEADLESS_FLAGS,
                "--autoplay-policy=no-user-gesture-required",
                f"--window-size={width},{height}",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            preexec_fn=fds,  # single-threaded test process; the fds must sit at 3 and 4
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime"):
            self.call(f"{domain}.enable", session=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (OSError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._cmd_w, self._out_r):
            try:
                os.close(fd)
            except OSError:
                pass

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise TimeoutError("no DevTools message from Chromium")
            chunk = os.read(self._out_r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, session: bool = False, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        """Send one command (to the page's session when ``session``) and return its result."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            answer = self._read(timeout)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def goto(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)

    def reload(self) -> None:
        self.call("Page.reload", session=True, ignoreCache=True)

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression (promises awaited)."""
        r = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def wait(self, expression: str, timeout: float = 20.0) -> Any:
        """Poll until ``expression`` is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except RuntimeError:  # the page is between documents (a reload)
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout}s for {expression}")
            time.sleep(0.02)

    def press(self, key: str) -> None:
        """A trusted key press (keyDown with its text, keyUp), as a person's."""
        code, vk = _KEYS[key]
        common: dict[str, Any] = {"key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk}
        self.call("Input.dispatchKeyEvent", session=True, type="keyDown", text=key, **common)
        self.call("Input.dispatchKeyEvent", session=True, type="keyUp", **common)

    def click(self, selector: str) -> None:
        """A trusted left click in the middle of the element ``selector`` selects."""
        box = self.js(
            f"(function(){{var r=document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            "return [r.left + r.width / 2, r.top + r.height / 2];})()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left", clickCount=1
            )

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list[str]:
        """Console errors and uncaught exceptions the page raised so far."""
        out = []
        for e in self.events:
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(e["params"]["exceptionDetails"])[:300])
            elif e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") in ("error", "assert"):
                out.append(json.dumps(e["params"].get("args"))[:300])
        return out
