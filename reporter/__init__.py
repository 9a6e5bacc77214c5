"""benchreport: audit throughput claims about LLM serving.

`audit` and `Verdict` are imported on first use, so that `import reporter` (the command
line's `--help`, `--version`, `rules`) does not load pandas and pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reporter.version import __version__

if TYPE_CHECKING:
    from reporter.api import audit
    from reporter.verdict import Verdict

__all__ = ["Verdict", "__version__", "audit"]


def __getattr__(name: str) -> Any:
    if name == "audit":
        from reporter.api import audit

        return audit
    if name == "Verdict":
        from reporter.verdict import Verdict

        return Verdict
    raise AttributeError(f"module 'reporter' has no attribute {name!r}")
