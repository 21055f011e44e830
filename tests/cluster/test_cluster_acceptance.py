"""Scale-out, end to end, on a local 3-master Redis Cluster: lists loaded with `import`, a
season of corrections, withdrawals and late events across four partitions (CFC regular, CFC
active, FIDE standard with a period close, NASPA nwl+csw), two replicas of `rating-service
serve` of which one is SIGKILLed and replaced, two partitions' slots moved to other masters
while commits run, and an event appended to the wrong partition. Afterwards, for every
partition: the store, the outputs (one per event and revision, in order), the dead letters,
the archive, the histories and the read model equal an offline twin of that partition's
entries (and `rating-service rate`) and the date-order fold; nothing pending; the misrouted
event dead-lettered naming its stream."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import subprocess
import sys

import msgspec
import pytest

from schemas.common import DEFAULT_POOL
from schemas.validation import decode_input
from service.formats.ratinglists import render_jsonl
from service.runtime.connection import connect
from tests.cascade_workload import Chooser, Model, Workload, interleave, workload
from tests.cluster.partitioned import wait_applied
from tests.integration.corrections import Mixed, check_against_offline_and_fold
from tests.integration.helpers import settings_for
from tests.integration.processes import ROOT, Services

pytestmark = pytest.mark.integration
SERVE = ("-m", "service", "serve")
# (case, id tag, the pool it is moved to): four cases, four partitions.
PLAN = (
    ("cfc", "cr.", None),
    ("cfc", "ca.", "active"),
    ("fide-close", "fs.", None),
    ("naspa", "na.", None),
)


def pool_of(message: dict) -> str:
    return message.get("pool") or DEFAULT_POOL[message["system"]]


def season(seed: int) -> tuple[list[tuple[int, dict]], list[Workload], list[Model], list]:
    """The cases' messages interleaved in publishing order, with what each case's model
    expects of each. A case's corrections that try to move an event into another pool of
    its system are left out: routed by pool, they would reach another partition (where
    they are refused for another reason than the model's, `unknown event`)."""
    choose = Chooser(random.Random(seed))
    workloads = []
    for name, tag, moved_to in PLAN:
        made = workload(choose, name, 14, 16, tag=tag)
        case, messages = made.case, [m for m in made.messages if pool_of(m) in made.case.pools]
        if moved_to is not None:
            messages = [{**m, "pool": moved_to} for m in messages]
            case = dataclasses.replace(
                case,
                pools=(moved_to,),
                start=tuple(msgspec.structs.replace(r, pool=moved_to) for r in case.start),
            )
        workloads.append(Workload(case, messages))
    merged = interleave(choose, workloads)
    models = [Model() for _ in workloads]
    expected = [
        models[i].apply(decode_input(msgspec.json.encode(m)), n)
        for n, (i, m) in enumerate(merged, 1)
    ]
    return merged, workloads, models, expected


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def until(check, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_scale_out_on_a_cluster(redis_cluster, cluster_prefix, tmp_path):
    settings = settings_for(
        redis_cluster.url, cluster_prefix, partitions="domains", batch_size=8, lease_ms=2000
    )
    layout = settings.layout
    merged, workloads, models, expected = season(seed=19)
    services = Services(settings, command=SERVE)
    env = services.env
    client = await connect(redis_cluster.url)
    try:
        # The lists, with the command line (routed to each pool's partition).
        start = tmp_path / "lists.jsonl"
        start.write_bytes(render_jsonl([r for w in workloads for r in w.case.start]))
        done = cli(env, "import", str(start))
        assert done.returncode == 0, done.stderr
        first = services.start()
        services.start()

        async def publish(chunk: list[tuple[int, dict]]) -> None:
            async with client.pipeline(
                transaction=False
            ) as pipe:  # plain XADDs to the documented streams
                for _, message in chunk:
                    stream = layout.route(message["system"], pool_of(message)).input
                    pipe.xadd(stream, {"__data__": json.dumps(message)})
                await pipe.execute()

        third = len(merged) // 3
        fide, naspa = layout.route("fide", "standard"), layout.route("naspa", "nwl")
        await publish(merged[:third])
        await until(lambda: client.xlen(fide.output))  # committing there: move its slot now
        await asyncio.to_thread(redis_cluster.move_key_slot, fide.input, batch=3, pause=0.01)
        services.kill(
            first
        )  # SIGKILL, mid-season: its partitions go to the other replica, then back
        services.start()
        await publish(merged[third : 2 * third])
        await until(lambda: client.xlen(naspa.output))
        await asyncio.to_thread(redis_cluster.move_key_slot, naspa.input, batch=3, pause=0.01)
        await publish(merged[2 * third :])
        # A CFC event on the FIDE rapid partition's stream (no traffic of its own).
        wrong = layout.route("fide", "rapid")
        cfc_event = next(
            m for _, m in merged if m["schema"] == "event.finished/v1" and m["system"] == "cfc"
        )
        await client.xadd(
            wrong.input, {"__data__": json.dumps({**cfc_event, "event_id": "misrouted-1"})}
        )

        used = [layout.route(w.case.system, w.case.pools[0]) for w in workloads]
        await wait_applied(client, settings, [p.input for p in used] + [wrong.input], timeout=120)
        for partition in dict.fromkeys(used):
            mine = [n for n, p in enumerate(used) if p is partition]
            picked = [(k, m) for k, (i, m) in enumerate(merged) if i in mine]
            part = Mixed(
                [workloads[i] for i in mine],
                [m for _, m in picked],
                [expected[k] for k, _ in picked],
                [models[i] for i in mine],
            )
            own = settings_for(
                redis_cluster.url,
                cluster_prefix,
                input_streams=(partition.input,),
                output_stream=partition.output,
                dead_letter_stream=partition.dead_letter,
            )
            folder = tmp_path / partition.name
            folder.mkdir()
            await check_against_offline_and_fold(client, own, part, folder)
        [(_, fields)] = await client.xrange(wrong.dead_letter)
        letter = json.loads(fields[b"__data__"])
        assert (letter["reason"], letter["event_id"]) == ("misrouted", "misrouted-1")
        assert f"belong on {layout.route('cfc', pool_of(cfc_event)).input} " in letter["message"]
        for process in services.running:
            assert process.poll() is None
        assert "Traceback" not in services.logs()
    finally:
        services.stop_all()
        await client.aclose()
