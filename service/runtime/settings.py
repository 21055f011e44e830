"""The service's settings, read once from environment variables (`serve --help` lists them)."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import msgspec
from redis.connection import parse_url

from schemas.validation import Limits
from service.runtime.look import DEFAULT_ACCENT, Look, check_accent, check_logo_url, check_text
from service.runtime.partitions import LAYOUTS, Layout, layout_of


def _default_consumer() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def default_data_dir(environ: Mapping[str, str] | None = None) -> str:
    """Where the embedded server keeps its data: `$XDG_DATA_HOME/rating-service`, else
    `~/.local/share/rating-service` (the XDG default)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "rating-service")


DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class Setting(msgspec.Struct, frozen=True):
    """One environment variable: its name(s), default and meaning."""

    field: str
    names: tuple[str, ...]
    default: str
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "redis_url",
        ("RATING_REDIS_URL", "REDIS_URL"),
        DEFAULT_REDIS_URL,
        "Redis to consume from and store into; when none is set and none answers there, serve starts an "
        "embedded server. On a Redis Cluster, one node, from which the client learns the others: a "
        "replica that starts while that node is down waits for it (`waiting for redis` in the log)",
    ),
    Setting(
        "data_dir",
        ("RATING_DATA_DIR",),
        "$XDG_DATA_HOME/rating-service, else ~/.local/share/rating-service",
        "the embedded server's data (AOF), its log and redis.url",
    ),
    Setting(
        "partitions",
        ("RATING_PARTITIONS",),
        "single",
        "partition layout: single (the input streams below take any event) or domains (one partition per "
        "ordering domain, e.g. {fide.standard}:events.finished; what a Redis Cluster needs)",
    ),
    Setting(
        "input_streams",
        ("RATING_INPUT_STREAMS",),
        "events.finished",
        "input stream(s), comma-separated, each with its own applied cursor (domains layout: one name, the "
        "suffix of every partition's input stream)",
    ),
    Setting(
        "group",
        ("RATING_GROUP",),
        "rating-service",
        "consumer group (created at the applied cursor, or 0, on start-up and when lost)",
    ),
    Setting("consumer", ("RATING_CONSUMER",), "<host name>-<pid>", "this replica's consumer name"),
    Setting(
        "output_stream",
        ("RATING_OUTPUT_STREAM",),
        "ratings.updated",
        "stream of ratings.updated/v1 messages",
    ),
    Setting(
        "dead_letter_stream",
        ("RATING_DEAD_LETTER_STREAM",),
        "events.rejected",
        "stream of event.rejected/v1 messages",
    ),
    Setting(
        "claim_idle_ms",
        ("RATING_CLAIM_IDLE_MS",),
        "30000",
        "idle time (ms) before another replica reclaims a pending entry",
    ),
    Setting(
        "lease_ms",
        ("RATING_LEASE_MS",),
        "10000",
        "lease (ms) of one replica on an input stream: the owner renews it every third of it; a standby takes "
        "over at once after a SIGTERM, within this time after a crash",
    ),
    Setting(
        "max_deliveries",
        ("RATING_MAX_DELIVERIES",),
        "5",
        "deliveries after which a failing entry is dead-lettered as poison",
    ),
    Setting(
        "max_bytes",
        ("RATING_MAX_BYTES",),
        str(16 * 1024 * 1024),
        "largest accepted input message (bytes of __data__); more is dead-lettered too_large "
        "(docs/operations/limits.md)",
    ),
    Setting(
        "read_bytes",
        ("RATING_READ_BYTES",),
        str(64 * 1024 * 1024),
        "the input bytes one read may bring: a read asks for at most (this - bytes held) / "
        "RATING_MAX_BYTES entries (at least one), and reads again until RATING_BATCH_SIZE entries or "
        "no room; bounds the entries a replica holds (D90)",
    ),
    Setting(
        "max_message_bytes",
        ("RATING_MAX_MESSAGE_BYTES",),
        str(32 * 1024 * 1024),
        "largest ratings.updated message a commit may publish (bytes of __data__); an entry whose "
        "message would be bigger is dead-lettered too_large (D91)",
    ),
    Setting(
        "max_commit_bytes",
        ("RATING_MAX_COMMIT_BYTES",),
        str(256 * 1024 * 1024),
        "most bytes one commit may write to Redis (its commands' arguments, a correction's cascade "
        "included): a bigger commit of several entries is split, a single entry over it is "
        "dead-lettered too_large (D91)",
    ),
    Setting("max_players", ("RATING_MAX_PLAYERS",), "5000", "most players in one event"),
    Setting("max_games", ("RATING_MAX_GAMES",), "100000", "most games in one event"),
    Setting(
        "max_event_days",
        ("RATING_MAX_EVENT_DAYS",),
        "90",
        "most days from an event's start to its end date; more is dead-lettered implausible (a message "
        "with long_event: true, a league, is allowed up to 366)",
    ),
    Setting(
        "output_maxlen",
        ("RATING_OUTPUT_MAXLEN",),
        "1000000",
        "approximate MAXLEN of the output and dead-letter streams (0: no trimming)",
    ),
    Setting(
        "batch_size",
        ("RATING_BATCH_SIZE",),
        "64",
        "most input entries read at once and applied in one commit",
    ),
    Setting(
        "commit_players",
        ("RATING_COMMIT_PLAYERS",),
        "4096",
        "most players of the events applied in one commit (a bigger event is committed alone): bounds how long "
        "one commit holds Redis and how much it takes in memory",
    ),
    Setting(
        "close_players",
        ("RATING_CLOSE_PLAYERS",),
        "100",
        "players of a FIDE close read and written in one commit, and players of each of its list's "
        "messages: bounds how long one commit of a close holds Redis and how much it takes in memory (D60)",
    ),
    Setting(
        "max_cascade_events",
        ("RATING_MAX_CASCADE_EVENTS",),
        "0",
        "most later events one correction, withdrawal or late event may re-rate (0: no limit); more is dead-lettered too_large",
    ),
    Setting(
        "poll_ms",
        ("RATING_POLL_MS",),
        "1000",
        "how long one read blocks waiting for new entries (ms)",
    ),
    Setting(
        "http_host",
        ("RATING_HTTP_HOST",),
        "0.0.0.0",
        "address of the HTTP side: health, metrics, AsyncAPI, the read API and the pages",
    ),
    Setting("http_port", ("RATING_HTTP_PORT",), "8080", "its port (0: no HTTP endpoint)"),
    Setting(
        "admin_host",
        ("RATING_ADMIN_HOST",),
        "127.0.0.1",
        "address of the operators' port, when RATING_ADMIN_PORT is set",
    ),
    Setting(
        "admin_port",
        ("RATING_ADMIN_PORT",),
        "0",
        "the operators' port: /metrics, /docs, /openapi.json and /asyncapi.json move there from the HTTP "
        "port, health is on both (0: none, everything on the HTTP port)",
    ),
    Setting(
        "outage_log_ms",
        ("RATING_OUTAGE_LOG_MS",),
        "60000",
        "while Redis stays unreachable, how often (ms) the log says so again",
    ),
    Setting(
        "create_store",
        ("RATING_CREATE_STORE",),
        "false",
        "true: a store found without its identity record (empty, or written before store formats) gets one "
        "at once, by serve or a writing command, instead of being refused (throwaway setups; else "
        "`rating-service init-store` or `upgrade-store`, docs/operations/upgrades.md)",
    ),
    Setting(
        "log_level",
        ("RATING_LOG_LEVEL",),
        "INFO",
        "log level: DEBUG, INFO, WARNING, ERROR or CRITICAL",
    ),
    Setting(
        "log_json",
        ("RATING_LOG_JSON",),
        "auto",
        "JSON logs: true, false, or auto (JSON unless on a terminal)",
    ),
    Setting(
        "allow_eviction",
        ("RATING_ALLOW_EVICTION",),
        "false",
        "true: start and consume on a Redis whose maxmemory-policy evicts keys (a warning instead of a "
        "refusal; evicted records and markers make the ratings wrong: decision D24)",
    ),
    Setting(
        "require_aof",
        ("RATING_REQUIRE_AOF",),
        "false",
        "true: refuse to start (and hold off consuming) on a Redis without AOF persistence, instead of a "
        "warning (decision D24)",
    ),
    Setting(
        "site_title",
        ("RATING_SITE_TITLE",),
        "Ratings",
        "the pages' site title, in the header and each page's <title> (one line, at most 80 characters; "
        "decision D52)",
    ),
    Setting(
        "federation_name",
        ("RATING_FEDERATION_NAME",),
        "",
        "the federation's name, in the pages' header beside the title and in the footer (none: not shown)",
    ),
    Setting(
        "logo_url",
        ("RATING_LOGO_URL",),
        "",
        "the federation's logo in the pages' header: an https:// URL (its origin is added to the "
        "pages' img-src, nothing else) or a path on this server starting with / (none: no logo)",
    ),
    Setting(
        "accent_colour",
        ("RATING_ACCENT_COLOUR",),
        DEFAULT_ACCENT,
        "the pages' accent colour, the header's background under white text: #rrggbb or #rgb, "
        "refused unless its contrast with white is at least 4.5:1 (WCAG AA)",
    ),
)


