"""Constants shared by the tests of tests/embed."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A run id that tries everything: a second workflow command on a new line, property and
#: message separators, an already escaped newline, terminal escapes, bidi, markup, a formula.
HOSTILE_ID = (
    "=cmd|' /C calc'!A0 \r\n::error file=evil.py,line=1::pwned %0A a:b,c "
    "\x1b]0;title\x07\x1b[2J \u202egnp.exe <script>alert(1)</script> ]]> &amp;"
)
#: A group name that tries to close the chart's SVG and open a script.
HOSTILE_GROUP = "</svg><script>alert(2)</script>\u202e&lt;"
