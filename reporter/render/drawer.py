"""The process that draws charts for the report process (reporter.render.drawing starts it).

It reads one JSON job per line, `{"spec": ..., "config": ...}`, and writes one JSON answer
per line: `{"svg": ...}`, `{"error": ...}` (what vl-convert raised) or `{"declined": ...}` (a
chart it leaves to the report process, which draws it with the machine's fonts). The job
`{"fonts": null}` asks for the fontconfig file it draws with (`{"fonts": null}`: the
machine's). It imports
nothing of benchreport (whose import pulls pandas and pyarrow), only the standard library and
vl-convert: it runs as `python -P -c <this file's text>`.

Fonts. vega measures every text of a chart, several times, and vl-convert measures a text by
laying it out with the fonts it found at start: it opens and maps the font file again for
every glyph (about 3,000 times for a chart of 20 labels), and the kernel's work of mapping
and unmapping is about a third of the drawing's CPU. The process therefore draws with its
own copies of the two faces the charts name (DejaVu Sans and DejaVu Sans Bold, found by
fontconfig, `find_faces`), written for the run into a private directory that a fontconfig
file of its own names (`FONTCONFIG_FILE`, read by vl-convert when it loads its fonts):

- a file written in one piece is mapped with a third of the page faults of the machine's
  copy read from disk (Linux 6.18, ext4: the page cache holds it in larger pieces): the 22
  charts of the shipped traces took 1.44 s of CPU instead of 1.69 s in one engine (median of
  5, load 3 to 4.5 on 2 cores), and copying both faces costs about a millisecond. Where the
  page cache holds no larger pieces (tmpfs, older kernels) the copy is as fast as the
  original;
- vl-convert loads two faces at start instead of every font of the machine.

The SVG stays the same, byte for byte: the faces are copies of the very files vl-convert
would pick among the machine's fonts, and a chart is declined (drawn by the report process)
unless every character it may measure has a glyph in both faces and every text is set in
DejaVu Sans, upright, regular or bold (`Guard`). A glyph missing from the face would make
vl-convert fall back to another of the fonts it loaded, and those differ. When fontconfig
finds no DejaVu Sans, or two different files for a face, the process uses the machine's fonts
as the report process does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

#: The family the charts name first (reporter.render.charts.FONT).
FAMILY = "DejaVu Sans"
#: The faces the charts use, by fontconfig's weight: regular (80) and bold (200), both of
#: normal width (100) and upright (slant 0).
FACES = {"80": "regular", "200": "bold"}
#: Characters vega may write that no spec holds: printable ASCII (numbers, dates in English),
#: d3's minus sign and SI prefix micro, and the ellipsis of a label cut at its limit.
GENERATED = "".join(map(chr, range(0x20, 0x7F))) + "\u2212\u00b5\u2026"
#: Font properties of a spec or a config: `font`, `labelFont`, `titleFontWeight`, ...
_FONT_KEY = re.compile(
    r'"(font|[A-Za-z]*Font)(Weight|Style|Variant)?": ("(?:[^"\\]|\\.)*"|[^,}\]]*)'
)
#: A control character in a JSON string (json.dumps escapes them even without ensure_ascii).
_CONTROL = re.compile(r"\\([bfnrt]|u00[01])")
_WEIGHTS = {'"normal"', '"bold"', "400", "700", '"400"', '"700"'}


def find_faces(
    run: Any = subprocess.run,
) -> dict[str, Path] | None:
    """The files of DejaVu Sans regular and bold by fontconfig, the font configuration that
    vl-convert reads too; None when either is missing or two files that differ hold it."""
    try:
        listed = run(
            ["fc-list", "--format", "%{file}\t%{weight}\t%{width}\t%{slant}\n", FAMILY],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found: dict[str, list[Path]] = {name: [] for name in FACES.values()}
    for line in listed.splitlines():
        fields = line.split("\t")
        if len(fields) == 4 and fields[1] in FACES and fields[2:] == ["100", "0"]:
            found[FACES[fields[1]]].append(Path(fields[0]))
    faces = {}
    for name, files in found.items():
        if not files:
            return None
        try:
            if len(set(files)) > 1 and len({f.read_bytes() for f in set(files)}) > 1:
                return None  # which one vl-convert would pick is not known
        except OSError:
            return None
        faces[name] = files[0]
    return faces


def private_fonts(faces: dict[str, Path], fonts: dict[str, bytes], directory: Path) -> Path:
    """Copies of `faces` (`fonts`, their bytes) in `directory` and a fontconfig file that names
    only them. Each is written in one piece: the kernel then caches it in the largest pieces
    (a copy made with sendfile mapped a third slower)."""
    for name, face in faces.items():
        (directory / face.name).write_bytes(fonts[name])
    conf = directory / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?>\n<fontconfig><dir>{escape(str(directory))}</dir></fontconfig>\n',
        encoding="utf-8",
    )
    return conf


def characters(font: bytes) -> set[int] | None:
    """The characters `font` maps to a glyph in its Unicode cmap subtables (formats 4 and 12,
    the ones a TrueType font holds); a character that one subtable maps and another leaves
    without a glyph counts as missing. None for a font this reading cannot vouch for."""
    try:
        cmap = _table(font, b"cmap")
        version, count = struct.unpack_from(">HH", font, cmap)
        mapped: set[int] = set()
        unmapped: set[int] = set()
        for k in range(count):
            platform, encoding, offset = struct.unpack_from(">HHI", font, cmap + 4 + 8 * k)
            if not (platform == 0 or (platform == 3 and encoding in (1, 10))):
                continue  # not Unicode: the layout does not read it
            at = cmap + offset
            kind = struct.unpack_from(">H", font, at)[0]
            if kind == 4:
                _format4(font, at, mapped, unmapped)
            elif kind == 12:
                _format12(font, at, mapped, unmapped)
            elif kind != 14:  # 14: variation sequences, no characters of their own
                return None
    except (struct.error, KeyError):
        return None
    return mapped - unmapped if version == 0 else None


def _table(font: bytes, tag: bytes) -> int:
    tables = struct.unpack_from(">H", font, 4)[0]
    for k in range(tables):
        name, _, offset, _ = struct.unpack_from(">4sIII", font, 12 + 16 * k)
        if name == tag:
            return int(offset)
    raise KeyError(tag)


def _format4(font: bytes, at: int, mapped: set[int], unmapped: set[int]) -> None:
    segments = struct.unpack_from(">H", font, at + 6)[0] // 2
    ends = struct.unpack_from(f">{segments}H", font, at + 14)
    starts = struct.unpack_from(f">{segments}H", font, at + 16 + 2 * segments)
    deltas = struct.unpack_from(f">{segments}h", font, at + 16 + 4 * segments)
    range_at = at + 16 + 6 * segments
    ranges = struct.unpack_from(f">{segments}H", font, range_at)
    for k in range(segments):
        for c in range(starts[k], ends[k] + 1):
            if c == 0xFFFF:
                continue
            if ranges[k] == 0:
                glyph = (c + deltas[k]) & 0xFFFF
            else:
                where = range_at + 2 * k + ranges[k] + 2 * (c - starts[k])
                glyph = struct.unpack_from(">H", font, where)[0]
                glyph = (glyph + deltas[k]) & 0xFFFF if glyph else 0
            (mapped if glyph else unmapped).add(c)


def _format12(font: bytes, at: int, mapped: set[int], unmapped: set[int]) -> None:
    groups = struct.unpack_from(">I", font, at + 12)[0]
    for k in range(groups):
        first, last, glyph = struct.unpack_from(">III", font, at + 16 + 12 * k)
        if glyph == 0:  # the group's first character has no glyph, the next ones have
            unmapped.add(first)
            first += 1
        mapped.update(range(first, last + 1))


class Guard:
    """Which charts the private faces draw exactly as the machine's fonts would."""

    def __init__(self, fonts: dict[str, bytes]) -> None:
        shared: set[int] | None = None
        for name, font in fonts.items():
            chars = characters(font)
            if chars is None:
                raise ValueError(f"cannot read the characters of {FAMILY} {name}")
            shared = chars if shared is None else shared & chars
        self.characters = frozenset(map(chr, shared or ()))
        missing = set(GENERATED) - self.characters
        if missing:
            raise ValueError(f"{FAMILY} has no glyph for {sorted(missing)!r}")

    def declines(self, spec: Any, config: Any) -> str | None:
        """Why the private faces might not draw this chart as the machine's fonts would
        (it is then drawn by the report process); None when they draw it the same."""
        text = json.dumps([spec, config], ensure_ascii=False)
        if not isinstance(config, dict) or not _in_family(json.dumps(config.get("font"))):
            return f"the config sets no {FAMILY}"
        if _CONTROL.search(text):
            return "a control character"
        outside = set(text) - self.characters
        if outside:
            return f"characters without a glyph in {FAMILY}: {sorted(outside)[:5]!r}"
        for key in _FONT_KEY.finditer(text):
            kind, value = key.group(2), key.group(3).strip()
            ok = (
                _in_family(value)
                if kind is None
                else value in _WEIGHTS
                if kind == "Weight"
                else value == '"normal"'
            )
            if not ok:
                return f"{key.group(1)}{kind or ''} {value}"
        return None