class Settings(msgspec.Struct, frozen=True):
    redis_url: str = DEFAULT_REDIS_URL
    data_dir: str = msgspec.field(default_factory=default_data_dir)
    partitions: str = "single"
    input_streams: tuple[str, ...] = ("events.finished",)
    group: str = "rating-service"
    consumer: str = msgspec.field(default_factory=_default_consumer)
    output_stream: str = "ratings.updated"
    dead_letter_stream: str = "events.rejected"
    claim_idle_ms: int = 30_000
    lease_ms: int = 10_000
    max_deliveries: int = 5
    max_bytes: int = 16 * 1024 * 1024
    read_bytes: int = 64 * 1024 * 1024
    max_message_bytes: int = 32 * 1024 * 1024
    max_commit_bytes: int = 256 * 1024 * 1024
    max_players: int = 5_000
    max_games: int = 100_000
    max_event_days: int = 90
    output_maxlen: int = 1_000_000
    batch_size: int = 64
    commit_players: int = 4_096
    close_players: int = 100
    max_cascade_events: int = 0
    poll_ms: int = 1_000
    http_host: str = "0.0.0.0"
    http_port: int = 8080
    admin_host: str = "127.0.0.1"
    admin_port: int = 0
    outage_log_ms: int = 60_000
    create_store: bool = False
    log_level: str = "INFO"
    log_json: bool | None = None
    allow_eviction: bool = False
    require_aof: bool = False
    site_title: str = "Ratings"
    federation_name: str = ""
    logo_url: str = ""
    accent_colour: str = DEFAULT_ACCENT

    @property
    def look(self) -> Look:
        """The pages' header (service/runtime/look.py, D52)."""
        return Look(self.site_title, self.federation_name, self.logo_url, self.accent_colour)

    @property
    def limits(self) -> Limits:
        return Limits(
            max_bytes=self.max_bytes,
            max_players=self.max_players,
            max_games=self.max_games,
            max_event_days=self.max_event_days,
        )

    @property
    def layout(self) -> Layout:
        """The partitions (service/runtime/partitions.py)."""
        return layout_of(
            self.partitions, self.input_streams, self.output_stream, self.dead_letter_stream
        )


