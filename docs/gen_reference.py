"""Writes the generated parts of the Reference pages (docs/reference/*.md) from the code, so
that they cannot drift from it: the wire contract from the msgspec Structs (schemas/), the
command line from the argparse parser, the settings, the HTTP API from its OpenAPI document,
the Prometheus metrics and the Redis keys from where they are declared.

Each page is hand-written prose around generated parts, between the markers

    <!-- generated: NAME -->
    ...
    <!-- end generated -->

    .venv/bin/python docs/gen_reference.py           rewrite the generated parts
    .venv/bin/python docs/gen_reference.py --check   exit 1 naming the first stale page

(tests/unit/test_reference_docs.py runs the check.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REFERENCE = ROOT / "docs" / "reference"
MARKER = re.compile(r"<!-- generated: (?P<name>[a-z-]+) -->\n.*?<!-- end generated -->", re.S)
USAGE_WIDTH = "100"  # argparse wraps usage lines at $COLUMNS: fixed, so the page is too


# Markdown helpers ----------------------------------------------------------------------------


def code(text: object) -> str:
    """`text` as inline code (a `|` inside a code span does not end a table cell)."""
    body = str(text)
    fence = "``" if "`" in body else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def cell(text: str) -> str:
    """Prose for a table cell: one line, `|` escaped outside code spans."""
    parts = re.split(r"(`[^`]*`)", " ".join(text.split()))
    return "".join(p if p.startswith("`") else p.replace("|", "\\|") for p in parts)


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# JSON Schema (msgspec's) as tables -----------------------------------------------------------


class Objects:
    """Renders msgspec JSON Schema objects; `link(name)` is where an object's table is."""

    def __init__(self, link: Callable[[str], str]):
        self.link = link

    def type_of(self, node: dict[str, Any]) -> str:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            return f"[{name}]({self.link(name)})"
        for union in ("anyOf", "oneOf"):
            if union in node:
                return " or ".join(self.type_of(variant) for variant in node[union])
        if "enum" in node:
            values = node["enum"]
            if len(values) == 1:
                return code(json.dumps(values[0]))
            return "one of " + ", ".join(code(json.dumps(value)) for value in values)
        kind = node.get("type")
        if kind == "array":
            return "array of " + self.type_of(node.get("items", {}))
        if kind == "object" and isinstance(node.get("additionalProperties"), dict):
            return "object: string to " + self.type_of(node["additionalProperties"])
        if kind is None:
            return "any"
        if isinstance(kind, list):
            return " or ".join(kind)
        return f"{kind} ({node['format']})" if "format" in node else kind

    def constraints(self, node: dict[str, Any]) -> list[str]:
        found: list[str] = []
        for variant in node.get("anyOf", ()):
            found += self.constraints(variant)
        if "pattern" in node:
            found.append("pattern " + code(node["pattern"]))
        for key, words in (
            ("minLength", "length ≥ {}"),
            ("maxLength", "length ≤ {}"),
            ("minItems", "items ≥ {}"),
            ("maxItems", "items ≤ {}"),
            ("minimum", "≥ {}"),
            ("exclusiveMinimum", "> {}"),
            ("maximum", "≤ {}"),
            ("exclusiveMaximum", "< {}"),
            ("multipleOf", "multiple of {}"),
        ):
            if key in node and not ("enum" in node and key in ("minimum", "maximum")):
                found.append(words.format(node[key]))
        if "items" in node:
            found += [f"items: {c}" for c in self.constraints(node["items"])]
        return found

    @staticmethod
    def description(node: dict[str, Any]) -> str:
        if "description" in node:
            return node["description"]
        texts = [v["description"] for v in node.get("anyOf", ()) if "description" in v]
        return " ".join(texts)

    def fields(self, struct: dict[str, Any]) -> list[str]:
        required = set(struct.get("required", ()))
        rows = []
        for name, node in struct.get("properties", {}).items():
            default = (
                "required"
                if name in required
                else code(json.dumps(node["default"]))
                if "default" in node
                else "optional"
            )
            rows.append(
                [
                    code(name),
                    self.type_of(node),
                    "; ".join(self.constraints(node)),
                    default,
                    cell(self.description(node)),
                ]
            )
        if not rows:
            return ["No fields."]
        lines = table(["field", "type", "constraints", "default", "description"], rows)
        if struct.get("additionalProperties") is False:
            lines += ["", "No other field is accepted."]
        return lines

    def section(self, name: str, struct: dict[str, Any], level: str = "###") -> list[str]:
        lines = [f"{level} `{name}` {{ #{anchor(name)} }}", ""]
        if struct.get("description"):
            lines += [struct["description"], ""]
        return lines + self.fields(struct) + [""]


