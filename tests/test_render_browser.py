"""The HTML report of a real audit, opened in headless Chromium.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: requests
on fd 3, replies on fd 4, NUL-separated JSON), with nothing but the standard library. That gives
structured events instead of scraped log lines: every ``console.error``/``console.assert``
(``Runtime.consoleAPICalled``), every uncaught exception (``Runtime.exceptionThrown``) and every
browser-side error — a Content-Security-Policy violation, a failed load, a broken image
(``Log.entryAdded`` at level ``error``) — is collected while the page loads. The page must log
none. A control test proves the detector sees each kind on a page built to produce them.

Chromium is Debian's ``chromium``; when it is missing the test setup installs it with apt-get
(as root, with a timeout) and skips, saying why, where that is impossible. The screenshots of the
real report — the whole page, and the first screen a reader sees in a 1280×800 window, which
must show the scorecard — are kept in ``reports/screenshots/`` (git-ignored) for inspection.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from normtest.audit.report import Report
from normtest.render.formats import render

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "reports" / "screenshots"
WIDTH, HEIGHT = 1280, 2400
#: The first screen of a laptop: the scorecard must start inside it.
SCREEN = 800
#: The height of the page of ``real_report`` (1280 wide) with the exploratory rows and the
#: exploratory-only plots folded: about 6,400 px, against 11,363 px when every row was open
#: above the plots (measured with Debian's chromium; the bound leaves 25% for fonts).
MAX_PAGE_HEIGHT = 8000
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-extensions", "--no-first-run", "--no-default-browser-check",
         "--disable-dev-shm-usage", "--disable-sync", "--disable-component-update",
         "--mute-audio", "--hide-scrollbars")


def _install_chromium() -> str | None:
    """Debian's chromium, installed with apt-get when missing (root only); None if impossible."""
    found = shutil.which("chromium")
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "chromium"]):
        try:
            subprocess.run(command, env=env, check=True, timeout=900, capture_output=True)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
            return None
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def chromium() -> str:
    path = _install_chromium()
    if path is None:
        pytest.skip("chromium is not installed and could not be installed here (needs root and "
                    "apt-get with Debian's registry): run `apt-get install chromium`")
    return path


