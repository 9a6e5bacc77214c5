"""The bandwidth arithmetic of METHOD.md §6: bytes read per token, the honest denominator.

Decode reads the active weights once per token, so `tok/s × bytes per token` is the memory
bandwidth a decode rate needs, and its ratio to the bandwidth the machine really delivers at
the model's working-set size is the utilization. Units: bytes, and GB = 1e9 bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from reporter.values import number

GIB = 1 << 30

#: Nominal bits per weight by quantization name (block scales add a little: the estimate is a
#: lower bound on the bytes read, so a utilization from it is a lower bound too).
_BITS: tuple[tuple[re.Pattern[str], float], ...] = tuple(
    (re.compile(p, re.I), b)
    for p, b in (
        (r"(^|[^a-z0-9])(fp|f|bf)32($|[^0-9])", 32.0),
        (r"(^|[^a-z0-9])(fp|f|bf)16($|[^0-9])|half|bfloat16|float16", 16.0),
        (r"fp8|int8|(^|[^a-z0-9])i?q8|w8a(8|16)|8[ -]?bit|e4m3|e5m2", 8.0),
        (r"(^|[^a-z0-9])i?q6|6[ -]?bit", 6.0),
        (r"(^|[^a-z0-9])i?q5|5[ -]?bit", 5.0),
        (r"mxfp4|nvfp4|fp4|int4|(^|[^a-z0-9])i?q4|w4a(8|16)|4[ -]?bit|awq|gptq|nf4|mlx-?4", 4.0),
        (r"(^|[^a-z0-9])i?q3|3[ -]?bit", 3.0),
        (r"(^|[^a-z0-9])i?q2|2[ -]?bit", 2.0),
        (r"(^|[^a-z0-9])i?q1|1\.58|ternary|1[ -]?bit", 1.58),
    )
)

#: Names that show a mixture-of-experts model: "35B-A3B", "8x7B", "MoE", families known to be
#: (and llama.cpp's architecture names of them: `deepseek2` is DeepSeek-V2/V3/R1, `dots1`
#: dots.llm1).
_MOE_NAME = re.compile(
    r"\d+(\.\d+)?\s*[bBmM][-_ ]?[aA]\d+(\.\d+)?\s*[bBmM]|\d+x\d+(\.\d+)?[bB]|moe|mixtral|"
    r"deepseek-?(v[23]|r1)|\bdeepseek2\b|\bdots1\b|gpt-oss|qwen\d?(\.\d)?-?next|dbrx|arctic|jamba|"
    r"grok|kimi|glm-?4\.5|llama-?4|minimax|hunyuan-a|ernie-4\.5-.*a\d",
    re.I,
)


def bits_of(quant: str | None) -> float | None:
    """Nominal bits per weight of a quantization name ("Q4_K_M", "4bit", "fp8"), or None."""
    if not quant:
        return None
    for pattern, bits in _BITS:
        if pattern.search(quant):
            return bits
    return None


@dataclass
class BytesPerToken:
    """Bytes read per decoded token, and where the figure came from."""

    value: float | None
    source: str
    #: Set when the figure cannot be had: the reason, naming the missing field.
    missing: str | None = None
    #: True when the model is a mixture of experts and no active-parameter bytes are known.
    moe_unknown: bool = False
    arithmetic: list[str] = field(default_factory=list)


def is_moe(run: pd.Series | dict[str, Any]) -> tuple[bool, str]:
    """Whether the run's model is a mixture of experts, and what shows it."""
    total, active = number(run.get("params_total")), number(run.get("params_active"))
    if total is not None and active is not None and active < 0.9 * total:
        return True, f"{_params(active)} active of {_params(total)} parameters"
    name = str(run.get("model_name") or "")
    m = _MOE_NAME.search(name)
    if m and "distill" not in name.lower():  # "DeepSeek-R1-Distill-Qwen-7B" is dense
        return True, f"the model name {name!r} ({m.group(0)})"
    return False, ""