# Pages ---------------------------------------------------------------------------------------


def contract_parts() -> dict[str, list[str]]:
    """The messages of the wire contract (schemas/jsonschema.py: the committed JSON Schemas)."""
    from schemas.jsonschema import MESSAGES, file_name, schema_of

    objects = Objects(lambda name: f"#{anchor(name)}")
    messages: list[str] = []
    nested: dict[str, dict[str, Any]] = {}
    for message in MESSAGES:
        document = schema_of(message)
        definitions = document["$defs"]
        root = document["$ref"].rsplit("/", 1)[1]
        messages += [
            f"### `{message}` {{ #{anchor(message)} }}",
            "",
            f"Struct `{MESSAGES[message].__module__}.{root}`; JSON Schema "
            f"`schemas/json/{file_name(message)}`.",
            "",
        ]
        if definitions[root].get("description"):
            messages += [definitions[root]["description"], ""]
        messages += objects.fields(definitions[root]) + [""]
        inner = [name for name in definitions if name != root]
        if inner:
            links = ", ".join(f"[`{name}`](#{anchor(name)})" for name in inner)
            messages += [f"Objects inside it: {links}.", ""]
        for name in inner:
            if nested.setdefault(name, definitions[name]) != definitions[name]:
                raise ValueError(f"two different objects named {name} in the contract")
    objects_part: list[str] = []
    for name in sorted(nested):
        objects_part += objects.section(name, nested[name])
    return {
        "messages": messages[:-1],
        "objects": objects_part[:-1],
        "reasons": table(["reason", "when"], [[code(r), cell(w)] for r, w in reasons()]),
    }


def reasons() -> list[tuple[str, str]]:
    """The rejection reasons with the comment each has in schemas/rejected.py's `Reason`."""
    import schemas.rejected

    source = Path(schemas.rejected.__file__).read_text(encoding="utf-8")
    literal = source[
        source.index("Reason = Literal[") : source.index("\n]", source.index("Reason = "))
    ]
    found = re.findall(r'^\s+"(\w+)",\s+#\s*(.+)$', literal, re.M)
    if [name for name, _ in found] != list(schemas.rejected.REASONS):
        raise SystemExit("schemas/rejected.py: every Reason needs its comment, on its own line")
    return found


def cli_parts() -> dict[str, list[str]]:
    """Every command of `rating-service`, walked from the parser (service/cli/main.py)."""
    from service.cli.main import build_parser
    from service.runtime.settings import describe

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = USAGE_WIDTH
    try:
        parser = build_parser()
        summary: list[list[str]] = []
        sections: list[str] = []
        for path, sub, help_text in _commands(parser, ["rating-service"]):
            name = " ".join(path)
            summary.append([f"[`{name}`](#{anchor(name)})", cell(help_text)])
            sections += _command_section(name, sub, help_text, describe())
        top = ["```text", parser.format_usage().strip(), "```", ""]
        top += _arguments(parser)
        return {
            "cli-top": top,
            "cli-commands": table(["command", "what it does"], summary),
            "cli-sections": sections[:-1],
        }
    finally:
        if columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = columns


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _commands(
    parser: argparse.ArgumentParser, path: list[str]
) -> Iterator[tuple[list[str], argparse.ArgumentParser, str]]:
    """(path, parser, help) of each subcommand, depth first, in the order they were added."""
    subs = _subcommands(parser)
    if subs is None:
        return
    helps = {choice.dest: choice.help or "" for choice in subs._choices_actions}
    for name, sub in subs.choices.items():
        yield [*path, name], sub, helps.get(name, "")
        yield from _commands(sub, [*path, name])


