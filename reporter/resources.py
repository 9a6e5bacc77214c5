"""The one place that finds schemas/ and templates/, in a source tree or an installed wheel."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    source = _PACKAGE.parent / name
    if source.is_dir():
        return source
    raise FileNotFoundError(f"cannot find the {name}/ folder next to the reporter package")


@cache
def schemas_dir() -> Path:
    return _find("schemas")


@cache
def templates_dir() -> Path:
    return _find("templates")
