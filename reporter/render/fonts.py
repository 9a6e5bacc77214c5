"""Smaller copies of the charts' font for the helper processes that draw them.

vega measures every text of a chart, several times, and vl-convert measures a text by laying
it out with the fonts it found when its engine started: it opens and maps the font file again
for every glyph it measures (about a thousand times a chart), and the kernel's share of
that (mapping and unmapping, page faults) is about a third of a chart's CPU. DejaVu Sans, the
font the charts name first, is a 740 kB file; a subset holding only `CHARACTERS` is a tenth
of that, and the 22 charts of the shipped traces take about a fifth less CPU with it.

`private_fonts()` makes the subsets of the machine's DejaVu Sans regular and bold (the only
faces the charts use, found by fontconfig, which vl-convert reads too), once, in the user's
cache, with a fontconfig file that names only them; a helper points `FONTCONFIG_FILE` at it
before its engine starts. A subset keeps every glyph, advance, kerning pair and ligature of
its characters, so a text of those characters measures exactly as with the whole font; the
SVG is the same, byte for byte. `Coverage.declines` tells which specs hold anything else (a
character outside the subsets, another font, an italic or a weight other than regular and
bold): vl-convert would fall back to another of the machine's fonts for it, which the helper
does not have, so such a chart is left to the report process, which draws with the machine's
fonts.

Whenever anything is missing (no fontconfig, no DejaVu Sans, two different files for one
face, fontTools, a cache that cannot be written), `private_fonts()` says None and the helper
draws with the machine's fonts, as the report process does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

#: The family the charts name first (reporter.render.charts.FONT).
FAMILY = "DejaVu Sans"
#: The faces the charts use, by fontconfig's weight: regular (80) and bold (200), both of
#: normal width (100) and upright (slant 0).
FACES = {"80": "regular", "200": "bold"}
#: What the subsets hold (those of them that both faces have): printable ASCII, Latin-1 and
#: Latin Extended-A, and the punctuation and signs the report writes (d3's minus sign, the
#: ellipsis of a label cut at its limit, arrows, ≤ ≥ ≈ × ÷ ∞ µ Δ σ).
CHARACTERS = "".join(
    [
        *map(chr, range(0x20, 0x7F)),
        *map(chr, range(0xA0, 0x100)),
        "\u2010\u2011\u2012\u2013\u2014\u2018\u2019\u201c\u201d\u2022\u2026\u2030\u2032\u2033",
        "\u2190\u2191\u2192\u2193\u2212\u2248\u2260\u2264\u2265\u221e\u0394\u03bc\u03c3",
    ]
)
#: Named in the cache's folder: a change of how the subsets are made makes new ones.
RECIPE = "3"
#: Font properties of a spec or a config: `font`, `labelFont`, `titleFontWeight`, ...
_FONT_KEY = re.compile(
    r'"(font|[A-Za-z]*Font)(Weight|Style|Variant)?": ("(?:[^"\\]|\\.)*"|[^,}\]]*)'
)
_WEIGHTS = {'"normal"', '"bold"', "400", "700", '"400"', '"700"'}
#: A control character in a JSON string (json.dumps escapes them even without ensure_ascii).
_CONTROL = re.compile(r"\\([bfnrt]|u00[01])")


@dataclass(frozen=True)
class Coverage:
    """What the private faces draw exactly as the machine's fonts would."""

    characters: frozenset[str]

    def declines(self, spec: Any, config: Any) -> str | None:
        """Why the private faces might not draw this chart as the machine's fonts would (it
        is then drawn with the machine's fonts); None when they draw it the same."""
        text = json.dumps([spec, config], ensure_ascii=False)
        if not isinstance(config, dict) or not _in_family(json.dumps(config.get("font"))):
            return f"the config sets no {FAMILY}"
        if _CONTROL.search(text):
            return "a control character"
        outside = set(text) - self.characters
        if outside:
            return f"characters the subsets do not hold: {sorted(outside)[:5]!r}"
        for key in _FONT_KEY.finditer(text):
            kind, value = key.group(2), key.group(3).strip()
            if kind is None:
                ok = _in_family(value)
            elif kind == "Weight":
                ok = value in _WEIGHTS
            else:
                ok = value == '"normal"'
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


