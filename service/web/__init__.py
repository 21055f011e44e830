"""The service's HTTP side (FastAPI, served by uvicorn in the service's own event loop):
health, readiness, metrics and AsyncAPI for operators; the read-only JSON API (`/v1/...`,
described at `/openapi.json` and `/docs`); server-rendered pages for people.

`app.py` builds the ASGI app from a read model and the health checks; `server.py` serves it.
Nothing below this package imports it except `service/runtime/app.py`, which wires it in.
"""
