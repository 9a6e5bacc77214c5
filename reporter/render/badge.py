"""A small SVG badge of the verdict (`audit --badge badge.svg`): "audit | inflated 3.85×".

Deterministic (the same verdict gives the same bytes: widths come from a fixed table of
character widths and `textLength` holds each text to its box whatever font draws it), and
inert: only rectangles and text, no link, no script, no style, no font to fetch. The text
is escaped for XML even though it holds only a verdict word and a number.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from reporter.model import Verdict
from reporter.types import VerdictKind

LABEL = "audit"
#: Badge colours: red for an accusation, amber for doubt, green for a figure that holds.
COLOR = {
    VerdictKind.INFLATED: "#b42318",
    VerdictKind.SERIAL: "#b42318",
    VerdictKind.INCOMPARABLE: "#9a6700",
    VerdictKind.INSUFFICIENT_DATA: "#9a6700",
    VerdictKind.UNDERSTATED: "#9a6700",
    VerdictKind.SUPPORTED: "#1e7d3c",
}
LABEL_COLOR = "#4a4f55"
HEIGHT = 20
PAD = 6
FONT = "DejaVu Sans,Verdana,Geneva,sans-serif"
FONT_SIZE = 11
# Approximate advance widths (px at 11 px) of Verdana-like glyphs: enough to size the boxes.
_NARROW = set("fijlrt.,:;!|'() ")
_WIDE = set("mwMW%")
_DIGIT_WIDTH = 7.0


def _width(text: str) -> float:
    total = 0.0
    for ch in text:
        if ch in _NARROW:
            total += 3.9
        elif ch in _WIDE:
            total += 10.0
        elif ch.isdigit():
            total += _DIGIT_WIDTH
        else:
            total += 6.8
    return round(total, 1)


def badge_message(verdict: Verdict) -> str:
    """The right half: the verdict, with the factor when claims are above or below the trace.

    Several inflated claims give the largest factor, said as "up to"; several understated
    ones the smallest. A factor is only printed when a claim carries the headline verdict.
    """
    word = str(verdict.verdict).replace("-", " ")
    factors = sorted(
        c.check.factor
        for c in verdict.claims
        if c.verdict is verdict.verdict and c.check.factor is not None
    )
    if verdict.verdict is VerdictKind.INFLATED and factors:
        upto = "up to " if len({round(f, 2) for f in factors}) > 1 else ""
        return f"{word} {upto}{factors[-1]:.2f}×"
    if verdict.verdict is VerdictKind.UNDERSTATED and factors:
        upto = "down to " if len({round(f, 2) for f in factors}) > 1 else ""
        return f"{word} {upto}{factors[0]:.2f}×"
    return word


def render_badge(verdict: Verdict) -> str:
    """The badge as an SVG document (a str; written as UTF-8)."""
    message = badge_message(verdict)
    label_w = _width(LABEL) + 2 * PAD
    message_w = _width(message) + 2 * PAD
    total = label_w + message_w
    said = f"{LABEL}: {message}"

    def text(x: float, width: float, content: str) -> str:
        return (
            f'<text x="{x:g}" y="14" textLength="{width - 2 * PAD:g}" '
            f'lengthAdjust="spacingAndGlyphs">{escape(content)}</text>'
        )

    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total:g}" height="{HEIGHT}" '
        f'viewBox="0 0 {total:g} {HEIGHT}" role="img" aria-label={quoteattr(said)}>'
        f"<title>{escape(said)}</title>"
        f'<rect width="{label_w:g}" height="{HEIGHT}" rx="3" fill="{LABEL_COLOR}"/>'
        f'<rect x="{label_w - 3:g}" width="{message_w + 3:g}" height="{HEIGHT}" rx="3" '
        f'fill="{COLOR[verdict.verdict]}"/>'
        f'<rect x="{label_w - 3:g}" width="3" height="{HEIGHT}" fill="{COLOR[verdict.verdict]}"/>'
        f'<g fill="#fff" text-anchor="middle" font-family="{FONT}" font-size="{FONT_SIZE}">'
        f"{text(label_w / 2, label_w, LABEL)}"
        f"{text(label_w + message_w / 2, message_w, message)}"
        "</g></svg>\n"
    )