class SettingsError(ValueError):
    """An environment variable with a value that cannot be used."""


def load_settings(environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Settings from the environment (first name found wins), then explicit overrides."""
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for setting in SETTINGS:
        name = next((n for n in setting.names if env.get(n)), None)
        if name is None:
            continue
        raw = env[name].strip()
        try:
            values[setting.field] = _convert(setting.field, raw)
        except ValueError as exc:
            shown = redact(raw) if setting.field == "redis_url" else raw
            raise SettingsError(f"{name}={shown!r}: {exc}") from None
    values.setdefault("data_dir", default_data_dir(env))
    for field, value in overrides.items():
        if value is None:
            continue
        if field in _CHECKED and isinstance(value, str):
            given = value
            try:
                value = _convert(field, given)
            except ValueError as exc:
                shown = redact(given) if field == "redis_url" else given
                raise SettingsError(f"{field} {shown!r}: {exc}") from None
        values[field] = value
    settings = Settings(**values)  # type: ignore[arg-type]  # each value was converted to its field's type above
    if settings.admin_port and settings.admin_port == settings.http_port:
        raise SettingsError(
            f"RATING_ADMIN_PORT={settings.admin_port}: the same port as RATING_HTTP_PORT"
        )
    try:
        _ = settings.layout
    except ValueError as exc:
        raise SettingsError(
            f"RATING_PARTITIONS={settings.partitions}, RATING_INPUT_STREAMS="
            f"{','.join(settings.input_streams)}: {exc}"
        ) from None
    return settings


def redis_url_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment names a Redis (RATING_REDIS_URL or REDIS_URL)."""
    env = os.environ if environ is None else environ
    return any(env.get(name, "").strip() for name in SETTINGS[0].names)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
REDIS_SCHEMES = ("redis", "rediss", "unix")
_CHECKED = {
    "redis_url",
    "log_level",
    "partitions",
    "accent_colour",
    "logo_url",
    "site_title",
    "federation_name",
}  # also checked when given as an override (a command-line option)


def check_redis_url(url: str) -> str:
    """The URL, when redis-py can connect with it (it needs one of the schemes); else a
    ValueError saying what is missing (a bare `host:port` is the usual slip)."""
    scheme = url.partition("://")[0] if "://" in url else ""
    if scheme.lower() in REDIS_SCHEMES and scheme not in REDIS_SCHEMES:
        raise ValueError(
            f"the scheme is {scheme.lower()}://, in lower case (redis-py reads no other)"
        )
    if scheme not in REDIS_SCHEMES:
        raise ValueError(
            "not a Redis URL: it starts with redis://, rediss:// or unix:// "
            "(e.g. redis://127.0.0.1:6379/0)"
        )
    try:  # redis-py's own reading (port, query values), which a client would raise at first use
        options = parse_url(url)
    except ValueError as exc:
        raise ValueError(f"not a Redis URL redis-py can use: {exc}") from None
    database = urlsplit(url).path.strip("/")
    if scheme != "unix" and "db" not in options and database and not _ascii_digits(database):
        # redis-py ignores a database it cannot read as a number: the commands would use 0 (D82)
        raise ValueError(
            f"the database {database!r} is not a number (e.g. redis://127.0.0.1:6379/0)"
        )
    return url


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


_INTS = {
    "http_port",
    "admin_port",
    "batch_size",
    "commit_players",
    "close_players",
    "claim_idle_ms",
    "lease_ms",
    "max_deliveries",
    "max_bytes",
    "read_bytes",
    "max_message_bytes",
    "max_commit_bytes",
    "max_players",
    "max_games",
    "max_event_days",
    "output_maxlen",
    "poll_ms",
    "max_cascade_events",
    "outage_log_ms",
}


_PORTS = {"http_port", "admin_port"}
_BOOLS = {"allow_eviction", "require_aof", "create_store"}


# The pages' look (service/runtime/look.py, D52): each checked by its own function.
_LOOK = {
    "accent_colour": check_accent,
    "logo_url": check_logo_url,
    "site_title": check_text,
    "federation_name": check_text,
}


def _whole_number(field: str, raw: str) -> int:
    if not _ascii_digits(raw.removeprefix("-")):
        raise ValueError("must be a positive whole number")  # int() also reads `1_000`, `٣`
    value = int(raw)
    if field in _PORTS and value > 65535:
        raise ValueError("must be a port number, 0-65535")
    if value < 0 or (
        value == 0
        and field not in {"output_maxlen", "http_port", "admin_port", "max_cascade_events"}
    ):
        raise ValueError("must be a positive whole number")
    return value


def _convert(field: str, raw: str) -> object:
    if field in _INTS:
        return _whole_number(field, raw)
    if field == "input_streams":
        streams = tuple(s.strip() for s in raw.split(",") if s.strip())
        if not streams:
            raise ValueError("names no stream")
        return streams
    if field == "data_dir":
        return os.path.expanduser(raw)
    if field == "redis_url":
        return check_redis_url(raw)
    if field == "log_level":
        if raw.upper() not in LOG_LEVELS:
            raise ValueError(f"not a log level (one of {', '.join(LOG_LEVELS)})")
        return raw.upper()
    if field == "partitions":
        if raw.lower() not in LAYOUTS:
            raise ValueError(f"not a partition layout (one of {', '.join(LAYOUTS)})")
        return raw.lower()
    if field in _BOOLS:
        if raw.lower() not in {"true", "false", "1", "0"}:
            raise ValueError("must be true or false")
        return raw.lower() in {"true", "1"}
    if field == "log_json":
        lowered = raw.lower()
        if lowered not in {"true", "false", "auto", "1", "0"}:
            raise ValueError("must be true, false or auto")
        return None if lowered == "auto" else lowered in {"true", "1"}
    return _LOOK.get(field, str)(raw)


def describe() -> str:
    """The environment variables, for `serve --help` (docs/reference/settings.md is made from SETTINGS)."""
    lines = ["environment variables:"]
    for s in SETTINGS:
        lines.append(f"  {' / '.join(s.names):<34} {s.help} (default: {s.default})")
    return "\n".join(lines)


def redact(url: str) -> str:
    """A Redis URL fit for logs and error messages: the password replaced by ***."""
    if "://" not in url:  # `user:password@host:6379`, the scheme forgotten: by text
        return _USERINFO.sub(r"\1\2***@", url)
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:  # a URL urllib cannot read (a bad port, a broken IPv6 address): by text
        return _USERINFO.sub(r"\1\2***@", url)
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


_USERINFO = re.compile(r"(^|//)([^/@:]*:)[^/@]*@")


_PIPELINE_PREFIX = re.compile(r"^Command # \d+ \(.*?\) of pipeline caused error: ", re.S)


def redact_error(exc: BaseException, url: str) -> str:
    """An error's text without the URL's password, whatever the library put in it, and
    without the command redis-py quotes when a pipeline's command fails (an XADD quotes the
    whole message; the error is what a person needs)."""
    text = str(exc)
    if _PIPELINE_PREFIX.match(text):
        text = _PIPELINE_PREFIX.sub("", text, count=1)
        if text.startswith("('") or text.startswith('("'):  # the error's args, as a tuple
            text = text[2:].rstrip(",)")[:-1]
    password = urlsplit(url).password
    return text.replace(password, "***") if password else text
