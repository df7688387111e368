"""Imports run one way: the layer order in ``docs/architecture.md`` holds for every module.

The checker reads every module of ``src/asr_audit`` with :mod:`ast` (nothing is imported), and
collects each import it can see: module-level, function-level and ``TYPE_CHECKING`` imports,
relative imports, and string literals that name an ``asr_audit`` module (``importlib`` calls and
the module lists of lazy registries). An import of a layer to the right of the importer's layer is
a violation. Separately, eager imports (every ``import`` statement) may not form a cycle between
modules; the lazy string-named loads of a registry are left out of that check, since a registry
loading the modules that register into it is the point of it.

The layer order itself is read from ``docs/architecture.md`` (the lines starting ``base:`` and
``layers:`` in its first picture), so the picture and the test cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PACKAGE = "asr_audit"

# Known violations that another change removes; each entry is (importer, imported module).
# models/base.py names the organism backend module in its lazy backend list (issue 10, part 2
# replaces that list with a generic registry); nothing else may be listed here.
ALLOWED: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True, slots=True)
class Edge:
    """One import seen in a module: ``source`` imports ``target`` at ``line``."""

    source: str
    target: str
    line: int
    eager: bool  # an import statement (False: a string literal naming a module)

    def __str__(self) -> str:
        kind = "imports" if self.eager else "names (string)"
        return f"{self.source}:{self.line} {kind} {self.target}"


@dataclass(frozen=True, slots=True)
class Layers:
    """The documented order: ``base`` units any module may import, then ``order`` left to right;
    ``sub`` orders the subpackages of a layer the same way (``probes: predfiles ─> audio ─> battery``)."""

    base: tuple[str, ...]
    order: tuple[str, ...]
    sub: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def rank(self, unit: str) -> int:
        """-1 for a base unit, else the position in the order; KeyError for an unplaced one.
        The package's own ``__init__`` (unit ``""``) is the front door: it re-exports the API
        (``api``, on first use), so it ranks above every layer."""
        if unit == "":
            return len(self.order)
        if unit in self.base:
            return -1
        return self.order.index(unit) if unit in self.order else _raise_unplaced(unit)


def _raise_unplaced(unit: str) -> int:
    raise KeyError(unit)


def parse_layers(text: str) -> Layers:
    """The ``base:`` and ``layers:`` lines of the architecture document, and one line per ordered layer.

    >>> ls = parse_layers("base: errors · paths\\nlayers: corpus ─> text\\ntext: a ─> b")
    >>> ls.order, ls.sub
    (('corpus', 'text'), {'text': ('a', 'b')})
    """
    base = re.search(r"^base:(.*)$", text, re.M)
    order = re.search(r"^layers:(.*)$", text, re.M)
    assert base and order, "docs/architecture.md lost its 'base:' / 'layers:' lines; fix: restore the picture"
    words = re.compile(r"[a-z_]+")
    sub = {
        m.group(1): tuple(words.findall(m.group(2)))
        for m in re.finditer(r"^([a-z_]+):(.*─>.*)$", text, re.M)
        if m.group(1) != "layers"
    }
    return Layers(tuple(words.findall(base.group(1))), tuple(words.findall(order.group(1))), sub)


def module_files(src: Path, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` under ``src`` by dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: Mapping[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a module (``a.b.func`` -> ``a.b``)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def module_edges(name: str, path: Path, modules: Mapping[str, Path], package: str = PACKAGE) -> Iterator[Edge]:
    """Every ``package`` import of one module, at any depth of its syntax tree."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        names: list[str] = []
        eager = True
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from pkg import sub`` imports the submodule when ``sub`` is one
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
            names, eager = [node.value], False
        for target in names:
            if target == package or not target.startswith(package + "."):
                continue
            resolved = _resolve(target, modules)
            if resolved is not None and resolved != name:
                yield Edge(name, resolved, getattr(node, "lineno", 0), eager)


def unit_of(module: str, depth: int = 1) -> str:
    """The layer unit of a module: its component ``depth`` under the package (``a.text.x`` -> ``text``).

    >>> unit_of("asr_audit.probes.audio.masked"), unit_of("asr_audit.probes.audio.masked", 2), unit_of("asr_audit")
    ('probes', 'audio', '')
    """
    parts = module.split(".")
    return parts[depth] if len(parts) > depth else ""


def all_edges(src: Path, package: str = PACKAGE) -> list[Edge]:
    modules = module_files(src, package)
    return [e for name, path in modules.items() for e in module_edges(name, path, modules, package)]


