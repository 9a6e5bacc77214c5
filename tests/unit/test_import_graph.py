"""The package's import graph: no circle, no arrow from a lower layer to a higher one.

Every `import` of a `reporter` module counts, wherever it is written: at the top, inside a
function (a lazy import is still a dependency) or under `if TYPE_CHECKING:`. The graph is
read from the source with `ast`, so no module is imported to build it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "reporter"

#: One worker reads the package's source for every test here (the graph is built once).
pytestmark = pytest.mark.xdist_group("import-graph")

#: The layers, lowest first; a module may import its own layer or a lower one. A module is
#: placed by the longest prefix of its name listed here.
LAYERS: list[tuple[str, list[str]]] = [
    ("records and text", [
        "reporter.types", "reporter.values", "reporter.numbers", "reporter.errors",
        "reporter.safetext", "reporter.resources", "reporter.terminal",
        "reporter.version", "reporter.findings", "reporter.model", "reporter.grouping",
        "reporter.latency",
        "reporter.bandwidth", "reporter.refengine", "reporter.probe", "reporter.rulebook",
        "reporter.runfields", "reporter.medians",
    ]),
    ("reading and writing traces", [
        "reporter.ingest", "reporter.table", "reporter.adapters", "reporter.serverlog",
        "reporter.convert", "reporter.parquet", "reporter.runrecord",
    ]),
    ("analysis", [
        "reporter.config", "reporter.metrics", "reporter.claims", "reporter.features",
        "reporter.compare", "reporter.decision", "reporter.auditdata", "reporter.ladder",
        "reporter.slope", "reporter.facts", "reporter.series", "reporter.stream",
        "reporter.received", "reporter.stated",
    ]),
    ("rules", ["reporter.rules"]),
    ("verdict", ["reporter.verdict"]),
    ("output", ["reporter.render", "reporter.recorder"]),
    ("library calls", ["reporter.api"]),
    ("command line", ["reporter.cli", "reporter.__main__", "reporter"]),
]  # fmt: skip


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module that `name` (a module, or a name inside one) is defined by."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # `from reporter.render import context` imports the module reporter.render.context
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                     for a in node.names]  # fmt: skip
        else:
            continue
        for name in names:
            owner = _owner(name, modules) if name.startswith("reporter") else None
            if owner is not None and owner != module:
                yield owner


@cache
def graph() -> dict[str, frozenset[str]]:
    modules = _modules()
    return {m: frozenset(_imports(m, p, modules)) for m, p in modules.items()}


def _cycles(edges: dict[str, frozenset[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layer_of(module: str) -> int:
    best, at = -1, -1
    for level, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            # the package itself (reporter/__init__) is placed by its exact name only
            below = module.startswith(prefix + ".") and prefix != "reporter"
            matches = module == prefix or below
            if matches and len(prefix) > best:
                best, at = len(prefix), level
    return at


@pytest.mark.slow
def test_the_graph_is_read() -> None:
    edges = graph()
    assert "reporter.render.context" in edges
    assert "reporter.model" in edges["reporter.render.context"]
    assert "reporter.findings" in edges["reporter.rules.base"]


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in graph() if layer_of(m) < 0)
    assert not unplaced, f"place these modules in LAYERS: {unplaced}"


def test_no_import_circle() -> None:
    assert [sorted(c) for c in _cycles(graph())] == []


def test_no_arrow_up_the_layers() -> None:
    up = [
        f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
        for m, deps in sorted(graph().items())
        for d in sorted(deps)
        if layer_of(d) > layer_of(m)
    ]
    assert not up


#: What a renderer may import, directly or through another module: the verdict's records and
#: shared text helpers, never the tables, the figures, the facts, the rules or the builder.
RENDER_MAY_IMPORT = {
    "reporter.model", "reporter.findings", "reporter.types", "reporter.safetext",
    "reporter.resources", "reporter.errors", "reporter.version", "reporter.numbers",
    "reporter.terminal", "reporter.values",
}  # fmt: skip


def _reach(module: str) -> set[str]:
    edges, seen, todo = graph(), set(), [module]
    while todo:
        for dep in edges[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_renderers_read_the_verdict_only() -> None:
    # a renderer that reads the tables or the figures shows what the JSON verdict lacks
    reached = [
        f"{m} reaches {d}"
        for m in sorted(graph())
        if m.startswith("reporter.render")
        for d in sorted(_reach(m))
        if not d.startswith("reporter.render") and d not in RENDER_MAY_IMPORT
    ]
    assert not reached


def test_no_rule_imports_another_rule() -> None:
    rules = {m for m in graph() if m.startswith("reporter.rules.br")}
    crossed = [f"{m} imports {d}" for m in sorted(rules) for d in sorted(graph()[m] & rules)]
    assert not crossed
