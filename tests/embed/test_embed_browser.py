"""The badge and the card in a real headless Chromium, offline, as a blog post shows them.

The card is pasted into a host page that has no Content-Security-Policy at all (a blog
rarely has one), so anything active in it would run or fetch: the checks are that nothing
does (no request but the page and the badge, no console error, no dialog), that hostile
trace strings are text, that the chart is drawn, and that the card's styles stay inside it.
The DevTools session and the browser come from tests/report/test_report_browser.py.
"""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from embed_helpers import ROOT
from PIL import Image, ImageStat

from reporter.render.badge import render_badge
from reporter.render.card import render_card
from reporter.verdict import Verdict

sys.path.insert(0, str(ROOT / "tests" / "report"))
import test_report_browser as report_browser

WIDTH = report_browser.WIDTH
DevTools = report_browser.DevTools
needs_chromium = report_browser.needs_chromium
_problems = report_browser._problems
browser = report_browser.browser  # the fixture: a headless Chromium on a DevTools pipe

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOST = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>a post</title></head>
<body><p id="host-text">A paragraph of the post, before the card.</p>
{card}
<p><img id="badge" src="badge.svg" alt="benchreport verdict"></p>
</body></html>
"""
INFO = """(() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
    return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; };
  const card = document.querySelector(".benchreport-card");
  const root = document.documentElement;
  return {
    root: root.tagName,
    text: (card || root).textContent,
    card: box(card),
    chart: box(card && card.querySelector("figure svg")),
    badge: box(document.getElementById("badge")),
    badgeLoaded: document.getElementById("badge")?.naturalWidth || 0,
    active: (card || root).querySelectorAll(
      "script, img, iframe, object, embed, frame, link, meta, base, form").length,
    hostColor: document.getElementById("host-text")
      ? getComputedStyle(document.getElementById("host-text")).color : null,
    hostFont: document.getElementById("host-text")
      ? getComputedStyle(document.getElementById("host-text")).fontFamily : null,
  };
})()"""


def _open(tools: DevTools, url: str) -> tuple[dict[str, Any], Image.Image]:
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
    reply = tools.send("Runtime.evaluate", {"expression": INFO, "returnByValue": True}, session)
    assert "exceptionDetails" not in reply, reply
    size = tools.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
    shot = tools.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WIDTH, "height": max(size["height"], 40), "scale": 1},
    }, session, timeout=60)  # fmt: skip
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("L")
    info: dict[str, Any] = reply["result"]["value"]
    return info, image


def _drawn(image: Image.Image, box: list[float] | None) -> bool:
    assert box is not None
    x, y, w, h = box
    assert w > 20 and h > 10, box
    region = image.crop((int(x), int(y), int(x + w), int(y + h)))
    return ImageStat.Stat(region).stddev[0] > 10


def _requests(tools: DevTools) -> list[str]:
    return [
        e["params"]["request"]["url"]
        for e in tools.events
        if e.get("method") == "Network.requestWillBeSent"
    ]


@needs_chromium
@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("pair", ["claimed 350 = 3.85×", "3,493 tokens ÷ 8.70 s = 401.3 tok/s"]),
        ("report-hostile", ['"><img src=x onerror=alert(1)>', "<script>alert(1)</script>"]),
        ("hostile", ["aggregate against N: </svg><script>alert(2)</script><U+202E>&lt;"]),
    ],
)
def test_card_and_badge_in_a_post_offline(
    name: str,
    shown: list[str],
    browser: DevTools,
    tmp_path: Path,
    audited: Callable[[str], Verdict],
) -> None:
    verdict = audited(name)
    (tmp_path / "badge.svg").write_text(render_badge(verdict), encoding="utf-8")
    page = tmp_path / "post.html"
    page.write_text(HOST.format(card=render_card(verdict)), encoding="utf-8")
    url = page.as_uri()
    info, image = _open(browser, url)
    badge_url = (tmp_path / "badge.svg").as_uri()
    assert _problems(browser.events, url) == [f"request: {badge_url}"]
    assert _requests(browser) == [url, badge_url]
    assert info["active"] == 0
    assert "Inflated" in info["text"]
    for text in shown:
        assert text in info["text"]
    # the card's styles stay inside it: the post's paragraph keeps the browser's defaults
    assert info["hostColor"] == "rgb(0, 0, 0)"
    assert "DejaVu" not in info["hostFont"]
    assert _drawn(image, info["card"])
    assert info["badgeLoaded"] and _drawn(image, info["badge"])
    if name != "report-hostile":  # a single run at one N: no sweep to draw
        assert _drawn(image, info["chart"])


@needs_chromium
def test_the_badge_and_the_bare_fragment_open_on_their_own(
    browser: DevTools,
    tmp_path: Path,
    audited: Callable[[str], Verdict],
) -> None:
    verdict = audited("hostile")
    fragment = tmp_path / "card.html"
    fragment.write_text(render_card(verdict), encoding="utf-8")
    url = fragment.as_uri()
    info, image = _open(browser, url)
    assert _problems(browser.events, url) == []
    assert _requests(browser) == [url]
    assert info["active"] == 0 and _drawn(image, info["chart"])


@needs_chromium
def test_the_badge_alone(
    browser: DevTools, tmp_path: Path, audited: Callable[[str], Verdict]
) -> None:
    badge = tmp_path / "badge.svg"
    badge.write_text(render_badge(audited("pair")), encoding="utf-8")
    url = badge.as_uri()
    info, image = _open(browser, url)
    assert _problems(browser.events, url) == []
    assert _requests(browser) == [url]
    assert info["root"] == "svg"
    assert info["text"] == "audit: inflated up to 3.85×auditinflated up to 3.85×"
    assert _drawn(image, [0, 0, 160, 20])
