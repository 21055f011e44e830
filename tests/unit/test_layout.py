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


# ------------------------------------------------------------------ sizes a reader can hold

MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80


def oversized(path: Path, root: Path = ROOT) -> list[str]:
    """The classes over MAX_CLASS_LINES and functions over MAX_FUNCTION_LINES lines in a file
    (decorators and docstrings count: what a reader scrolls through)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            limit = MAX_FUNCTION_LINES
        else:
            continue
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        if lines > limit:
            found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_oversized_finds_a_long_function(tmp_path):
    """A test of the test."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    planted = tmp_path / "planted.py"
    planted.write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n")
    assert oversized(planted, tmp_path) == [f"planted.py:1 long ({MAX_FUNCTION_LINES + 1} lines)"]


def test_no_class_or_function_is_too_long_to_read_in_one_sitting():
    found = [
        line
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for line in oversized(path)
    ]
    assert found == []


def test_no_complexity_exemption_in_the_product():
    """ruff's C901 (max-complexity in pyproject.toml) holds everywhere in service/ and schemas/:
    no module silences it."""
    exempt = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "noqa: C901" in line
    ]
    assert exempt == []


ADAPTERS = (
    "service.runtime",
    "service.web",
    "service.cli",
    "service.formats",
    "service.bench",
    "service.calculators",
    "service.app",
)


@pytest.mark.parametrize(
    "inner", ["service.engine", "service.rating", "service.readmodel", "service.timeline"]
)
def test_the_engine_use_case_and_read_model_import_no_adapter(graph, inner):
    bad = {
        m: sorted(i for i in deps if any(inside(i, a) for a in ADAPTERS))
        for m, deps in graph.items()
        if inside(m, inner)
    }
    assert {m: d for m, d in bad.items() if d} == {}


# ------------------------------------------------------------------------ the key names
# Every Redis key and stream name is made in service/runtime/keys.py: a literal elsewhere that
# builds one (`prefix + ":cursor"`, f"{tag}:lease", a list of key kinds, a hash tag's brace)
# would name data that keys.py no longer agrees with.
KEYS_MODULE = ROOT / "service" / "runtime" / "keys.py"


def key_fragments() -> set[str]:
    """The words keys.py builds names from, read off the names it makes for sample streams:
    every `:`-separated part that is neither the sample's own name nor a <placeholder>."""
    from service.runtime import keys

    names = [k.name for k in keys.key_layout("S")]
    names += [v for v in vars(keys.StreamKeys("S")).values()]
    names += [keys.redriven_key("D"), keys.layout_key("B"), keys.in_slot_of("P", "X")]
    parts = {part for name in names for part in name.split(":")}
    return {p for p in parts if p and p not in ("S", "{S}", "D", "B", "{P}", "X")} - {
        p for p in parts if p.startswith("<")
    }


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def key_literals(source: str, fragments: set[str]) -> list[tuple[int, str]]:
    """The literals of `source` (string constants and the literal parts of f-strings, not
    docstrings) that build a key name: a part joined by `:` to a fragment of keys.py
    (":cursor", "rating-service:partitions:"; a literal with a space in it is a message, not
    a piece of a name), a hash tag's brace ("{", "}:"), or a tuple, list or set of two or
    more fragments (the kinds of keys)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(words) == len(node.elts) and all(w in fragments for w in words):
                found.append((node.lineno, repr(tuple(words))))
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        value = node.value
        if id(node) in docs or not value or any(c.isspace() for c in value):
            continue
        if ":" in value and fragments & set(value.split(":")):
            found.append((node.lineno, value))
        elif "{" in value or "}" in value:
            if set(value) <= set("{}:"):
                found.append((node.lineno, value))
    return sorted(found)


def test_key_fragments_are_read_off_keys_py():
    fragments = key_fragments()
    assert {
        "cursor",
        "players",
        "lease",
        "fence",
        "replicas",
        "redriven",
        "partitions",
    } <= fragments
    assert not any(f.startswith(("<", "{")) for f in fragments)


def test_key_literals_finds_a_planted_key_name(tmp_path):
    """A test of the test: each planted name is found, the messages and fields are not."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""A module that names `{S}:cursor` in its docstring."""\n'
        "def names(stream, tag, base):\n"
        '    """And `{S}:lease` in a function\'s."""\n'
        '    cursor = "{" + stream + "}" + ":cursor"\n'  # line 4: three
        '    fence = f"{tag}:lease:fence"\n'  # line 5
        '    kinds = ("players", "history")\n'  # line 6
        '    layout = "rating-service:partitions:" + base\n'  # line 7
        '    log.info("lease lost", key=f"{tag}:cursor is gone")\n'
        '    marker = f"event:{base}"\n'
        '    print(f"{base} into the partitions:")\n'
        '    return "fide:standard", ("events", "runs")\n',
        encoding="utf-8",
    )
    found = key_literals(planted.read_text(encoding="utf-8"), key_fragments())
    assert found == [
        (4, ":cursor"),
        (4, "{"),
        (4, "}"),
        (5, ":lease:fence"),
        (6, "('players', 'history')"),
        (7, "rating-service:partitions:"),
    ]


def test_key_names_are_made_only_in_keys_py():
    fragments = key_fragments()
    found = {
        path.relative_to(ROOT).as_posix(): hits
        for path in project_modules().values()
        if path != KEYS_MODULE
        and (hits := key_literals(path.read_text(encoding="utf-8"), fragments))
    }
    assert found == {}, "key names built outside service/runtime/keys.py"
