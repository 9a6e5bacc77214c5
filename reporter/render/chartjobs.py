"""The report's charts as jobs: what each makes, and how their charts take their places.

The report's charts are made in jobs (`chart_jobs`), each made by `charts.made` in the report
process or in a helper process (reporter.render.drawing), then put in the report's order
(`assembled`). This module imports no chart code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reporter.model import Verdict
    from reporter.render.common import Chart

#: A chart job: what to make (`SCALING`, `WALL_SPLIT`, `BANDWIDTH`, `RUN`) and, for a run's
#: chart, the index of its series in `verdict.series.runs`.
Job = tuple[str, int]
SCALING, WALL_SPLIT, BANDWIDTH, RUN = "scaling", "wall split", "bandwidth", "run"
#: What a job makes: its charts, in the report's order, and the notes it adds.
Made = tuple[list["Chart"], list[str]]


@dataclass
class Drawn:
    """The charts of one report, and what was left out or sampled."""

    overview: list[Chart] = field(default_factory=list)
    runs: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def chart_jobs(verdict: Verdict) -> list[Job]:
    """The report's charts as jobs, in the order the report shows them: the scaling charts,
    the wall-clock split, the bandwidth chart, then each run's timeline that has times."""
    return [(SCALING, 0), (WALL_SPLIT, 0), (BANDWIDTH, 0)] + [
        (RUN, k) for k, series in enumerate(verdict.series.runs) if series.timeline is not None
    ]


def assembled(verdict: Verdict, jobs: list[Job], made: list[Made]) -> Drawn:
    """The jobs' charts in the report's places, and their notes in the jobs' order."""
    from reporter.model import MAX_RUN_CHARTS

    drawn = Drawn()
    for (kind, _), (charts, notes) in zip(jobs, made, strict=True):
        (drawn.runs if kind == RUN else drawn.overview).extend(charts)
        drawn.notes.extend(notes)
    if verdict.series.runs_with_times > MAX_RUN_CHARTS:
        drawn.notes.append(
            f"timelines: {MAX_RUN_CHARTS} of {verdict.series.runs_with_times} runs drawn (in "
            "the order of the run table)"
        )
    return drawn