def bytes_per_token(run: pd.Series | dict[str, Any]) -> BytesPerToken:
    """`model.bytes_per_token` if given, else active parameters × bits of the quantization."""
    given = number(run.get("bytes_per_token"))
    if given is not None and given > 0:
        return BytesPerToken(
            given,
            "model.bytes_per_token",
            arithmetic=[f"bytes per token: {gb(given)} GB (model.bytes_per_token)"],
        )
    moe, why = is_moe(run)
    active = number(run.get("params_active"))
    total = number(run.get("params_total"))
    assumed_dense = False
    if active is None:
        if moe:
            return BytesPerToken(
                None,
                "",
                moe_unknown=True,
                missing=f"a mixture-of-experts model ({why}) without model.bytes_per_token or "
                "model.params_active: the total parameters overstate the bytes read per "
                "token by the ratio of total to active experts",
            )
        if total is None:
            return BytesPerToken(
                None,
                "",
                missing="no model.bytes_per_token, and no "
                "model.params_active × model.quant to estimate it from",
            )
        active, assumed_dense = total, True
    quant = run.get("quant")
    bits = bits_of(str(quant) if quant else None)
    if bits is None:
        return BytesPerToken(
            None,
            "",
            missing=f"no model.bytes_per_token, and the quantization "
            f"({quant!r}) gives no bits per weight: set model.quant or "
            "model.bytes_per_token",
        )
    value = active * bits / 8
    which = (
        "total (dense model assumed: no params_active, no experts in the name)"
        if assumed_dense
        else "active"
    )
    source = (
        f"estimated: {_params(active)} {which.split(' ')[0]} parameters × {bits:g} bits "
        f"({quant}) ÷ 8"
    )
    arithmetic = [
        f"bytes per token ≈ {_params(active)} {which} parameters × {bits:g} bits ({quant}) ÷ 8 "
        f"= {gb(value)} GB (nominal bits: block scales and unquantized layers add some, so this "
        "is a lower bound)"
    ]
    return BytesPerToken(value, source, arithmetic=arithmetic)


@dataclass
class Denominator:
    """The bandwidth a decode rate is measured against: a range in GB/s and its origin."""

    low: float
    high: float
    source: str
    nominal: bool = False
    arithmetic: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    note: str = ""
    #: How the range reads in a sentence: "measured at the 21 GiB working set".
    phrase: str = ""


def _probe_gbps(row: pd.Series) -> float | None:
    value = number(row["value"])
    if value is None:
        return None
    unit = str(row["unit"] or "GB/s").strip().lower()
    scale = {
        "gb/s": 1.0,
        "gib/s": GIB / 1e9,
        "mb/s": 1e-3,
        "mib/s": (1 << 20) / 1e9,
        "tb/s": 1e3,
        "b/s": 1e-9,
        "bytes/s": 1e-9,
    }.get(unit)
    return None if scale is None else value * scale


