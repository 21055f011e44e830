"""The fresh-machine run of the README's serve command, inside a private network namespace
(started by tests/integration/test_fresh_machine.py as `unshare --net python -m
tests.integration.fresh_machine SPEC.json`). It brings up the namespace's loopback, runs the
command exactly as written with `sh -c` in a copy of the checkout, and drives it as a person
would: waits for /health/ready, imports the CFC example list (--redis-url from the log
line), publishes the example event (no URL: the embedded server's redis.url), reads the
result with `watch --count 1` (--redis-url from the file) and with a Redis client, stops
serve with SIGTERM, and looks at what is left. It prints what it saw as one JSON object on
standard output; the test judges it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=2) as reply:
            return reply.status == 200
    except Exception:
        return False


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    repo, env, log_path = Path(spec["repo"]), spec["env"], Path(spec["log"])
    seen: dict = {"command": spec["command"]}
    subprocess.run([spec["ip"], "link", "set", "lo", "up"], check=True)
    import redis

    seen["default_address_answers"] = _answers(redis, "redis://127.0.0.1:6379/0")
    with open(log_path, "wb") as log:
        shell = subprocess.Popen(
            ["sh", "-c", spec["command"]],
            cwd=repo,
            env=env,
            stdout=log,
            stderr=log,
            executable=spec["sh"],
        )
    deadline = time.monotonic() + spec["install_timeout"]
    while time.monotonic() < deadline and shell.poll() is None and not ready(8080):
        time.sleep(0.5)
    seen["ready"] = ready(8080)
    text = log_path.read_text(errors="replace")
    if not seen["ready"]:
        seen["log_tail"] = text[-4000:]
        _end(shell)
        print(json.dumps(seen))
        return 0
    line = next((l for l in text.splitlines() if "embedded Redis-compatible server" in l), "")
    seen["log_line"] = line
    record = json.loads(line)
    url, server_pid = record["url"], record["pid"]
    seen["url_in_event"] = url in record["event"]
    data_dir = Path(env["HOME"]) / ".local" / "share" / "rating-service"
    seen["url_file"] = (data_dir / "redis.url").read_text().strip()
    seen["server_alive_while_serving"] = alive(server_pid)
    serve = [
        pid
        for pid in children(shell.pid)
        if "rating-service" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    ]
    seen["serve_found"] = len(serve) == 1

    cli = str(repo / ".venv" / "bin" / "rating-service")
    examples = repo / "deploy" / "examples"

    def run(*args: str) -> dict:
        done = subprocess.run(
            [cli, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60
        )
        return {"code": done.returncode, "out": done.stdout, "err": done.stderr}

    seen["import"] = run("import", str(examples / "cfc-ratings.jsonl"), "--redis-url", url)
    seen["publish"] = run("publish", str(examples / "cfc-event.json"))  # finds redis.url by itself
    seen["watch"] = run("watch", "--from-start", "--count", "1", "--redis-url", seen["url_file"])
    client = redis.Redis.from_url(url)
    outputs = client.xrange("ratings.updated")
    client.close()
    seen["outputs"] = [json.loads(fields[b"__data__"]) for _, fields in outputs]

    if serve:
        os.kill(serve[0], signal.SIGTERM)
    try:
        seen["serve_exit_code"] = shell.wait(timeout=60)
    except subprocess.TimeoutExpired:
        seen["serve_exit_code"] = None
        _end(shell)
    deadline = time.monotonic() + 15
    while alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    seen["server_alive_after_stop"] = alive(server_pid)
    seen["aof_files"] = (
        sorted(p.name for p in (data_dir / "appendonlydir").glob("*"))
        if (data_dir / "appendonlydir").is_dir()
        else []
    )
    seen["data_dir_files"] = sorted(p.name for p in data_dir.iterdir()) if data_dir.is_dir() else []
    seen["stopped_line"] = "embedded server stopped" in log_path.read_text(errors="replace")
    print(json.dumps(seen))
    return 0


def _answers(redis, url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except Exception:
        return False
    finally:
        client.close()


def _end(shell: subprocess.Popen) -> None:
    """Stop the command and everything it started (serve, and so its server)."""
    for pid in children(shell.pid):
        for grandchild in children(pid):
            os.kill(grandchild, signal.SIGTERM)
        os.kill(pid, signal.SIGTERM)
    try:
        shell.wait(timeout=30)
    except subprocess.TimeoutExpired:
        shell.kill()
        shell.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
