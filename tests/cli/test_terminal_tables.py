"""The terminal tables (reporter.terminal): trace strings as text never as markup, the shared
escaping of invisible characters, NO_COLOR, and a fixed width off a terminal."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter import api, terminal
from reporter.cli import main
from reporter.render.text import render_text, summary
from reporter.terminal import Column

#: Ids that rich would read as markup (bold, a hyperlink to a local file) were they markup.
HOSTILE_IDS = ("[bold]x[/]", "[link=file:///etc/passwd]y[/]", "[red]z", "a\u202eb\x1b[2Jc")
ESC = "\x1b"


class Tty(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _trace(tmp_path: Path, ids: tuple[str, ...] = HOSTILE_IDS) -> Path:
    lines = []
    for run in ids:
        workload = {"concurrency": 2, "output_tokens": 4, "stop": "forced"}
        lines.append({"kind": "run", "schema": "benchreport/1", "id": run, "workload": workload})
        lines += [{"kind": "request", "run": run, "id": k, "t_send": 0, "t_first": 0.1,
                   "t_end": 1, "output_tokens": 4} for k in (1, 2)]  # fmt: skip
    trace = tmp_path / "hostile-ids.jsonl"
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return trace


def _rows(text: str) -> list[str]:
    """The rows of the run table: after "runs", its header and rule, up to the blank line."""
    lines = text.splitlines()
    start = lines.index("runs") + 3
    return lines[start : lines.index("", start)]


def test_run_ids_that_look_like_markup_print_literally(tmp_path: Path) -> None:
    verdict = api.audit([_trace(tmp_path)])
    text = render_text(verdict)
    rows = _rows(text)
    assert len(rows) == len(HOSTILE_IDS)
    for run in ("[bold]x[/]", "[link=file:///etc/passwd]y[/]", "[red]z"):
        assert any(row.lstrip().startswith(run + " ") for row in rows), run
    # the invisible characters are shown as the shared escapes, never sent
    assert "a\\u202eb\\x1b[2Jc" in text
    assert ESC not in text and "\u202e" not in text


def test_on_a_terminal_markup_lookalikes_stay_text(tmp_path: Path) -> None:
    """Styled output (a terminal without NO_COLOR) still shows the ids as typed: no OSC 8
    hyperlink, no bold or red from the id, only the program's own styles."""
    verdict = api.audit([_trace(tmp_path)])
    buffer = Tty()
    out = terminal.console(buffer, force_terminal=True)
    assert out.color_system is not None
    for r in summary(verdict):
        out.print(r)
    styled = buffer.getvalue()
    assert ESC in styled  # the program's own colours are there
    assert "\x1b]8;" not in styled  # no hyperlink
    plain = re.sub(r"\x1b\[[0-9;]*m", "", styled)
    assert "[link=file:///etc/passwd]y[/]" in plain and "[bold]x[/]" in plain
    assert "[red]z" in plain and "a\\u202eb\\x1b[2Jc" in plain
    assert ESC not in plain  # every escape was a colour of ours (SGR), none from the trace


def test_no_color_means_no_escape_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = api.audit([_trace(tmp_path)])
    monkeypatch.setenv("NO_COLOR", "1")
    buffer = Tty()
    out = terminal.console(buffer, force_terminal=True)
    assert out.is_terminal and out.color_system is None
    for r in summary(verdict):
        out.print(r)
    assert ESC not in buffer.getvalue()
    assert "[bold]x[/]" in buffer.getvalue()


def test_show_styles_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    table = terminal.table([Column("run"), Column("verdict")], [("r", terminal.text("x", "red"))])
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = Tty()
    monkeypatch.setattr("sys.stdout", tty)
    terminal.show([table])
    assert ESC in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "yes")
    tty = Tty()
    monkeypatch.setattr("sys.stdout", tty)
    terminal.show([table])
    assert ESC not in tty.getvalue() and "verdict" in tty.getvalue()


def test_off_a_terminal_the_width_is_fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe gets WIDTH columns, whatever COLUMNS says: piped output does not depend on the
    terminal that launched it."""
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = terminal.console(io.StringIO())
    assert not out.is_terminal and out.width == terminal.WIDTH and out.color_system is None
    words = " ".join(["word"] * 30)  # 149 characters: wraps at 40 columns, not at WIDTH
    text = terminal.plain([terminal.table([Column("a"), Column("b", wrap=True)], [("1", words)])])
    assert len(text.splitlines()) == 3  # header, rule, one row
    assert text.isascii()  # the rule under the header is ASCII, no box-drawing characters


def test_a_long_run_id_is_cut_in_the_table_and_the_row_stays_one_line(tmp_path: Path) -> None:
    long_id = "run-" + "x" * 200
    verdict = api.audit([_trace(tmp_path, (long_id,))])
    rows = _rows(render_text(verdict))
    assert len(rows) == 1 and "…" in rows[0] and rows[0].rstrip().endswith("supported")


def test_the_audit_command_prints_plain_tables_when_piped(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["audit", "--no-html", str(_trace(tmp_path))], color=True)
    assert ESC not in result.stdout
    assert "[link=file:///etc/passwd]y[/]" in result.stdout


def test_the_rule_listing_is_one_line_per_rule() -> None:
    result = CliRunner().invoke(main, ["rules"], color=True)
    assert result.exit_code == 0 and ESC not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["code", "name", "severity", "status", "checks"]
    br003 = [line for line in lines if line.startswith("BR003 ")]
    assert len(br003) == 1 and "serial-completion-ladder" in br003[0] and "error" in br003[0]


def test_the_threshold_listing_is_one_line_per_threshold() -> None:
    from reporter import rulebook

    result = CliRunner().invoke(main, ["rules", "--thresholds"], color=True)
    assert result.exit_code == 0 and ESC not in result.stdout
    for e in rulebook.thresholds():
        (row,) = [line for line in result.stdout.splitlines() if line.startswith(e.name + " ")]
        assert e.reason in row


def test_a_narrow_terminal_never_cuts_a_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 40 columns the run table keeps every figure whole (the line is longer than the
    terminal instead); only free text wraps."""
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Tty()
    monkeypatch.setattr("sys.stdout", tty)
    figures = ("1,234,567.8", "22.50", "supported")
    terminal.show([terminal.table([Column("run"), *(Column(f) for f in "abc")], [("r", *figures)])])
    (row,) = [line for line in tty.getvalue().splitlines() if line.startswith("r ")]
    assert row.split() == ["r", *figures]
    assert "…" not in tty.getvalue()


@pytest.mark.parametrize("env", ["FORCE_COLOR", "TTY_COMPATIBLE"])
def test_a_pipe_stays_plain_whatever_the_environment_forces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    """Only a terminal (isatty) gets escapes: FORCE_COLOR or TTY_COMPATIBLE, which rich
    would obey, do not put them into a file or a pipe."""
    monkeypatch.setenv(env, "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = terminal.console(io.StringIO())
    assert not out.is_terminal and out.color_system is None and out.width == terminal.WIDTH
    result = CliRunner().invoke(main, ["audit", "--no-html", str(_trace(tmp_path))], color=True)
    assert ESC not in result.stdout and "[bold]x[/]" in result.stdout


def test_a_group_of_repeats_at_one_n_is_not_labelled_a_sweep_axis() -> None:
    from tests.conftest import TRACES

    text = render_text(api.audit([TRACES / "case-b-repeats.jsonl"]))
    assert "  case-b-code-n1-repeats [all at N=1]: named by the file" in text
    ladder = render_text(api.audit([TRACES / "case-a-ladder.jsonl"]))
    assert "[concurrency]" in ladder  # a sweep over N keeps its axis
