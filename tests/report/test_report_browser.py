"""A real headless Chromium opens the report from disk with the network off.

Driven through the DevTools protocol over `--remote-debugging-pipe` (JSON messages ended by
NUL on file descriptors 3 and 4), so no driver or browser download is needed: only Debian's
`chromium`. Asserts: no console error, no request but the file itself, no dialog (a hostile
`alert(1)` never runs), and a screenshot in which the verdict and the charts are drawn.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageStat

from reporter import api
from reporter.render.html import render_html
from reporter.verdict import Verdict

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser"))
     if p and Path(p).exists()),
    None,
)  # fmt: skip
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
WIDTH = 1200
PAGE_INFO = """(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; };
  return {
    badge: box(document.querySelector("h1 .badge")),
    verdict: document.querySelector("h1 .badge").textContent,
    charts: [...document.querySelectorAll("figure.chart svg")].map(box),
    active: document.querySelectorAll("script, img, iframe, object, embed, frame").length,
    links: document.querySelectorAll("link").length,
    title: document.title,
  };
})()"""


class DevTools:
    """A DevTools protocol session over the browser's pipe."""

    def __init__(self, write_fd: int, read_fd: int) -> None:
        self._write = write_fd
        self._read = read_fd
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = 30) -> dict[str, Any]:  # fmt: skip
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._message(deadline))

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._message(deadline))
        except TimeoutError:
            pass


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    assert CHROMIUM is not None
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()

    def wire_pipes() -> None:  # in the child: the protocol's fds 3 (in) and 4 (out)
        os.dup2(to_browser_r, 3)
        os.dup2(from_browser_w, 4)

    args = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-default-apps", "--no-first-run",
        "--no-default-browser-check", "--disable-domain-reliability", "--mute-audio",
        "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
        "--remote-debugging-pipe", f"--window-size={WIDTH},1000", "about:blank",
    ]  # fmt: skip
    proc = subprocess.Popen(args, preexec_fn=wire_pipes, close_fds=False,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    os.close(to_browser_r)
    os.close(from_browser_w)
    tools = DevTools(to_browser_w, from_browser_r)
    try:
        yield tools
        with contextlib.suppress(EOFError, TimeoutError, RuntimeError):
            tools.send("Browser.close", timeout=10)
    finally:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(to_browser_w)
        os.close(from_browser_r)


def _open_offline(tools: DevTools, url: str) -> tuple[str, dict[str, Any], Image.Image]:
    targets = tools.send("Target.getTargets")["targetInfos"]
    page = next(t for t in targets if t["type"] == "page")
    session = tools.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})[
        "sessionId"
    ]
    for domain in ("Page", "Runtime", "Log", "Network"):
        tools.send(f"{domain}.enable", session=session)
    tools.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
               "downloadThroughput": -1, "uploadThroughput": -1}, session)  # fmt: skip
    tools.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": 1000,
               "deviceScaleFactor": 1, "mobile": False}, session)  # fmt: skip
    tools.events.clear()
    tools.send("Page.navigate", {"url": url}, session)
    tools.wait_for("Page.loadEventFired")
    tools.drain(0.5)
    info = tools.send("Runtime.evaluate", {"expression": PAGE_INFO, "returnByValue": True},
                      session)["result"]["value"]  # fmt: skip
    size = tools.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
    shot = tools.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WIDTH, "height": size["height"], "scale": 1},
    }, session, timeout=60)  # fmt: skip
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("L")
    return session, info, image


def _varied(image: Image.Image, box: list[float]) -> bool:
    x, y, w, h = box
    assert w > 20 and h > 10, box
    region = image.crop((int(x), int(y), int(x + w), int(y + h)))
    return ImageStat.Stat(region).stddev[0] > 10


def _problems(events: list[dict[str, Any]], url: str) -> list[str]:
    out = []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.append(f"console {params['type']}: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            out.append(f"exception: {params.get('exceptionDetails', {}).get('text')}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            out.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        elif method == "Page.javascriptDialogOpening":
            out.append(f"dialog: {params.get('message')}")
        elif method == "Network.requestWillBeSent":
            requested = params["request"]["url"]
            if requested != url and not requested.startswith("data:"):
                out.append(f"request: {requested}")
    return out


@needs_chromium
@pytest.mark.parametrize("name", ["ladder.jsonl", "hostile.jsonl"])
def test_report_in_a_real_browser_offline(
    name: str, browser: DevTools, tmp_path: Path, fixture_verdicts: Callable[[str], Verdict]
) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(fixture_verdicts(name)), encoding="utf-8")
    url = page.as_uri()
    _, info, image = _open_offline(browser, url)
    assert _problems(browser.events, url) == []
    requested = [e["params"]["request"]["url"] for e in browser.events
                 if e.get("method") == "Network.requestWillBeSent"]  # fmt: skip
    assert requested == [url]
    assert info["verdict"] == "Inflated"
    assert info["active"] == 0
    assert info["links"] == 1
    assert len(info["charts"]) >= 4
    assert image.width == WIDTH
    assert _varied(image, info["badge"])
    assert all(_varied(image, box) for box in info["charts"])


