"""The README's serve command on a fresh machine (issue 15): no Redis answers on the default
address (a private network namespace), no redis-server on PATH (a PATH of a few tools), a
new home directory, and pip with no network (the namespace has none) reading a wheelhouse
built here first. The command is run exactly as written (.ci/readme-command prints it), in
a copy of this checkout; tests/integration/fresh_machine.py drives it inside the namespace.
Needs `unshare --net` (root); skipped, saying why, where that is not possible.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.fresh_machine]

ROOT = Path(__file__).resolve().parents[2]
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    ".pytest_cache",
    ".hypothesis",
)


def readme_command(which: str) -> str:
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "readme-command"), which], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.rstrip("\n")


def namespace_problem() -> str | None:
    """Why a private network namespace cannot be had here, or None."""
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"no {tool} command"
    done = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"unshare --net fails: {done.stderr.strip() or done.returncode} (needs root or user namespaces)"
    return None


def test_readme_serve_command_on_a_fresh_machine(tmp_path):
    problem = namespace_problem()
    if problem:
        pytest.skip(f"cannot make a fresh machine: {problem}")
    command = readme_command("serve")
    repo = tmp_path / "clone"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)

    # What pip will find with no network: every dependency at the pinned versions, and the
    # build backend of pyproject.toml (built here, where the package index answers).
    wheels = tmp_path / "wheelhouse"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    built = subprocess.run(
        [
            *pip,
            "wheel",
            "--wheel-dir",
            str(wheels),
            "-c",
            str(repo / "deploy" / "constraints.txt"),
            str(repo),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    backend = subprocess.run(
        [*pip, "download", "--dest", str(wheels), "setuptools>=68", "wheel"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert backend.returncode == 0, backend.stderr[-3000:]
    for own in wheels.glob("rating_service-*.whl"):
        own.unlink()  # the command builds the project itself

    # A PATH of the few tools the command needs: python3 (this Python's base interpreter) and sh.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    base_python = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    (bin_dir / "python3").symlink_to(base_python)
    sh = shutil.which("sh")
    assert sh is not None
    (bin_dir / "sh").symlink_to(sh)
    assert shutil.which("redis-server", path=str(bin_dir)) is None
    assert shutil.which("valkey-server", path=str(bin_dir)) is None
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": str(bin_dir),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    spec = {
        "command": command,
        "repo": str(repo),
        "env": env,
        "log": str(tmp_path / "serve.log"),
        "ip": shutil.which("ip"),
        "sh": sh,
        "install_timeout": 400,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    driver = subprocess.run(
        [
            "unshare",
            "--net",
            sys.executable,
            "-m",
            "tests.integration.fresh_machine",
            str(tmp_path / "spec.json"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert driver.returncode == 0, driver.stderr[-4000:]
    seen = json.loads(driver.stdout.strip().splitlines()[-1])

    assert seen["command"] == command
    assert seen["default_address_answers"] is False
    assert seen["ready"], seen.get("log_tail")
    # One log line says where the embedded server is; the file says the same.
    assert seen["url_in_event"] and seen["log_line"].count("embedded Redis-compatible server") == 1
    assert "valkey 9.1.2" in seen["log_line"]
    url = json.loads(seen["log_line"])["url"]
    assert url.startswith("redis://127.0.0.1:") and url == seen["url_file"]
    assert int(url.split(":")[2].split("/")[0]) <= 55535
    assert seen["server_alive_while_serving"] and seen["serve_found"]
    # A person's session: import the list, publish the event, read it back rated.
    assert seen["import"]["code"] == 0, seen["import"]
    assert seen["publish"]["code"] == 0, seen["publish"]
    assert "using the embedded server" in seen["publish"]["err"]
    assert seen["watch"]["code"] == 0, seen["watch"]
    assert "ottawa-fall-open-2025" in seen["watch"]["out"]
    [rated] = seen["outputs"]
    assert rated["event_id"] == "ottawa-fall-open-2025" and rated["kind"] == "event"
    assert {p["id"] for p in rated["players"]} >= {"100001", "100002"}
    assert all(p["new_rating"] is not None for p in rated["players"] if p["old_rating"] is not None)
    # SIGTERM: serve exits 0, its server is gone, the AOF stays in the default data directory.
    assert seen["serve_exit_code"] == 0
    assert seen["server_alive_after_stop"] is False
    assert seen["stopped_line"]
    assert any(name.endswith(".manifest") for name in seen["aof_files"]), seen["aof_files"]
    assert {"appendonlydir", "redis.url", "server.log"} <= set(seen["data_dir_files"])