def _in_family(value: str) -> bool:
    """Whether a JSON value is a CSS font list that starts with `FAMILY`."""
    try:
        fonts = json.loads(value)
    except ValueError:
        return False
    return isinstance(fonts, str) and fonts.split(",")[0].strip(" '\"") == FAMILY


def main() -> None:
    guard, directory, conf = None, None, None
    faces = find_faces()
    if faces is not None:
        try:
            fonts = {name: face.read_bytes() for name, face in faces.items()}
            guard = Guard(fonts)
            directory = Path(tempfile.mkdtemp(prefix="benchreport-fonts-"))
            conf = private_fonts(faces, fonts, directory)
            os.environ["FONTCONFIG_FILE"] = str(conf)
        except (OSError, ValueError):
            guard, conf = None, None
    try:
        import vl_convert as vlc

        vlc.vegalite_to_svg({"mark": "point"})
        for line in sys.stdin:
            job = json.loads(line)
            answer: dict[str, str | None]
            if "fonts" in job:
                answer = {"fonts": None if conf is None else str(conf)}
            elif guard is not None and (reason := guard.declines(job["spec"], job["config"])):
                answer = {"declined": reason}
            else:
                try:
                    answer = {
                        "svg": vlc.vegalite_to_svg(
                            job["spec"], config=job["config"], allowed_base_urls=[]
                        )
                    }
                except Exception as exc:
                    answer = {"error": str(exc)}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
