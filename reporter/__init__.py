"""benchreport: audit throughput claims about LLM serving."""

from reporter.api import audit
from reporter.verdict import Verdict
from reporter.version import __version__

__all__ = ["Verdict", "__version__", "audit"]
