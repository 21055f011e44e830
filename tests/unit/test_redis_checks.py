"""The judgement of a Redis's configuration (service/runtime/redischecks.py, D24, D25), the
reasons a commit fails (outage.failure_reason, D26) and the lag computed at each scrape:
pure, no Redis."""

from __future__ import annotations

import logging
import time

import pytest
import structlog
from redis.exceptions import (
    BusyLoadingError,
    ConnectionError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    TimeoutError,
    WatchError,
)
from structlog.testing import capture_logs

from service.runtime import redischecks
from service.runtime.metrics import Metrics
from service.runtime.outage import FAILURE_REASONS, failure_reason
from service.runtime.redischecks import (
    NodeFacts,
    RedisChecks,
    facts_of,
    findings,
    memory_level,
    memory_ratio,
)
from service.runtime.settings import SettingsError, load_settings

SETTINGS = load_settings({})
MASTER = NodeFacts("", "master", None, "noeviction", 0, 1_000_000, True)


def test_info_replies_become_facts():
    info = {
        "role": "slave",
        "master_host": "10.0.0.5",
        "master_port": 6380,
        "maxmemory_policy": "allkeys-lru",
        "maxmemory": 2048,
        "used_memory": 1024,
        "aof_enabled": 0,
    }
    assert facts_of("n1", info) == NodeFacts(
        "n1", "slave", "10.0.0.5:6380", "allkeys-lru", 2048, 1024, False
    )
    assert facts_of("", {"role": "master", "aof_enabled": 1}) == NodeFacts(
        "", "master", None, "noeviction", 0, 0, True
    )


def test_a_fit_master_has_no_finding():
    assert findings([MASTER], SETTINGS) == []


@pytest.mark.parametrize(
    "policy", ["allkeys-lru", "volatile-lru", "allkeys-random", "volatile-ttl"]
)
def test_every_evicting_policy_is_refused_unless_allowed(policy):
    facts = [msgspec_replace(MASTER, policy=policy)]
    [refused] = findings(facts, SETTINGS)
    assert (refused.check, refused.refused) == ("eviction", True)
    assert f"maxmemory-policy {policy}" in refused.problem
    assert "CONFIG SET maxmemory-policy noeviction" in refused.fix
    assert "RATING_ALLOW_EVICTION=true" in refused.fix
    [warned] = findings(facts, load_settings({"RATING_ALLOW_EVICTION": "true"}))
    assert (warned.check, warned.refused) == ("eviction", False)
    assert "RATING_ALLOW_EVICTION" not in warned.fix


def test_aof_off_is_a_warning_unless_required():
    facts = [msgspec_replace(MASTER, aof=False)]
    [warned] = findings(facts, SETTINGS)
    assert (warned.check, warned.refused) == ("aof", False)
    assert "CONFIG SET appendonly yes" in warned.fix
    [refused] = findings(facts, load_settings({"RATING_REQUIRE_AOF": "1"}))
    assert (refused.check, refused.refused) == ("aof", True)


def test_a_replica_is_refused_naming_its_master_and_nothing_else_is_judged():
    replica = NodeFacts("", "slave", "10.0.0.5:6379", "allkeys-lru", 10, 9, False)
    [refused] = findings([replica], load_settings({"RATING_ALLOW_EVICTION": "true"}))
    assert (refused.check, refused.refused) == ("replica", True)
    assert "a replica of 10.0.0.5:6379" in refused.problem
    assert refused.fix == "point RATING_REDIS_URL at its master (10.0.0.5:6379)"
    assert "10.0.0.5" not in refused.brief  # the readiness answer names no address


def test_the_refusal_line_names_the_server_the_problem_and_the_fix():
    url = "redis://user:secret@db.example:6379/0"
    checks = RedisChecks(None, load_settings({}, redis_url=url), Metrics(), {})
    [finding] = findings([msgspec_replace(MASTER, policy="allkeys-lru")], checks.settings)
    line = checks.line(finding)
    assert line.startswith("Redis at redis://user:***@db.example:6379/0 is refused: ")
    assert "maxmemory-policy allkeys-lru" in line and "fix: CONFIG SET" in line
    assert "\n" not in line and "secret" not in line
    [node] = findings(
        [msgspec_replace(MASTER, node="10.1.1.1:7001", policy="allkeys-lru")], checks.settings
    )
    assert "(node 10.1.1.1:7001) is refused" in checks.line(node)


def test_memory_ratio_is_the_fullest_master_with_a_maxmemory():
    facts = [
        msgspec_replace(MASTER, node="a", maxmemory=1000, used_memory=500),
        msgspec_replace(MASTER, node="b", maxmemory=1000, used_memory=850),
        msgspec_replace(MASTER, node="c", maxmemory=0, used_memory=10**9),  # no limit
        NodeFacts("d", "slave", "a", "noeviction", 1000, 999, True),  # a replica: not judged
    ]
    assert memory_ratio(facts) == (0.85, "b")
    assert memory_ratio([MASTER]) == (0.0, "")


