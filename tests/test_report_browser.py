"""The window report in a real browser: Debian's headless Chromium, driven over the DevTools
protocol on a pipe (no download, no port, no network).

The page must load with no console error, show every SVG series the chart promises with a
visible size, render to a screenshot that holds the layers' colours, and stay inert when a URI
carries markup. Without a Chromium the tests skip, except under CI=true (where `.ci/run`
installs it), so a CI machine without a browser fails instead of passing silently.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef.cli.report import ReportEvent, ReportTurn, render_report
from contextchef.cli.report_svg import LAYER_COLOURS

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--remote-debugging-pipe",
)


def _chromium() -> str | None:
    for candidate in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


class Browser:
    """One headless Chromium and one page, spoken to over `--remote-debugging-pipe`: the
    browser reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4."""

    def __init__(self, executable: str, profile: Path) -> None:
        read_end, self._to_browser = os.pipe()
        self._from_browser, write_end = os.pipe()
        # the child's ends, numbered 10 and up so that moving them to 3 and 4 clobbers nothing;
        # a tiny Python launcher moves them (no preexec_fn: a forked threaded process must not
        # run Python code before exec)
        child_read = fcntl.fcntl(read_end, fcntl.F_DUPFD, 10)
        child_write = fcntl.fcntl(write_end, fcntl.F_DUPFD, 10)
        os.close(read_end)
        os.close(write_end)
        launcher = (
            "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
            "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); "
            "os.execv(sys.argv[3], sys.argv[3:])"
        )
        command = [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"]
        self.process = subprocess.Popen(
            [sys.executable, "-c", launcher, str(child_read), str(child_write), *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(child_read, child_write),
        )
        os.close(child_read)
        os.close(child_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise ConnectionError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
        """Send a command (to the page's session unless `browser=True`) and wait for its reply;
        events arriving meanwhile are kept in `events`."""
        session = None if options.get("browser") else self.session
        ident = self._send(method, params, session)
        deadline = time.monotonic() + options.get("timeout", 30)
        while True:
            message = self._receive(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        """The first event named `method` (already received or still to come)."""
        for event in self.events:
            if event.get("method") == method:
                self.events.remove(event)
                return event
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline)
            if message.get("method") == method:
                return message
            self.events.append(message)

    def open_page(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)
        attached = self.call(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, browser=True
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1100, "height": 1400, "deviceScaleFactor": 1, "mobile": False},
        )

    def load(self, path: Path) -> None:
        """Navigate to the file and wait until it has loaded (forgetting earlier events)."""
        self.events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (a CSP violation, a
        failed load) seen since the last `load`."""
        self.call("Runtime.evaluate", {"expression": "0"})  # flush pending events
        errors = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(json.dumps(params.get("args")))
            elif method == "Runtime.exceptionThrown":
                errors.append(json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                errors.append(params["entry"].get("text", ""))
        return errors

    def screenshot(self, clip: dict[str, float]) -> bytes:
        shot = self.call("Page.captureScreenshot", {"format": "png", "clip": clip})
        return base64.b64decode(shot["data"])

    def close(self) -> None:
        with contextlib.suppress(TimeoutError, ConnectionError, RuntimeError, OSError):
            self.call("Browser.close", browser=True, timeout=5)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """Width, height and RGB pixels of an 8-bit RGB or RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, header = 8, b"", b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    pixels: list[tuple[int, ...]] = []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        pixels += [tuple(line[i : i + 3]) for i in range(0, stride, channels)]
        previous = line
    return width, height, pixels


def _rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    executable = _chromium()
    if executable is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no Chromium is installed (.ci/run installs Debian's chromium)")
        pytest.skip(
            "no Chromium on this machine: `apt-get install chromium` to run the report test"
        )
    opened = Browser(executable, tmp_path_factory.mktemp("chromium-profile"))
    try:
        opened.open_page()
        yield opened
    finally:
        opened.close()


def _demo_like_report() -> str:
    turns = []
    for turn in range(1, 61):
        history = 300 + (turn % 20) * 200
        layers = {"tools": 900, "system": 200, "memory": 60 if turn > 2 else 0, "history": history}
        layers["tail"] = 40
        turns.append(ReportTurn(turn, layers, 6000, None if turn == 1 else 0.5 + turn % 5 / 10))
    events = [
        ReportEvent(20, "overflow", "overflow: 21 messages summarized", "context://archive/a1.txt"),
        ReportEvent(7, "offload", "offloaded 48 KB → context://vfs/v1.txt", "context://vfs/v1.txt"),
        ReportEvent(2, "memory", "memory: saved test-command", "context://memory/test-command"),
    ]
    return render_report("contextchef demo", turns, events)


def test_the_report_renders_in_chromium_without_errors(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(_demo_like_report(), encoding="utf-8")
    browser.load(page)
    assert browser.console_errors() == []
    sizes = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('svg#composition [id^=series-]')]"
        ".map(e => [e.id, Math.round(e.getBBox().width * e.getBBox().height)]))"
    )
    expected = {f"series-{name}" for name in ("tools", "system", "memory", "history", "tail")}
    assert expected | {"series-free", "series-reuse"} == set(sizes)
    assert all(area > 0 for area in sizes.values()), sizes
    assert browser.evaluate("document.getElementById('window-line').getBBox().width") > 500
    titles = browser.evaluate(
        "[...document.querySelectorAll('.marker title')].map(t => t.textContent)"
    )
    assert any("context://archive/a1.txt" in title for title in titles)
    assert browser.evaluate("document.querySelectorAll('#events tbody tr').length") == 3

    box = browser.evaluate(
        "(r => ({x: r.x, y: r.y, width: r.width, height: r.height}))"
        "(document.getElementById('composition').getBoundingClientRect())"
    )
    width, height, pixels = png_pixels(browser.screenshot({**box, "scale": 0.5}))
    assert width > 300 and height > 100
    colours = set(pixels)
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    for layer in ("history", "tools", "system"):
        assert _rgb(LAYER_COLOURS[layer]) in colours, f"no {layer} area in the screenshot"


def test_markup_in_a_uri_stays_text_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    hostile = 'context://vfs/<script>console.error("xss")</script><img src=x onerror=alert(1)>'
    turns = [ReportTurn(1, {"history": 100}, 1000), ReportTurn(2, {"history": 300}, 1000, 0.9)]
    events = [ReportEvent(2, "offload", f"offloaded → {hostile}", hostile)]
    page = tmp_path / "hostile.html"
    page.write_text(render_report("<b>title</b>", turns, events), encoding="utf-8")
    browser.load(page)
    assert browser.console_errors() == []
    assert browser.evaluate("document.querySelectorAll('script, img, b').length") == 0
    assert hostile in browser.evaluate("document.getElementById('events').textContent")
    assert browser.evaluate("document.title") == "<b>title</b>"


def test_the_harness_sees_console_errors(browser: Browser, tmp_path: Path) -> None:
    """The control: a page that does log an error is caught, so the checks above can fail."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><script>console.error('boom')</script>", encoding="utf-8")
    browser.load(page)
    assert any("boom" in error for error in browser.console_errors())


def test_png_pixels_reads_a_uniform_image() -> None:
    rows = b"".join(b"\x00" + b"\x10\x20\x30" * 4 for _ in range(3))
    png = b"\x89PNG\r\n\x1a\n"
    for kind, body in (
        (b"IHDR", struct.pack(">IIBBBBB", 4, 3, 8, 2, 0, 0, 0)),
        (b"IDAT", zlib.compress(rows)),
        (b"IEND", b""),
    ):
        png += (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )
    assert png_pixels(png) == (4, 3, [(16, 32, 48)] * 12)
