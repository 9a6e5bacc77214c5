"""Vega-Lite specs as plain dicts, through the few altair calls the report's charts make.

The charts were written with altair, whose objects cost more than drawing them: importing it
and building a report's specs (deep copies, schema hashing, validation) took about a second
of CPU per report, every report. This module spells the same calls (`Chart(...).mark_bar(...)
.encode(...).properties(...)`, `layer`, `hconcat`, `X`, `Scale`, `Axis`, ...) and builds the
dict altair's `to_dict()` gives for them, key for key: inline data gathered under `datasets`
with altair's names, the `$schema` and altair's default view config at the top. A test builds
every chart of the report both ways and compares the dicts, so the two cannot drift apart.

Only what the charts use is here; an unknown keyword goes through as a Vega-Lite property,
as altair would pass it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: The Vega-Lite version altair 6 writes (its SCHEMA_URL); vl-convert compiles with it.
SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
#: altair's default theme, written at the top of every spec.
DEFAULT_CONFIG: dict[str, Any] = {"view": {"continuousWidth": 300, "continuousHeight": 300}}

_TYPES = {"Q": "quantitative", "N": "nominal", "O": "ordinal", "T": "temporal"}
#: Channels that take the type of their primary channel (altair writes no type for them).
_SECONDARY = {"x2", "y2", "latitude2", "longitude2", "theta2", "radius2"}


class _Props:
    """A schema object: its keyword arguments, None kept (it means null), in call order."""

    def __init__(self, **kwargs: Any) -> None:
        self.props = dict(kwargs)

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in self.props.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, TopLevel):
        return value._spec()
    if isinstance(value, _Props):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Scale(_Props):
    pass


class Axis(_Props):
    pass


class InlineData(_Props):
    def __init__(self, values: list[dict[str, Any]]) -> None:
        super().__init__(values=values)

    def to_dict(self) -> dict[str, Any]:
        return {"values": self.props["values"]}  # rows are plain JSON already: not copied


class Title(_Props):
    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(text=text, **kwargs)


class _Channel(_Props):
    """An encoding channel: a `field:T` shorthand and its properties."""

    name = ""

    def __init__(self, shorthand: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.shorthand = shorthand

    def to_dict(self) -> dict[str, Any]:
        return {**_field(self.shorthand, self.name), **super().to_dict()}


def _field(shorthand: str, channel: str) -> dict[str, Any]:
    """`field:Q` as altair reads it; the charts name every field with its type."""
    field, _, code = shorthand.rpartition(":")
    if not field or code not in _TYPES:
        raise ValueError(f"{shorthand!r}: expected field:T with T one of {', '.join(_TYPES)}")
    out: dict[str, Any] = {"field": field}
    if channel not in _SECONDARY:
        out["type"] = _TYPES[code]
    return out


class X(_Channel):
    name = "x"


class Y(_Channel):
    name = "y"


class Color(_Channel):
    name = "color"


class StrokeDash(_Channel):
    name = "strokeDash"


class Order(_Channel):
    name = "order"


class TopLevel:
    """A chart, layer or concatenation; `to_dict` gives the spec vl-convert draws."""

    def __init__(self, props: dict[str, Any]) -> None:
        self.props = props

    def _with(self, **kwargs: Any) -> Any:
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new.props = {**self.props, **kwargs}
        return new

    def properties(self, **kwargs: Any) -> Any:
        return self._with(**kwargs)

    def _spec(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in self.props.items()}

    def to_dict(self, validate: bool = False) -> dict[str, Any]:
        """The top-level spec: data moved to `datasets` under altair's names."""
        del validate  # nothing to validate: the test against altair is the check
        spec = self._spec()
        datasets: dict[str, Any] = {}
        _gather(spec, datasets)
        top: dict[str, Any] = {"$schema": SCHEMA_URL, "config": DEFAULT_CONFIG}
        if datasets:
            top["datasets"] = datasets
        return {**top, **spec}


def _gather(spec: dict[str, Any], datasets: dict[str, Any]) -> None:
    """Replace every inline `data` by a named dataset, as altair's consolidation does."""
    data = spec.get("data")
    if isinstance(data, dict) and "values" in data:
        name = _dataset_name(data["values"])
        datasets.setdefault(name, data["values"])
        spec["data"] = {"name": name}
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for sub in spec.get(key, ()):
            _gather(sub, datasets)


def _dataset_name(values: Any) -> str:
    if values == [{}]:
        return "empty"
    text = json.dumps(values, sort_keys=True, default=str)
    return "data-" + hashlib.sha256(text.encode()).hexdigest()[:32]


class Chart(TopLevel):
    def __init__(self, data: InlineData) -> None:
        super().__init__({"data": data})

    def _mark(self, kind: str, kwargs: dict[str, Any]) -> Chart:
        chart: Chart = self._with(mark={"type": kind, **kwargs})
        return chart

    def mark_bar(self, **kwargs: Any) -> Chart:
        return self._mark("bar", kwargs)

    def mark_line(self, **kwargs: Any) -> Chart:
        return self._mark("line", kwargs)

    def mark_point(self, **kwargs: Any) -> Chart:
        return self._mark("point", kwargs)

    def mark_text(self, **kwargs: Any) -> Chart:
        return self._mark("text", kwargs)

    def mark_tick(self, **kwargs: Any) -> Chart:
        return self._mark("tick", kwargs)

    def mark_rule(self, **kwargs: Any) -> Chart:
        return self._mark("rule", kwargs)

    def encode(self, **channels: Any) -> Chart:
        encoding = dict(self.props.get("encoding", {}))
        for name, value in channels.items():
            encoding[name] = _field(value, name) if isinstance(value, str) else value
        chart: Chart = self._with(encoding=encoding)
        return chart


class LayerChart(TopLevel):
    pass


class HConcatChart(TopLevel):
    def _resolve(self, kind: str, kwargs: dict[str, Any]) -> HConcatChart:
        resolve = dict(self.props.get("resolve", {}))
        resolve[kind] = {**resolve.get(kind, {}), **kwargs}
        chart: HConcatChart = self._with(resolve=resolve)
        return chart

    def resolve_scale(self, **kwargs: Any) -> HConcatChart:
        return self._resolve("scale", kwargs)

    def resolve_legend(self, **kwargs: Any) -> HConcatChart:
        return self._resolve("legend", kwargs)


def layer(*charts: TopLevel) -> LayerChart:
    return LayerChart({"layer": list(charts)})


def hconcat(*charts: TopLevel, **kwargs: Any) -> HConcatChart:
    return HConcatChart({"hconcat": list(charts), **kwargs})