@pytest.mark.parametrize(
    ("ratio", "was", "level"),
    [
        (0.5, 0, 0),
        (0.8, 0, 1),
        (0.9, 0, 2),
        (0.95, 1, 2),
        (0.79, 1, 1),  # hovering under the threshold: not said again
        (0.77, 1, 0),
        (0.89, 2, 2),
        (0.87, 2, 1),
        (0.3, 2, 0),
    ],
)
def test_memory_levels_rise_at_their_thresholds_and_fall_a_little_below(ratio, was, level):
    assert memory_level(ratio, was) == level


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (ConnectionError("Connection closed by server."), "connection"),
        (BusyLoadingError("Redis is loading the dataset in memory"), "connection"),
        (ConnectionResetError(104, "reset"), "connection"),
        (TimeoutError("Timeout reading from socket"), "timeout"),
        (ReadOnlyError("You can't write against a read only replica."), "readonly"),
        (OutOfMemoryError("command not allowed when used memory > 'maxmemory'."), "oom"),
        (ResponseError("OOM command not allowed"), "oom"),
        (ResponseError("NOGROUP No such key"), "other"),
        (WatchError("watched key changed"), "other"),
    ],
)
def test_a_failed_commit_is_named_by_its_cause(exc, reason):
    assert failure_reason(exc) == reason in FAILURE_REASONS


def test_the_lag_keeps_growing_from_the_last_oldest_entry_read():
    metrics = Metrics()
    ten_seconds_ago = f"{int((time.time() - 10) * 1000)}-0"
    metrics.oldest_unapplied("s", ten_seconds_ago)
    first = metrics.registry.get_sample_value("rating_consumer_lag_seconds", {"stream": "s"})
    time.sleep(0.05)
    second = metrics.registry.get_sample_value("rating_consumer_lag_seconds", {"stream": "s"})
    assert 10 <= first < second < 60
    metrics.oldest_unapplied("s", None)
    assert metrics.registry.get_sample_value("rating_consumer_lag_seconds", {"stream": "s"}) == 0


def test_the_boolean_settings_read_true_and_false_and_refuse_the_rest():
    assert load_settings({}).allow_eviction is False
    assert load_settings({"RATING_ALLOW_EVICTION": "TRUE"}).allow_eviction is True
    assert load_settings({"RATING_REQUIRE_AOF": "0"}).require_aof is False
    with pytest.raises(
        SettingsError, match="RATING_REQUIRE_AOF='yes please': must be true or false"
    ):
        load_settings({"RATING_REQUIRE_AOF": "yes please"})


def test_each_change_is_said_once_and_the_hold_follows_the_refusals(monkeypatch):
    """Judged again and again: a line when a check starts failing, none while it stays so,
    one when it passes again; the hold (Health.unready) and the gauges follow."""
    unready: dict[str, str] = {}
    metrics = Metrics()
    checks = RedisChecks(None, SETTINGS, metrics, unready)
    evicting = [msgspec_replace(MASTER, policy="allkeys-lru", maxmemory=100, used_memory=85)]
    with fresh_log(monkeypatch) as logs:
        for facts in (evicting, evicting, [MASTER], [MASTER]):
            checks._judge(facts, findings(facts, SETTINGS))
            if facts is evicting:
                assert unready == {
                    "redis": "refused: maxmemory-policy allkeys-lru evicts keys (see the log)"
                }
                assert metrics.registry.get_sample_value("rating_consuming_held") == 1
                assert metrics.registry.get_sample_value("rating_redis_memory_used_ratio") == 0.85
    assert unready == {}
    assert metrics.registry.get_sample_value("rating_consuming_held") == 0
    assert (
        metrics.registry.get_sample_value("rating_redis_check_failing", {"check": "eviction"}) == 0
    )
    assert [(line["event"], line.get("check"), line.get("consuming")) for line in logs] == [
        ("redis check failed: consuming stops until it passes", "eviction", None),
        ("redis memory high", None, None),
        ("redis check passes again", "eviction", "resumes"),
        ("redis memory back under 0.8", None, None),
    ]


class fresh_log:
    """structlog's captured lines, with the loggers of `modules` (redischecks') fresh
    (earlier tests may have configured logging with cached loggers)."""

    def __init__(self, monkeypatch, *modules):
        self.monkeypatch = monkeypatch
        self.modules = modules or (redischecks,)  # whose module-level `log` is made fresh

    def __enter__(self):
        self.before = structlog.get_config()
        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
            cache_logger_on_first_use=False,
        )
        for module in self.modules:
            self.monkeypatch.setattr(module, "log", structlog.get_logger("rating.redis"))
        self.capturing = capture_logs()
        return self.capturing.__enter__()

    def __exit__(self, *exc):
        self.capturing.__exit__(*exc)
        structlog.configure(**self.before)


def msgspec_replace(facts: NodeFacts, **changes) -> NodeFacts:
    import msgspec

    return msgspec.structs.replace(facts, **changes)
