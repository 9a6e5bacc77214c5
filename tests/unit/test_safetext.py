"""reporter.safetext: what reaches a terminal shows its control and bidi characters."""

from __future__ import annotations

import json
import sys
import unicodedata

from reporter.safetext import clip, json_visible, visible

UNSAFE_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")


def test_every_control_format_and_separator_character_is_escaped() -> None:
    missed = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in UNSAFE_CATEGORIES and visible(chr(code)) == chr(code)
    ]
    assert missed == []


def test_escapes_name_the_character() -> None:
    text = "r\x1b]52;c;cHduZWQ=\x07\x9b2J\u202e\u2066\u200e\u061c\x7f\U000e0041\ud800"
    assert visible(text) == (
        "r\\x1b]52;c;cHduZWQ=\\x07\\x9b2J\\u202e\\u2066\\u200e\\u061c\\x7f\\U000e0041\\ud800"
    )


def test_layout_keeps_newlines_and_tabs_only_when_asked() -> None:
    assert visible("a\n\tb\r") == "a\\n\\tb\\r"
    assert visible("a\n\tb\r\x1b", layout=True) == "a\n\tb\\r\\x1b"


def test_printable_text_is_unchanged() -> None:
    text = "run n=8 ÷ 22.5 s → 91 tok/s, 中文, émoji 🙂, ‘quotes’"
    assert visible(text) == text


def test_long_strings_are_cut_before_escaping_and_say_how_long_they_were() -> None:
    text = "\u202e" * (1 << 20)
    out = visible(text, limit=10)
    assert out == "\\u202e" * 10 + "…(1,048,576 chars)"
    assert clip("short", 10) == "short"


def test_json_stays_the_same_value() -> None:
    value = {"id": "x\x1b[2J\x9b\u202e\U000e0041", "n": [1, 2]}
    text = json.dumps(value, ensure_ascii=False, indent=2)
    safe = json_visible(text)
    assert json.loads(safe) == value
    assert visible(safe, layout=True) == safe  # nothing left for a terminal to act on


def test_report_and_terminal_hide_the_same_characters() -> None:
    # every control, format and separator character of Unicode: the terminal escapes it and
    # the report shows it as <U+XXXX>, one set for both (tab and line breaks become a space)
    import sys
    import unicodedata

    from reporter.render.common import shown

    risky = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp")
    ]
    for char in risky:
        text = f"a{char}b"
        assert char not in visible(text), f"U+{ord(char):04X} raw on the terminal"
        if char in "\t\n\r":
            assert shown(text) == "a b"
        else:
            assert shown(text) == f"a<U+{ord(char):04X}>b", f"U+{ord(char):04X} raw in the report"
