"""The recorder: drive an OpenAI-compatible server the way the method asks, write the trace.

Data flow: ``server`` (identity, /metrics) → ``schedule`` (closed-loop N or Poisson open loop)
→ ``stream`` (one streamed request on a lean asyncio protocol; ``client`` holds the request
state, the SSE reader and the httpx path) → ``writer`` (one flushed JSON line each) → ``run`` (the
sweep, the checks after each run, the run-end record). ``health`` watches the client itself.
"""

from reporter.recorder.config import RecordConfig
from reporter.recorder.run import RecordResult, RunResult, record, record_async

__all__ = ["RecordConfig", "RecordResult", "RunResult", "record", "record_async"]