@dataclass
class Visit:
    """What loading a page produced."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    screenshot: bytes = b""


class Browser:
    """A headless Chromium driven over the DevTools protocol on a pipe."""

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.TemporaryDirectory(prefix="normtest-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: the pipe ends on fds 3 (requests) and 4 (replies)
            a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, "--remote-debugging-pipe",
             f"--user-data-dir={self.profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(3, 4), preexec_fn=wire)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.out, self.inp = to_chrome_w, from_chrome_r
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and wait for its reply (events that arrive meanwhile are kept)."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method,
                                   "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode("utf-8") + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_for(self, event: str, session: str) -> dict[str, Any]:
        """The first event of this name for this session (kept ones first)."""
        for i, message in enumerate(self.events):
            if message.get("method") == event and message.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            message = self._read()
            if message.get("method") == event and message.get("sessionId") == session:
                return message
            self.events.append(message)

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.inp], [], [], max(left, 0.0))
            if not ready:
                raise TimeoutError(f"chromium did not answer within {self.timeout} s")
            chunk = os.read(self.inp, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def visit(self, url: str, height: int = HEIGHT) -> Visit:
        """Load ``url`` in a fresh tab (a 1280×2400 window); collect errors, the page's state
        and a screenshot of the whole page."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        state = self.send("Runtime.evaluate", {"returnByValue": True, "expression": """
            JSON.stringify({
              text: document.body ? document.body.innerText.length : 0,
              scripts: document.scripts.length,
              images: Array.from(document.images).map(i => [i.complete, i.naturalWidth]),
              sections: Array.from(document.querySelectorAll('section')).map(s => s.id),
              height: document.documentElement.scrollHeight})"""}, session=session)
        page_height = json.loads(state["result"]["value"])["height"]
        if page_height > height:  # the whole page, up to a size Chromium can paint at once
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": WIDTH, "height": min(page_height, 16000),
                       "deviceScaleFactor": 1, "mobile": False}, session=session)
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)
        time.sleep(0.3)  # let late log entries arrive, then flush them with one more round trip
        self.send("Runtime.evaluate", {"expression": "0"}, session=session)
        visit = Visit(state=json.loads(state["result"]["value"]),
                      screenshot=base64.b64decode(shot["data"]))
        for message in self.events:
            if message.get("sessionId") != session:
                continue
            method, params = message.get("method"), message.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", "")))
                                for a in params.get("args", []))
                if params.get("type") in ("error", "assert"):
                    visit.errors.append(f"console.{params['type']}: {text}")
                elif params.get("type") == "warning":
                    visit.warnings.append(text)
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                visit.errors.append("uncaught: " + str(details.get("exception", {}).get(
                    "description", details.get("text", ""))))
            elif method == "Log.entryAdded":
                entry = params.get("entry", {})
                if entry.get("level") == "error":
                    visit.errors.append(f"{entry.get('source')}: {entry.get('text')}")
                elif entry.get("level") == "warning":
                    visit.warnings.append(f"{entry.get('source')}: {entry.get('text')}")
            elif method == "Page.javascriptDialogOpening":
                visit.dialogs.append(str(params.get("message")))
        self.events = [m for m in self.events if m.get("sessionId") != session]
        self.send("Target.closeTarget", {"targetId": target})
        return visit

    def first_screen(self, url: str, expression: str) -> tuple[Any, bytes]:
        """Load ``url`` in a 1280×800 window; the value of ``expression`` (JSON text) once it
        has loaded, and a screenshot of that first screen (nothing scrolled, nothing resized)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", session=session)
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": WIDTH, "height": SCREEN, "deviceScaleFactor": 1,
                       "mobile": False}, session=session)
            self.send("Page.navigate", {"url": url}, session=session)
            self.wait_for("Page.loadEventFired", session)
            value = self.send("Runtime.evaluate", {"expression": expression,
                                                   "returnByValue": True}, session=session)
            shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)
        finally:
            self.events = [m for m in self.events if m.get("sessionId") != session]
            self.send("Target.closeTarget", {"targetId": target})
        return json.loads(value["result"]["value"]), base64.b64decode(shot["data"])

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        os.close(self.out)
        os.close(self.inp)
        self.profile.cleanup()


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    session = Browser(chromium)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="module")
def real_report(minilm: Any) -> Report:
    """A real audit of MiniLM: word.norm_ic over 200 words and cer.linear over 10 documents."""
    from normtest.audit.run import AuditSettings, run_audit

    settings = AuditSettings(words=200, documents=10, max_prefix=64, resamples=200)
    return run_audit(minilm, claim_ids=["word.norm_ic", "cer.linear"], settings=settings)


def not_blank(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of non-white pixels) of a PNG."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.thumbnail((640, 1200))
    colours = image.getcolors(maxcolors=1 << 20) or []
    pixels = image.width * image.height
    white = sum(count for count, rgb in colours if min(rgb) >= 250)
    return len(colours), 1 - white / pixels


def test_the_report_of_a_real_audit_renders_cleanly_in_chromium(
        browser: Browser, real_report: Report) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / "minilm-l6.html"
    page.write_text(render(real_report, "html"), encoding="utf-8")
    visit = browser.visit(page.as_uri())
    (SCREENSHOTS / "minilm-l6.png").write_bytes(visit.screenshot)
    assert visit.errors == [], visit.errors
    state = visit.state
    assert state["scripts"] == 0 and state["text"] > 2000
    tested = [line.key for line in real_report.scorecard if line.status != "not tested"]
    assert len(tested) >= 2
    # the answer at a glance, each tested line's evidence, then the galleries and tables
    assert state["sections"] == ["scorecard", *(f"line-{k}" for k in tested), "summary",
                                 "effects", "words", "cer", "exploratory", "provenance"]
    html = page.read_text(encoding="utf-8")
    n_words = len(real_report.data["words"]["squared_norms"])
    n_curves = len(real_report.data["prefixes"]["curves"])
    n_specs = len([r for r in real_report.robustness if r.specifications])
    # every figure drawn and loaded: each line's own (its deciding plot first, before its
    # rows), its specification curve, and the galleries (two forest plots), folded ones too
    assert len(state["images"]) == html.count("<img ") >= n_specs + 2 + n_words + n_curves \
        + len(tested)
    assert all(done and width > 0 for done, width in state["images"]), state["images"]
    for key in tested:
        section = html.split(f'<section id="line-{key}"', 1)[1].split("</section>", 1)[0]
        assert -1 < section.find("<img ") < section.find("<table"), key
    colours, ink = not_blank(visit.screenshot)
    assert colours > 100 and ink > 0.05, (colours, ink)


