"""The PDF report: the HTML report through WeasyPrint, with print CSS and nothing fetched.

The URL fetcher refuses every URL that is not a `data:` URI (the document itself), and keeps
the list of what was asked for, so tests can show that rendering attempted no fetch.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from reporter.errors import RenderError
from reporter.model import Verdict
from reporter.render.html import render_html


@dataclass
class FetchLog:
    """Every URL WeasyPrint asked for while rendering: the ones allowed and the refused."""

    allowed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class RefusedFetch(Exception):
    """A URL outside the document; WeasyPrint skips the resource and goes on."""


def _fetcher(log: FetchLog) -> Any:
    from weasyprint.urls import URLFetcher

    class InsideOnly(URLFetcher):  # type: ignore[misc]
        """Fetch `data:` URIs only; refuse files, http(s) and anything else."""

        def fetch(self, url: str, headers: Any = None) -> Any:
            if url.lower().startswith("data:"):
                log.allowed.append(url[:64])
                return super().fetch(url, headers)
            log.refused.append(url)
            raise RefusedFetch(f"refused to fetch {url[:200]!r}: the report loads nothing")

    return InsideOnly(allowed_protocols=["data"], allow_redirects=False)


def html_to_pdf(html: str, log: FetchLog | None = None) -> bytes:
    """Render an HTML report to PDF bytes; every URL asked for is recorded in `log`."""
    import weasyprint

    log = log if log is not None else FetchLog()
    # WeasyPrint reports skipped resources and unsupported CSS on its logger; a refused
    # fetch is recorded in `log`, so the warnings are not needed on the console.
    logger = logging.getLogger("weasyprint")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        document = weasyprint.HTML(string=html, url_fetcher=_fetcher(log), media_type="print")
        pdf: bytes = document.write_pdf()
    except Exception as exc:
        raise RenderError(f"cannot render the PDF: {exc}") from None
    finally:
        logger.setLevel(level)
    return pdf


def render_pdf(verdict: Verdict, command: str | None = None, log: FetchLog | None = None) -> bytes:
    """The report as a PDF (the same content as the HTML report)."""
    return html_to_pdf(render_html(verdict, command), log)
