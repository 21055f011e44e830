"""The wire contract passes the official tools: the AsyncAPI document the official AsyncAPI
parser (@asyncapi/parser), the JSON Schemas Ajv in strict mode, and the example messages and
the offline `rate` outputs validate against their schemas in Ajv. The tools are npm packages
pinned in tests/contract/package.json (`npm ci --ignore-scripts` there; .ci/run does it).
Without node or node_modules the tests are skipped, saying what to install, and fail with
RATING_TESTS_REQUIRE_ALL=1 (tests/conftest.py `needs`; .ci/run sets it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLES = ROOT / "deploy" / "examples"
PACKAGES = ("@asyncapi/parser", "ajv", "ajv-formats")


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        needs("Node.js 18+ (node on PATH)", "apt-get install nodejs npm")
    missing = [
        name for name in PACKAGES if not (HERE / "node_modules" / name / "package.json").exists()
    ]
    if missing:
        needs(
            f"the contract's npm packages ({', '.join(missing)})",
            "cd tests/contract && npm ci --ignore-scripts",
        )
    return node


def check(*files: Path) -> dict:
    """check.mjs's JSON report on the committed documents and the messages of `files`."""
    done = subprocess.run(
        [_node(), str(HERE / "check.mjs"), *map(str, files)],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["ok"] == (done.returncode == 0)
    return report


def rate(tmp_path: Path, name: str, events: list[Path], ratings: Path) -> list[Path]:
    """The offline `rate` command's ratings.updated messages and final records, as files."""
    source = tmp_path / f"{name}-in.jsonl"
    source.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n" for p in events))
    outputs, records = tmp_path / f"{name}-out.jsonl", tmp_path / f"{name}-records.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "service",
            "rate",
            str(source),
            "--ratings",
            str(ratings),
            "--out-ratings",
            str(records),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outputs.write_text(done.stdout)
    assert outputs.read_text().strip() and records.read_text().strip()
    return [outputs, records]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("contract")
    files = sorted(EXAMPLES.glob("*.json")) + sorted(EXAMPLES.glob("*.jsonl"))
    for system in ("cfc", "naspa"):
        files += rate(
            tmp, system, [EXAMPLES / f"{system}-event.json"], EXAMPLES / f"{system}-ratings.jsonl"
        )
    files += rate(
        tmp,
        "fide",
        [EXAMPLES / "fide-event.json", EXAMPLES / "fide-period-closed.json"],
        EXAMPLES / "fide-ratings.jsonl",
    )
    return check(*files)


def test_asyncapi_document_passes_the_official_parser(report):
    assert report["asyncapi"]["parsed"]
    serious = [
        d for d in report["asyncapi"]["diagnostics"] if d["severity"] in ("error", "warning")
    ]
    assert serious == [], json.dumps(serious, indent=1)


def test_json_schemas_compile_in_ajv_strict_mode(report):
    assert sorted(report["schemas"]) == sorted(
        p.name for p in (ROOT / "schemas" / "json").glob("*.json")
    )
    failed = {name: result for name, result in report["schemas"].items() if not result["ok"]}
    assert failed == {}, json.dumps(failed, indent=1)


def test_examples_and_rate_outputs_validate_against_their_schemas(report):
    invalid = [m for m in report["messages"] if not m["valid"]]
    assert invalid == [], json.dumps(invalid[:10], indent=1)
    kinds = {m["schema"] for m in report["messages"]}
    assert kinds == {
        "event.finished/v1",
        "period.closed/v1",
        "ratings.updated/v1",
        "player.record/v1",
    }
    assert report["ok"]


def test_ajv_refuses_what_the_service_refuses(tmp_path):
    """The schemas are not vacuous: inputs with an unknown field, a score outside {1, 0.5, 0},
    a date that is no date or a bad event id fail in Ajv as they do in the service."""
    good = json.loads((EXAMPLES / "cfc-event.json").read_text())
    bad = [
        {**good, "colour": "white"},
        {**good, "games": [{**good["games"][0], "score": 0.25}]},
        {**good, "end_date": "2025-11-31"},
        {**good, "event_id": "has space"},
        {**good, "schema": "event.finished/v2"},
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([good, *bad]))
    report = check(path)
    assert [m["valid"] for m in report["messages"]] == [True] + [False] * len(bad)
    assert not report["ok"]
