"""The recording client itself was the bottleneck: its own lag or CPU.

## What it checks
For each run recorded by benchreport's recorder, the client's health that the recorder
writes into the run's `run_end` record: `client.loop_lag_p99_ms` (the 99th percentile of its
event loop's lag), `client.loop_lag_max_ms`, and `client.cpu_percent` (the client process's
CPU, 100 = one core).
A recording streamed by several processes (`record --workers`) gives each figure as its worst
loop's, and the CPU of its busiest process.

## Why it matters
A load generator that cannot keep up sends late, reads chunks late and stamps them late. Its
lag goes into every time to first token, every inter-token gap and the wall clock, and a
saturated client makes a server look serial or slow. The lag is invisible in the figures
unless the client measured itself.

## How it decides
Fires (warning) when the loop lag's 99th percentile exceeds `client_loop_lag_p99_ms`
(10 ms: about one token's time at 100 tok/s), or the client used at least
`client_cpu_percent` (90%) of a core. The median inter-token time of the run is shown next to
the lag, for scale. Passes when both are below.

The finding says where the lag came from only as far as the record shows it. A client that
used less than half of `client_cpu_percent` was not busy with its own work, so its lag came
from outside it (other processes on the machine, or a blocking call), and the finding says
the client *ran late* rather than that it was the bottleneck: its timestamps are late all
the same.

## Worked example
A client streaming 64 concurrent requests with a Python tokenizer in its loop: loop lag p99
38 ms against a 12 ms inter-token time, 71% of a core; every chunk timestamp can be late by
three tokens' time. Fired: the client was a bottleneck. A recorder at N=1 on a machine whose
other processes kept both cores busy: lag p99 14 ms at 4% of a core. Fired: the client ran
late, and the delay came from outside its own work. A recorder at N=8 with p99 lag 0.8 ms and
14% CPU: passed.

## When it cannot decide
A trace from another tool, or a recording without the client's health: undecidable ("the
recording client's health was not recorded"). A `client` record whose fields are null:
undecidable, naming them.

## What to do
Rerun with fewer concurrent streams per client process, several client processes, or a
faster client; keep tokenization and logging out of the streaming loop.

## References
DESIGN.md "The recorder" (it watches its own event-loop lag); METHOD.md §1 (the wall clock
is the only honest denominator, and the client's clock is the one that measures it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from reporter.compare import cell
from reporter.config import threshold
from reporter.numbers import fmt
from reporter.rules.base import AuditData, Finding, Rule, run_ref
from reporter.types import Outcome, Severity
from reporter.values import number

LAG_P99 = threshold(
    "client_loop_lag_p99_ms",
    10.0,
    "10 ms is one token's time at 100 tok/s: a client late by more stamps chunks a token late "
    "and delays the sends of a closed loop",
)
CPU = threshold(
    "client_cpu_percent",
    90.0,
    "a single-threaded client at ≥ 90% of its core has no slack: its loop lag grows with load",
)


def check(data: AuditData) -> list[Finding]:
    return [_check_run(data, str(r["run"]), r) for r in data.run_rows()]


def client_health(run: Any) -> Mapping[str, Any] | None:
    """The recorder's client record: `run_end.client` (or `client` on the run record)."""
    extra = run.get("extra")
    if not isinstance(extra, Mapping):
        return None
    end = extra.get("run_end")
    if isinstance(end, Mapping) and isinstance(end.get("client"), Mapping):
        return end["client"]  # type: ignore[no-any-return]
    client = extra.get("client")
    return client if isinstance(client, Mapping) else None


def _check_run(data: AuditData, run_id: str, run: Any) -> Finding:
    client = client_health(run)
    tool = run.get("tool_name")
    fmt_name = run.get("format")
    source = tool if tool else (fmt_name if fmt_name and fmt_name != "benchreport" else None)
    if client is None:
        where = f"trace from {source}; " if source else ""
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            f"the recording client's health was not recorded ({where}no run_end.client)",
        )
    p99, peak, cpu = (
        number(client.get(k)) for k in ("loop_lag_p99_ms", "loop_lag_max_ms", "cpu_percent")
    )
    if p99 is None and cpu is None:
        return RULE.finding(
            run_id,
            Outcome.UNDECIDABLE,
            "the recording client's health was not recorded "
            "(run_end.client.loop_lag_p99_ms and cpu_percent are null)",
        )
    rate = cell(data.stats, run_id, "median_decode_tps")
    itl_ms = 1000 / rate if not math.isnan(rate) and rate > 0 else math.nan
    lag_limit, cpu_limit = data.config[LAG_P99], data.config[CPU]
    lines = []
    if p99 is not None:
        lines.append(
            f"event-loop lag p99 {fmt(p99, 1)} ms (limit {fmt(lag_limit, 0)} ms)"
            + (f", max {fmt(peak, 1)} ms" if peak is not None else "")
        )
    if cpu is not None:
        lines.append(f"client CPU {fmt(cpu, 0)}% of one core (limit {fmt(cpu_limit, 0)}%)")
    if not math.isnan(itl_ms):
        lines.append(f"median inter-token time {fmt(itl_ms, 1)} ms (1000 ÷ {fmt(rate, 1)} tok/s)")
    numbers = {
        "loop_lag_p99_ms": p99,
        "loop_lag_max_ms": peak,
        "cpu_percent": cpu,
        "itl_ms": itl_ms,
    }
    problems = []
    if p99 is not None and p99 > lag_limit:
        scale = (
            f", {fmt(p99 / itl_ms, 1)}× the {fmt(itl_ms, 1)} ms between tokens"
            if not math.isnan(itl_ms)
            else ""
        )
        problems.append(f"its event loop lagged {fmt(p99, 1)} ms at the 99th percentile{scale}")
    if cpu is not None and cpu >= cpu_limit:
        problems.append(f"it used {fmt(cpu, 0)}% of a core")
    if problems:
        if cpu is not None and cpu < cpu_limit / 2:
            # An idle client's loop was held by something outside its own work: calling the
            # client the bottleneck would blame the wrong thing.
            message = (
                "the recording client ran late: "
                + " and ".join(problems)
                + f", while it used only {fmt(cpu, 0)}% of a core, so the delay came from "
                "outside its own work (other processes on the machine, or a blocking call)"
            )
            advice = (
                "rerun on a machine with a core free for the client (check its load "
                "average), or pin the client to a core of its own"
            )
        else:
            message = "the recording client was a bottleneck: " + " and ".join(problems)
            advice = (
                "rerun with fewer streams per client process or several processes, and keep "
                "work out of the streaming loop"
            )
        return RULE.finding(
            run_id,
            Outcome.FIRED,
            message + "; its timestamps and send times are late by as much",
            arithmetic=lines,
            numbers=numbers,
            refs=run_ref(data, run_id),
            help=advice,
        )
    shown = "; ".join(lines[:2])
    return RULE.finding(
        run_id, Outcome.PASSED, f"the client kept up: {shown}", arithmetic=lines, numbers=numbers
    )


RULE = Rule(
    code="BR018",
    name="client-bound",
    severity=Severity.WARNING,
    summary="the recording client itself was the bottleneck (its own lag or CPU)",
    check=check,
    doc=__doc__ or "",
)