@needs_chromium
def test_the_checks_see_a_page_that_fetches_and_errs(browser: DevTools, tmp_path: Path) -> None:
    """A control: the same checks on a page that does load and log are not silent."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body><h1><span class=badge>x"
        "</span></h1><img src='http://evil.invalid/x.png'><script>console.error('boom')</script>"
        "</body></html>",
        encoding="utf-8",
    )
    url = page.as_uri()
    _, info, _ = _open_offline(browser, url)
    problems = _problems(browser.events, url)
    assert "request: http://evil.invalid/x.png" in problems
    assert any(p.startswith("console error:") and "boom" in p for p in problems)
    assert info["active"] == 2


NAVIGATION = """(() => {
  const top = (el) => el.getBoundingClientRect().top + window.scrollY;
  const bottom = (el) => el.getBoundingClientRect().bottom + window.scrollY;
  const target = (a) => document.getElementById(a.getAttribute("href").slice(1));
  const runOf = (row) => row.querySelector("td.id").textContent;
  return {
    screen: window.innerHeight,
    verdict: bottom(document.querySelector("h1 .badge")),
    claims: [...document.querySelectorAll("ol.claim-summary li")].map(
      (li) => [li.querySelector(".claim-id").textContent, bottom(li)]),
    runs: [...document.querySelectorAll("section.group tr[id]")].map(runOf),
    // every finding: the runs its "Concerns" links lead to, and whether each of those
    // runs links back to it
    findings: [...document.querySelectorAll("article.finding")].map((card) => ({
      id: card.id,
      subject: card.querySelector(".subject").textContent,
      concerns: [...card.querySelectorAll(".concerns a")].map((a) => {
        const el = target(a);
        const run = el && el.tagName === "TR" ? runOf(el) : null;
        const back = el && el.tagName === "TR"
          && [...el.querySelectorAll("a.flink")].some((b) => target(b) === card);
        return [a.getAttribute("href"), el ? el.tagName : null, run, back];
      }),
    })),
    runLinks: [...document.querySelectorAll("section.group tr[id] a.flink")].map(
      (a) => [a.getAttribute("href"), target(a) ? target(a).className : null]),
    collapsed: [...document.querySelectorAll("details.per-run")].map((d) => d.open),
    detailTables: [...document.querySelectorAll("details.per-run table")].map(
      (t) => [t.checkVisibility(), t.getBoundingClientRect().height]),
  };
})()"""


@needs_chromium
def test_shipped_traces_report_reads_verdict_first_and_links_findings_to_runs(
    browser: DevTools, tmp_path: Path
) -> None:
    """Every shipped trace in one report: the first screen holds the verdict and every claim;
    each finding about runs links to each run's row, and each of those rows links back to it;
    the long per-run tables are collapsed on screen and printed open."""
    root = Path(__file__).resolve().parents[2]
    traces = sorted(str(p.relative_to(root)) for p in (root / "traces").glob("*.jsonl"))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        verdict = api.audit(traces)
    page = tmp_path / "report.html"
    page.write_text(render_html(verdict), encoding="utf-8")
    url = page.as_uri()
    session, _, _ = _open_offline(browser, url)
    assert _problems(browser.events, url) == []
    nav = browser.send("Runtime.evaluate", {"expression": NAVIGATION, "returnByValue": True},
                       session)["result"]["value"]  # fmt: skip

    assert nav["verdict"] < nav["screen"]
    assert [c[0] for c in nav["claims"]] == [c.check.claim for c in verdict.claims]
    assert all(bottom < nav["screen"] for _, bottom in nav["claims"]), nav["claims"]

    assert sorted(nav["runs"]) == sorted(r.id for r in verdict.runs)
    assert len(nav["runs"]) == len(verdict.runs) > 30
    fired = [f for f in verdict.findings if f.fired]
    assert len(nav["findings"]) == len(fired)
    run_ids = {r.id for r in verdict.runs}
    groups = {g.name: set(g.runs) for g in verdict.groups}
    for card in nav["findings"]:
        subject = card["subject"].strip("[]")
        if subject in run_ids:
            expected = {subject}
        elif subject in groups:
            expected = groups[subject]
        else:
            expected = {r for c in verdict.claims if c.check.claim == subject for r in c.check.runs}
        runs = {run for _, tag, run, _ in card["concerns"] if tag == "TR"}
        assert runs == expected, card
        assert all(back for _, tag, _, back in card["concerns"] if tag == "TR"), card
    about_runs = [f for f in fired if f.subject in run_ids]
    assert len(about_runs) > 50
    assert all(kind and "finding" in kind for _, kind in nav["runLinks"]), nav["runLinks"]

    assert nav["collapsed"] == [False, False, False]
    assert len(nav["detailTables"]) == 3
    assert not any(shown for shown, _ in nav["detailTables"]), nav["detailTables"]
    browser.send("Emulation.setEmulatedMedia", {"media": "print"}, session)
    printed = browser.send("Runtime.evaluate", {"expression": NAVIGATION, "returnByValue": True},
                           session)["result"]["value"]  # fmt: skip
    assert all(shown and height > 100 for shown, height in printed["detailTables"]), printed