def _command_section(
    name: str, parser: argparse.ArgumentParser, help_text: str, settings_epilog: str
) -> list[str]:
    lines = [f"### `{name}` {{ #{anchor(name)} }}", ""]
    lines += [help_text[:1].upper() + help_text[1:] + ".", ""] if help_text else []
    if parser.description and parser.description != help_text:
        lines += [" ".join(parser.description.split()), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    lines += _arguments(parser)
    if parser.epilog == settings_epilog:
        lines += ["The environment variables it reads: [Settings](settings.md).", ""]
    elif parser.epilog:
        lines += ["```text", parser.epilog.strip(), "```", ""]
    return lines


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        if isinstance(action, argparse._HelpAction):
            continue
        rows.append([code(_invocation(action)), cell(_help(parser, action)), _default(action)])
    if not rows:
        return []
    return table(["argument", "meaning", "default"], rows) + [""]


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        metavar = action.metavar or action.dest
        return {"+": f"{metavar}...", "*": f"[{metavar}...]", "?": f"[{metavar}]"}.get(
            str(action.nargs), str(metavar)
        )
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    if action.choices is not None and action.metavar is None:
        return f"{names} {{{','.join(map(str, action.choices))}}}"
    metavar = action.metavar or action.dest.upper()
    suffix = {"+": f" {metavar}...", "*": f" [{metavar}...]", "?": f" [{metavar}]"}
    return names + suffix.get(str(action.nargs), f" {metavar}")


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = parser._get_formatter()._expand_help(action) if action.help else ""
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("may be repeated")
    if notes:
        text = f"{text} ({', '.join(notes)})" if text else ", ".join(notes)
    return text


def _default(action: argparse.Action) -> str:
    default = action.default
    if default in (None, False, [], argparse.SUPPRESS) or action.nargs == 0:
        return ""
    return code(default)


def settings_parts() -> dict[str, list[str]]:
    """The environment variables (service/runtime/settings.py `SETTINGS`)."""
    from service.runtime.settings import SETTINGS

    rows = [
        [" / ".join(code(name) for name in s.names), code(s.default), cell(s.help)]
        for s in SETTINGS
    ]
    return {"settings": table(["variable", "default", "meaning"], rows)}


def http_parts() -> dict[str, list[str]]:
    """The endpoints, from the OpenAPI document the app serves (service/web/openapi.py)."""
    from schemas.jsonschema import MESSAGES, schema_of
    from service.web.app import create_app
    from service.web.openapi import document

    in_contract: dict[str, str] = {}  # object -> its anchor on the contract page
    for message in MESSAGES:
        message_schema = schema_of(message)
        root = message_schema["$ref"].rsplit("/", 1)[1]
        for name in message_schema["$defs"]:
            in_contract[name] = anchor(message if name == root else name)
    spec = document(create_app(reads=object(), health=None, metrics=None))  # type: ignore[arg-type]
    schemas = spec["components"]["schemas"]
    objects = Objects(
        lambda name: (
            f"contract.md#{in_contract[name]}" if name in in_contract else f"#{anchor(name)}"
        )
    )
    endpoints: list[str] = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            endpoints += [f"### `{method.upper()} {path}`", ""]
            endpoints += [operation.get("summary", ""), ""]
            if operation.get("description"):
                endpoints += [operation["description"].strip(), ""]
            parameters = [
                [
                    code(p["name"]),
                    p["in"],
                    objects.type_of(p["schema"]),
                    "; ".join(objects.constraints(p["schema"])),
                    "required"
                    if p.get("required")
                    else code(json.dumps(p["schema"]["default"]))
                    if "default" in p["schema"]
                    else "optional",
                    cell(p.get("description", "")),
                ]
                for p in operation.get("parameters", ())
            ]
            if parameters:
                header = ["parameter", "in", "type", "constraints", "default", "description"]
                endpoints += table(header, parameters) + [""]
            answers = []
            for status, answer in sorted(operation.get("responses", {}).items()):
                body = ""
                for media, content in answer.get("content", {}).items():
                    if content.get("schema"):
                        body = f"{objects.type_of(content['schema'])} ({code(media)})"
                answers.append([code(status), cell(answer.get("description", "")), body])
            endpoints += table(["status", "meaning", "body"], answers) + [""]
    answers_part: list[str] = []
    for name in sorted(schemas):
        if name not in in_contract:
            answers_part += objects.section(name, schemas[name])
    shared = sorted(name for name in schemas if name in in_contract)
    answers_part += [
        "The other objects of the answers are those of the wire contract: "
        + ", ".join(f"[`{name}`](contract.md#{in_contract[name]})" for name in shared)
        + "."
    ]
    return {
        "http-description": [" ".join(spec["info"].get("description", "").split())],
        "http-endpoints": endpoints[:-1],
        "http-objects": answers_part,
    }


METRIC_TYPES = {"counter": "counter", "gauge": "gauge", "histogram": "histogram"}


def metrics_parts() -> dict[str, list[str]]:
    """The service's own metrics (service/runtime/metrics.py `Metrics`), as exposed."""
    from prometheus_client.metrics import MetricWrapperBase

    from service.runtime.metrics import Metrics

    rows = []
    for metric in vars(Metrics()).values():
        if not isinstance(metric, MetricWrapperBase):
            continue
        # prometheus_client keeps the declaration in these attributes (no public accessor).
        name, kind = metric._name, metric._type
        exposed = {
            "counter": [f"{name}_total"],
            "histogram": [f"{name}_bucket", f"{name}_sum", f"{name}_count"],
        }.get(kind, [name])
        labels = ", ".join(code(label) for label in metric._labelnames)
        if kind == "histogram":
            bounds = ", ".join(f"{b:g}" for b in metric._upper_bounds if b != float("inf"))
            labels += (", " if labels else "") + f"{code('le')} ({bounds}, +Inf)"
        rows.append(
            ["<br>".join(code(n) for n in exposed), kind, labels, cell(metric._documentation)]
        )
    rows.sort(key=lambda row: row[0])
    return {"metrics": table(["metric", "type", "labels", "help"], rows)}


def keys_parts() -> dict[str, list[str]]:
    """The keys of one input stream (service/runtime/keys.py `key_layout`); the page's prose
    must name the keys beside them as keys.py does."""
    from service.runtime.keys import StreamKeys, key_layout, layout_key, redriven_key

    layout = key_layout("S")
    for name, key in vars(StreamKeys("S")).items():
        if name not in ("stream", "prefix") and not any(
            k.name == key or k.name.startswith(key + ":") for k in layout
        ):
            raise SystemExit(f"StreamKeys.{name} ({key}) is not in keys.key_layout")
    page = (REFERENCE / "keys.md").read_text(encoding="utf-8")
    for beside in (redriven_key("<dead-letter stream>"), layout_key("<input stream>")):
        if code(beside) not in page:
            raise SystemExit(
                f"docs/reference/keys.md does not name {beside} (service/runtime/keys.py)"
            )
    rows = [[code(key.name), key.type, cell(key.content)] for key in layout]
    return {"keys": table(["key", "type", "content"], rows)}


PAGES: dict[str, Callable[[], dict[str, list[str]]]] = {
    "contract.md": contract_parts,
    "cli.md": cli_parts,
    "settings.md": settings_parts,
    "http.md": http_parts,
    "metrics.md": metrics_parts,
    "keys.md": keys_parts,
}


def render(page: str) -> str:
    """The page with its generated parts as the code makes them now."""
    path = REFERENCE / page
    text = path.read_text(encoding="utf-8")
    parts = PAGES[page]()
    seen: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in parts:
            raise SystemExit(f"{path.relative_to(ROOT)}: no generated part named {name!r}")
        seen.add(name)
        body = "\n".join(parts[name]).rstrip("\n")
        return f"<!-- generated: {name} -->\n{body}\n<!-- end generated -->"

    text = MARKER.sub(fill, text)
    missing = sorted(set(parts) - seen)
    if missing:
        raise SystemExit(f"{path.relative_to(ROOT)}: no marker for {', '.join(missing)}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 when a page is stale"
    )
    args = parser.parse_args(argv)
    for page in PAGES:
        path = REFERENCE / page
        text = render(page)
        if text == path.read_text(encoding="utf-8"):
            continue
        if args.check:
            print(
                f"{path.relative_to(ROOT)} is stale: run .venv/bin/python docs/gen_reference.py",
                file=sys.stderr,
            )
            return 1
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
