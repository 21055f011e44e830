"""The rules of the package layout (docs/design/architecture.md "Where things are"), checked on the source.

Every `import` and `from ... import` of the project's modules (module level and inside
functions alike) is read with `ast`, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("service", "schemas")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {
        module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
    }


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that `path` imports (`from a.b import c` counts a.b.c when it is a
    module, else a.b)."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            # The longest project module that the name is or lies inside.
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me:
                found.add(name)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(path, modules) for name, path in modules.items()}


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_walker_sees_every_kind_of_import(tmp_path):
    """A test of the test: module-level, lazy and `from package import module` imports."""
    modules = project_modules()
    found = imports_of(ROOT / "service" / "cli" / "main.py", modules)
    assert {"service.cli.offline", "service.cli.errors", "service.formats.jsonlines"} <= found
    lazy = imports_of(ROOT / "service" / "cli" / "settings.py", modules)
    assert "service.runtime.embedded" in lazy  # imported inside a function only


def test_engine_imports_nothing_of_the_service_outside_it(graph):
    bad = {
        m: sorted(i for i in deps if inside(i, "service") and not inside(i, "service.engine"))
        for m, deps in graph.items()
        if inside(m, "service.engine")
    }
    assert {m: d for m, d in bad.items() if d} == {}


def test_schemas_import_nothing_of_the_service(graph):
    bad = {
        m: sorted(i for i in deps if inside(i, "service"))
        for m, deps in graph.items()
        if inside(m, "schemas")
    }
    assert {m: d for m, d in bad.items() if d} == {}


def test_nothing_outside_the_command_line_imports_it(graph):
    # `python -m service` is the command line's own entry point, like the console script.
    bad = {
        m: sorted(i for i in deps if inside(i, "service.cli"))
        for m, deps in graph.items()
        if not inside(m, "service.cli") and m != "service.__main__"
    }
    assert {m: d for m, d in bad.items() if d} == {}


@pytest.mark.parametrize(
    "lower, forbidden",
    [
        (
            "service.formats",
            ("service.runtime", "service.bench", "service.calculators", "service.rating"),
        ),
        (
            "service.calculators",
            ("service.runtime", "service.formats", "service.bench", "service.rating"),
        ),
        (
            "service.rating",
            ("service.runtime", "service.formats", "service.bench", "service.calculators"),
        ),
        (
            "service.timeline",
            (
                "service.runtime",
                "service.formats",
                "service.bench",
                "service.calculators",
                "service.rating",
                "service.engine",
            ),
        ),
        (
            "service.readmodel",
            (
                "service.runtime",
                "service.formats",
                "service.bench",
                "service.calculators",
                "service.rating",
                "service.engine",
            ),
        ),
        ("service.runtime", ("service.bench", "service.calculators", "service.formats")),
        # The entry ids sit under everything that reads a stream entry's id, the timeline too.
        ("service.entryids", ("service", "schemas")),
        (
            "service.web",
            ("service.bench", "service.calculators", "service.formats", "service.runtime.app"),
        ),
    ],
)
def test_no_module_imports_upwards(graph, lower, forbidden):
    bad = {
        m: sorted(i for i in deps if any(inside(i, f) for f in forbidden))
        for m, deps in graph.items()
        if inside(m, lower)
    }
    assert {m: d for m, d in bad.items() if d} == {}


def test_only_the_wiring_and_the_command_line_import_the_web_side(graph):
    # The HTTP side sits above the runtime: runtime/app.py builds it from the settings (as it
    # builds the broker), and nothing else below it may reach up into it.
    allowed = ("service.web", "service.cli")
    bad = {
        m: sorted(i for i in deps if inside(i, "service.web"))
        for m, deps in graph.items()
        if not any(inside(m, a) for a in allowed) and m != "service.runtime.app"
    }
    assert {m: d for m, d in bad.items() if d} == {}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path `a -> b -> ... -> a`, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_find_cycle_names_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_among_the_project_modules(graph):
    # A package imports its own __init__ implicitly; that edge is not a cycle of the code.
    edges = {m: {d for d in deps if not (m.startswith(d + "."))} for m, deps in graph.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize(
    "code",
    [
        # The engine loads alone: nothing of service outside service.engine comes with it.
        "import sys, service.engine.registry, service.engine.cfc.engine, service.engine.fide.engine, "
        "service.engine.naspa.engine; "
        "bad = sorted(m for m in sys.modules if m.startswith('service.') and not m.startswith('service.engine')); "
        "assert not bad, bad",
        # The running service and the formats load without the command line.
        "import sys, service.app, service.runtime.processor, service.runtime.replay, service.formats.trf, "
        "service.formats.ratinglists; "
        "bad = sorted(m for m in sys.modules if m.startswith('service.cli')); assert not bad, bad",
    ],
)
def test_import_checks_in_a_fresh_interpreter(code):
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_readme_map_matches_the_tree():
    """Every folder and module the architecture page's map names exists, and every subpackage of
    service/ is on the map."""
    text = (ROOT / "docs" / "design" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    named = {
        cell.strip("`")
        for cell in (
            line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| `")
        )
    }
    assert named, "no map rows"
    for entry in named:
        assert (ROOT / entry).exists(), f"README map names {entry}, which does not exist"
    packages = {
        f"{p.parent.relative_to(ROOT).as_posix()}/"
        for p in (ROOT / "service").glob("*/__init__.py")
    }
    assert packages <= named, f"not on the README map: {sorted(packages - named)}"
