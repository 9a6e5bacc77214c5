"""The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched).

jinja2 with autoescape and StrictUndefined over `templates/`: every string is escaped unless
it is a chart, and a chart is an SVG that `svgcheck.check_svg` accepted.
"""

from __future__ import annotations

from functools import cache

import jinja2
from markupsafe import Markup

from reporter.model import Verdict
from reporter.render.context import ReportContext, build_context
from reporter.resources import templates_dir

TEMPLATE = "report.html.j2"
STYLESHEET = "report.css"
#: Nothing may load: no script, no font, no image, no frame; only the inline styles.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src 'none'; "
    "script-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; "
    "base-uri 'none'"
)


@cache
def environment() -> jinja2.Environment:
    """The template environment: autoescape always on, unknown names are errors."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env


def render_html_context(context: ReportContext, *, print_css: str = "") -> str:
    env = environment()
    css = (templates_dir() / STYLESHEET).read_text(encoding="utf-8")
    charts = {c.id: Markup(c.svg) for c in [*context.charts, *context.run_charts]}
    return env.get_template(TEMPLATE).render(
        r=context, css=Markup(css + print_css), csp=CSP, svg=charts
    )


def render_html(verdict: Verdict, command: str | None = None) -> str:
    """The report as one HTML document (a str; the caller writes it as UTF-8)."""
    return render_html_context(build_context(verdict, command))
