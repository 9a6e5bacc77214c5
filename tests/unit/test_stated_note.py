"""The aggregate a file states beside total ÷ wall: the note never prints a non-finite ratio."""

from __future__ import annotations

from reporter.stated import Stated, difference


def test_a_ratio_beyond_floating_point_is_said_in_words_not_as_inf() -> None:
    # 1e308 tok/s stated against 4e-297 recomputed: the ratio overflows and printed "inf×"
    note = difference(Stated(1e308, "output_throughput", None), 4e-297, "total ÷ wall", 0.02)
    assert note is not None
    assert "inf" not in note and "nan" not in note
    assert "output_throughput" in note


def test_an_ordinary_gap_keeps_its_ratio() -> None:
    note = difference(Stated(50.0, None, None), 100.0, "total ÷ wall", 0.02)
    assert note == "the file states 50.00 tok/s, 0.50× total ÷ wall (100.0)"
