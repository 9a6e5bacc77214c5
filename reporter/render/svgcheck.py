"""What an SVG in a report may hold: drawing elements that run and load nothing.

Every chart is checked where it is drawn (reporter.render.charts), and again in the report
process when a helper process drew it (reporter.render.drawing); the badge and the card are
checked too. The module imports only the standard library.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from reporter.errors import RenderError

__all__ = ["check_svg"]

# What an inline SVG from vega may hold; anything else is refused rather than embedded.
_ALLOWED_TAGS = {
    "svg", "g", "path", "rect", "line", "circle", "ellipse", "polyline", "polygon", "text",
    "tspan", "defs", "clipPath", "title", "desc", "linearGradient", "radialGradient", "stop",
}  # fmt: skip
_SVG_NS = "{http://www.w3.org/2000/svg}"


def check_svg(svg: str, chart_id: str = "chart") -> None:
    """Refuse an SVG that could run or load anything: scripts, links, images, styles, events."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as exc:
        raise RenderError(f"chart {chart_id}: not well-formed SVG: {exc}") from None
    for el in root.iter():
        tag = el.tag.removeprefix(_SVG_NS)
        if tag not in _ALLOWED_TAGS:
            raise RenderError(f"chart {chart_id}: refused element <{tag}> in the SVG")
        for name, value in el.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            refused = local.startswith("on") or local in ("href", "src", "style")
            if refused and not (local == "href" and value.startswith("#")):
                raise RenderError(f"chart {chart_id}: refused attribute {local} in the SVG")
            if "url(" in value and not re.fullmatch(r"url\(#[\w-]+\)", value.strip()):
                raise RenderError(f"chart {chart_id}: refused reference {value!r} in the SVG")