FIRST_SCREEN = """JSON.stringify({
  scorecard: document.querySelector('#scorecard').getBoundingClientRect().toJSON(),
  firstLine: document.querySelector('#scorecard table tr').getBoundingClientRect().toJSON(),
  contents: document.querySelector('#contents').getBoundingClientRect().toJSON(),
  firstTable: document.querySelector('table.claims').getBoundingClientRect().toJSON(),
  firstImage: document.querySelector('img').getBoundingClientRect().toJSON(),
  folds: Array.from(document.querySelectorAll('details')).map(d => d.open),
  height: document.documentElement.scrollHeight,
  viewport: [window.innerWidth, window.innerHeight]})"""


def test_the_scorecard_is_on_the_first_screen_and_the_page_is_short(
        browser: Browser, real_report: Report) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / "minilm-l6.html"
    page.write_text(render(real_report, "html"), encoding="utf-8")
    state, shot = browser.first_screen(page.as_uri(), FIRST_SCREEN)
    (SCREENSHOTS / "first-screen-minilm.png").write_bytes(shot)
    assert state["viewport"] == [WIDTH, SCREEN]
    assert 0 <= state["scorecard"]["top"] < SCREEN / 4, state["scorecard"]
    assert state["firstLine"]["bottom"] < SCREEN, state["firstLine"]  # a verdict is readable
    assert state["contents"]["top"] < state["firstImage"]["top"] < state["firstTable"]["top"]
    assert state["folds"] and not any(state["folds"])  # exploratory material starts folded
    assert state["height"] < MAX_PAGE_HEIGHT, state["height"]
    colours, ink = not_blank(shot)
    assert colours > 20 and ink > 0.05, (colours, ink)


def test_markup_in_the_data_stays_text_in_chromium(browser: Browser, tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_render_cases",
                                                  Path(__file__).with_name("test_render.py"))
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)  # the crafted report of the escaping test, reused
    script = cases.SCRIPT
    page = tmp_path / "crafted.html"
    page.write_text(render(cases.crafted_report(), "html"), encoding="utf-8")
    visit = browser.visit(page.as_uri())
    assert visit.errors == [] and visit.dialogs == []
    assert visit.state["scripts"] == 0
    text = browser_text(browser, page)
    assert script in text and "<b>evil</b> model" in text  # shown as text, not run as markup


def browser_text(browser: Browser, page: Path) -> str:
    """The page's visible text as Chromium renders it."""
    target = browser.send("Target.createTarget", {"url": page.as_uri()})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target,
                                                     "flatten": True})["sessionId"]
    deadline = time.monotonic() + 30
    text = ""
    while time.monotonic() < deadline:
        result = browser.send("Runtime.evaluate", {"expression": "document.readyState === "
                                                   "'complete' ? document.body.innerText : ''",
                                                   "returnByValue": True}, session=session)
        text = str(result["result"].get("value", ""))
        if text:
            break
        time.sleep(0.1)
    browser.send("Target.closeTarget", {"targetId": target})
    return text


def test_the_detector_sees_console_errors_exceptions_and_policy_violations(
        browser: Browser, tmp_path: Path) -> None:
    """The control: a page built to fail every way the real page must not."""
    noisy = tmp_path / "noisy.html"
    noisy.write_text("<!DOCTYPE html><html><body><p>noisy</p>"
                     "<script>console.error('boom'); throw new Error('kaput');</script>"
                     "</body></html>", encoding="utf-8")
    visit = browser.visit(noisy.as_uri())
    assert any("boom" in e for e in visit.errors), visit.errors
    assert any("kaput" in e for e in visit.errors), visit.errors
    locked = tmp_path / "locked.html"
    locked.write_text("<!DOCTYPE html><html><head><meta http-equiv='Content-Security-Policy' "
                      "content=\"default-src 'none'\"></head><body><p>locked</p>"
                      "<script>document.title = 'ran'</script>"
                      "<img src='https://example.invalid/x.png'></body></html>",
                      encoding="utf-8")
    visit = browser.visit(locked.as_uri())
    assert any("Content Security Policy" in e for e in visit.errors), visit.errors
    blank = not_blank(visit.screenshot)
    assert blank[1] < 0.05  # a nearly empty page reads as nearly blank
