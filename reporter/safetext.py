"""Text from a trace, a path or a server, made safe to print on a terminal.

A trace string can hold escape sequences (clear the screen, set the window title, write the
clipboard with OSC 52, open an OSC 8 hyperlink), C1 controls that some terminals obey, and
bidi overrides or isolates that reorder the text around them. `visible()` turns every such
character into a backslash escape (`\\x1b`, `\\u202e`) so the reader sees it instead of the
terminal acting on it; `clip()` cuts long strings first so that escaping stays cheap.
Everything the command line prints goes through `echo()`.
"""

from __future__ import annotations

import re

import click

#: Longest trace string printed in full; longer ones are cut and say how long they were.
MAX_TEXT = 1000

# Every character of Unicode categories Cc (C0, DEL, C1), Cf (format: bidi marks, embeddings,
# overrides and isolates, zero width, tag characters), Zl, Zp (line and paragraph separators)
# and Cs (lone surrogates, which cannot even be encoded for output). Newline and tab are kept
# by `visible(..., layout=True)`, where they are the layout of a block of text.
UNSAFE_ABOVE_C0 = (
    "\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE = re.compile(f"[\x00-\x1f{UNSAFE_ABOVE_C0}]")
_UNSAFE_BUT_LAYOUT = re.compile(f"[\x00-\x08\x0b-\x1f{UNSAFE_ABOVE_C0}]")
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    char = m.group(0)
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """`text` cut to `limit` characters, with a visible "…(N chars)" marker when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text):,} chars)"


def visible(value: object, *, layout: bool = False, limit: int | None = MAX_TEXT) -> str:
    """`value` as text whose control, format and bidi characters are shown as escapes.

    `layout=True` keeps newlines and tabs (for a block of text this program laid out);
    otherwise they are escaped too, so one value stays on one line. The text is cut to
    `limit` characters before escaping (None: not cut).
    """
    text = value if isinstance(value, str) else str(value)
    if limit is not None:
        text = clip(text, limit)
    pattern = _UNSAFE_BUT_LAYOUT if layout else _UNSAFE
    return pattern.sub(_escape, text)


def _json_escape(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_visible(text: str) -> str:
    """JSON text with the same characters written as `\\uXXXX` escapes: the same value.

    Inside JSON strings, C0 controls are already escaped; what remains unsafe (DEL, C1, bidi,
    format characters) becomes an escape that any JSON reader turns back into the character.
    """
    return _UNSAFE_BUT_LAYOUT.sub(_json_escape, text)


def echo_json(text: str, *, nl: bool = True) -> None:
    """Print JSON text on stdout with terminal-unsafe characters as JSON escapes."""
    click.echo(json_visible(text), nl=nl)


def echo(text: str, *, err: bool = False, nl: bool = True, layout: bool = True) -> None:
    """Print `text` (made `visible`, never cut) on stdout, or stderr with `err`."""
    click.echo(visible(text, layout=layout, limit=None), err=err, nl=nl)
