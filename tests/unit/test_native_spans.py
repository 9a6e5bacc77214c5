"""native._parse_segments parses two spans of request lines at once: the table is the spans'
tables joined in the spans' order, ids cast to strings span by span; a span pyarrow cannot
parse makes the whole None (the file is then read line by line)."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pyarrow.json as pj

from reporter.adapters.native import _parse_segments


def _file(spans: list[list[dict[str, object]]]) -> tuple[bytes, list[tuple[int, int]]]:
    data, places = b"", []
    for i, records in enumerate(spans):
        data += orjson.dumps({"kind": "run", "id": f"r{i}"}) + b"\n"
        body = b"\n".join(orjson.dumps(r) for r in records)
        places.append((len(data), len(data) + len(body)))
        data += body + b"\n"
    return data, places


def _request(run: int, i: int, rid: object) -> dict[str, object]:
    return {"kind": "request", "run": f"r{run}", "id": rid, "t_send": 0.5 * i, "t_end": i + 1.0}


def test_spans_parsed_two_at_once_are_the_spans_in_order() -> None:
    spans = [[_request(s, i, i if s % 2 else f"q{i}") for i in range(s * 3 + 1)] for s in range(7)]
    data, places = _file(spans)
    got = _parse_segments(data, places)
    assert got is not None
    assert got.column("run").to_pylist() == [r["run"] for span in spans for r in span]
    assert got.column("id").to_pylist() == [str(r["id"]) for span in spans for r in span]
    assert got.column("t_send").to_pylist() == [r["t_send"] for span in spans for r in span]
    one = pj.read_json(pa.BufferReader(data[places[2][0] : places[2][1]]))
    before = len(spans[0]) + len(spans[1])
    assert got.slice(before, len(one)).column("t_end").equals(one.column("t_end"))


def test_a_span_pyarrow_cannot_parse_makes_none() -> None:
    spans = [[_request(s, i, f"q{i}") for i in range(5)] for s in range(6)]
    data, places = _file(spans)
    a = places[4][0]
    broken = data[:a] + b"{oops" + data[a + 5 :]
    assert _parse_segments(broken, places) is None
    assert _parse_segments(data, places) is not None