def find_faces() -> dict[str, Path] | None:
    """The files of DejaVu Sans regular and bold by fontconfig; None when either is missing
    or two files that differ hold it (which one vl-convert would pick is not known)."""
    try:
        listed = subprocess.run(
            ["fc-list", "--format", "%{file}\t%{weight}\t%{width}\t%{slant}\n", FAMILY],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found: dict[str, set[Path]] = {name: set() for name in FACES.values()}
    for line in listed.splitlines():
        fields = line.split("\t")
        if len(fields) == 4 and fields[1] in FACES and fields[2:] == ["100", "0"]:
            found[FACES[fields[1]]].add(Path(fields[0]))
    faces = {}
    for name, files in found.items():
        if not files:
            return None
        try:
            # one file is read by the caller; several are compared here
            if len(files) > 1 and len({f.read_bytes() for f in files}) > 1:
                return None
        except OSError:
            return None
        faces[name] = min(files)
    return faces


def cache_home() -> Path:
    """Where the subsets are kept: $XDG_CACHE_HOME/benchreport/fonts (~/.cache by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "benchreport" / "fonts"


def private_fonts(cache: Path | None = None) -> tuple[Path, Coverage] | None:
    """A fontconfig file naming subsets of the machine's DejaVu Sans regular and bold, and
    what they cover; made once per pair of faces and kept in `cache` (`cache_home()`), which
    later runs only read. None when anything is missing: draw with the machine's fonts."""
    faces = find_faces()
    if faces is None:
        return None
    try:
        fonts = {name: path.read_bytes() for name, path in faces.items()}
        key = hashlib.sha256(RECIPE.encode() + CHARACTERS.encode())
        for name in sorted(fonts):
            key.update(hashlib.sha256(fonts[name]).digest())
        folder = (cache or cache_home()) / key.hexdigest()[:32]
        ready = folder / "characters.txt"  # written last: the folder is complete
        if not ready.exists():
            _make(folder, faces, fonts)
        characters = ready.read_text(encoding="utf-8")
    except (OSError, ValueError, ImportError):
        return None
    return folder / "fonts.conf", Coverage(frozenset(characters))


def _make(folder: Path, faces: dict[str, Path], fonts: dict[str, bytes]) -> None:
    """Write the subsets, the fontconfig file and, last, the characters both subsets hold;
    each file whole or not at all (another run may be making the same folder)."""
    import io
    import logging

    from fontTools import subset
    from fontTools.ttLib import TTFont

    logging.getLogger("fontTools").setLevel(logging.ERROR)  # "FFTM NOT subset": it is not needed
    folder.mkdir(parents=True, exist_ok=True)
    shared = set(CHARACTERS)
    for name, font in fonts.items():
        face = TTFont(io.BytesIO(font))
        shared &= {chr(c) for c in face.getBestCmap()}
        options = subset.Options()
        options.layout_features = ["*"]  # kerning and ligatures: a text measures the same
        options.name_IDs = ["*"]
        options.name_languages = ["*"]
        options.notdef_outline = True
        options.legacy_kern = True
        options.hinting = False  # vl-convert lays text out unhinted: the smaller, the faster
        subsetter = subset.Subsetter(options)
        subsetter.populate(text=CHARACTERS)
        subsetter.subset(face)
        out = io.BytesIO()
        face.save(out)
        _write_whole(folder / faces[name].name, out.getvalue())
    conf = f'<?xml version="1.0"?>\n<fontconfig><dir>{escape(str(folder))}</dir></fontconfig>\n'
    _write_whole(folder / "fonts.conf", conf.encode())
    _write_whole(folder / "characters.txt", "".join(sorted(shared)).encode())


def _write_whole(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, prefix=".part-") as part:
        part.write(data)
    Path(part.name).replace(path)
