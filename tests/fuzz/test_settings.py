"""The settings and Redis URLs (D80): hostile values for every environment variable
(service/runtime/settings.py). Each environment gives settings that work, or a
SettingsError of one line naming the variable, with a URL's password hidden; a Redis URL
that passes the check is one redis-py can use, on the database it names. Never another
exception."""

from __future__ import annotations

import msgspec
from hypothesis import given, note
from hypothesis import strategies as st
from redis.connection import parse_url

from service.runtime.settings import SETTINGS, SettingsError, check_redis_url, load_settings, redact
from tests.fuzz.hostile import examples

SECRET = "s3cr3t-pw"
URL_PARTS = st.fixed_dictionaries(
    {
        "scheme": st.sampled_from(["redis", "rediss", "unix", "REDIS", "http", "", "redis+tls"]),
        "user": st.sampled_from(["", "u", "u:" + SECRET, ":" + SECRET, "u%40x:" + SECRET]),
        "host": st.sampled_from(["127.0.0.1", "localhost", "[::1]", "[::1", "", "h st", "例え.jp"]),
        "port": st.sampled_from(
            ["", ":6379", ":0", ":65536", ":99999", ":abc", ":", ":-1", ":6379:1"]
        ),
        "path": st.sampled_from(
            ["", "/", "/0", "/9", "/15", "/x", "/1/2", "/-1", "/99999", "/%30"]
        ),
        "query": st.sampled_from(
            [
                "",
                "?db=3",
                "?db=x",
                "?socket_timeout=abc",
                "?socket_timeout=1",
                "?ssl_cert_reqs=x",
                "?a",
            ]
        ),
    }
)


def _url(parts: dict) -> str:
    user = parts["user"] + "@" if parts["user"] else ""
    scheme = parts["scheme"] + "://" if parts["scheme"] else ""
    return f"{scheme}{user}{parts['host']}{parts['port']}{parts['path']}{parts['query']}"


VALUES = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "65535",
            "65536",
            "1e3",
            "1_000",
            "\u0663",
            "99999999999999999999",
            "true",
            "yes",
            "auto",
            "domains",
            "single",
            "nope",
            " ",
            ",",
            ",,",
            "a,b",
            "#fff",
            "#12345g",
            "javascript:alert(1)",
            "https://x/logo.png",
            "\x00",
            "DEBUG",
            "debug",
            "x" * 5000,
        ]
    ),  # fmt: skip
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30),
    URL_PARTS.map(_url),
)


def _no_secret(text: str, given: str) -> None:
    """A password given in a URL (`:PASSWORD@`) is not shown."""
    if f":{SECRET}@" in given:
        assert SECRET not in text, text


@examples(ci=300)
@given(st.dictionaries(st.sampled_from([n for s in SETTINGS for n in s.names]), VALUES, max_size=4))
def test_hostile_settings_load_or_are_refused_naming_the_variable(environ):
    note(repr(environ))
    try:
        settings = load_settings(environ)
    except SettingsError as exc:
        text = str(exc)
        assert "\n" not in text, text
        assert any(text.startswith(f"{name}=") for name in environ), text
        name = text.partition("=")[0]
        if name in SETTINGS[0].names:  # RATING_REDIS_URL, REDIS_URL
            _no_secret(text, environ[name])
        return
    options = parse_url(settings.redis_url)  # what a client is made with: it can be
    database = msgspec.json.encode(settings.limits)  # the limits and layout are usable
    assert database and settings.layout.inputs
    assert 0 <= settings.http_port <= 65535 and 0 <= settings.admin_port <= 65535
    _no_secret(redact(settings.redis_url), settings.redis_url)
    if not settings.redis_url.lower().startswith("unix") and "db" not in options:
        path = settings.redis_url.split("://", 1)[1].partition("/")[2].partition("?")[0]
        assert path.strip("/") == "" or path.strip("/").isdigit(), settings.redis_url


@examples(ci=300)
@given(URL_PARTS.map(_url))
def test_a_redis_url_is_one_redis_py_can_use_or_is_refused(url):
    note(url)
    _no_secret(redact(url), url)
    try:
        check_redis_url(url)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    parse_url(url)
