"""The AsyncAPI 3 document of the service's channels, generated from the msgspec Structs
(committed as schemas/asyncapi.json, served at /asyncapi.json by the service)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from schemas.events import (
    EventCorrected,
    EventFinished,
    EventWithdrawn,
    PeriodClosed,
    PeriodReopened,
)
from schemas.jsonschema import portable
from schemas.ratings import RatingsUpdated
from schemas.rejected import EventRejected

ASYNCAPI_FILE = Path(__file__).with_name("asyncapi.json")
MESSAGES = {
    "EventFinished": (EventFinished, "event.finished/v1", "A finished event, to be rated once."),
    "PeriodClosed": (PeriodClosed, "period.closed/v1", "Closes a FIDE rating period of one pool."),
    "PeriodReopened": (
        PeriodReopened,
        "period.reopened/v1",
        "Reopens the latest closed FIDE period of one pool: its list is withdrawn.",
    ),
    "EventCorrected": (
        EventCorrected,
        "event.corrected/v1",
        "Replaces the content of a rated event; later events are re-rated.",
    ),
    "EventWithdrawn": (
        EventWithdrawn,
        "event.withdrawn/v1",
        "A rated event stops counting; later events are re-rated.",
    ),
    "RatingsUpdated": (
        RatingsUpdated,
        "ratings.updated/v1",
        "New ratings of one event, one chunk of a new list, or a revision of an event's result.",
    ),
    "EventRejected": (
        EventRejected,
        "event.rejected/v1",
        "An input entry that was not applied, and why.",
    ),
}
_ENTRY = (
    "One Redis stream entry per message: the message as UTF-8 JSON in the field `__data__` "
    "(XADD <stream> * __data__ '<json>')."
)


def document(version: str = "0.1.0") -> dict:
    """The AsyncAPI 3.0 document; message payloads are the msgspec JSON Schemas."""
    messages, components = _components()
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "rating-service",
            "version": version,
            "description": "Rates chess (CFC, FIDE) and Scrabble (NASPA) events exactly once, in stream order.",
        },
        "defaultContentType": "application/json",
        "servers": {
            "redis": {
                "host": "127.0.0.1:6379",
                "protocol": "redis",
                "description": "Set by RATING_REDIS_URL.",
            }
        },
        "channels": _channels(),
        "operations": _operations(),
        "components": {"messages": messages, "schemas": components},
    }


def _components() -> tuple[dict, dict]:
    """The messages of `MESSAGES` (each a Redis stream entry, `_ENTRY`) and the schemas of
    their payloads, from the msgspec Structs, portable (schemas.jsonschema.portable)."""
    (schemas,), components = msgspec.json.schema_components(
        [
            RatingsUpdated
            | EventFinished
            | PeriodClosed
            | EventCorrected
            | EventWithdrawn
            | PeriodReopened
            | EventRejected
        ],
        ref_template="#/components/schemas/{name}",
    )
    del schemas
    components = portable(components, components)
    messages = {
        name: {
            "name": tag,
            "title": tag,
            "summary": summary,
            "description": _ENTRY,
            "contentType": "application/json",
            "payload": {"$ref": f"#/components/schemas/{struct.__name__}"},
        }
        for name, (struct, tag, summary) in MESSAGES.items()
    }
    return messages, components


def _refs(*names: str) -> dict:
    return {n: {"$ref": f"#/components/messages/{n}"} for n in names}


def _channels() -> dict:
    """The input, output and dead-letter streams, one per partition with
    RATING_PARTITIONS=domains."""
    return {
        "events.finished": {
            "address": "events.finished",
            "description": "Input stream (RATING_INPUT_STREAMS); consumer group `rating-service`. With "
            "RATING_PARTITIONS=domains, one per partition (ordering domain): "
            "`{fide.standard}:events.finished` and so on (`rating-service streams` lists them); "
            "an event on another partition's stream is dead-lettered `misrouted`.",
            "messages": _refs(
                "EventFinished",
                "PeriodClosed",
                "EventCorrected",
                "EventWithdrawn",
                "PeriodReopened",
            ),
        },
        "ratings.updated": {
            "address": "ratings.updated",
            "description": "Output stream (RATING_OUTPUT_STREAM): one message per rated event, list chunk or "
            "revision. With RATING_PARTITIONS=domains, one per partition: "
            "`{fide.standard}:ratings.updated` and so on; read them all for every pool.",
            "messages": _refs("RatingsUpdated"),
        },
        "events.rejected": {
            "address": "events.rejected",
            "description": "Dead-letter stream (RATING_DEAD_LETTER_STREAM). With RATING_PARTITIONS=domains, "
            "one per partition: `{fide.standard}:events.rejected` and so on.",
            "messages": _refs("EventRejected"),
        },
    }


def _operations() -> dict:
    """What the service does on each channel: receive the inputs, send the ratings and the
    dead letters."""
    return {
        "rateEvents": {
            "action": "receive",
            "channel": {"$ref": "#/channels/events.finished"},
            "messages": [
                {"$ref": f"#/channels/events.finished/messages/{name}"}
                for name in (
                    "EventFinished",
                    "PeriodClosed",
                    "EventCorrected",
                    "EventWithdrawn",
                    "PeriodReopened",
                )
            ],
        },
        "publishRatings": {
            "action": "send",
            "channel": {"$ref": "#/channels/ratings.updated"},
            "messages": [{"$ref": "#/channels/ratings.updated/messages/RatingsUpdated"}],
        },
        "deadLetter": {
            "action": "send",
            "channel": {"$ref": "#/channels/events.rejected"},
            "messages": [{"$ref": "#/channels/events.rejected/messages/EventRejected"}],
        },
    }


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


def stale(path: Path = ASYNCAPI_FILE) -> bool:
    return not path.exists() or path.read_text(encoding="utf-8") != render()