def violations(edges: Sequence[Edge], layers: Layers, allowed: frozenset[tuple[str, str]] = frozenset()) -> list[str]:
    """Each import that runs against the order (a base unit may import only base units to its left)."""
    bad = []
    for e in edges:
        src, dst = unit_of(e.source), unit_of(e.target)
        if (e.source, e.target) in allowed:
            continue
        if src == dst:
            order = layers.sub.get(src)
            s_sub, d_sub = unit_of(e.source, 2), unit_of(e.target, 2)
            if order and s_sub != d_sub and s_sub and d_sub and order.index(d_sub) > order.index(s_sub):
                bad.append(f"{e}: {src}/{s_sub} may not import {src}/{d_sub} (order: {' -> '.join(order)})")
            continue
        rs, rd = layers.rank(src), layers.rank(dst)
        if rd == -1 and rs != -1:
            continue
        if rs == -1 and rd == -1 and layers.base.index(dst) < layers.base.index(src):
            continue  # the base units are ordered too: one may import those to its left
        if rs == -1 or rd > rs:
            where = "base unit" if rs == -1 else "layer"
            bad.append(f"{e}: {where} {src!r} may not import {dst!r}")
    return list(dict.fromkeys(bad))  # ``from m import a, b`` is one import


def cycles(edges: Sequence[Edge]) -> list[list[str]]:
    """Strongly connected groups of more than one module over the eager imports (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.eager:
            graph.setdefault(e.source, set()).add(e.target)
            graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# --- the real package ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def layers() -> Layers:
    return parse_layers(ARCHITECTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return all_edges(SRC)


def test_every_unit_is_placed(layers: Layers) -> None:
    modules = module_files(SRC)
    units = {unit_of(m) for m in modules} - {""}
    unplaced = sorted(u for u in units if u not in layers.base and u not in layers.order)
    assert not unplaced, (
        f"not placed in docs/architecture.md: {unplaced}; fix: add each to its 'layers:' or 'base:' line"
    )
    stale = sorted(u for u in (*layers.base, *layers.order) if u not in units)
    assert not stale, f"docs/architecture.md places units that do not exist: {stale}"
    for unit, order in layers.sub.items():
        subs = {unit_of(m, 2) for m in modules if unit_of(m) == unit and modules[m].name == "__init__.py"} - {""}
        assert subs == set(order), (
            f"docs/architecture.md orders {unit}/ as {order} but its subpackages are "
            f"{sorted(subs)}; fix: list every subpackage on the '{unit}:' line"
        )
        loose = sorted(m for m in modules if unit_of(m) == unit and unit_of(m, 2) and unit_of(m, 2) not in order)
        assert not loose, f"modules of {unit}/ outside its ordered subpackages: {loose}; fix: move them into one"


def test_imports_run_one_way(layers: Layers, edges: list[Edge]) -> None:
    bad = violations(edges, layers, ALLOWED)
    assert not bad, (
        f"imports against the order in docs/architecture.md ({' -> '.join(layers.order)}; "
        f"base: {', '.join(layers.base)}); fix: move the helper to the layer where it belongs:\n" + "\n".join(bad)
    )


def test_no_import_cycles(edges: list[Edge]) -> None:
    found = cycles(edges)
    assert not found, "import cycles (function-level imports included):\n" + "\n".join(" <-> ".join(c) for c in found)


def test_checker_sees_the_package(edges: list[Edge]) -> None:
    """Guards the guard: known imports of each kind are found."""
    seen = {(e.source, e.target, e.eager) for e in edges}
    assert ("asr_audit.cli", "asr_audit.cli.predictions", False) in seen  # a lazy module list
    assert ("asr_audit.report.html", "asr_audit.report.section", True) in seen  # module level
    assert any(s == "asr_audit.runner.run" and t == "asr_audit.report.html" for s, t, _ in seen)  # function level


# --- the checker can fail -----------------------------------------------------------------------


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        p = root / "pkg" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


SYNTHETIC = Layers(base=("errors",), order=("low", "high"))


def _check(tmp_path: Path, files: Mapping[str, str]) -> tuple[list[str], list[list[str]]]:
    src = _write(tmp_path, {"__init__.py": "", "errors.py": "", "low/__init__.py": "", "high/__init__.py": "", **files})
    found = all_edges(src, "pkg")
    return violations(found, SYNTHETIC), cycles(found)


@pytest.mark.parametrize(
    "text",
    [
        "from pkg.high import thing\n",  # module level
        "def f():\n    from pkg.high.mod import thing\n",  # function level
        "def f():\n    import pkg.high.mod\n",  # plain import in a function
        "from ..high import mod\n",  # relative
        "import importlib\nimportlib.import_module('pkg.high.mod')\n",  # by string
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.high.mod import T\n",
    ],
)
def test_a_violation_is_reported(tmp_path: Path, text: str) -> None:
    bad, _ = _check(tmp_path, {"low/mod.py": text, "high/mod.py": "thing = 1\n"})
    assert len(bad) == 1 and "'low' may not import 'high'" in bad[0] and "pkg.low.mod:" in bad[0]


def test_allowed_directions_pass(tmp_path: Path) -> None:
    bad, cyc = _check(
        tmp_path,
        {
            "high/mod.py": "from pkg.low.mod import x\nfrom pkg.errors import E\n",
            "low/mod.py": "from pkg import errors\nx = 1\n",
        },
    )
    assert bad == [] and cyc == []


def test_a_base_unit_may_not_import_a_layer(tmp_path: Path) -> None:
    bad, _ = _check(tmp_path, {"errors.py": "def f():\n    from pkg.low import mod\n", "low/mod.py": ""})
    assert len(bad) == 1 and "base unit 'errors'" in bad[0]


def test_a_function_level_cycle_is_reported(tmp_path: Path) -> None:
    _, cyc = _check(
        tmp_path,
        {
            "high/a.py": "from pkg.high.b import y\nx = 1\n",
            "high/b.py": "def f():\n    from pkg.high.a import x\ny = 1\n",
        },
    )
    assert cyc == [["pkg.high.a", "pkg.high.b"]]


def test_a_sublayer_violation_is_reported(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "",
            "low/a/__init__.py": "",
            "low/b/__init__.py": "",
            "low/a/x.py": "def f():\n    from pkg.low.b.y import z\n",
            "low/b/y.py": "from pkg.low.a.x import f\nz = 1\n",
        },
    )
    layers = Layers(base=(), order=("low",), sub={"low": ("a", "b")})
    bad = violations(all_edges(src, "pkg"), layers)
    assert len(bad) == 1 and "low/a may not import low/b" in bad[0]


def test_an_unplaced_unit_is_an_error() -> None:
    with pytest.raises(KeyError):
        SYNTHETIC.rank("middle")


# --- docs/architecture.md lists every module, once -----------------------------------------------


def listed_modules(text: str) -> list[str]:
    """Module paths (under the package) named in the architecture table: a row's own file
    (`` `errors.py` ``) or the ``.py`` names of its key-modules cell, under the row's package,
    with ``dir/{a,b}.py`` spelled out.

    >>> listed_modules("| `x.py` | owns | |\\n| `p/` | owns `q.py` | `a.py` (see `b.py`), `s/{c, d}.py` |")
    ['x.py', 'p/a.py', 'p/b.py', 'p/s/c.py', 'p/s/d.py']
    """
    out: list[str] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        unit = cells[0].strip("`")
        if unit.endswith(".py"):
            out.append(unit)
            continue
        for token in re.findall(r"`([^`]+)`", cells[2]):
            group = re.fullmatch(r"([\w/]*)\{([\w,\s]+)\}\.py", token)
            if group:
                out += [f"{unit}{group.group(1)}{n.strip()}.py" for n in group.group(2).split(",")]
            elif token.endswith(".py"):
                out.append(unit + token)
    return out


def undocumented(
    src: Path, text: str, root: Path = ROOT, package: str = PACKAGE
) -> tuple[list[str], list[str], list[str]]:
    """(modules the table does not list, modules it lists more than once, names it lists that are
    neither a module nor a file of the repository). Packages' ``__init__.py`` are their rows."""
    modules = [
        p.relative_to(src / package).as_posix()
        for p in sorted((src / package).rglob("*.py"))
        if p.name != "__init__.py"
    ]
    listed = listed_modules(text)
    missing = [m for m in modules if m not in listed]
    twice = sorted({m for m in listed if listed.count(m) > 1})
    unknown = [m for m in listed if m not in modules and not (root / m.split("/", 1)[-1]).exists()]
    return missing, twice, unknown


def test_the_architecture_doc_lists_every_module_once() -> None:
    missing, twice, unknown = undocumented(SRC, ARCHITECTURE.read_text(encoding="utf-8"))
    assert missing == [], f"docs/architecture.md lists {missing} nowhere; fix: name each in its package's row"
    assert twice == [], f"docs/architecture.md lists {twice} more than once; fix: keep one mention in the key modules"
    assert unknown == [], f"docs/architecture.md lists {unknown}, which do not exist; fix: rename or drop them"


def test_an_unlisted_module_is_reported(tmp_path: Path) -> None:
    src = _write(tmp_path, {"__init__.py": "", "low/__init__.py": "", "low/a.py": "", "low/b.py": ""})
    doc = "| `low/` | owns | `a.py`, `a.py`, `gone.py` |\n"
    assert undocumented(src, doc, tmp_path, "pkg") == (["low/b.py"], ["low/a.py"], ["low/gone.py"])