def denominator(
    run: pd.Series | dict[str, Any],
    probes: pd.DataFrame,
    run_files: frozenset[str] | None = None,
) -> Denominator | None:
    """The measured bandwidth at the model's working-set size, honest about its spread.

    Bandwidth probes (`probe` records, what = bandwidth) of this run or of no run (a probe of
    no run measured the machine of its own file's runs: with `run_files`, the files that hold
    runs, it serves the runs of its file, or every run when its file holds none): when one
    probe's buffer equals the working set, its value; otherwise the two probes around the
    working set, or the two nearest below it when the working set is larger than every probe
    (bandwidth falls with buffer size, so the figure at the working set is at most the larger
    buffer's). Without probes, `hardware.bandwidth_measured_gbps`; without that, the nominal
    figure, flagged as nominal.
    """
    run_id = str(run.get("run"))
    ws = number(run.get("working_set_bytes"))
    rows = []
    if len(probes):
        sel = probes[
            (probes["what"] == "bandwidth")
            & (probes["run"].isna() | (probes["run"].astype(str) == run_id))
        ]
        if run_files is not None:
            path = sel["source_path"].astype(str)
            own = path == str(run.get("source_path"))
            sel = sel[sel["run"].notna() | own | ~path.isin(run_files)]
        for _, row in sel.iterrows():
            value = _probe_gbps(row)
            size = number(row["buffer_bytes"])
            if value is not None and value > 0:
                ref = (
                    f"{row['source_path']}:{int(row['source_line'])}"
                    if number(row["source_line"]) is not None
                    else str(row["source_path"])
                )
                rows.append((size, value, ref))
    sized = sorted(((s, v, r) for s, v, r in rows if s is not None), key=lambda r: r[0])
    if sized:
        listing = ", ".join(f"{size_text(s)} {v:,.0f}" for s, v, _ in sized)
        lines = [f"read-stream probes (buffer GB/s): {listing}"]
        if ws is None:
            values = [v for _, v, _ in sized]
            return Denominator(
                min(values),
                max(values),
                "bandwidth probes, working set unknown",
                arithmetic=[
                    *lines,
                    "working set unknown (model.working_set_bytes): "
                    f"the whole probed range {min(values):,.0f}–"
                    f"{max(values):,.0f} GB/s",
                ],
                refs=[r for _, _, r in sized][:4],
                note="the working set is not given, so the range spans every probe",
                phrase="measured by the probes (working set unknown)",
            )
        exact = [r for r in sized if r[0] == ws]
        below = [r for r in sized if r[0] < ws]
        above = [r for r in sized if r[0] > ws]
        note = ""
        if exact:
            pick = exact[:1]
        elif below and above:
            pick = [below[-1], above[0]]
        elif below:
            pick = below[-2:]
            note = (
                f"the working set ({size_text(ws)}) is larger than the largest probe "
                f"({size_text(below[-1][0])}): the bandwidth there is likely at or below "
                f"{below[-1][1]:,.0f} GB/s, so the utilization may be higher still"
            )
        else:
            pick = above[:2]
        values = [v for _, v, _ in pick]
        lo, hi = min(values), max(values)
        which = " and ".join(f"{size_text(s)}" for s, _, _ in pick)
        lines.append(
            f"working set {size_text(ws)} (model.working_set_bytes): the probes at "
            f"{which} give {lo:,.0f}–{hi:,.0f} GB/s"
            if lo != hi
            else f"working set {size_text(ws)}: the probe at {which} gives {lo:,.0f} GB/s"
        )
        return Denominator(
            lo,
            hi,
            f"read-stream probes at {which}",
            arithmetic=lines,
            refs=[r for _, _, r in pick],
            note=note,
            phrase=f"measured at the {size_text(ws)} working set (probes at {which})",
        )
    if rows:
        values = [v for _, v, _ in rows]
        return Denominator(
            min(values),
            max(values),
            "bandwidth probes (buffer size not given)",
            arithmetic=[
                f"bandwidth probes without buffer sizes: "
                f"{', '.join(f'{v:,.0f}' for v in values)} GB/s"
            ],
            refs=[r for _, _, r in rows][:4],
            note="the probes do not say their buffer size",
            phrase="measured by the probes (buffer sizes unknown)",
        )
    measured = number(run.get("bandwidth_measured_gbps"))
    if measured is not None and measured > 0:
        return Denominator(
            measured,
            measured,
            "measured (hardware.bandwidth_measured_gbps)",
            arithmetic=[
                f"measured bandwidth {measured:,.0f} GB/s "
                "(hardware.bandwidth_measured_gbps; buffer size not "
                "stated)"
            ],
            phrase="measured (hardware.bandwidth_measured_gbps, buffer size not stated)",
        )
    nominal = number(run.get("bandwidth_nominal_gbps"))
    if nominal is not None and nominal > 0:
        return Denominator(
            nominal,
            nominal,
            "nominal (hardware.bandwidth_nominal_gbps)",
            nominal=True,
            arithmetic=[
                f"nominal bandwidth {nominal:,.0f} GB/s "
                "(hardware.bandwidth_nominal_gbps): the data-sheet "
                "figure, not what a read stream reaches"
            ],
            phrase="nominal (hardware.bandwidth_nominal_gbps)",
        )
    return None


def gb(value: float) -> str:
    """Bytes as GB (1e9) with three decimals: 1.849."""
    return f"{value / 1e9:,.3f}"


def size_text(value: float | None) -> str:
    """A buffer size as GiB or MiB: "21 GiB", "256 MiB"."""
    if value is None:
        return "?"
    if value >= GIB:
        n = value / GIB
        return f"{n:,.0f} GiB" if abs(n - round(n)) < 0.05 else f"{n:,.1f} GiB"
    return f"{value / (1 << 20):,.0f} MiB"


def _params(value: float) -> str:
    return f"{value / 1e9:,.3g}B"
