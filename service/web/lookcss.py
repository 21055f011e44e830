"""`/look.css`: the federation's accent (look.py, D52) as the custom properties the static
stylesheet reads, with the same validators as every answer (caching.py)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from service.runtime.look import Look, stylesheet
from service.web.caching import cached

CSS = "text/css; charset=utf-8"
router = APIRouter(include_in_schema=False)


@router.get("/look.css")
async def look_css(request: Request) -> Response:
    look: Look = getattr(request.app.state, "look", None) or Look()
    return cached(request, stylesheet(look), CSS, None)
