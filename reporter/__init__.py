"""benchreport: audit throughput claims about LLM serving."""

from reporter.api import audit
from reporter.verdict import Verdict

__version__ = "0.1.0"
__all__ = ["Verdict", "__version__", "audit"]
